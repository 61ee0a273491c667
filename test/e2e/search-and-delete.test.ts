import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemory, newTenant, sleep, until, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';

const FACTS = {
  boat: 'My sailboat is moored in Kiel harbour and needs new sails before the regatta.',
  oven: 'The pizza oven in the garden reaches 450 degrees Celsius after forty minutes of firing.',
  violin: 'Practising the violin every morning improved my intonation on the Bach partita.',
};

// One client per file, closed once every suite in the file is done (an open client keeps the file's process alive).
after(closeDatabase);

describe('search', () => {
  let tenant: TenantFixture;
  const ids: Record<string, string> = {};

  before(async () => {
    tenant = await newTenant('search');
    for (const [topic, text] of Object.entries(FACTS)) ids[topic] = await createMemory(tenant, { raw_text: text, metadata: { topic } });
    for (const id of Object.values(ids)) await waitForStatus(tenant.api, id, ['complete']);
  });

  it('ranks the relevant memory first, with provenance and a score breakdown', async () => {
    const response = await tenant.api.post('/v1/memories/search', {
      query: 'Where is the boat kept?',
      collection_ids: [tenant.collectionId],
    });
    assert.equal(response.status, 200);
    const { hits, query } = response.body.results;
    assert.equal(query, 'Where is the boat kept?');
    assert.equal(hits[0].memory_id, ids.boat);
    assert.equal(hits[0].chunk_index, 0);
    assert.equal(hits[0].text, FACTS.boat);
    assert.equal(hits[0].memory.metadata.topic, 'boat');
    assert.equal(typeof hits[0].score, 'number');
    assert.deepEqual(Object.keys(hits[0].score_breakdown).sort(), ['activation', 'graph', 'lexical', 'vector']);
    const vectorOnly = await tenant.api.search([tenant.collectionId], 'Where is the boat kept?', { signals: ['vector'] });
    assert.equal(vectorOnly.body.results.hits[0].score, vectorOnly.body.results.hits[0].raw_scores.cosine, 'one signal: its raw value');
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1].score >= hits[i].score, 'descending scores');

    const music = await tenant.api.post('/v1/memories/search', {
      query: 'musical instrument practice',
      collection_ids: [tenant.collectionId],
      limit: 1,
    });
    assert.equal(music.body.results.hits.length, 1);
    assert.equal(music.body.results.hits[0].memory_id, ids.violin);
  });

  it('finds a memory as soon as its status is complete', async () => {
    const text = 'The zeppelin hangar at Friedrichshafen was repainted turquoise.';
    const id = await createMemory(tenant, { raw_text: text });
    await waitForStatus(tenant.api, id, ['complete']);
    const response = await tenant.api.post('/v1/memories/search', {
      query: 'zeppelin hangar colour',
      collection_ids: [tenant.collectionId],
      limit: 3,
    });
    assert.equal(response.body.results.hits[0].memory_id, id);
  });

  it('rejects bad search input with 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ collection_ids: [tenant.collectionId] }, 'query'],
      [{ query: '  ', collection_ids: [tenant.collectionId] }, 'query'],
      [{ query: 'x' }, 'collection_ids'],
      [{ query: 'x', collection_ids: [] }, 'collection_ids'],
      [{ query: 'x', collection_ids: ['nope'] }, 'collection_ids.0'],
      [{ query: 'x', collection_ids: [tenant.collectionId], limit: 0 }, 'limit'],
      [{ query: 'x', collection_ids: [tenant.collectionId], limit: 101 }, 'limit'],
      [{ query: 'x', collection_ids: [tenant.collectionId], limit: '5' }, 'limit'],
      [{ query: 'x', collection_ids: [tenant.collectionId], snapshot: {} }, 'snapshot'],
    ];
    for (const [body, field] of cases) {
      const response = await tenant.api.post('/v1/memories/search', body);
      assert.equal(response.status, 400, `${JSON.stringify(body)} → ${JSON.stringify(response.body)}`);
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        JSON.stringify(response.body.error.details),
      );
    }
  });
});

