import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../core/random.js';
import { Partition, VectorIndex, type PartitionBackend, type VectorHit } from './vector-index.js';

const unit = (...values: number[]): Float32Array => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values.map((value) => value / norm));
};

function randomUnit(random: () => number, dims: number): Float32Array {
  return unit(...Array.from({ length: dims }, () => random() * 2 - 1));
}

interface Entry {
  memoryId: string;
  vector: Float32Array;
}

/** What each partition should hold, kept alongside it by the tests. */
type Model = Map<string, Map<string, Entry>>;

/** Naive reference: every score in float64, first occurrence of a chunk wins, stable sort, cut to k. */
function naiveSearch(model: Model, query: Float32Array, collectionIds: string[], k: number): VectorHit[] {
  const hits: VectorHit[] = [];
  const seen = new Set<string>();
  for (const collectionId of new Set(collectionIds)) {
    for (const [chunkId, { memoryId, vector }] of model.get(collectionId) ?? []) {
      if (seen.has(chunkId)) continue;
      seen.add(chunkId);
      let score = 0;
      for (let d = 0; d < vector.length; d++) score += vector[d]! * query[d]!;
      hits.push({ chunkId, memoryId, score });
    }
  }
  return hits.sort((a, b) => b.score - a.score).slice(0, Math.max(0, k));
}

/** VectorIndex.search over partitions built with an explicit backend. */
function searchPartitions(partitions: Map<string, Partition>, query: Float32Array, collectionIds: string[], k: number): VectorHit[] {
  const top: VectorHit[] = [];
  const seen = new Set<string>();
  for (const collectionId of new Set(collectionIds)) partitions.get(collectionId)?.collectTop(query, k, top, seen);
  return top;
}

function assertSameHits(actual: VectorHit[], expected: VectorHit[], context: string): void {
  assert.deepEqual(
    actual.map((hit) => `${hit.chunkId}/${hit.memoryId}`),
    expected.map((hit) => `${hit.chunkId}/${hit.memoryId}`),
    context,
  );
  for (let i = 0; i < expected.length; i++) {
    const delta = Math.abs(actual[i]!.score - expected[i]!.score);
    assert.ok(delta <= 1e-5, `${context}: score ${i} off by ${delta}`);
  }
}

/** Random partitions of memories with 1-3 chunks each, mirrored in a model. */
function buildRandom(
  backend: PartitionBackend,
  dims: number,
  sizes: Record<string, number>,
  seed: number,
  initialCapacity = 16,
): { partitions: Map<string, Partition>; model: Model; random: () => number } {
  const random = seededRandom(seed);
  const partitions = new Map<string, Partition>();
  const model: Model = new Map();
  for (const [collectionId, size] of Object.entries(sizes)) {
    const partition = new Partition(dims, initialCapacity, { backend });
    const entries = new Map<string, Entry>();
    for (let memory = 0; entries.size < size; memory++) {
      const memoryId = `${collectionId}-m${memory}`;
      const chunks = 1 + Math.floor(random() * 3);
      for (let chunk = 0; chunk < chunks && entries.size < size; chunk++) {
        const vector = randomUnit(random, dims);
        partition.upsert(`${memoryId}:${chunk}`, memoryId, vector);
        entries.set(`${memoryId}:${chunk}`, { memoryId, vector });
      }
    }
    partitions.set(collectionId, partition);
    model.set(collectionId, entries);
  }
  return { partitions, model, random };
}

function removeMemory(partitions: Map<string, Partition>, model: Model, memoryId: string): void {
  for (const partition of partitions.values()) partition.removeMemory(memoryId);
  for (const entries of model.values()) {
    for (const [chunkId, entry] of entries) if (entry.memoryId === memoryId) entries.delete(chunkId);
  }
}

