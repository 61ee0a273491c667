import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { projectRoot } from '../../config/index.js';
import { createMemory, eventually, newTenant, stack, waitForStatus, type TenantFixture } from '../support/client.js';
import { assertFailedEvent, closeDatabase, database, terminalEventOf } from '../support/db.js';

const run = promisify(execFile);

// One client per file, closed once every suite in the file is done (an open client keeps the file's process alive).
after(closeDatabase);

describe('memories: create, read, list', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('memories');
  });

  it('accepts raw_text with 202 at once and completes it through the pipeline', async () => {
    const response = await tenant.api.post('/v1/memories', {
      collection_id: tenant.collectionId,
      raw_text: 'The quarterly budget review is on Friday.\n\nBring the revised forecast.',
      name: 'budget',
      metadata: { source: 'email', priority: 2 },
    });
    assert.equal(response.status, 202);
    const accepted = response.body.results;
    assert.match(accepted.id, /^[0-9a-f-]{36}$/);
    assert.equal(accepted.status, 'queued');
    assert.equal(accepted.workflow_id, `memory-${accepted.id}`);
    assert.equal(response.headers.get('location'), `/v1/memories/${accepted.id}`);

    const done = await waitForStatus(tenant.api, accepted.id, ['complete']);
    const record = done.body.results;
    assert.equal(record.id, accepted.id);
    assert.equal(record.kind, 'document');
    assert.equal(record.name, 'budget');
    assert.deepEqual(record.metadata, { source: 'email', priority: 2 });
    assert.deepEqual(record.chunks, ['The quarterly budget review is on Friday.\n\nBring the revised forecast.']);
    assert.equal(record.chunk_count, 1);
    assert.equal(record.collection_id, tenant.collectionId);
    assert.match(record.embedding_model, /e5|MiniLM/);
    assert.ok(record.completed_at);
  });

  it('tags each workflow with MemoryId, CollectionId and TenantId so operators can find it', async () => {
    const id = await createMemory(tenant, { raw_text: 'Find my workflow in the Temporal UI.' });
    await waitForStatus(tenant.api, id, ['complete']);
    const env = stack().serviceEnv;
    const temporal = path.join(projectRoot(), '.tools', 'bin', 'temporal');
    const query = `MemoryId='${id}' AND CollectionId='${tenant.collectionId}' AND TenantId='${tenant.tenantId}'`;
    // Visibility is eventually consistent: poll briefly.
    type Listed = { execution?: { workflowId?: string }; status?: string }[];
    const found = await eventually(
      async () => {
        const { stdout } = await run(existsSync(temporal) ? temporal : 'temporal', [
          'workflow',
          'list',
          '--address',
          env.TEMPORAL_ADDRESS!,
          '--query',
          query,
          '--output',
          'json',
        ]);
        const listed = stdout.trim() ? (JSON.parse(stdout) as Listed) : [];
        assert.ok(listed.length > 0, 'the workflow is visible by its search attributes');
        return listed;
      },
      10_000,
      200,
    );
    assert.equal(found.length, 1);
    assert.equal(found[0]!.execution?.workflowId, `memory-${id}`);
  });

  it('keeps pre-chunked text as chunks, in order', async () => {
    const id = await createMemory(tenant, { chunks: ['first part', 'second part', 'third part'] });
    const done = await waitForStatus(tenant.api, id, ['complete']);
    assert.deepEqual(done.body.results.chunks, ['first part', 'second part', 'third part']);
  });

  it('stores a conversation one chunk per message with its role', async () => {
    const response = await tenant.api.post('/v1/memories', {
      collection_id: tenant.collectionId,
      kind: 'conversation',
      messages: [
        { role: 'user', content: 'I adopted a greyhound called Pixel.' },
        { role: 'assistant', content: 'Congratulations on adopting Pixel!' },
      ],
    });
    assert.equal(response.status, 202);
    const done = await waitForStatus(tenant.api, response.body.results.id, ['complete']);
    assert.equal(done.body.results.kind, 'conversation');
    assert.deepEqual(done.body.results.chunks, ['I adopted a greyhound called Pixel.', 'Congratulations on adopting Pixel!']);
    assert.deepEqual(
      done.body.results.chunk_sources.map((source: { role: string }) => source.role),
      ['user', 'assistant'],
    );
  });

  it('records ingestion_progress events for every stage, in seq order', async () => {
    const id = await createMemory(tenant, { raw_text: 'Progress events are written for each stage.' });
    await waitForStatus(tenant.api, id, ['complete']);
    await terminalEventOf(id);
    const db = await database();
    const events = await db
      .collection('memory_events')
      .find({ 'payload.engram_id': id }, { sort: { seq: 1 } })
      .toArray();
    const stages = events.map((event) => event.payload.user_stage);
    assert.deepEqual([...new Set(stages)], ['reading', 'structuring', 'indexing', 'complete']);
    for (const event of events) {
      assert.equal(event.type, 'ingestion_progress');
      assert.equal(event.collection_id, tenant.collectionId);
      assert.equal(event.tenant_id, tenant.tenantId);
      assert.equal(typeof event.payload.current, 'number');
      assert.equal(typeof event.payload.total, 'number');
      assert.ok('message' in event.payload);
    }
    const seqs = events.map((event) => event.seq as number);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
    );
    assert.equal(events.at(-1)!.payload.current, events.at(-1)!.payload.total);
  });

  it('returns the same memory for a retried POST with the same Idempotency-Key', async () => {
    const body = { collection_id: tenant.collectionId, raw_text: 'Idempotent text.' };
    const key = `idem-${Date.now()}`;
    const [first, second] = await Promise.all([
      tenant.api.post('/v1/memories', body, { 'Idempotency-Key': key }),
      tenant.api.post('/v1/memories', body, { 'Idempotency-Key': key }),
    ]);
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.equal(first.body.results.id, second.body.results.id);
    const third = await tenant.api.post('/v1/memories', body, { 'Idempotency-Key': key });
    assert.equal(third.body.results.id, first.body.results.id);
    assert.equal(third.headers.get('idempotent-replayed'), 'true');
    const list = await tenant.api.get(`/v1/memories?metadata_filters=${encodeURIComponent('{}')}&limit=1000`);
    assert.equal(list.body.results.filter((memory: { id: string }) => memory.id === first.body.results.id).length, 1);

    const reused = await tenant.api.post('/v1/memories', { ...body, raw_text: 'different' }, { 'Idempotency-Key': key });
    assert.equal(reused.status, 422);
    assert.equal(reused.body.error.code, 'idempotency_key_reused');
  });

  it('lists with collection_ids (repeatable or comma list), paging and metadata filters', async () => {
    const other = await tenant.api.post('/v1/collections', { name: 'filters' });
    const collectionId = other.body.results.id as string;
    const make = (metadata: Record<string, unknown>) =>
      tenant.api.post('/v1/memories', { collection_id: collectionId, raw_text: `item ${JSON.stringify(metadata)}`, metadata });
    await make({ color: 'red', size: 1 });
    await make({ color: 'blue', size: 2 });
    await make({ color: 'red', size: 3, flagged: true });

    const all = await tenant.api.get(`/v1/memories?collection_ids=${collectionId}`);
    assert.equal(all.status, 200);
    assert.equal(all.body.total_entries, 3);
    const both = await tenant.api.get(`/v1/memories?collection_ids=${collectionId}&collection_ids=${tenant.collectionId}&limit=1000`);
    const asList = await tenant.api.get(`/v1/memories?collection_ids=${collectionId},${tenant.collectionId}&limit=1000`);
    assert.equal(both.body.total_entries, asList.body.total_entries);
    assert.ok(both.body.total_entries > 3);

    const query = (filters: unknown) =>
      tenant.api.get(`/v1/memories?collection_ids=${collectionId}&metadata_filters=${encodeURIComponent(JSON.stringify(filters))}`);
    assert.equal((await query({ 'metadata.color': { $eq: 'red' } })).body.total_entries, 2);
    assert.equal((await query({ 'metadata.color': { $ne: 'red' } })).body.total_entries, 1);
    assert.equal((await query({ 'metadata.size': { $in: [1, 2] } })).body.total_entries, 2);
    assert.equal((await query({ 'metadata.flagged': { $exists: true } })).body.total_entries, 1);
    assert.equal((await query({ 'metadata.flagged': { $exists: false } })).body.total_entries, 2);
    assert.equal((await query({ 'metadata.color': 'blue' })).body.total_entries, 1);

    const page = await tenant.api.get(`/v1/memories?collection_ids=${collectionId}&limit=2&offset=2`);
    assert.equal(page.body.results.length, 1);
    assert.equal(page.body.total_entries, 3);
    assert.equal(page.body.results[0].chunks, undefined, 'lists carry no chunk texts');
  });
});