describe('delete', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('delete');
  });

  const searchIds = async (query: string) =>
    (await tenant.api.post('/v1/memories/search', { query, collection_ids: [tenant.collectionId], limit: 50 })).body.results.hits.map(
      (hit: { memory_id: string }) => hit.memory_id,
    );

  it('deletes one memory permanently: record, chunks and vectors, list and search', async () => {
    const id = await createMemory(tenant, { raw_text: 'The secret vault code is kept in the red notebook.' });
    await waitForStatus(tenant.api, id, ['complete']);
    assert.ok((await searchIds('vault code notebook')).includes(id));
    const db = await database();
    assert.ok((await db.collection('graph_entities').countDocuments({ tenant_id: tenant.tenantId })) > 0, 'it had a graph');

    const response = await tenant.api.delete(`/v1/memories/${id}`);
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.results, { id, deleted: true });
    assert.equal((await tenant.api.get(`/v1/memories/${id}`)).status, 404);
    assert.ok(!(await searchIds('vault code notebook')).includes(id));
    const list = await tenant.api.get(`/v1/memories?collection_ids=${tenant.collectionId}&limit=1000`);
    assert.ok(list.body.results.every((memory: { id: string }) => memory.id !== id));
    assert.equal(await db.collection('chunks').countDocuments({ memory_id: id }), 0);
    assert.equal(await db.collection('memories').countDocuments({ _id: id as never }), 0);
    assert.equal(await db.collection('graph_mentions').countDocuments({ memory_id: id }), 0, 'no graph provenance');
    assert.equal(await db.collection('graph_entities').countDocuments({ tenant_id: tenant.tenantId }), 0, 'no orphan entity');

    const again = await tenant.api.delete(`/v1/memories/${id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'memory_not_found');
  });

  it('deletes many at once and reports the ids it did not find', async () => {
    const a = await createMemory(tenant, { raw_text: 'Batch delete alpha.' });
    const b = await createMemory(tenant, { raw_text: 'Batch delete beta.' });
    const missing = '00000000-0000-4000-8000-000000000001';
    const response = await tenant.api.post('/v1/memories/delete', [a, b, missing]);
    assert.equal(response.status, 200);
    assert.deepEqual(new Set(response.body.results.deleted), new Set([a, b]));
    assert.deepEqual(response.body.results.not_found, [missing]);
    assert.equal((await tenant.api.get(`/v1/memories/${a}`)).status, 404);
    const bad = await tenant.api.post('/v1/memories/delete', { ids: [a] });
    assert.equal(bad.status, 400);
    const badId = await tenant.api.post('/v1/memories/delete', ['x']);
    assert.equal(badId.status, 400);
    assert.equal(badId.body.error.details[0].field, '0');
    assert.equal((await tenant.api.post('/v1/memories/delete', [])).status, 400);
  });

  it('deletes a memory whose workflow is still running, and nothing comes back afterwards', async () => {
    const text = Array.from(
      { length: 120 },
      (_, i) => `Section ${i} of the mid-flight deletion document about lighthouse keepers. ${'filler words here '.repeat(50)}`,
    ).join('\n\n');
    const id = await createMemory(tenant, { raw_text: text });
    // Wait until the pipeline has written chunks, then delete mid-run.
    const db = await database();
    await until(async () => (await db.collection('chunks').countDocuments({ memory_id: id })) > 0, 'the pipeline to start writing', 30_000);
    const response = await tenant.api.delete(`/v1/memories/${id}`);
    assert.equal(response.status, 200);

    // Give a still-running activity every chance to write again, then check nothing survived.
    await sleep(8_000);
    assert.equal((await tenant.api.get(`/v1/memories/${id}`)).status, 404);
    assert.equal(await db.collection('chunks').countDocuments({ memory_id: id }), 0);
    assert.equal(await db.collection('graph_mentions').countDocuments({ memory_id: id }), 0, 'no graph provenance came back');
    assert.ok(!(await searchIds('lighthouse keepers deletion document')).includes(id));
  });
});
