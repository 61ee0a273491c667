import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activationOf } from './activation.js';

const HOUR = 3_600_000;
const now = Date.UTC(2026, 10, 23, 12);
const ago = (hours: number) => new Date(now - hours * HOUR);

describe('activationOf', () => {
  it('is 0.5 for a memory created just now and decays with age', () => {
    assert.equal(activationOf(ago(0), [], now), 0.5);
    const day = activationOf(ago(24), [], now);
    const month = activationOf(ago(24 * 30), [], now);
    assert.ok(Math.abs(day - 0.1667) < 0.001, `a day: ${day}`);
    assert.ok(month < 0.04 && month > 0.03, `a month: ${month}`);
  });

  it('rises with every use, more for recent ones, and stays below 1', () => {
    const unused = activationOf(ago(48), [], now);
    const usedOnceLongAgo = activationOf(ago(48), [ago(40)], now);
    const usedOnceRecently = activationOf(ago(48), [ago(0.1)], now);
    const usedOften = activationOf(ago(48), [ago(0.5), ago(0.4), ago(0.3), ago(0.2), ago(0.1)], now);
    assert.ok(unused < usedOnceLongAgo && usedOnceLongAgo < usedOnceRecently && usedOnceRecently < usedOften);
    assert.ok(usedOften < 1 && usedOften > 0.8, `often: ${usedOften}`);
  });

  it('treats clock skew (a use in the future) as a use now', () => {
    assert.equal(activationOf(ago(0), [new Date(now + HOUR)], now), activationOf(ago(0), [ago(0)], now));
  });
});
