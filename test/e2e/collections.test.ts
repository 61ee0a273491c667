import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { newTenant, type TenantFixture } from '../support/client.js';

describe('collections', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('collections');
  });

  it('creates a collection (201) and retrieves it by id and by name', async () => {
    const created = await tenant.api.post('/v1/collections', { name: 'research notes', description: 'papers', metadata: { team: 'ml' } });
    assert.equal(created.status, 201);
    const { id } = created.body.results;
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(created.headers.get('location'), `/v1/collections/${id}`);
    const byId = await tenant.api.get(`/v1/collections/${id}`);
    assert.equal(byId.status, 200);
    assert.deepEqual(byId.body.results, created.body.results);
    const byName = await tenant.api.get(`/v1/collections/by-name/${encodeURIComponent('research notes')}`);
    assert.equal(byName.status, 200);
    assert.equal(byName.body.results.id, id);
    assert.equal(byName.body.results.metadata.team, 'ml');
  });

  it('refuses a duplicate name within a tenant with 409 and allows it in another tenant', async () => {
    await tenant.api.post('/v1/collections', { name: 'dup' });
    const again = await tenant.api.post('/v1/collections', { name: 'dup' });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'collection_name_taken');
    assert.equal(again.body.error.details[0].field, 'name');
    const other = await newTenant('collections-other');
    assert.equal((await other.api.post('/v1/collections', { name: 'dup' })).status, 201);
  });

  it('lists with the envelope and paging', async () => {
    const list = await tenant.api.get('/v1/collections?limit=2&offset=0');
    assert.equal(list.status, 200);
    assert.equal(list.body.total_entries, 3);
    assert.equal(list.body.results.length, 2);
    const rest = await tenant.api.get('/v1/collections?limit=2&offset=2');
    assert.equal(rest.body.results.length, 1);
  });

  it('answers bad input with 400 naming the field', async () => {
    const missing = await tenant.api.post('/v1/collections', {});
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'validation_failed');
    assert.equal(missing.body.error.details[0].field, 'name');
    const wrongType = await tenant.api.post('/v1/collections', { name: 42 });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.body.error.details[0].field, 'name');
    const unknownField = await tenant.api.post('/v1/collections', { name: 'x', colour: 'red' });
    assert.equal(unknownField.status, 400);
    assert.match(unknownField.body.error.details[0].issue, /colour/);
    const badId = await tenant.api.get('/v1/collections/not-a-uuid');
    assert.equal(badId.status, 400);
    assert.equal(badId.body.error.details[0].field, 'collection_id');
    const missingId = await tenant.api.get('/v1/collections/00000000-0000-4000-8000-000000000000');
    assert.equal(missingId.status, 404);
    const badLimit = await tenant.api.get('/v1/collections?limit=0');
    assert.equal(badLimit.status, 400);
    assert.equal(badLimit.body.error.details[0].field, 'limit');
  });
});
