/**
 * Searches between ingestions, as real users do: once a process has loaded a collection's graph,
 * every later write (create, append, PATCH, delete) must reach the graph signal, the entities and
 * the relationships of search in that process and in every other API process.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { Api, createMemory, eventually, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { startApiProcess } from '../support/processes.js';

interface SearchView {
  entities: string[];
  predicates: string[];
  /** Graph score of the best hit of each memory. */
  graphOf: Map<string, number>;
  /** The response's entities and relationships, for failure messages. */
  raw: string;
}

async function view(api: Api, collectionId: string, query: string): Promise<SearchView> {
  const response = await api.search([collectionId], query);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  const results = response.body.results;
  const graphOf = new Map<string, number>();
  for (const hit of results.hits as { memory_id: string; score_breakdown: { graph?: number } }[]) {
    graphOf.set(hit.memory_id, Math.max(graphOf.get(hit.memory_id) ?? 0, hit.score_breakdown.graph ?? 0));
  }
  return {
    entities: (results.entities as { name: string }[]).map((entity) => entity.name.toLowerCase()),
    predicates: (results.relationships as { predicate: string }[]).map((fact) => fact.predicate),
    graphOf,
    raw: JSON.stringify({ entities: results.entities, relationships: results.relationships }),
  };
}

describe('search interleaved with ingestion, across two API processes', () => {
  let second: ChildProcess;
  let apis: Api[];
  let tenant: TenantFixture;

  before(async () => {
    const started = await startApiProcess('api-interleaved');
    second = started.child;
    tenant = await newTenant('interleaved');
    apis = [tenant.api, new Api(started.baseUrl, tenant.apiKey)];
  });
  after(() => stopChild(second));

  /** Asserts on every API process: both have loaded the collection's graph before the write. */
  const everywhere = async (collectionId: string, query: string, check: (seen: SearchView, label: string) => void) => {
    for (const [index, api] of apis.entries()) check(await view(api, collectionId, query), `API process ${index + 1}`);
  };

  it('keeps entities, relationships and the graph score current through create, append, PATCH and delete', async () => {
    const a = await createMemory(tenant, { raw_text: 'Bob Jones leads the Madrid warehouse.' });
    await waitForStatus(tenant.api, a, ['complete']);
    await everywhere(tenant.collectionId, 'Bob Jones', (seen, label) => {
      assert.ok(seen.entities.includes('bob jones'), `${label}: ${seen.entities.join(', ')}`);
      assert.ok((seen.graphOf.get(a) ?? 0) > 0, `${label}: graph score of A`);
    });

    // Created after both processes loaded the collection's graph.
    const b = await createMemory(tenant, { raw_text: 'Carol White joined the Oslo team.' });
    await waitForStatus(tenant.api, b, ['complete']);
    await everywhere(tenant.collectionId, 'Carol White', (seen, label) => {
      assert.ok(seen.entities.includes('carol white'), `${label}: entities ${seen.entities.join(', ')}`);
      assert.ok(
        seen.predicates.some((predicate) => /join/.test(predicate)),
        `${label}: relationships in ${seen.raw}`,
      );
      assert.ok((seen.graphOf.get(b) ?? 0) > 0, `${label}: graph score of B`);
    });

    // Append to a conversation: the new messages' entities and facts arrive at complete.
    const c = await createMemory(tenant, {
      kind: 'conversation',
      messages: [{ role: 'user', content: 'Dave Brown manages the Lisbon depot.' }],
    });
    await waitForStatus(tenant.api, c, ['complete']);
    await everywhere(tenant.collectionId, 'Erin Gray', (seen, label) => assert.ok(!seen.entities.includes('erin gray'), label));
    const appended = await tenant.api.post(`/v1/memories/${c}/messages`, {
      collection_id: tenant.collectionId,
      messages: [{ role: 'user', content: 'Erin Gray inspects the Lisbon depot.' }],
    });
    assert.equal(appended.status, 202, JSON.stringify(appended.body));
    await waitForStatus(tenant.api, c, ['complete']);
    await everywhere(tenant.collectionId, 'Erin Gray', (seen, label) => {
      assert.ok(seen.entities.includes('erin gray'), `${label}: entities ${seen.entities.join(', ')}`);
      assert.ok(
        seen.predicates.some((predicate) => /inspect/.test(predicate)),
        `${label}: relationships in ${seen.raw}`,
      );
      assert.ok((seen.graphOf.get(c) ?? 0) > 0, `${label}: graph score of C`);
    });

    // PATCH: B moves to a second collection whose graph both processes have loaded already.
    const other = (await tenant.api.post('/v1/collections', { name: 'other' })).body.results.id as string;
    const seed = await tenant.api.post('/v1/memories', { collection_id: other, raw_text: 'Frank Hill repairs bicycles in Bergen.' });
    await waitForStatus(tenant.api, seed.body.results.id as string, ['complete']);
    await everywhere(other, 'Carol White', (seen, label) => assert.ok(!seen.entities.includes('carol white'), label));
    const moved = await tenant.api.patch(`/v1/memories/${b}`, { collection_ids: [other] });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    await everywhere(tenant.collectionId, 'Carol White', (seen, label) => {
      assert.ok(!seen.entities.includes('carol white'), `${label}: gone from the collection B left`);
      assert.ok(!seen.graphOf.has(b), label);
    });
    // The graph of the collection B joined is built by a workflow: wait for it in both processes.
    for (const [index, api] of apis.entries()) {
      const seen = await eventually(
        async () => {
          const current = await view(api, other, 'Carol White');
          assert.ok(current.entities.includes('carol white'), `API process ${index + 1}: projected into the collection B joined`);
          return current;
        },
        30_000,
        200,
      );
      assert.ok((seen.graphOf.get(b) ?? 0) > 0, `API process ${index + 1}: graph score of B there`);
    }

    // Delete: A's entities and facts leave both processes at once.
    assert.equal((await tenant.api.delete(`/v1/memories/${a}`)).status, 200);
    await everywhere(tenant.collectionId, 'Bob Jones', (seen, label) => {
      assert.ok(!seen.entities.includes('bob jones'), `${label}: ${seen.entities.join(', ')}`);
      assert.ok(!seen.predicates.some((predicate) => /lead/.test(predicate)), label);
      assert.ok(!seen.graphOf.has(a), label);
    });
    // What was not touched is still there.
    await everywhere(tenant.collectionId, 'Erin Gray', (seen, label) => assert.ok(seen.entities.includes('erin gray'), label));
  });
});
