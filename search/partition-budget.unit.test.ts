import assert from 'node:assert/strict';
import { it } from 'node:test';
import { PartitionBudget } from './partition-budget.js';

const sizes = (entries: Record<string, number>) => new Map(Object.entries(entries));

it('evicts nothing within the budget', () => {
  const budget = new PartitionBudget(100);
  for (const id of ['a', 'b']) budget.touch(id);
  assert.deepEqual(budget.victims(sizes({ a: 50, b: 50 })), []);
});

it('evicts the least recently searched first, only as many as needed', () => {
  const budget = new PartitionBudget(100);
  for (const id of ['a', 'b', 'c', 'd']) budget.touch(id);
  budget.touch('a'); // a searched again: b is now the oldest
  assert.deepEqual(budget.victims(sizes({ a: 40, b: 40, c: 40, d: 40 })), ['b', 'c']);
});

it('never evicts a held collection or one being loaded; over budget until they are released', () => {
  const budget = new PartitionBudget(100);
  for (const id of ['a', 'b', 'c']) budget.touch(id);
  budget.hold('a');
  budget.hold('a');
  const loading = new Set(['b']);
  const all = sizes({ a: 80, b: 80, c: 80 });
  assert.deepEqual(
    budget.victims(all, (id) => loading.has(id)),
    ['c'],
  );
  assert.deepEqual(
    budget.victims(sizes({ a: 80, b: 80 }), (id) => loading.has(id)),
    [],
    'only held and loading remain',
  );
  budget.release('a');
  assert.ok(budget.isHeld('a'), 'two holds, one release');
  budget.release('a');
  loading.clear();
  budget.touch('b');
  assert.deepEqual(budget.victims(sizes({ a: 80, b: 80 })), ['a'], 'released: the older one goes');
});

it('a held collection becomes the most recent, and a forgotten one leaves the order', () => {
  const budget = new PartitionBudget(50);
  for (const id of ['a', 'b', 'c']) budget.touch(id);
  budget.hold('a');
  budget.release('a');
  budget.forget('b');
  assert.deepEqual(budget.victims(sizes({ a: 30, c: 30 })), ['c']);
  assert.deepEqual(budget.victims(sizes({ a: 30, b: 30, c: 30 })), ['b', 'c'], 'an untracked loaded partition goes first');
});

it('a single partition larger than the budget is evicted once nothing holds it', () => {
  const budget = new PartitionBudget(10);
  budget.hold('big');
  assert.deepEqual(budget.victims(sizes({ big: 100 })), []);
  budget.release('big');
  assert.deepEqual(budget.victims(sizes({ big: 100 })), ['big']);
});
