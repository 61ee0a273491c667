import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_RETRY_SCHEDULE_MS, MAX_RETRY_AFTER_MS, outcomeOf, parseRetryAfter, retryDelayMs } from './webhook-retry.js';

const S = DEFAULT_RETRY_SCHEDULE_MS;
const NOW = Date.parse('2026-11-26T10:00:00Z');

describe('webhook retry schedule', () => {
  it('follows the spec example: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then 10 h again', () => {
    const steps = [1, 2, 3, 4, 5, 6, 7, 8, 20].map((failed) => retryDelayMs(S, failed, 0.5));
    assert.deepEqual(steps, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, 36_000_000, 36_000_000]);
  });

  it('spreads each delay by at most ±20 %', () => {
    assert.equal(retryDelayMs(S, 1, 0), 4_000);
    assert.equal(retryDelayMs(S, 1, 0.999999), 6_000);
    assert.equal(retryDelayMs([0, 0], 1, 0.7), 0);
  });

  it('refuses an empty schedule', () => {
    assert.throws(() => retryDelayMs([], 1, 0));
  });
});

describe('Retry-After', () => {
  const table: [string | undefined, number | null][] = [
    [undefined, null],
    ['', null],
    ['soon', null],
    ['0', 0],
    ['120', 120_000],
    [' 7 ', 7_000],
    ['99999999', MAX_RETRY_AFTER_MS],
    ['Thu, 26 Nov 2026 10:00:30 GMT', 30_000],
    ['Thu, 26 Nov 2026 09:00:00 GMT', 0],
    ['-5', null],
  ];
  for (const [value, expected] of table) {
    it(`${JSON.stringify(value)} → ${expected}`, () => assert.equal(parseRetryAfter(value, NOW), expected));
  }
});

describe('attempt outcomes', () => {
  const table: [number | null, string | undefined, string, number | null][] = [
    [200, undefined, 'delivered', null],
    [204, undefined, 'delivered', null],
    [299, undefined, 'delivered', null],
    [301, undefined, 'retry', 5_000],
    [400, '60', 'retry', 5_000], // Retry-After counts only on 429 and 503
    [410, undefined, 'gone', null],
    [429, '60', 'retry', 60_000],
    [503, '2', 'retry', 5_000], // never sooner than the schedule
    [503, undefined, 'retry', 5_000],
    [500, undefined, 'retry', 5_000],
    [null, undefined, 'retry', 5_000],
  ];
  for (const [status, retryAfter, kind, delay] of table) {
    it(`${status ?? 'no answer'}${retryAfter ? ` Retry-After ${retryAfter}` : ''} → ${kind}`, () => {
      const outcome = outcomeOf(status, retryAfter, 1, S, NOW, 0.5);
      assert.equal(outcome.kind, kind);
      if (outcome.kind === 'retry') assert.equal(outcome.delayMs, delay);
    });
  }
});
