/**
 * Imported snapshots live in ephemeral collections: read-only copies that expire. No path may
 * change an imported memory or let it escape into a permanent collection (where its expiry would
 * delete it too), and once its collection expires it is invisible at once, before any sweep.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { Api, createMemory, newTenant, until, waitForStatus, type ApiResponse, type TenantFixture } from '../support/client.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

const TTL_SECONDS = 6;

describe('ephemeral (imported) collections are read-only on every path and vanish at expiry', () => {
  let proc: ApiProcess;
  let tenant: TenantFixture;
  let api: Api;
  let ephemeral: string;
  let imported: { document: string; conversation: string };

  before(async () => {
    // No sweep during the suite: what it checks after expiry must hold before anything is removed.
    proc = await startApiProcess('api-ephemeral', {
      EPHEMERAL_COLLECTION_TTL_SECONDS: String(TTL_SECONDS),
      EPHEMERAL_SWEEP_INTERVAL_MS: '3600000',
    });
    tenant = await newTenant('ephemeral');
    api = new Api(proc.baseUrl, tenant.apiKey);
    await waitForStatus(tenant.api, await createMemory(tenant, { raw_text: 'Greta Holm manages the Oslo depot of Nordfrakt.' }), [
      'complete',
    ]);
    const conversation = await createMemory(tenant, {
      messages: [
        { role: 'user', content: 'Henrik Lund runs the Bergen office.' },
        { role: 'assistant', content: 'Noted: Henrik Lund, Bergen office.' },
      ],
    });
    await waitForStatus(tenant.api, conversation, ['complete']);
    const exported = await api.post('/v1/device-memory/snapshot/export', { collection_id: tenant.collectionId });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    const response = await api.post('/v1/device-memory/snapshot/import', { snapshot: exported.body.results });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    ephemeral = response.body.results.ephemeral_collection_id;
    const listed = await api.get(`/v1/memories?collection_ids=${ephemeral}`);
    const byKind = new Map<string, string>(listed.body.results.map((memory: { id: string; kind: string }) => [memory.kind, memory.id]));
    imported = { document: byKind.get('document')!, conversation: byKind.get('conversation')! };
    assert.ok(imported.document && imported.conversation, JSON.stringify(listed.body));
  });

  after(async () => {
    await stopChild(proc?.child);
  });

  it('refuses every change to an imported memory with 409 collection_read_only, and leaves it as it was', async () => {
    const attempts: [string, () => Promise<ApiResponse>][] = [
      ['rename', () => api.patch(`/v1/memories/${imported.document}`, { name: 'renamed' })],
      ['replace metadata', () => api.patch(`/v1/memories/${imported.document}`, { metadata: { changed: true } })],
      ['merge metadata', () => api.patch(`/v1/memories/${imported.document}`, { metadata: { changed: true }, merge_metadata: true })],
      // The escape the review found: attached to a permanent collection, its expiry deleted it there too.
      [
        'attach to a permanent collection',
        () => api.patch(`/v1/memories/${imported.document}`, { collection_ids: [ephemeral, tenant.collectionId] }),
      ],
      ['move to a permanent collection', () => api.patch(`/v1/memories/${imported.document}`, { collection_ids: [tenant.collectionId] })],
      [
        'append messages',
        () =>
          api.post(`/v1/memories/${imported.conversation}/messages`, {
            collection_id: ephemeral,
            messages: [{ role: 'user', content: 'Ingrid joined.' }],
          }),
      ],
      ['delete one', () => api.delete(`/v1/memories/${imported.document}`)],
      ['delete several', () => api.post('/v1/memories/delete', [imported.conversation, imported.document])],
    ];
    const before = await api.get(`/v1/memories/${imported.document}`);
    for (const [name, attempt] of attempts) {
      const response = await attempt();
      assert.equal(response.status, 409, `${name}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error.code, 'collection_read_only', name);
      assert.match(response.body.error.message, new RegExp(ephemeral), `${name}: the message names the collection`);
    }
    const afterwards = await api.get(`/v1/memories/${imported.document}`);
    const state = (response: ApiResponse) => {
      const { name, metadata, collection_ids, status } = response.body.results;
      return { name, metadata, collection_ids, status, chunks: response.body.results.chunks };
    };
    assert.deepEqual(state(afterwards), state(before), 'nothing about the memory changed');
    const conversation = await api.get(`/v1/memories/${imported.conversation}`);
    assert.equal(conversation.status, 200, 'not deleted by the refused bulk delete');
  });

  it('refuses moving a permanent memory into the ephemeral collection (the other direction)', async () => {
    const own = await createMemory(tenant, { raw_text: 'Jonas Berg inspects the Tromso harbour.' });
    await waitForStatus(tenant.api, own, ['complete']);
    const response = await api.patch(`/v1/memories/${own}`, { collection_ids: [tenant.collectionId, ephemeral] });
    assert.equal(response.status, 409, JSON.stringify(response.body));
    assert.equal(response.body.error.code, 'collection_read_only');
  });

  it('hides the memories of an expired ephemeral collection at once from get, list and search, before any sweep', async () => {
    await until(
      async () => (await api.get(`/v1/memories/${imported.document}`)).status === 404,
      'the imported memory to expire',
      (TTL_SECONDS + 10) * 1000,
    );
    assert.equal((await api.get(`/v1/memories/${imported.conversation}`)).status, 404);
    const listed = await api.get('/v1/memories?limit=100');
    assert.equal(listed.status, 200);
    const ids = listed.body.results.map((memory: { id: string }) => memory.id);
    assert.ok(!ids.includes(imported.document) && !ids.includes(imported.conversation), 'not listed without a collection filter');
    assert.equal(listed.body.total_entries, ids.length);
    const inEphemeral = await api.get(`/v1/memories?collection_ids=${ephemeral}`);
    assert.equal(inEphemeral.status, 404, 'the expired collection is gone for list');
    const search = await api.search([ephemeral], 'Oslo depot');
    assert.equal(search.status, 404, 'and for search');
    const own = await api.search([tenant.collectionId], 'Who manages the Oslo depot?');
    assert.equal(own.status, 200);
    for (const hit of own.body.results.hits as { memory_id?: string; id?: string }[]) {
      assert.ok(![imported.document, imported.conversation].includes(hit.memory_id ?? hit.id ?? ''), 'no imported memory among the hits');
    }
  });
});
