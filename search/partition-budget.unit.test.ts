import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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

describe('tenant fairness in eviction', () => {
  const IDLE_MS = 60_000;
  // Each row: the budget, the partitions in recency order (oldest first) with owner and bytes,
  // the held ones, and the victims expected.
  const cases: {
    name: string;
    maxBytes: number;
    /** touchedAt: when last searched (default: now, IDLE_MS after 0). */
    loaded: [id: string, tenant: string, bytes: number, touchedAt?: number][];
    held?: string[];
    victims: string[];
  }[] = [
    {
      name: "a tenant cycling collections evicts its own, not another tenant's older hot one",
      maxBytes: 300,
      loaded: [
        ['b-hot', 'B', 100],
        ['a1', 'A', 100],
        ['a2', 'A', 100],
        ['a3', 'A', 100],
      ],
      victims: ['a1'],
    },
    {
      name: 'the tenant furthest over its share goes first, then the next',
      maxBytes: 300,
      loaded: [
        ['c1', 'C', 50],
        ['b1', 'B', 100],
        ['a1', 'A', 100],
        ['b2', 'B', 100],
        ['a2', 'A', 100],
        ['a3', 'A', 100],
      ],
      victims: ['a1', 'b1', 'a2'],
    },
    {
      name: 'tenants equally over their share: the least recently used goes',
      maxBytes: 300,
      loaded: [
        ['b1', 'B', 100],
        ['a1', 'A', 100],
        ['c1', 'C', 100],
        ['d1', 'D', 100],
      ],
      victims: ['b1'],
    },
    {
      name: "the over-share tenant's partitions are all held: a tenant within its share keeps its recent ones",
      maxBytes: 300,
      loaded: [
        ['b1', 'B', 100],
        ['b2', 'B', 50],
        ['a1', 'A', 100],
        ['a2', 'A', 100],
      ],
      held: ['a1', 'a2'],
      victims: [],
    },
    {
      name: 'then idle partitions go, whoever owns them, least recently searched first',
      maxBytes: 300,
      loaded: [
        ['c1', 'C', 50, 0],
        ['c2', 'C', 20, 0],
        ['b1', 'B', 60],
        ['a1', 'A', 100],
        ['a2', 'A', 100],
      ],
      held: ['a1', 'a2'],
      victims: ['c1'],
    },
    {
      name: 'a single tenant: plain least recently used',
      maxBytes: 200,
      loaded: [
        ['a1', 'A', 100],
        ['a2', 'A', 100],
        ['a3', 'A', 100],
      ],
      victims: ['a1'],
    },
  ];
  for (const testCase of cases) {
    it(testCase.name, () => {
      let now = 0;
      const budget = new PartitionBudget(testCase.maxBytes, IDLE_MS, () => now);
      for (const [id, tenant, , touchedAt] of testCase.loaded) {
        now = touchedAt ?? IDLE_MS;
        budget.touch(id, tenant);
      }
      now = IDLE_MS;
      for (const id of testCase.held ?? []) budget.hold(id);
      const all = new Map(testCase.loaded.map(([id, , bytes]) => [id, bytes]));
      assert.deepEqual(budget.victims(all), testCase.victims);
    });
  }
});

describe('pinned bytes', () => {
  const cases: { name: string; held: string[]; loading: string[]; pinned: number }[] = [
    { name: 'nothing held or loading', held: [], loading: [], pinned: 0 },
    { name: 'held ones count', held: ['a', 'b'], loading: [], pinned: 30 },
    { name: 'loading ones count', held: [], loading: ['c'], pinned: 100 },
    { name: 'held and loading, each once', held: ['a', 'c'], loading: ['c'], pinned: 110 },
  ];
  for (const testCase of cases) {
    it(testCase.name, () => {
      const budget = new PartitionBudget(1000);
      for (const id of testCase.held) budget.hold(id, 'T');
      const loading = new Set(testCase.loading);
      assert.equal(
        budget.pinnedBytes(sizes({ a: 10, b: 20, c: 100 }), (id) => loading.has(id)),
        testCase.pinned,
      );
    });
  }
});
