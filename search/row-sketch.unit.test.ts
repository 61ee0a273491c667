import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../core/random.js';
import { RowSketch } from './row-sketch.js';

/** Rows of `stride` floats (zero after `dims`), as a partition lays them out. */
function rowsOf(vectors: Float32Array[], stride: number): Float32Array {
  const rows = new Float32Array(vectors.length * stride);
  vectors.forEach((vector, slot) => rows.set(vector, slot * stride));
  return rows;
}

const normalised = (values: number[]): Float32Array => {
  const norm = Math.hypot(...values) || 1;
  return Float32Array.from(values.map((value) => value / norm));
};

/** Kinds of rows that stress the quantizer: spread, one large value, sparse, all equal, zero. */
const shapes: Record<string, (random: () => number, dims: number) => Float32Array> = {
  spread: (random, dims) => normalised(Array.from({ length: dims }, () => random() * 2 - 1)),
  spike: (random, dims) => normalised(Array.from({ length: dims }, (_, i) => (i === 3 ? 20 : random() * 2 - 1))),
  sparse: (random, dims) => normalised(Array.from({ length: dims }, () => (random() < 0.05 ? random() * 2 - 1 : 0))),
  flat: (_random, dims) => normalised(Array.from({ length: dims }, (_, i) => (i % 2 === 0 ? 1 : -1))),
  zero: (_random, dims) => new Float32Array(dims),
};

const exactDot = (a: Float32Array, b: Float32Array): number => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

/** The `need` best exact scores above `floor`: what every candidate list must contain. */
function mustKeep(rows: Float32Array[], query: Float32Array, need: number, floor: number): number[] {
  return rows
    .map((row, slot) => ({ slot, score: exactDot(row, query) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, need)
    .filter((entry) => entry.score > floor)
    .map((entry) => entry.slot);
}

describe('RowSketch', () => {
  it('keeps every row that can be among the best, whatever the rows look like', () => {
    const random = seededRandom(11);
    for (const [dims, stride] of [
      [384, 384],
      [37, 48], // a stride that is not a multiple of 64: the sketch pads it
    ] as const) {
      for (const [shape, make] of Object.entries(shapes)) {
        // Mostly rows of this shape, among spread ones, with duplicates (ties) at the end.
        const vectors = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? shapes.spread!(random, dims) : make(random, dims)));
        for (let i = 0; i < 50; i++) vectors.push(vectors[i]!);
        const sketch = RowSketch.create(stride, 16);
        assert.ok(sketch, 'Node has WebAssembly SIMD');
        assert.equal(sketch.refresh(rowsOf(vectors, stride), vectors.length, Infinity), true);
        for (const [need, floor] of [
          [10, -Infinity],
          [100, -Infinity],
          [50, 0.2],
          [1, -Infinity],
        ] as const) {
          for (let q = 0; q < 4; q++) {
            const query = new Float32Array(stride);
            query.set(q === 3 ? make(random, dims) : shapes.spread!(random, dims));
            const slots: Int32Array | null = sketch.candidates(query, vectors.length, need, floor);
            if (!slots) continue; // too many rows left in to be worth it: the partition scans in full
            const kept = new Set(slots);
            for (const slot of mustKeep(vectors, query.subarray(0, dims), need, floor))
              assert.ok(kept.has(slot), `${shape}, dims ${dims}, need ${need}, floor ${floor}: row ${slot} of the best was ruled out`);
            assert.deepEqual(
              [...slots],
              [...slots].sort((a, b) => a - b),
              'candidates come in slot order',
            );
          }
        }
      }
    }
  });

  it('rules most rows out on spread vectors, and declines when it cannot', () => {
    const random = seededRandom(12);
    const vectors = Array.from({ length: 4000 }, () => shapes.spread!(random, 384));
    const sketch = RowSketch.create(384, vectors.length);
    assert.ok(sketch);
    sketch.refresh(rowsOf(vectors, 384), vectors.length, Infinity);
    const query = shapes.spread!(random, 384);
    const slots = sketch.candidates(query, vectors.length, 10, -Infinity);
    assert.ok(slots && slots.length >= 10 && slots.length < vectors.length / 4, `kept ${slots?.length}`);
    assert.equal(sketch.candidates(query, vectors.length, 4001, -Infinity), null, 'fewer rows than asked for');
    assert.equal(sketch.candidates(new Float32Array(384), vectors.length, 10, -Infinity), null, 'a zero query rules nothing out');
  });

  it('quantizes changed rows again before it answers, and only those', () => {
    const random = seededRandom(13);
    const vectors = Array.from({ length: 2000 }, () => shapes.spread!(random, 384));
    const rows = rowsOf(vectors, 384);
    const sketch = RowSketch.create(384, 16);
    assert.ok(sketch);
    assert.equal(sketch.refresh(rows, 1000, 600), false, 'a slice at a time');
    assert.equal(sketch.pending(1000), 400);
    assert.equal(sketch.candidates(vectors[0]!, 1000, 10, -Infinity), null, 'not until every row is in');
    assert.equal(sketch.refresh(rows, 2000, Infinity), true);
    assert.equal(sketch.pending(2000), 0);
    // Row 7 becomes the query's best match; row 1999 goes (truncate) and its slot is written anew.
    const query = shapes.spread!(random, 384);
    rows.set(query, 7 * 384);
    sketch.invalidate(7);
    sketch.truncate(1999);
    rows.set(query, 1999 * 384);
    assert.equal(sketch.pending(2000), 2, 'the changed row and the rewritten slot');
    sketch.refresh(rows, 2000, Infinity);
    const slots = sketch.candidates(query, 2000, 2, -Infinity)!;
    assert.ok(slots.includes(7) && slots.includes(1999), 'both now lead');
    assert.ok(sketch.bytes >= 2000 * (384 + 12));
  });
});
