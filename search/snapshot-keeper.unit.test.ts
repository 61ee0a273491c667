import assert from 'node:assert/strict';
import { it } from 'node:test';
import { snapshotWanted } from './snapshot-keeper.js';

const cases: { name: string; chunks: number; minChunks: number; fromSnapshot: boolean; reread: number; wanted: boolean }[] = [
  { name: 'a tokenising load of a large collection', chunks: 5000, minChunks: 2000, fromSnapshot: false, reread: 0, wanted: true },
  { name: 'a tokenising load of exactly the minimum', chunks: 2000, minChunks: 2000, fromSnapshot: false, reread: 0, wanted: true },
  { name: 'a tokenising load of a small collection', chunks: 1999, minChunks: 2000, fromSnapshot: false, reread: 0, wanted: false },
  { name: 'snapshots off (minimum Infinity)', chunks: 1_000_000, minChunks: Infinity, fromSnapshot: false, reread: 0, wanted: false },
  { name: 'from a snapshot, little re-read', chunks: 5000, minChunks: 2000, fromSnapshot: true, reread: 100, wanted: false },
  { name: 'from a snapshot, a tenth re-read (not more)', chunks: 5000, minChunks: 2000, fromSnapshot: true, reread: 500, wanted: false },
  { name: 'from a snapshot, more than a tenth re-read', chunks: 5000, minChunks: 2000, fromSnapshot: true, reread: 501, wanted: true },
  { name: 'from a snapshot, much re-read but now small', chunks: 1000, minChunks: 2000, fromSnapshot: true, reread: 900, wanted: false },
];

for (const { name, chunks, minChunks, fromSnapshot, reread, wanted } of cases) {
  it(`a load leaves a snapshot or not: ${name}`, () => {
    assert.equal(snapshotWanted(chunks, minChunks, fromSnapshot, reread), wanted);
  });
}