describe('VectorIndex', () => {
  it('returns the nearest chunks in descending score order', () => {
    const index = new VectorIndex(3);
    const partition = index.createPartition('c1');
    partition.upsert('m1:0', 'm1', unit(1, 0, 0));
    partition.upsert('m2:0', 'm2', unit(0, 1, 0));
    partition.upsert('m3:0', 'm3', unit(1, 1, 0));
    const hits = index.search(unit(1, 0.1, 0), ['c1'], 2);
    assert.deepEqual(
      hits.map((hit) => hit.chunkId),
      ['m1:0', 'm3:0'],
    );
    assert.ok(hits[0]!.score > hits[1]!.score);
  });

  it('removes every chunk of a memory and keeps the rest searchable', () => {
    const index = new VectorIndex(2);
    const partition = index.createPartition('c1');
    partition.upsert('a:0', 'a', unit(1, 0));
    partition.upsert('a:1', 'a', unit(0.9, 0.1));
    partition.upsert('b:0', 'b', unit(0, 1));
    partition.removeMemory('a');
    assert.equal(partition.size, 1);
    assert.equal(partition.hasMemory('a'), false);
    assert.equal(partition.hasMemory('b'), true);
    assert.deepEqual(
      index.search(unit(1, 0), ['c1'], 5).map((hit) => hit.memoryId),
      ['b'],
    );
  });

  it('upserting the same chunk twice keeps one entry', () => {
    const index = new VectorIndex(2);
    const partition = index.createPartition('c1');
    partition.upsert('a:0', 'a', unit(1, 0));
    partition.upsert('a:0', 'a', unit(0, 1));
    assert.equal(partition.size, 1);
    assert.equal(index.search(unit(0, 1), ['c1'], 1)[0]!.score.toFixed(5), '1.00000');
  });

  it('searches only the requested collections and dedupes chunks shared by two', () => {
    const index = new VectorIndex(2);
    index.createPartition('c1').upsert('a:0', 'a', unit(1, 0));
    index.createPartition('c2').upsert('a:0', 'a', unit(1, 0));
    index.createPartition('c3').upsert('z:0', 'z', unit(1, 0));
    const hits = index.search(unit(1, 0), ['c1', 'c2'], 10);
    assert.deepEqual(
      hits.map((hit) => hit.chunkId),
      ['a:0'],
    );
  });

  it('grows beyond its initial capacity', () => {
    const index = new VectorIndex(2);
    const partition = index.createPartition('c1');
    for (let i = 0; i < 3000; i++) partition.upsert(`m${i}:0`, `m${i}`, unit(1, i / 3000));
    assert.equal(partition.size, 3000);
    assert.equal(index.search(unit(1, 0), ['c1'], 1)[0]!.chunkId, 'm0:0');
  });

  it('scans small partitions in JS and moves them to the WebAssembly SIMD kernel as they grow', () => {
    const partition = new VectorIndex(384).createPartition('c1');
    assert.equal(partition.backend, 'js');
    const random = seededRandom(3);
    for (let i = 0; i <= 1024; i++) partition.upsert(`m${i}:0`, `m${i}`, randomUnit(random, 384));
    assert.equal(partition.backend, 'WebAssembly' in globalThis ? 'wasm-simd' : 'js');
    assert.equal(new Partition(384, 8, { backend: 'js' }).backend, 'js');
    const forcedJs = new Partition(384, 8, { backend: 'js' });
    for (let i = 0; i <= 1024; i++) forcedJs.upsert(`m${i}:0`, `m${i}`, randomUnit(random, 384));
    assert.equal(forcedJs.backend, 'js');
  });

  it('returns nothing for k <= 0 or an empty partition, and rejects a query of the wrong size', () => {
    const index = new VectorIndex(3);
    index.createPartition('empty');
    index.createPartition('c1').upsert('a:0', 'a', unit(1, 0, 0));
    assert.deepEqual(index.search(unit(1, 0, 0), ['c1'], 0), []);
    assert.deepEqual(index.search(unit(1, 0, 0), ['empty', 'missing'], 5), []);
    assert.throws(() => index.search(unit(1, 0), ['c1'], 5), /dimensions/);
  });

  it('keeps the earliest entries first on equal scores, within and across partitions', () => {
    const index = new VectorIndex(2);
    const first = index.createPartition('c1');
    const second = index.createPartition('c2');
    second.upsert('z:0', 'z', unit(1, 0));
    for (const id of ['a', 'b', 'c']) first.upsert(`${id}:0`, id, unit(1, 0));
    assert.deepEqual(
      index.search(unit(1, 0), ['c1', 'c2'], 2).map((hit) => hit.chunkId),
      ['a:0', 'b:0'],
    );
    assert.deepEqual(
      index.search(unit(1, 0), ['c2', 'c1'], 2).map((hit) => hit.chunkId),
      ['z:0', 'a:0'],
    );
    // A better hit arriving later evicts the latest of the tied ones, not the earliest.
    const third = index.createPartition('c3');
    for (const id of ['p', 'q']) third.upsert(`${id}:0`, id, unit(1, 1));
    third.upsert('r:0', 'r', unit(1, 0));
    assert.deepEqual(
      index.search(unit(1, 0), ['c3'], 2).map((hit) => hit.chunkId),
      ['r:0', 'p:0'],
    );
  });
});

