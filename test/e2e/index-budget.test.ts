/**
 * Issue 20, item 1: the in-process search indexes live within a memory budget. An API process
 * with a small SEARCH_INDEX_MAX_BYTES evicts the least recently searched collections, reports its
 * index bytes and entries in /v1/health, and reloads an evicted collection when it is searched
 * again; per-tenant limits on collections and on a memory's collections answer clear errors.
 * Everything runs against an API process of its own, so its limits touch no other suite.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import type { IndexHealth } from '../../services/health.js';
import { Api, createMemory, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

/** About one small collection's partitions (64 vector rows of 384 floats, plus text and graph), not two. */
const BUDGET = 150 * 1024;
const MAX_COLLECTIONS = 4;
const MAX_MEMBERSHIPS = 2;

describe('in-process index budget and per-tenant limits', () => {
  let started: ApiProcess;
  let api: Api;
  let tenant: TenantFixture;

  before(async () => {
    started = await startApiProcess('api-index-budget', {
      SEARCH_INDEX_MAX_BYTES: String(BUDGET),
      MAX_COLLECTIONS_PER_TENANT: String(MAX_COLLECTIONS),
      MAX_COLLECTIONS_PER_MEMORY: String(MAX_MEMBERSHIPS),
    });
    tenant = await newTenant('budget');
    api = new Api(started.baseUrl, tenant.apiKey);
  });
  after(() => stopChild(started.child));

  const health = async (): Promise<IndexHealth> => {
    const response = await new Api(started.baseUrl, null).get('/v1/health');
    assert.equal(response.status, 200);
    assert.equal(response.body.results.status, 'ok');
    return response.body.results.index as IndexHealth;
  };

  it('caps collections per tenant: 409 collection_limit_reached naming the limit, nothing created', async () => {
    // The tenant starts with one collection (the admin CLI made it); the API may add the rest.
    for (let i = 1; i < MAX_COLLECTIONS; i++) assert.equal((await api.post('/v1/collections', { name: `extra-${i}` })).status, 201);
    const refused = await api.post('/v1/collections', { name: 'one-too-many' });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'collection_limit_reached');
    assert.match(refused.body.error.message, /MAX_COLLECTIONS_PER_TENANT/);
    assert.equal(refused.body.error.details[0].field, 'name');
    const listed = await api.get('/v1/collections');
    assert.equal(listed.body.total_entries, MAX_COLLECTIONS);
    assert.ok(listed.body.results.every((collection: { name: string }) => collection.name !== 'one-too-many'));
  });

  it('caps the collections one memory belongs to: 400 naming collection_ids, membership unchanged', async () => {
    const collections = (await api.get('/v1/collections')).body.results.map((collection: { id: string }) => collection.id) as string[];
    const id = await createMemory(tenant, { raw_text: 'The lighthouse keeper inspects the lamp every evening.' });
    await waitForStatus(api, id, ['complete']);
    const refused = await api.patch(`/v1/memories/${id}`, { collection_ids: collections.slice(0, MAX_MEMBERSHIPS + 1) });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'validation_failed');
    assert.equal(refused.body.error.details[0].field, 'collection_ids');
    assert.match(refused.body.error.message, /MAX_COLLECTIONS_PER_MEMORY/);
    assert.deepEqual((await api.get(`/v1/memories/${id}`)).body.results.collection_ids, [tenant.collectionId]);
    const allowed = await api.patch(`/v1/memories/${id}`, { collection_ids: [tenant.collectionId, collections[1]] });
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  });

  it('evicts the least recently searched collections past the budget, reports it in /v1/health, and reloads on demand', async () => {
    const fresh = await health();
    assert.equal(fresh.max_bytes, BUDGET);
    const collections = (await api.get('/v1/collections')).body.results.map((collection: { id: string }) => collection.id) as string[];
    const [, second, third, fourth] = collections as [string, string, string, string];
    const facts = [
      { collection: second, text: 'The harbour pilot steers the tanker past the breakwater.', query: 'harbour pilot tanker' },
      { collection: third, text: 'The glacier guide inspects the crevasse ropes at dawn.', query: 'glacier guide crevasse' },
      { collection: fourth, text: 'The orchard farmer runs the cider press in October.', query: 'orchard cider press' },
    ];
    const ids: string[] = [];
    for (const fact of facts) ids.push(await createMemory(tenant, { collection_id: fact.collection, raw_text: fact.text }));
    for (const id of ids) await waitForStatus(api, id, ['complete']);

    for (const [i, fact] of facts.entries()) {
      const found = await api.search([fact.collection], fact.query);
      assert.equal(found.status, 200);
      assert.equal(found.body.results.hits[0]?.memory_id, ids[i], `found in ${fact.query}`);
      const after = await health();
      assert.ok(after.bytes <= BUDGET, `within the budget after searching ${i + 1} collections: ${after.bytes} > ${BUDGET}`);
      assert.ok(after.bytes > 0 && after.entries.vector > 0 && after.entries.lexical > 0, JSON.stringify(after));
    }
    const full = await health();
    assert.equal(full.collections, 1, 'one collection fits the budget');
    assert.ok(full.evictions >= 2, `evictions: ${full.evictions}`);

    const again = await api.search([facts[0]!.collection], facts[0]!.query);
    assert.equal(again.body.results.hits[0]?.memory_id, ids[0], 'an evicted collection is reloaded when searched');
    const reloaded = await health();
    assert.ok(reloaded.loads > full.loads, `loads ${full.loads} → ${reloaded.loads}`);
    assert.ok(reloaded.bytes <= BUDGET);

    // One search over more collections than the whole budget: refused clearly (retrying cannot
    // help), nothing it loaded stays past the budget, and the process keeps answering.
    const wide = await api.search(
      facts.map((fact) => fact.collection),
      'harbour pilot glacier guide orchard cider',
    );
    assert.equal(wide.status, 422, JSON.stringify(wide.body));
    assert.equal(wide.body.error.code, 'index_budget_exceeded');
    assert.equal(wide.body.error.details[0].field, 'collection_ids');
    assert.match(wide.body.error.message, /SEARCH_INDEX_MAX_BYTES/);
    const afterWide = await health();
    assert.ok(afterWide.bytes <= BUDGET, `back within the budget once it ended: ${afterWide.bytes}`);
    const single = await api.search([facts[2]!.collection], facts[2]!.query);
    assert.equal(single.body.results.hits[0]?.memory_id, ids[2], 'one collection still answers');
  });
});

