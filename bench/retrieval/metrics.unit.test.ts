import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate, evidenceRanks, firstEvidenceRank, rankedTurns, recallAtK, reciprocalRank, scoreQuestion, turnKey } from './metrics.js';

const hit = (memory_id: string, message_index?: number, chunk_index = 0) => ({
  memory_id,
  chunk_index,
  source: message_index === undefined ? { type: 'text' } : { type: 'message', message_index },
});

describe('rankedTurns', () => {
  it('maps hits to memory:message keys and keeps the first occurrence of each turn', () => {
    const ranked = rankedTurns([hit('a', 4, 5), hit('b', 2), hit('a', 4, 6), hit('a', 3), hit('b', 2, 1)]);
    assert.deepEqual(ranked, ['a:4', 'b:2', 'a:3']);
  });

  it('gives hits without a message index their own rank under a key no turn matches', () => {
    const ranked = rankedTurns([hit('doc', undefined, 0), hit('c', 1), hit('doc', undefined, 0), hit('doc', undefined, 1)]);
    assert.deepEqual(ranked, ['doc#chunk0', 'c:1', 'doc#chunk1']);
    assert.equal(recallAtK(ranked, [turnKey('c', 1)], 1), 0);
    assert.equal(recallAtK(ranked, [turnKey('c', 1)], 2), 1);
  });
});

describe('recallAtK', () => {
  const ranked = ['a:1', 'a:3', 'b:2', 'c:0', 'd:6', 'e:1', 'f:1', 'g:1', 'h:1', 'i:1', 'j:1'];

  it('is 1 when the single evidence turn is within the top k, 0 otherwise', () => {
    assert.equal(recallAtK(ranked, ['d:6'], 5), 1);
    assert.equal(recallAtK(ranked, ['d:6'], 4), 0);
    assert.equal(recallAtK(ranked, ['j:1'], 10), 0);
    assert.equal(recallAtK(ranked, ['j:1'], 11), 1);
  });

  it('counts the fraction of distinct evidence turns found', () => {
    assert.equal(recallAtK(ranked, ['a:3', 'z:9'], 5), 0.5);
    assert.equal(recallAtK(ranked, ['a:3', 'e:1'], 5), 0.5);
    assert.equal(recallAtK(ranked, ['a:3', 'e:1'], 10), 1);
    assert.equal(recallAtK(ranked, ['a:3', 'a:3'], 5), 1, 'duplicate evidence counts once');
  });

  it('counts distinct turns: a repeated key does not take a second place in the top k', () => {
    assert.equal(recallAtK(['a:1', 'a:1', 'b:1'], ['b:1'], 2), 1);
  });

  it('handles rankings shorter than k and empty ones', () => {
    assert.equal(recallAtK(['a:1'], ['a:1'], 10), 1);
    assert.equal(recallAtK([], ['a:1'], 10), 0);
  });

  it('rejects a bad k and an empty evidence list', () => {
    assert.throws(() => recallAtK(ranked, ['a:1'], 0), RangeError);
    assert.throws(() => recallAtK(ranked, ['a:1'], 2.5), RangeError);
    assert.throws(() => recallAtK(ranked, [], 5), RangeError);
  });
});

describe('reciprocalRank', () => {
  it('is 1 / rank of the first evidence turn', () => {
    assert.equal(reciprocalRank(['x:0', 'y:0', 'a:1'], ['a:1']), 1 / 3);
    assert.equal(reciprocalRank(['a:1', 'y:0'], ['a:1']), 1);
    assert.equal(reciprocalRank(['x:0', 'b:2', 'a:1'], ['a:1', 'b:2']), 1 / 2, 'whichever evidence turn comes first');
  });

  it('is 0 when no evidence turn is ranked', () => {
    assert.equal(reciprocalRank(['x:0', 'y:0'], ['a:1']), 0);
    assert.equal(reciprocalRank([], ['a:1']), 0);
    assert.equal(firstEvidenceRank(['x:0'], ['a:1']), null);
  });

  it('ignores repeated keys when ranking', () => {
    assert.equal(reciprocalRank(['x:0', 'x:0', 'a:1'], ['a:1']), 1 / 2);
  });
});

describe('evidenceRanks and aggregates', () => {
  it('reports the rank of every evidence turn', () => {
    assert.deepEqual(evidenceRanks(['x:0', 'b:2', 'y:0', 'a:1'], ['a:1', 'b:2', 'c:3']), [4, 2, null]);
  });

  it('averages per question', () => {
    const scores = [scoreQuestion(['a:1'], ['a:1']), scoreQuestion(['x', 'y', 'z', 'w', 'v', 'a:1'], ['a:1']), scoreQuestion([], ['a:1'])];
    assert.deepEqual(scores[1], { recallAt5: 0, recallAt10: 1, reciprocalRank: 1 / 6 });
    const summary = aggregate(scores);
    assert.equal(summary.questions, 3);
    assert.equal(summary.recallAt5, 1 / 3);
    assert.equal(summary.recallAt10, 2 / 3);
    assert.ok(Math.abs(summary.mrr - (1 + 1 / 6) / 3) < 1e-12);
  });

  it('gives NaN figures for no questions', () => {
    const summary = aggregate([]);
    assert.equal(summary.questions, 0);
    assert.ok(Number.isNaN(summary.recallAt10));
  });
});