// 'auto' starts in JS (initial capacity 16) and moves to wasm when a partition passes 1024 rows.
for (const backend of ['wasm-simd', 'js', 'auto'] as const) {
  describe(`Partition scan (${backend}) against a naive reference`, () => {
    it('matches on random vectors for several sizes, dimensions and k', () => {
      for (const [dims, size] of [
        [384, 1037],
        [384, 3],
        [37, 500], // not a multiple of the kernel step: exercises the zero padding
        [16, 200],
      ] as const) {
        const { partitions, model, random } = buildRandom(backend, dims, { c1: size }, dims * 1000 + size);
        for (const k of [1, 10, 100]) {
          for (let q = 0; q < 5; q++) {
            const query = randomUnit(random, dims);
            assertSameHits(
              searchPartitions(partitions, query, ['c1'], k),
              naiveSearch(model, query, ['c1'], k),
              `dims ${dims} size ${size} k ${k}`,
            );
          }
        }
      }
    });

    it('matches after swap-removals, re-upserts and overwrites', () => {
      const dims = 384;
      const { partitions, model, random } = buildRandom(backend, dims, { c1: 800 }, 42);
      const entries = model.get('c1')!;
      const partition = partitions.get('c1')!;
      const memoryIds = [...new Set([...entries.values()].map((entry) => entry.memoryId))];
      // Remove a third of the memories, including the one holding the last slot.
      const removed = memoryIds.filter((_, i) => i % 3 === 0 || i === memoryIds.length - 1);
      for (const memoryId of removed) removeMemory(partitions, model, memoryId);
      assert.equal(partition.size, entries.size);
      for (const memoryId of removed) assert.equal(partition.hasMemory(memoryId), false);
      for (let q = 0; q < 5; q++) {
        const query = randomUnit(random, dims);
        assertSameHits(
          searchPartitions(partitions, query, ['c1'], 20),
          naiveSearch(model, query, ['c1'], 20),
          `after removals, query ${q}`,
        );
      }
      // Re-add some removed memories and overwrite some survivors' vectors.
      for (const memoryId of removed.slice(0, 20)) {
        const vector = randomUnit(random, dims);
        partition.upsert(`${memoryId}:0`, memoryId, vector);
        entries.set(`${memoryId}:0`, { memoryId, vector });
      }
      for (const [chunkId, entry] of [...entries].slice(0, 50)) {
        const vector = randomUnit(random, dims);
        partition.upsert(chunkId, entry.memoryId, vector);
        entries.set(chunkId, { memoryId: entry.memoryId, vector });
      }
      assert.equal(partition.size, entries.size);
      for (let q = 0; q < 5; q++) {
        const query = randomUnit(random, dims);
        assertSameHits(
          searchPartitions(partitions, query, ['c1'], 20),
          naiveSearch(model, query, ['c1'], 20),
          `after re-upserts, query ${q}`,
        );
      }
    });

    it('matches across several partitions, in any order and with repeated collection ids', () => {
      const dims = 384;
      const { partitions, model, random } = buildRandom(backend, dims, { c1: 400, c2: 50, c3: 700, c4: 1 }, 7);
      for (const collections of [['c1', 'c2', 'c3', 'c4'], ['c3', 'c1'], ['c2', 'c2', 'missing', 'c4'], ['c4']]) {
        for (const k of [1, 10, 60]) {
          const query = randomUnit(random, dims);
          assertSameHits(
            searchPartitions(partitions, query, collections, k),
            naiveSearch(model, query, collections, k),
            `${collections.join(',')} k ${k}`,
          );
        }
      }
    });

    it('returns every chunk, best first, when k is larger than the partitions', () => {
      const dims = 384;
      const { partitions, model, random } = buildRandom(backend, dims, { c1: 30, c2: 12 }, 11);
      const query = randomUnit(random, dims);
      const hits = searchPartitions(partitions, query, ['c1', 'c2'], 1000);
      assert.equal(hits.length, 42);
      assertSameHits(hits, naiveSearch(model, query, ['c1', 'c2'], 1000), 'k > size');
    });

    it('returns a chunk held by several partitions once', () => {
      const dims = 384;
      const { partitions, model, random } = buildRandom(backend, dims, { c1: 300, c2: 300, c3: 300 }, 23);
      // Copy 100 chunks of c1 (same ids and vectors) into c2 and c3, and 30 of c2 into c3.
      const share = (from: string, to: string, count: number): void => {
        for (const [chunkId, entry] of [...model.get(from)!].slice(0, count)) {
          partitions.get(to)!.upsert(chunkId, entry.memoryId, entry.vector);
          model.get(to)!.set(chunkId, entry);
        }
      };
      share('c1', 'c2', 100);
      share('c1', 'c3', 100);
      share('c2', 'c3', 30);
      for (const k of [5, 50, 2000]) {
        for (let q = 0; q < 3; q++) {
          // Half the queries sit right on a shared chunk, so duplicates would surface at the top.
          const query = q === 0 ? [...model.get('c1')!.values()][q]!.vector : randomUnit(random, dims);
          const hits = searchPartitions(partitions, query, ['c1', 'c2', 'c3'], k);
          assert.equal(new Set(hits.map((hit) => hit.chunkId)).size, hits.length, 'no chunk twice');
          assertSameHits(hits, naiveSearch(model, query, ['c1', 'c2', 'c3'], k), `shared chunks k ${k}`);
        }
      }
    });
  });
}

