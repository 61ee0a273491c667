import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TopSlots } from './top-slots.js';

/** A small deterministic generator, so a failure replays. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('TopSlots', () => {
  for (const [name, tieWeaker] of [
    ['the later slot', undefined],
    ['the slot with the larger key', (a: number, b: number) => String(a % 7) + a > String(b % 7) + b],
  ] as const) {
    it(`keeps exactly what a sort keeps, ties broken by ${name}`, () => {
      const next = random(7);
      for (const limit of [0, 1, 3, 10]) {
        // Scores from a few values, so ties are common.
        const scores = Array.from({ length: 200 }, () => Math.floor(next() * 5));
        const top = new TopSlots(limit, tieWeaker);
        scores.forEach((score, slot) => top.offer(score, slot));
        const weaker = tieWeaker ?? ((a: number, b: number) => a > b);
        const expected = scores
          .map((score, slot) => ({ score, slot }))
          .sort((a, b) => b.score - a.score || (weaker(a.slot, b.slot) ? 1 : -1))
          .slice(0, limit)
          .map((hit) => hit.slot);
        assert.deepEqual(
          top.ranked().map((position) => top.slots[position]),
          expected,
        );
      }
    });
  }

  it('counts -Infinity as the weakest until it is full', () => {
    const top = new TopSlots(2);
    top.push(1, 0);
    assert.equal(top.weakest, -Infinity);
    top.push(3, 1);
    assert.equal(top.weakest, 1);
  });
});
