import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchNumber } from './env.js';

describe('benchNumber', () => {
  for (const [raw, expected] of [
    [undefined, 7],
    ['', 7],
    ['  ', 7],
    ['100', 100],
    ['0', 0],
    ['1e3', 1000],
    ['2.5', 2.5],
  ] as const) {
    it(`${JSON.stringify(raw)} → ${expected}`, () => assert.equal(benchNumber('BENCH_X', 7, { BENCH_X: raw }), expected));
  }
  for (const raw of ['abc', '-1', 'Infinity', 'NaN', '10k']) {
    it(`refuses ${JSON.stringify(raw)}, naming the variable`, () =>
      assert.throws(() => benchNumber('BENCH_X', 7, { BENCH_X: raw }), /BENCH_X=/));
  }
});