it('VectorIndex.search matches the reference on random data through the public API', () => {
  const dims = 384;
  const random = seededRandom(5);
  const index = new VectorIndex(dims);
  const model: Model = new Map();
  for (const collectionId of ['a', 'b']) {
    const partition = index.createPartition(collectionId);
    const entries = new Map<string, Entry>();
    for (let i = 0; i < 1500; i++) {
      const vector = randomUnit(random, dims);
      partition.upsert(`${collectionId}${i}:0`, `${collectionId}${i}`, vector);
      entries.set(`${collectionId}${i}:0`, { memoryId: `${collectionId}${i}`, vector });
    }
    model.set(collectionId, entries);
  }
  for (let i = 0; i < 1500; i += 4) {
    index.removeMemory(`a${i}`);
    model.get('a')!.delete(`a${i}:0`);
  }
  for (let q = 0; q < 10; q++) {
    const query = randomUnit(random, dims);
    assertSameHits(index.search(query, ['a', 'b'], 25), naiveSearch(model, query, ['a', 'b'], 25), `public search ${q}`);
  }
});

describe('upsertBytes (a cold load from stored bytes)', () => {
  for (const backend of ['js', 'wasm-simd', 'auto'] as const) {
    it(`scores exactly like upsert from a Float32Array, through growth and at odd byte offsets (${backend})`, () => {
      const random = seededRandom(91);
      const dimensions = 37;
      const fromVectors = new Partition(dimensions, 2, { backend });
      const fromBytes = new Partition(dimensions, 2, { backend });
      for (let i = 0; i < 3000; i++) {
        const vector = new Float32Array(dimensions).map(() => random() * 2 - 1);
        fromVectors.upsert(`c${i}`, `m${i % 40}`, vector);
        // Stored bytes may sit at any offset of a larger buffer (a BSON document).
        const carrier = new Uint8Array(vector.byteLength + 3);
        carrier.set(new Uint8Array(vector.buffer), 3);
        fromBytes.upsertBytes(`c${i}`, `m${i % 40}`, carrier.subarray(3));
      }
      const query = new Float32Array(dimensions).map(() => random() * 2 - 1);
      const expected: VectorHit[] = [];
      const actual: VectorHit[] = [];
      fromVectors.collectTop(query, 25, expected, new Set());
      fromBytes.collectTop(query, 25, actual, new Set());
      assert.deepEqual(actual, expected);
      assert.equal(fromBytes.size, 3000);
    });
  }

  it('refuses bytes of the wrong length', () => {
    assert.throws(() => new Partition(4).upsertBytes('c', 'm', new Uint8Array(12)), /3 dimensions, index has 4/);
  });
});