/**
 * Item 1, fairness: tenant A cycles through more collections than the budget holds while tenant
 * B searches one hot collection before and after. Eviction takes from the tenant furthest over
 * its fair share, so B's collection stays loaded: the process loads exactly A's collections, and
 * B's second search loads nothing. With a global least-recently-used order B's collection, the
 * oldest, was the first to go.
 */
describe('index budget eviction is fair between tenants', () => {
  /** Three or four small collections (see BUDGET), so tenant A's six cannot all stay. */
  const FAIR_BUDGET = 3 * BUDGET;
  const A_COLLECTIONS = 6;
  let started: ApiProcess;

  before(async () => {
    started = await startApiProcess('api-index-fairness', { SEARCH_INDEX_MAX_BYTES: String(FAIR_BUDGET) });
  });
  after(() => stopChild(started.child));

  const health = async (): Promise<IndexHealth> =>
    (await new Api(started.baseUrl, null).get('/v1/health')).body.results.index as IndexHealth;

  it("tenant A cycling collections evicts its own partitions, never tenant B's hot one", async () => {
    const [a, b] = await Promise.all([newTenant('cycler'), newTenant('hot')]);
    const apiA = new Api(started.baseUrl, a.apiKey);
    const apiB = new Api(started.baseUrl, b.apiKey);
    const collectionsA = [a.collectionId];
    for (let i = 1; i < A_COLLECTIONS; i++) {
      const created = await apiA.post('/v1/collections', { name: `cycle-${i}` });
      assert.equal(created.status, 201);
      collectionsA.push(created.body.results.id as string);
    }
    const memoriesA: string[] = [];
    for (const [i, collection] of collectionsA.entries()) {
      memoriesA.push(
        await createMemory(a, {
          collection_id: collection,
          raw_text: `Cargo manifest ${i}: the ferry carries crate number ${i} of timber.`,
        }),
      );
    }
    const memoryB = await createMemory(b, { raw_text: 'The beekeeper checks the hive frames for queen cells.' });
    for (const id of memoriesA) await waitForStatus(apiA, id, ['complete']);
    await waitForStatus(apiB, memoryB, ['complete']);

    const searchB = async (): Promise<void> => {
      const found = await apiB.search([b.collectionId], 'beekeeper hive queen');
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.results.hits[0]?.memory_id, memoryB);
    };
    await searchB();
    const before = await health();
    for (const [i, collection] of collectionsA.entries()) {
      const found = await apiA.search([collection], 'ferry timber crate');
      assert.equal(found.status, 200, JSON.stringify(found.body));
      assert.equal(found.body.results.hits[0]?.memory_id, memoriesA[i]);
      assert.ok((await health()).bytes <= FAIR_BUDGET, `within the budget after A's search ${i + 1}`);
    }
    const cycled = await health();
    assert.equal(cycled.loads - before.loads, A_COLLECTIONS, "one load per A collection, none of B's");
    assert.ok(cycled.evictions > before.evictions, `A's cycling went past the budget: ${JSON.stringify(cycled)}`);

    await searchB();
    const last = await health();
    assert.equal(last.loads, cycled.loads, "B's hot collection was still loaded: its search reloaded nothing");
    assert.ok(last.bytes <= FAIR_BUDGET);
  });
});
