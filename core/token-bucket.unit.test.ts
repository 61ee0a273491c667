import assert from 'node:assert/strict';
import { it } from 'node:test';
import { TokenBuckets } from './token-bucket.js';

it('allows a burst, then asks to wait, then refills', () => {
  let clock = 0;
  const buckets = new TokenBuckets(2, 3, () => clock);
  assert.deepEqual([buckets.take('k'), buckets.take('k'), buckets.take('k')], [0, 0, 0]);
  assert.equal(buckets.take('k'), 1);
  clock += 500;
  assert.equal(buckets.take('k'), 0);
  assert.ok(buckets.take('k') >= 1);
  assert.equal(buckets.take('other'), 0, 'keys are independent');
});

it('peeks without taking, and answers the wait once the bucket is empty', () => {
  let clock = 0;
  const buckets = new TokenBuckets(0.5, 2, () => clock);
  assert.equal(buckets.peek('a'), 0, 'an unseen key has its burst');
  assert.equal(buckets.take('a'), 0);
  assert.equal(buckets.peek('a'), 0);
  assert.equal(buckets.peek('a'), 0, 'peeking took nothing');
  assert.equal(buckets.take('a'), 0);
  assert.equal(buckets.peek('a'), 2, 'empty: one token in 2 s');
  clock += 2000;
  assert.equal(buckets.peek('a'), 0);
});

it('stays bounded under a flood of keys, forgetting refilled buckets first', () => {
  let clock = 0;
  const buckets = new TokenBuckets(1, 1, () => clock, 100);
  assert.equal(buckets.take('victim'), 0);
  for (let i = 0; i < 99; i++) buckets.take(`full-${i}`);
  clock += 5000; // every bucket has refilled
  for (let i = 0; i < 1000; i++) buckets.take(`flood-${i}`);
  assert.ok(buckets.size <= 100, `bounded: ${buckets.size}`);
});
