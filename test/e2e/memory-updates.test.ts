/**
 * The memory record's write paths after creation: PATCH (name, metadata with merge_metadata,
 * collection associations) and appending messages to a conversation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemory, eventually, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database, terminalEventOf } from '../support/db.js';

after(closeDatabase);

let tenant: TenantFixture;

before(async () => {
  tenant = await newTenant('updates');
});

const newCollection = async (): Promise<string> =>
  (await tenant.api.post('/v1/collections', { name: `c-${Math.random().toString(36).slice(2, 10)}` })).body.results.id as string;

const searchIds = async (collectionId: string, query: string): Promise<string[]> => {
  const response = await tenant.api.search([collectionId], query);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.results.hits.map((hit: { memory_id: string }) => hit.memory_id);
};

describe('PATCH /v1/memories/{id}', () => {
  let id: string;

  before(async () => {
    id = await createMemory(tenant, {
      raw_text: 'Greta Lindqvist repairs antique clocks in Uppsala.',
      name: 'clocks',
      metadata: { a: 1, b: 2 },
    });
    await waitForStatus(tenant.api, id, ['complete']);
  });

  it('renames, and merges or replaces metadata', async () => {
    const renamed = await tenant.api.patch(`/v1/memories/${id}`, { name: 'clockmaker' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.results.name, 'clockmaker');
    assert.deepEqual(renamed.body.results.metadata, { a: 1, b: 2 });

    const merged = await tenant.api.patch(`/v1/memories/${id}`, { metadata: { b: 3, c: 4 }, merge_metadata: true });
    assert.deepEqual(merged.body.results.metadata, { a: 1, b: 3, c: 4 });
    const replaced = await tenant.api.patch(`/v1/memories/${id}`, { metadata: { only: true }, merge_metadata: false });
    assert.deepEqual(replaced.body.results.metadata, { only: true });
    const byDefault = await tenant.api.patch(`/v1/memories/${id}`, { metadata: { again: 'x' } });
    assert.deepEqual(byDefault.body.results.metadata, { again: 'x' }, 'merge_metadata defaults to false: replace');

    const fetched = await tenant.api.get(`/v1/memories/${id}`);
    assert.equal(fetched.body.results.name, 'clockmaker');
    assert.deepEqual(fetched.body.results.metadata, { again: 'x' });
    assert.deepEqual(fetched.body.results.chunks, ['Greta Lindqvist repairs antique clocks in Uppsala.'], 'chunks are read-only');
    const cleared = await tenant.api.patch(`/v1/memories/${id}`, { name: null });
    assert.equal(cleared.body.results.name, null);
  });

  it('moves a memory between collections: search, vectors and graph follow', async () => {
    const second = await newCollection();
    const added = await tenant.api.patch(`/v1/memories/${id}`, { collection_ids: [tenant.collectionId, second] });
    assert.equal(added.status, 200);
    assert.deepEqual(added.body.results.collection_ids, [tenant.collectionId, second]);
    assert.ok((await searchIds(second, 'antique clock repair')).includes(id), 'searchable in the added collection at once');

    const db = await database();
    const lindqvistIn = (collectionId: string) =>
      db.collection('graph_entities').countDocuments({ collection_id: collectionId, alias_keys: 'greta lindqvist' });
    await eventually(
      async () => assert.ok((await lindqvistIn(second)) > 0, 'the graph is projected into the added collection'),
      30_000,
      100,
    );
    assert.equal(await lindqvistIn(second), 1, 'the graph is projected into the added collection once');

    const moved = await tenant.api.patch(`/v1/memories/${id}`, { collection_ids: [second] });
    assert.deepEqual(moved.body.results.collection_ids, [second]);
    assert.ok(!(await searchIds(tenant.collectionId, 'antique clock repair')).includes(id), 'gone from the old collection');
    assert.ok((await searchIds(second, 'antique clock repair')).includes(id));
    assert.equal(await lindqvistIn(tenant.collectionId), 0, 'and so is its graph there');
    const listed = await tenant.api.get(`/v1/memories?collection_ids=${second}`);
    assert.ok(listed.body.results.some((memory: { id: string }) => memory.id === id));
  });

  it('refuses bad updates with clear errors', async () => {
    const other = await newTenant('updates-other');
    const cases: [string, unknown, number, string, string?][] = [
      [id, {}, 400, 'validation_failed', 'name'],
      [id, { merge_metadata: true }, 400, 'validation_failed', 'merge_metadata'],
      [id, { chunks: ['rewritten'] }, 400, 'validation_failed'],
      [id, { name: '' }, 400, 'validation_failed', 'name'],
      [id, { metadata: { $bad: 1 } }, 400, 'validation_failed', 'metadata'],
      [id, { collection_ids: [] }, 400, 'validation_failed', 'collection_ids'],
      [id, { collection_ids: ['not-a-uuid'] }, 400, 'validation_failed', 'collection_ids.0'],
      [id, { collection_ids: [other.collectionId] }, 404, 'collection_not_found', 'collection_ids'],
      ['00000000-0000-4000-8000-000000000000', { name: 'x' }, 404, 'memory_not_found'],
    ];
    for (const [memoryId, body, status, code, field] of cases) {
      const response = await tenant.api.patch(`/v1/memories/${memoryId}`, body);
      assert.equal(response.status, status, `${JSON.stringify(body)} → ${response.status} ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error.code, code);
      if (field)
        assert.ok(
          response.body.error.details.some((detail: { field: string }) => detail.field === field),
          JSON.stringify(response.body.error),
        );
    }
    const foreign = await other.api.patch(`/v1/memories/${id}`, { name: 'stolen' });
    assert.equal(foreign.status, 404, 'another tenant cannot see it');
  });
});

describe('POST /v1/memories/{id}/messages (append)', () => {
  it('processes only the new messages, and search sees them once complete', async () => {
    const id = await createMemory(tenant, {
      messages: [
        { role: 'user', content: 'I keep bees on the roof of my flat in Leeds.' },
        { role: 'assistant', content: 'How many hives do you have?' },
      ],
    });
    const first = await waitForStatus(tenant.api, id, ['complete']);
    assert.equal(first.body.results.chunk_count, 2);
    const before = first.body.results.chunks as string[];

    const appended = await tenant.api.post(`/v1/memories/${id}/messages`, {
      collection_id: tenant.collectionId,
      messages: [
        { role: 'user', content: 'Three hives, and the honey harvest was 14 kilograms this August.' },
        { role: 'assistant', content: 'That is a very good harvest for a city roof.' },
      ],
    });
    assert.equal(appended.status, 202, JSON.stringify(appended.body));
    assert.equal(appended.body.results.appended_messages, 2);
    assert.notEqual(appended.body.results.status, 'complete');

    const busy = await tenant.api.post(`/v1/memories/${id}/messages`, {
      collection_id: tenant.collectionId,
      messages: [{ role: 'user', content: 'One more thing.' }],
    });
    if (busy.status !== 202) {
      assert.equal(busy.status, 409);
      assert.equal(busy.body.error.code, 'memory_busy');
    }
    const done = await waitForStatus(tenant.api, id, ['complete', 'failed']);
    if (busy.status === 202) await waitForStatus(tenant.api, id, ['complete']);
    assert.equal(done.body.results.status, 'complete');
    const after = (await tenant.api.get(`/v1/memories/${id}`)).body.results;
    assert.deepEqual(after.chunks.slice(0, 2), before, 'the earlier chunks are untouched');
    assert.equal(after.chunks[2], 'Three hives, and the honey harvest was 14 kilograms this August.');
    // No timestamp given: the turn takes the memory's creation time (core/memory-time.ts).
    assert.deepEqual(after.chunk_sources[2], { type: 'message', role: 'user', message_index: 2, occurred_at: after.created_at });

    const hits = (await tenant.api.search([tenant.collectionId], 'How much honey did the hives produce?')).body.results.hits;
    assert.equal(hits[0].memory_id, id);
    assert.equal(hits[0].chunk_index, 2);

    // The append run read only the new messages: its chunk report counts two.
    const last = await terminalEventOf(id);
    assert.equal(last?.payload.user_stage, 'complete');
    const chunkReports = await (
      await database()
    )
      .collection<{ payload: { message: string | null } }>('memory_events')
      .find({ 'payload.engram_id': id, 'payload.stage': 'chunk' }, { sort: { seq: 1 } })
      .toArray();
    assert.equal(chunkReports[0]?.payload.message, '2 chunks');
    assert.equal(chunkReports[1]?.payload.message, '2 chunks');
  });

  it('refuses appends that cannot apply', async () => {
    const documentId = await createMemory(tenant, { raw_text: 'A plain document.' });
    await waitForStatus(tenant.api, documentId, ['complete']);
    const toDocument = await tenant.api.post(`/v1/memories/${documentId}/messages`, {
      collection_id: tenant.collectionId,
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.equal(toDocument.status, 409);
    assert.equal(toDocument.body.error.code, 'memory_not_conversation');

    const chat = await createMemory(tenant, { messages: [{ role: 'user', content: 'Hi there.' }] });
    await waitForStatus(tenant.api, chat, ['complete']);
    const elsewhere = await newCollection();
    const cases: [unknown, string][] = [
      [{ collection_id: elsewhere, messages: [{ role: 'user', content: 'x' }] }, 'collection_id'],
      [{ messages: [{ role: 'user', content: 'x' }] }, 'collection_id'],
      [{ collection_id: tenant.collectionId, messages: [] }, 'messages'],
      [{ collection_id: tenant.collectionId, messages: [{ role: 'narrator', content: 'x' }] }, 'messages.0.role'],
      [{ collection_id: tenant.collectionId, messages: [{ role: 'user', content: '  ' }] }, 'messages.0.content'],
    ];
    for (const [body, field] of cases) {
      const response = await tenant.api.post(`/v1/memories/${chat}/messages`, body);
      assert.equal(response.status, 400, `${JSON.stringify(body)} → ${response.status}`);
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        JSON.stringify(response.body.error),
      );
    }
    const missing = await tenant.api.post('/v1/memories/00000000-0000-4000-8000-000000000000/messages', {
      collection_id: tenant.collectionId,
      messages: [{ role: 'user', content: 'x' }],
    });
    assert.equal(missing.status, 404);
    assert.equal((await tenant.api.get(`/v1/memories/${chat}`)).body.results.chunk_count, 1, 'nothing was added by the refusals');
  });
});
