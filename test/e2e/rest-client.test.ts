/** The typed REST client (client/rest.ts) against the running stack, as an application would use it. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiError, MemoryServiceClient, type UploadProgress } from '../../client/rest.js';
import { newTenant, stack, type TenantFixture } from '../support/client.js';
import { closeDatabase } from '../support/db.js';

after(closeDatabase);

describe('REST client', () => {
  let tenant: TenantFixture;
  let client: MemoryServiceClient;
  before(async () => {
    tenant = await newTenant('rest-client');
    client = new MemoryServiceClient({ baseUrl: stack().apiUrl, apiKey: tenant.apiKey });
  });

  it('manages collections and refuses a duplicate name with a typed error', async () => {
    const created = await client.collections.create({ name: 'client-notes', metadata: { owner: 'qa' } });
    assert.equal((await client.collections.get(created.id)).name, 'client-notes');
    assert.equal((await client.collections.getByName('client-notes')).id, created.id);
    const listed = await client.collections.list({ limit: 10 });
    assert.ok(listed.results.some((collection) => collection.id === created.id));
    await assert.rejects(
      client.collections.create({ name: 'client-notes' }),
      (error: unknown) => error instanceof ApiError && error.is('collection_name_taken'),
    );
  });

  it('creates, waits, reads, lists with a filter, updates, searches and deletes a memory', async () => {
    const accepted = await client.memories.create({
      collection_id: tenant.collectionId,
      raw_text: 'The lighthouse on Noss Head was automated in 1987.',
      metadata: { team: 'coast' },
    });
    assert.equal(accepted.status, 'queued');
    const settled = await client.memories.waitUntilSettled(accepted.id, { timeoutMs: 300_000 }); // 150 KB of text: minutes when both cores are busy
    assert.equal(settled.status, 'complete');
    assert.ok((await client.memories.get(accepted.id)).chunks.join(' ').includes('Noss Head'));

    const filtered = await client.memories.list({
      collectionIds: [tenant.collectionId],
      metadataFilters: { 'metadata.team': { $eq: 'coast' } },
    });
    assert.deepEqual(
      filtered.results.map((memory) => memory.id),
      [accepted.id],
    );
    const updated = await client.memories.update(accepted.id, { metadata: { reviewed: true }, merge_metadata: true });
    assert.deepEqual(updated.metadata, { team: 'coast', reviewed: true });

    const found = await client.memories.search({
      query: 'When was the Noss Head lighthouse automated?',
      collection_ids: [tenant.collectionId],
      track_access: false,
    });
    assert.equal(found.hits[0]?.memory_id, accepted.id);

    assert.deepEqual(await client.memories.delete(accepted.id), { id: accepted.id, deleted: true });
    await assert.rejects(
      client.memories.get(accepted.id),
      (error: unknown) => error instanceof ApiError && error.is('memory_not_found') && error.status === 404,
    );
  });

  it('appends to a conversation and deletes many', async () => {
    const accepted = await client.memories.create({
      collection_id: tenant.collectionId,
      kind: 'conversation',
      messages: [{ role: 'user', content: 'Book the ferry for Tuesday.' }],
    });
    await client.memories.waitUntilSettled(accepted.id);
    const appended = await client.memories.append(accepted.id, {
      collection_id: tenant.collectionId,
      messages: [{ role: 'assistant', content: 'Booked for Tuesday at nine.' }],
    });
    assert.equal(appended.appended_messages, 1);
    await client.memories.waitUntilSettled(accepted.id);
    const result = await client.memories.deleteMany([accepted.id, '00000000-0000-4000-8000-000000000000']);
    assert.deepEqual(result.deleted, [accepted.id]);
    assert.equal(result.not_found.length, 1);
  });

  it('uploads a file through the presigned flow with progress, and ingests it', async () => {
    const text = Array.from({ length: 3000 }, (_, i) => `Line ${i}: the tide gauge at Wick reads normal.`).join('\n');
    const data = new TextEncoder().encode(text);
    const progress: UploadProgress[] = [];
    const accepted = await client.memories.createFromFile({
      collectionId: tenant.collectionId,
      filename: 'tides.txt',
      mediaType: 'text/plain',
      data,
      inlineMaxBytes: 1024,
      onProgress: (update) => progress.push(update),
    });
    assert.ok(progress.length > 1, 'progress arrives in several steps');
    assert.deepEqual(progress.at(-1), { sentBytes: data.byteLength, totalBytes: data.byteLength });
    assert.ok(progress.every((step, i) => i === 0 || step.sentBytes > progress[i - 1]!.sentBytes));
    const settled = await client.memories.waitUntilSettled(accepted.id, { timeoutMs: 300_000 }); // 150 KB of text: minutes when both cores are busy
    assert.equal(settled.status, 'complete');
    assert.equal(settled.files?.[0]?.size, data.byteLength);
  });

  it('reports validation failures with the offending field, and a wrong key as unauthenticated', async () => {
    await assert.rejects(
      client.memories.create({ collection_id: 'not-a-uuid', raw_text: 'x' }),
      (error: unknown) =>
        error instanceof ApiError && error.is('validation_failed') && error.details.some((issue) => issue.field === 'collection_id'),
    );
    const stranger = new MemoryServiceClient({ baseUrl: stack().apiUrl, apiKey: 'mk_nobody' });
    await assert.rejects(stranger.collections.list(), (error: unknown) => error instanceof ApiError && error.is('unauthenticated'));
  });

  it('replays a create with the same idempotency key instead of making a second memory', async () => {
    const input = { collection_id: tenant.collectionId, raw_text: 'Only once, please.' };
    const key = `same-${Date.now()}`;
    const a = await client.memories.create(input, { idempotencyKey: key });
    const b = await client.memories.create(input, { idempotencyKey: key });
    assert.equal(a.id, b.id);
  });
});
