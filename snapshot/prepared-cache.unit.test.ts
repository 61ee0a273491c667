import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GraphPartition } from '../search/graph-index.js';
import { PreparedSnapshotCache, preparedBytes, type OpenedSnapshot, type ResidentBudget } from './prepared-cache.js';

const opened = (snapshotId: string | null, bodyBytes = 1000): OpenedSnapshot => ({
  graphId: 'g',
  snapshotId,
  body: { episodes: [], entities: [], facts: [], mentions: [] },
  bodyBytes,
});

/** A budget that records what it was told and admits up to `maxBytes`, evicting nothing itself. */
class RecordingBudget implements ResidentBudget {
  readonly held = new Map<string, { tenantId: string; bytes: number; drop: () => void }>();
  constructor(private readonly maxBytes = Infinity) {}
  admitResident(key: string, tenantId: string, bytes: number, drop: () => void): boolean {
    if (bytes > this.maxBytes) return false;
    this.held.set(key, { tenantId, bytes, drop });
    return true;
  }
  touchResident(): void {}
  resizeResident(key: string, bytes: number): boolean {
    if (bytes > this.maxBytes) {
      this.held.delete(key);
      return false;
    }
    this.held.get(key)!.bytes = bytes;
    return true;
  }
  removeResident(key: string): void {
    this.held.delete(key);
  }
  /** What the search index does when it evicts a resident. */
  evict(key: string): void {
    const resident = this.held.get(key)!;
    this.held.delete(key);
    resident.drop();
  }
}

describe('prepared snapshot cache', () => {
  // A cached entry of one tenant must never serve another, whatever the ids look like.
  const isolation: [string, [string, string], [string, string]][] = [
    ['another tenant, the same snapshot', ['tenant-a', '1.2 sha256:aa'], ['tenant-b', '1.2 sha256:aa']],
    ['a tenant id that is a prefix of the other', ['tenant', '1.2 sha256:aa'], ['tenant-a', '1.2 sha256:aa']],
    ['parts that concatenate alike', ['a 1.2', 'sha256:aa'], ['a', '1.2 sha256:aa']],
    ['a separator inside the tenant id', ['a","1.2 sha256:aa', 'x'], ['a', '1.2 sha256:aa","x']],
    ['an empty tenant id', ['', '1.2 sha256:aa'], ['tenant-a', '1.2 sha256:aa']],
    ['the same tenant, another version of the same digest', ['tenant-a', '1.1 sha256:aa'], ['tenant-a', '1.2 sha256:aa']],
  ];
  for (const [name, [ownerTenant, ownerId], [otherTenant, otherId]] of isolation) {
    it(`never serves an entry across ${name}`, async () => {
      const cache = new PreparedSnapshotCache(8, new RecordingBudget());
      const entry = opened(ownerId);
      cache.store(ownerTenant, entry);
      assert.equal(cache.lookup(otherTenant, otherId), undefined);
      assert.equal(cache.lookup(ownerTenant, ownerId), entry, 'the owner still finds it');
      // Nor does the other tenant's graph index land in the owner's entry.
      await cache.partitionOf(otherTenant, { ...entry, snapshotId: otherId }, async () => new GraphPartition());
      assert.equal(cache.lookup(ownerTenant, ownerId)!.partition, undefined);
    });
  }

  it('keeps at most maxEntries, least recently used out first, and tells the budget', () => {
    const budget = new RecordingBudget();
    const cache = new PreparedSnapshotCache(2, budget);
    cache.store('t', opened('s1'));
    cache.store('t', opened('s2'));
    assert.ok(cache.lookup('t', 's1'));
    cache.store('t', opened('s3'));
    assert.equal(cache.lookup('t', 's2'), undefined, 's2 was the least recently used');
    assert.ok(cache.lookup('t', 's1'));
    assert.ok(cache.lookup('t', 's3'));
    assert.equal(budget.held.size, 2, 'the evicted entry left the budget too');
    assert.deepEqual(cache.stats(), { entries: 2, hits: 3, misses: 1 });
  });

  it('holds nothing the budget refuses, and lets the budget evict', () => {
    const budget = new RecordingBudget(5000);
    const cache = new PreparedSnapshotCache(8, budget);
    cache.store('t', opened('big', 10_000));
    assert.equal(cache.lookup('t', 'big'), undefined);
    cache.store('t', opened('small', 100));
    const [key] = [...budget.held.keys()];
    budget.evict(key!);
    assert.equal(cache.lookup('t', 'small'), undefined);
    assert.equal(cache.stats().entries, 0);
  });

  it('builds a snapshot graph index once, counts it, and drops the entry when it no longer fits', async () => {
    const budget = new RecordingBudget();
    const cache = new PreparedSnapshotCache(8, budget);
    const entry = opened('s', 100);
    entry.body.entities.push({
      id: 'e',
      key: 'e',
      name: 'E',
      category: 'person',
      aliases: [],
      alias_keys: ['e'],
      description: '',
      weight: 1,
      name_vector: null,
    });
    cache.store('t', entry);
    const before = [...budget.held.values()][0]!.bytes;
    let builds = 0;
    const build = async (): Promise<GraphPartition> => {
      builds += 1;
      return new GraphPartition();
    };
    // Callers hold copies of the entry's fields (the service spreads it): the index still lands in the entry.
    const first = await cache.partitionOf('t', { ...cache.lookup('t', 's')! }, build);
    const second = await cache.partitionOf('t', { ...cache.lookup('t', 's')! }, build);
    assert.equal(first, second);
    assert.equal(builds, 1);
    assert.ok([...budget.held.values()][0]!.bytes > before, 'the index is counted in the budget');
    assert.equal(preparedBytes(cache.lookup('t', 's')!), [...budget.held.values()][0]!.bytes);

    const tight = new PreparedSnapshotCache(8, new RecordingBudget(before));
    const other = opened('s', 100);
    other.body.entities.push(entry.body.entities[0]!);
    tight.store('t', other);
    await tight.partitionOf('t', other, build);
    assert.equal(tight.lookup('t', 's'), undefined, 'past the budget with its index, it is let go');
  });

  it('stores nothing when turned off, nor the empty snapshot', () => {
    const off = new PreparedSnapshotCache(0, new RecordingBudget());
    off.store('t', opened('s'));
    assert.equal(off.lookup('t', 's'), undefined);
    const cache = new PreparedSnapshotCache(8, new RecordingBudget());
    cache.store('t', opened(null));
    assert.equal(cache.stats().entries, 0);
  });
});