describe('Partition with a sketch (search/row-sketch.ts)', () => {
  /** Two partitions of the same rows, one searched through a sketch from `sketchMinRows` rows on, one always in full. */
  function twins(size: number, seed: number): { sketched: Partition; full: Partition; random: () => number } {
    const random = seededRandom(seed);
    const sketched = new Partition(384, 16, { backend: 'wasm-simd', sketchMinRows: 1000 });
    const full = new Partition(384, 16, { backend: 'wasm-simd', sketchMinRows: Infinity });
    for (let i = 0; i < size; i++) {
      // Some rows twice over (equal scores), so tie order is checked too.
      const vector = i % 97 === 5 ? randomUnit(seededRandom(i - 5), 384) : randomUnit(random, 384);
      for (const partition of [sketched, full]) partition.upsert(`m${i >> 2}:${i & 3}`, `m${i >> 2}`, vector);
    }
    return { sketched, full, random };
  }

  /** Both partitions' hits, exactly equal (ids, order and scores bit for bit), for several k, floors and seen sets. */
  function assertSameSearches(sketched: Partition, full: Partition, random: () => number, context: string): void {
    for (const k of [1, 10, 100]) {
      for (let q = 0; q < 4; q++) {
        const query = randomUnit(random, 384);
        const run = (partition: Partition, top: VectorHit[], seen: Set<string>): VectorHit[] => {
          partition.collectTop(query, k, top, seen);
          return top;
        };
        assert.deepEqual(run(sketched, [], new Set()), run(full, [], new Set()), `${context}, k ${k}`);
        // A search over several collections: hits of another partition already in `top`, some seen.
        const earlier = (): VectorHit[] => [{ chunkId: 'other:0', memoryId: 'other', score: 0.1 }];
        const seen = (): Set<string> => new Set(['other:0', 'm3:1', 'm10:0']);
        assert.deepEqual(
          run(sketched, earlier(), seen()),
          run(full, earlier(), seen()),
          `${context}, k ${k}, with a floor and seen chunks`,
        );
      }
    }
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  it('finds exactly what a full scan finds, built in the background and kept up to date', async () => {
    const { sketched, full, random } = twins(6000, 21);
    assert.equal(sketched.sketchReady, false);
    assertSameSearches(sketched, full, random, 'while the sketch builds');
    while (!sketched.sketchReady) await settle();
    assert.ok(sketched.bytes > full.bytes, 'the sketch counts against the budget');
    assertSameSearches(sketched, full, random, 'built');

    // Small changes are quantized inside the next search: overwrites, removals (swap-removes), appends.
    const target = randomUnit(random, 384);
    for (const partition of [sketched, full]) {
      partition.upsert('m7:1', 'm7', target);
      partition.removeMemory('m20');
      partition.removeMemory(`m${(6000 >> 2) - 1}`); // the memory holding the last slots
    }
    const extra = Array.from({ length: 40 }, () => randomUnit(random, 384));
    for (const partition of [sketched, full]) extra.forEach((vector, i) => partition.upsert(`new${i}:0`, `new${i}`, vector));
    assert.equal(sketched.sketchReady, false);
    const nearest = (partition: Partition): VectorHit[] => {
      const top: VectorHit[] = [];
      partition.collectTop(target, 3, top, new Set());
      return top;
    };
    assert.equal(nearest(sketched)[0]?.chunkId, 'm7:1', 'the overwritten row is found by its new vector');
    assert.deepEqual(nearest(sketched), nearest(full));
    assertSameSearches(sketched, full, random, 'after small changes');
    assert.equal(sketched.sketchReady, true, 'quantized inline');

    // A bulk change goes back to full scans until the background build has caught up.
    const bulk = Array.from({ length: 3000 }, () => randomUnit(random, 384));
    for (const partition of [sketched, full]) bulk.forEach((vector, i) => partition.upsert(`bulk${i}:0`, `bulk${i}`, vector));
    assertSameSearches(sketched, full, random, 'after a bulk change');
    while (!sketched.sketchReady) await settle();
    assertSameSearches(sketched, full, random, 'caught up');
  });

  it('lets its sketch go when deletes take the partition below the size', async () => {
    const { sketched, full, random } = twins(1200, 23);
    assertSameSearches(sketched, full, random, 'first searches');
    while (!sketched.sketchReady) await settle();
    const withSketch = sketched.bytes;
    for (let memory = 0; memory < 60; memory++) for (const partition of [sketched, full]) partition.removeMemory(`m${memory}`);
    assert.ok(sketched.size < 1000);
    assertSameSearches(sketched, full, random, 'below the size');
    assert.equal(sketched.sketchReady, false);
    assert.ok(sketched.bytes < withSketch, 'the sketch no longer counts');
    assert.equal(sketched.bytes, full.bytes);
  });

  it('is built for partitions loaded from rows too, and not below its size', async () => {
    const { full, random } = twins(3000, 22);
    const exported = full.exportRows();
    const loaded = Partition.fromRows(384, exported.chunkIds, exported.memoryIds, exported.rows);
    assertSameSearches(loaded, full, random, 'loaded, before its sketch');
    // The default threshold is far above 3,000 rows: no sketch, and no bytes for one.
    await settle();
    assert.equal(loaded.sketchReady, false);
    assert.equal(loaded.bytes, 3000 * 384 * 4, 'the rows alone');
  });
});
