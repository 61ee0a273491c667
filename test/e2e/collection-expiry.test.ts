/**
 * An ephemeral collection past its expiry is gone for every read, before the sweeper deletes its
 * row: it is not found, not listed, not readable, and not counted against MAX_COLLECTIONS_PER_TENANT.
 * Against the stack's database (the stand-in in CI), in a database of its own.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { connectDatabase, type Database } from '../../store/db.js';
import { CollectionRepository } from '../../store/collections.js';
import { stack } from '../support/client.js';

describe('collection expiry in the store', () => {
  let database: Database | null = null;
  after(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it('an expired collection is neither found, listed, readable nor counted', async () => {
    database = await connectDatabase(stack().serviceEnv.MONGODB_URI!, `collection_expiry_${Date.now().toString(36)}`);
    const collections = new CollectionRepository(database.db);
    await collections.ensureIndexes();
    const tenant = 'tenant-expiry';
    const now = Date.now();
    const base = { tenant_id: tenant, description: null, metadata: {}, created_at: new Date(now) };
    await collections.create({ ...base, id: 'kept', name: 'kept' });
    await collections.create({ ...base, id: 'ephemeral-live', name: 'ephemeral-live', expires_at: new Date(now + 3_600_000) });
    await collections.create({ ...base, id: 'ephemeral-expired', name: 'ephemeral-expired', expires_at: new Date(now - 1000) });

    assert.equal(await collections.countForTenant(tenant), 2, 'the limit counts live collections only');
    assert.equal(await collections.findById(tenant, 'ephemeral-expired'), null);
    assert.equal(await collections.findByName(tenant, 'ephemeral-expired'), null);
    assert.equal((await collections.findById(tenant, 'ephemeral-live'))?.id, 'ephemeral-live');
    const listed = await collections.list(tenant, 0, 10);
    assert.deepEqual(listed.items.map((collection) => collection.id).sort(), ['ephemeral-live', 'kept']);
    assert.equal(listed.total, 2);
    const readable = await collections.existing(tenant, ['kept', 'ephemeral-live', 'ephemeral-expired']);
    assert.deepEqual([...readable.entries()].sort(), [
      ['ephemeral-live', { ephemeral: true }],
      ['kept', { ephemeral: false }],
    ]);
    assert.equal(await collections.countForTenant('another-tenant'), 0);
  });
});