describe('prepared snapshots found by the bytes a request carried', () => {
  const digest = (n: number) => `sha256:${String(n).padStart(64, '0')}`;

  // Bytes a tenant sent are found only by that tenant, and only while the entry they opened to is held.
  const isolation: [name: string, tenant: string][] = [
    ['another tenant', 'tenant-b'],
    ['a tenant id that is a prefix', 'tenant'],
    ['an empty tenant id', ''],
    ['a tenant id holding the separator', 'tenant-a","sha256:'],
  ];
  for (const [name, other] of isolation) {
    it(`never serves them to ${name}`, () => {
      const cache = new PreparedSnapshotCache(8, new RecordingBudget());
      const entry = opened('2.0 sha256:aa');
      cache.store('tenant-a', entry);
      cache.rememberSpan('tenant-a', digest(1), entry);
      assert.equal(cache.bySpan(other, digest(1)), null);
      assert.equal(cache.bySpan('tenant-a', digest(1)), entry, 'the owner still finds it');
    });
  }

  it('remembers bytes only for the entry held, and forgets them with it', () => {
    const budget = new RecordingBudget();
    const cache = new PreparedSnapshotCache(8, budget);
    const entry = opened('2.0 sha256:aa');
    cache.rememberSpan('tenant-a', digest(1), entry);
    assert.equal(cache.bySpan('tenant-a', digest(1)), null, 'not held: nothing to remember');
    cache.store('tenant-a', entry);
    cache.rememberSpan('tenant-a', digest(1), entry);
    assert.equal(cache.bySpan('tenant-a', digest(1)), entry);
    // Another opening of the same body (another header) replaces the entry: the bytes of the first no longer lead anywhere.
    const reopened = opened('2.0 sha256:aa');
    cache.store('tenant-a', reopened);
    assert.equal(cache.bySpan('tenant-a', digest(1)), null);
    cache.rememberSpan('tenant-a', digest(2), reopened);
    budget.evict([...budget.held.keys()][0]!);
    assert.equal(cache.bySpan('tenant-a', digest(2)), null, 'evicted by the budget');
  });

  it('keeps a few spellings of one snapshot, the oldest out first', () => {
    const cache = new PreparedSnapshotCache(8, new RecordingBudget());
    const entry = opened('2.0 sha256:aa');
    cache.store('tenant-a', entry);
    for (let n = 1; n <= 5; n++) cache.rememberSpan('tenant-a', digest(n), entry);
    assert.equal(cache.bySpan('tenant-a', digest(1)), null);
    for (let n = 2; n <= 5; n++) assert.equal(cache.bySpan('tenant-a', digest(n)), entry);
  });

  it('counts a find by bytes as a hit and moves the entry to the back of the eviction order', () => {
    const cache = new PreparedSnapshotCache(2, new RecordingBudget());
    const first = opened('2.0 sha256:aa');
    cache.store('tenant-a', first);
    cache.rememberSpan('tenant-a', digest(1), first);
    cache.store('tenant-a', opened('2.0 sha256:bb'));
    assert.equal(cache.bySpan('tenant-a', digest(1)), first);
    cache.store('tenant-a', opened('2.0 sha256:cc'));
    assert.equal(cache.bySpan('tenant-a', digest(1)), first, 'the least recently used was the other one');
    assert.equal(cache.stats().hits, 2);
  });
});
