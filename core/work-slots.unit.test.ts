import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkSlots } from './work-slots.js';

const released = (outcome: ReturnType<WorkSlots['acquire']>): (() => void) => {
  assert.ok('release' in outcome, `expected a slot, got ${JSON.stringify(outcome)}`);
  return outcome.release;
};

describe('work slots', () => {
  it('bounds each key and the process, refusing at once and naming the limit', () => {
    const slots = new WorkSlots(3, 2);
    released(slots.acquire('a'));
    const second = released(slots.acquire('a'));
    assert.deepEqual(slots.acquire('a'), { refused: 'key' }, 'a third call of one tenant');
    released(slots.acquire('b'));
    assert.deepEqual(slots.acquire('c'), { refused: 'process' }, 'the process is full');
    second();
    second(); // releasing twice gives back one slot only
    assert.equal(slots.active(), 2);
    assert.equal(slots.active('a'), 1);
    released(slots.acquire('c'));
  });

  it('gives the slot back when the call is abandoned, before the call itself ends', () => {
    const slots = new WorkSlots(1, 1);
    const controller = new AbortController();
    const release = released(slots.acquire('a', controller.signal));
    assert.deepEqual(slots.acquire('b'), { refused: 'process' });
    controller.abort(new Error('deadline'));
    assert.equal(slots.active(), 0, 'the abandoned call no longer counts');
    const next = released(slots.acquire('b'));
    release(); // the abandoned call ends later: it must not free the slot the next call holds
    assert.equal(slots.active('b'), 1);
    assert.equal(slots.active(), 1);
    next();
    assert.equal(slots.active(), 0);
  });

  it('never counts a call whose signal had already aborted', () => {
    const slots = new WorkSlots(1, 1);
    const controller = new AbortController();
    controller.abort();
    released(slots.acquire('a', controller.signal));
    assert.equal(slots.active(), 0);
  });
});

describe('weighted work slots (request bytes in flight)', () => {
  it('counts weights against both limits, and admits one call of any weight when nothing else is held', () => {
    const slots = new WorkSlots(100, 60);
    const big = released(slots.acquire('a', undefined, 250));
    assert.equal(slots.active(), 250, 'alone, a call over both limits is admitted');
    assert.deepEqual(slots.acquire('b', undefined, 1), { refused: 'process' });
    big();
    const first = released(slots.acquire('a', undefined, 40));
    assert.deepEqual(slots.acquire('a', undefined, 30), { refused: 'key' }, "40 + 30 is over the tenant's 60");
    released(slots.acquire('a', undefined, 20));
    released(slots.acquire('b', undefined, 40));
    assert.deepEqual(slots.acquire('c', undefined, 1), { refused: 'process' }, '100 of 100 held');
    first();
    assert.equal(slots.active('a'), 20);
    assert.equal(slots.active(), 60);
  });
});
