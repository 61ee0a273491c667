import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../core/logger.js';
import type { Store } from '../store/index.js';
import { SearchIndex } from './search-index.js';

/** Residents never touch the store: an index that is never started needs none. */
const noStore = {} as Store;

describe('search index residents (prepared device snapshots under the index budget)', () => {
  const index = (maxBytes: number) => new SearchIndex(noStore, 'test/model', 4, createLogger('test', 'silent'), { maxBytes });

  it('counts residents in the budget and evicts them like partitions: the tenant furthest over its share first', () => {
    const search = index(100_000);
    const dropped: string[] = [];
    assert.ok(search.admitResident('snapshot:a1', 'tenant-a', 30_000, () => dropped.push('a1')));
    assert.ok(search.admitResident('snapshot:a2', 'tenant-a', 30_000, () => dropped.push('a2')));
    assert.ok(search.admitResident('snapshot:b1', 'tenant-b', 30_000, () => dropped.push('b1')));
    assert.deepEqual(search.budgetStats().bytes, 90_000);
    assert.equal(search.budgetStats().residents, 3);
    // Tenant b grows past the budget: tenant a holds the most beyond its fair share (50,000), its oldest goes.
    assert.ok(search.resizeResident('snapshot:b1', 45_000));
    assert.deepEqual(dropped, ['a1']);
    assert.equal(search.budgetStats().bytes, 75_000);
  });

  it('refuses a resident larger than the whole budget, and forgets one its holder lets go', () => {
    const search = index(100_000);
    let dropped = 0;
    assert.equal(
      search.admitResident('snapshot:huge', 'tenant-a', 200_000, () => (dropped += 1)),
      false,
    );
    assert.equal(dropped, 1, 'it was evicted at once (its holder is told either way)');
    assert.equal(search.budgetStats().residents, 0);
    assert.ok(search.admitResident('snapshot:x', 'tenant-a', 10_000, () => (dropped += 1)));
    search.removeResident('snapshot:x');
    assert.equal(search.budgetStats().bytes, 0);
    assert.equal(search.resizeResident('snapshot:x', 5), false);
    assert.equal(dropped, 1, 'a resident its holder let go is not dropped again');
  });
});
