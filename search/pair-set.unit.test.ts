import assert from 'node:assert/strict';
import { it } from 'node:test';
import { PairSet } from './pair-set.js';

it('tells a pair met since the last clear from a new one, negatives included, as a set of strings would', () => {
  const pairs = new PairSet();
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % 50;
  for (const size of [3, 40, 500, 5000]) {
    pairs.clear(size);
    const reference = new Set<string>();
    for (let i = 0; i < size; i++) {
      const [a, b] = [next() - 1, next()];
      assert.equal(pairs.add(a, b), !reference.has(`${a},${b}`), `pair ${a},${b} of ${size}`);
      reference.add(`${a},${b}`);
    }
  }
  pairs.clear(1);
  assert.equal(pairs.add(-1, 0), true, 'forgotten by clear');
  assert.equal(pairs.add(-1, 0), false);
  assert.equal(pairs.add(0, -1), true, 'order matters');
});
