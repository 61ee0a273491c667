import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConcurrencyGate } from './concurrency-gate.js';

it('runs at most `limit` per key, queues the next in order, refuses beyond the queue', async () => {
  const gate = new ConcurrencyGate(2, 2);
  const first = (await gate.acquire('a'))!;
  const second = (await gate.acquire('a'))!;
  assert.equal(gate.active('a'), 2);
  const order: string[] = [];
  const third = gate.acquire('a').then((release) => (order.push('third'), release));
  const fourth = gate.acquire('a').then((release) => (order.push('fourth'), release));
  assert.equal(gate.queued('a'), 2);
  assert.equal(await gate.acquire('a'), null, 'a full queue refuses at once');
  const other = await gate.acquire('b');
  assert.ok(other, 'keys are independent');
  first();
  first(); // a second call is ignored
  const releaseThird = (await third)!;
  assert.deepEqual(order, ['third']);
  assert.equal(gate.active('a'), 2);
  second();
  const releaseFourth = (await fourth)!;
  assert.deepEqual(order, ['third', 'fourth']);
  releaseThird();
  releaseFourth();
  assert.equal(gate.active('a'), 0);
  assert.equal(gate.queued('a'), 0);
});
