import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregateLocomo, evidenceRanks, scoreLocomo } from './metrics.js';
import { parseSessionDate } from './dataset.js';

describe('LoCoMo metric', () => {
  const hits = ['A: one', 'B: two', 'A: three', 'B: four', 'A: five', 'B: six'];

  it('ranks an evidence turn where its full text first appears', () => {
    assert.deepEqual(evidenceRanks(hits, ['A: three', 'B: nine']), [3, null]);
    assert.deepEqual(evidenceRanks(['x A: three y'], ['A: three']), [1]);
  });

  it('scores any/all recall and the reciprocal rank of the first evidence turn', () => {
    assert.deepEqual(scoreLocomo(hits, ['B: six', 'A: three']), { recallAny5: 1, recallAny10: 1, recallAll10: 1, reciprocalRank: 1 / 3 });
    assert.deepEqual(scoreLocomo(hits, ['B: six']), { recallAny5: 0, recallAny10: 1, recallAll10: 1, reciprocalRank: 1 / 6 });
    assert.deepEqual(scoreLocomo(hits, ['A: one', 'B: gone']), { recallAny5: 1, recallAny10: 1, recallAll10: 0, reciprocalRank: 1 });
    assert.deepEqual(scoreLocomo([], ['A: one']), { recallAny5: 0, recallAny10: 0, recallAll10: 0, reciprocalRank: 0 });
    assert.throws(() => scoreLocomo(hits, []), RangeError);
  });

  it('averages over questions', () => {
    const mean = aggregateLocomo([scoreLocomo(hits, ['A: one']), scoreLocomo(hits, ['Z'])]);
    assert.equal(mean.questions, 2);
    assert.equal(mean.recallAny5, 0.5);
    assert.equal(mean.reciprocalRank, 0.5);
  });

  it('reads session dates as UTC instants', () => {
    assert.equal(parseSessionDate('1:56 pm on 8 May, 2023'), '2023-05-08T13:56:00.000Z');
    assert.equal(parseSessionDate('12:09 am on 13 September, 2023'), '2023-09-13T00:09:00.000Z');
    assert.throws(() => parseSessionDate('yesterday'));
  });
});
