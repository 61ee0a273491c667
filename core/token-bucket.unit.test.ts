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
