import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { admin, Api, createMemory, newTenant, sleep, stack, type TenantFixture } from '../support/client.js';

describe('authentication and tenant isolation', () => {
  let alice: TenantFixture;
  let bob: TenantFixture;
  let aliceMemory: string;

  before(async () => {
    [alice, bob] = await Promise.all([newTenant('alice'), newTenant('bob')]);
    aliceMemory = await createMemory(alice, { raw_text: 'Alice keeps her notes here.' });
  });

  it('rejects a request without a key with 401 and a JSON error', async () => {
    const response = await new Api(stack().apiUrl, null).get('/v1/collections');
    assert.equal(response.status, 401);
    assert.equal(response.body.error.code, 'unauthenticated');
    assert.equal(response.body.error.status, 401);
    assert.match(response.body.error.message, /Authorization/);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer');
  });

  it('rejects a malformed and an unknown key with 401', async () => {
    const malformed = await new Api(stack().apiUrl, null).get('/v1/collections', { Authorization: 'Basic abc' });
    assert.equal(malformed.status, 401);
    const unknown = await new Api(stack().apiUrl, 'mk_not-a-real-key').get('/v1/collections');
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.error.code, 'unauthenticated');
  });

  it("answers 404 for another tenant's collection, memory, list and search, as if they did not exist", async () => {
    const collection = await bob.api.get(`/v1/collections/${alice.collectionId}`);
    assert.equal(collection.status, 404);
    assert.equal(collection.body.error.code, 'collection_not_found');
    const memory = await bob.api.get(`/v1/memories/${aliceMemory}`);
    assert.equal(memory.status, 404);
    assert.equal(memory.body.error.code, 'memory_not_found');
    const list = await bob.api.get(`/v1/memories?collection_ids=${alice.collectionId}`);
    assert.equal(list.status, 404);
    const search = await bob.api.post('/v1/memories/search', { query: 'notes', collection_ids: [alice.collectionId] });
    assert.equal(search.status, 404);
    const write = await bob.api.post('/v1/memories', { collection_id: alice.collectionId, raw_text: 'intrusion' });
    assert.equal(write.status, 404);
    const del = await bob.api.delete(`/v1/memories/${aliceMemory}`);
    assert.equal(del.status, 404);
    assert.equal((await alice.api.get(`/v1/memories/${aliceMemory}`)).status, 200, 'still there for its owner');
  });

  it("lists only the caller's own memories and collections", async () => {
    const bobList = await bob.api.get('/v1/memories');
    assert.equal(bobList.status, 200);
    assert.ok(bobList.body.results.every((memory: { id: string }) => memory.id !== aliceMemory));
    const bobCollections = await bob.api.get('/v1/collections');
    assert.deepEqual(
      bobCollections.body.results.map((c: { id: string }) => c.id),
      [bob.collectionId],
    );
  });

  it('stops accepting a revoked key (within the 5 s key cache)', async () => {
    const carol = await newTenant('carol');
    assert.equal((await carol.api.get('/v1/collections')).status, 200);
    await admin('key', 'revoke', carol.keyId);
    await sleep(5_200);
    const response = await carol.api.get('/v1/collections');
    assert.equal(response.status, 401);
  });

  it('serves liveness and readiness without a key', async () => {
    const anonymous = new Api(stack().apiUrl, null);
    const health = await anonymous.get('/v1/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.results.status, 'ok');
    const ready = await anonymous.get('/v1/ready');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body.results.checks, { mongodb: true, temporal: true });
  });

  it('lists and creates keys through the admin CLI without ever showing a stored key', async () => {
    const listing = JSON.parse(await admin('key', 'list', '--tenant', alice.tenantId, '--json')) as Record<string, unknown>[];
    assert.equal(listing.length, 1);
    assert.ok(!JSON.stringify(listing).includes(alice.apiKey), 'the plaintext key is never listed');
    const created = JSON.parse(await admin('key', 'create', '--tenant', alice.tenantId, '--name', 'second', '--json')) as {
      api_key: string;
    };
    const second = new Api(stack().apiUrl, created.api_key);
    assert.equal((await second.get(`/v1/memories/${aliceMemory}`)).status, 200, 'a second key of the same tenant reaches its data');
  });
});