describe('memories: bad input', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('bad-input');
  });

  const expect400 = async (body: unknown, field: string, pattern?: RegExp) => {
    const response = await tenant.api.post('/v1/memories', body);
    assert.equal(response.status, 400, JSON.stringify(response.body));
    assert.equal(response.body.error.code, 'validation_failed');
    const fields = response.body.error.details.map((detail: { field: string }) => detail.field);
    assert.ok(fields.includes(field), `expected ${field} among ${fields.join(', ')}`);
    if (pattern) assert.match(response.body.error.message, pattern);
  };

  it('rejects missing content, wrong types and conflicting fields, naming the field', async () => {
    await expect400({ collection_id: tenant.collectionId }, 'raw_text', /content is missing/);
    await expect400({ collection_id: tenant.collectionId, raw_text: 42 }, 'raw_text');
    await expect400({ collection_id: tenant.collectionId, raw_text: '   ' }, 'raw_text', /empty/);
    await expect400({ collection_id: tenant.collectionId, chunks: 'not an array' }, 'chunks');
    await expect400({ collection_id: tenant.collectionId, chunks: [] }, 'chunks');
    await expect400({ collection_id: tenant.collectionId, messages: [{ role: 'user' }] }, 'messages.0.content');
    await expect400({ collection_id: tenant.collectionId, messages: [{ role: 'robot', content: 'hi' }] }, 'messages.0.role');
    await expect400({ collection_id: tenant.collectionId, raw_text: 'a', chunks: ['b'] }, 'chunks');
    await expect400({ collection_id: 'nope', raw_text: 'a' }, 'collection_id');
    await expect400({ raw_text: 'a' }, 'collection_id');
    await expect400({ collection_id: tenant.collectionId, snapshot: {}, raw_text: 'a' }, 'snapshot', /mutually exclusive/);
    await expect400({ collection_id: tenant.collectionId, raw_text: 'a', metadata: 'x' }, 'metadata');
    await expect400({ collection_id: tenant.collectionId, raw_text: 'a', metadata: { $where: 1 } }, 'metadata');
    await expect400({ collection_id: tenant.collectionId, raw_text: 'a', kind: 'poem' }, 'kind');
    await expect400({ collection_id: tenant.collectionId, raw_text: 'a', kind: 'conversation' }, 'kind');
    await expect400({ collection_id: tenant.collectionId, raw_text: 'a', surprise: true }, 'body', /surprise/);
    await expect400([1, 2], 'body');
  });

  it('rejects non-JSON bodies, wrong content types and oversized bodies with clear errors', async () => {
    const broken = await tenant.api.post('/v1/memories', '{"collection_id": ', {});
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error.code, 'invalid_json');
    const text = await tenant.api.post('/v1/memories', 'hello', { 'Content-Type': 'text/plain' });
    assert.equal(text.status, 415);
    assert.equal(text.body.error.code, 'unsupported_media_type');
    const huge = await tenant.api.post('/v1/memories', { collection_id: tenant.collectionId, raw_text: 'x'.repeat(5 * 1024 * 1024) });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error.code, 'payload_too_large');
  });

  it('rejects list parameters out of range and malformed filters', async () => {
    const tooMany = await tenant.api.get('/v1/memories?limit=1001');
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.error.details[0].field, 'limit');
    assert.match(tooMany.body.error.message, /at most 1000/);
    assert.equal((await tenant.api.get('/v1/memories?limit=1000')).status, 200);
    const negative = await tenant.api.get('/v1/memories?offset=-1');
    assert.equal(negative.status, 400);
    assert.equal(negative.body.error.details[0].field, 'offset');
    const notNumber = await tenant.api.get('/v1/memories?limit=ten');
    assert.equal(notNumber.status, 400);
    const badJson = await tenant.api.get(`/v1/memories?metadata_filters=${encodeURIComponent('{not json')}`);
    assert.equal(badJson.status, 400);
    assert.equal(badJson.body.error.details[0].field, 'metadata_filters');
    assert.match(badJson.body.error.message, /not valid JSON/);
    const badKey = await tenant.api.get(`/v1/memories?metadata_filters=${encodeURIComponent('{"color":{"$eq":1}}')}`);
    assert.equal(badKey.status, 400);
    const badOperator = await tenant.api.get(`/v1/memories?metadata_filters=${encodeURIComponent('{"metadata.color":{"$where":"1"}}')}`);
    assert.equal(badOperator.status, 400);
    assert.match(badOperator.body.error.message, /unknown operator \$where/);
    const badCollection = await tenant.api.get('/v1/memories?collection_ids=abc');
    assert.equal(badCollection.status, 400);
    assert.equal(badCollection.body.error.details[0].field, 'collection_ids.0');
    const badMemoryId = await tenant.api.get('/v1/memories/xyz');
    assert.equal(badMemoryId.status, 400);
  });

  it('answers unknown routes with 404 and the same error body', async () => {
    const response = await tenant.api.get('/v1/nothing-here');
    assert.equal(response.status, 404);
    assert.equal(response.body.error.code, 'route_not_found');
    assert.ok(response.body.error.request_id);
  });

  it('leaves nothing written when a request is rejected', async () => {
    const before = (await tenant.api.get('/v1/memories')).body.total_entries as number;
    await tenant.api.post('/v1/memories', { collection_id: tenant.collectionId, raw_text: 'ok', metadata: { 'a.b': 1 } });
    await tenant.api.post('/v1/memories', { collection_id: '00000000-0000-4000-8000-000000000000', raw_text: 'no such collection' });
    await tenant.api.post('/v1/memories', { collection_id: tenant.collectionId, content_parts: [{ type: 'document' }] });
    const afterCount = (await tenant.api.get('/v1/memories')).body.total_entries as number;
    assert.equal(afterCount, before);
  });

  it('ends content that can never be indexed in failed, with a message and no chunks', async () => {
    // The test stack caps memories at 200 chunks; this text splits into more.
    const text = Array.from({ length: 400 }, (_, i) => `Paragraph ${i}: ${'lorem ipsum dolor sit amet '.repeat(45)}`).join('\n\n');
    const id = await createMemory(tenant, { raw_text: text });
    const failed = await waitForStatus(tenant.api, id, ['failed'], 90_000);
    assert.match(failed.body.results.status_message, /more than the limit of 200/);
    assert.deepEqual(failed.body.results.chunks, []);
    await assertFailedEvent(id, /more than the limit/);
  });
});
