import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VectorIndex } from './vector-index.js';

const unit = (...values: number[]): Float32Array => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values.map((value) => value / norm));
};

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
});
