/**
 * The time of what a memory holds: `timestamp` per message and `occurred_at` per memory are
 * validated, stored, returned, and used as each turn's time (its message's timestamp, else the
 * memory's occurred_at, else its creation: core/memory-time.ts) in retrieval results and in the
 * dates of procedure traces.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemory, eventually, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase } from '../support/db.js';

after(closeDatabase);

describe('memory time: message timestamps and occurred_at', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('memory-time');
  });

  it('refuses malformed times with 400 validation_failed naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ messages: [{ role: 'user', content: 'hi', timestamp: 'yesterday' }] }, 'messages.0.timestamp'],
      [
        {
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'user', content: 'yo', timestamp: 1683554160000 },
          ],
        },
        'messages.1.timestamp',
      ],
      // A time without a zone is ambiguous: refused rather than guessed.
      [{ messages: [{ role: 'user', content: 'hi', timestamp: '2023-05-08T13:56:00' }] }, 'messages.0.timestamp'],
      [{ raw_text: 'x', occurred_at: '8 May 2023' }, 'occurred_at'],
      [{ raw_text: 'x', occurred_at: '2023-02-30T10:00:00Z' }, 'occurred_at'],
    ];
    for (const [body, field] of cases) {
      const response = await tenant.api.post('/v1/memories', { collection_id: tenant.collectionId, ...body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.error.code, 'validation_failed');
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        `${field} named in ${JSON.stringify(response.body.error.details)}`,
      );
    }
    const appended = await tenant.api.post(`/v1/memories/${crypto.randomUUID()}/messages`, {
      collection_id: tenant.collectionId,
      messages: [{ role: 'user', content: 'later', timestamp: 'soon' }],
    });
    assert.equal(appended.status, 400);
    assert.equal(appended.body.error.details[0].field, 'messages.0.timestamp');
  });

  it('stores and returns the times, and gives every chunk and search hit its own', async () => {
    const id = await createMemory(tenant, {
      kind: 'conversation',
      occurred_at: '2023-05-08T13:56:00Z',
      messages: [
        { role: 'user', content: 'Caroline: I went to the LGBTQ support group yesterday.', timestamp: '2023-05-08T13:56:00+00:00' },
        { role: 'assistant', content: 'Melanie: That sounds wonderful, tell me about the pottery class.' },
        { role: 'user', content: 'Caroline: The pottery class starts next week.', timestamp: '2023-05-09T09:00:00+02:00' },
      ],
    });
    const done = await waitForStatus(tenant.api, id, ['complete']);
    const record = done.body.results;
    assert.equal(record.occurred_at, '2023-05-08T13:56:00.000Z');
    assert.deepEqual(
      record.chunk_sources.map((source: { occurred_at: string }) => source.occurred_at),
      ['2023-05-08T13:56:00.000Z', '2023-05-08T13:56:00.000Z', '2023-05-09T07:00:00.000Z'],
      'a message without a timestamp takes the memory occurred_at',
    );
    const listed = await tenant.api.get(`/v1/memories?collection_ids=${tenant.collectionId}`);
    assert.equal(listed.body.results.find((memory: { id: string }) => memory.id === id).occurred_at, '2023-05-08T13:56:00.000Z');

    const search = await tenant.api.post('/v1/memories/search', {
      query: 'pottery class next week',
      collection_ids: [tenant.collectionId],
    });
    assert.equal(search.status, 200);
    const hit = search.body.results.hits.find((candidate: { chunk_index: number }) => candidate.chunk_index === 2);
    assert.ok(hit, JSON.stringify(search.body.results.hits));
    assert.equal(hit.occurred_at, '2023-05-09T07:00:00.000Z');
    assert.equal(hit.memory.occurred_at, '2023-05-08T13:56:00.000Z');
  });

  it('without any time given, a memory reports occurred_at null and its chunks take its creation', async () => {
    const id = await createMemory(tenant, { raw_text: 'No date was given for this note.' });
    const record = (await waitForStatus(tenant.api, id, ['complete'])).body.results;
    assert.equal(record.occurred_at, null);
    assert.equal(record.chunk_sources[0].occurred_at, record.created_at);
  });

  it('dates procedure traces by their turn: relative dates resolve against the message timestamp', async () => {
    const collection = await tenant.api.post('/v1/collections', { name: `time-traces-${Date.now()}` });
    assert.equal(collection.status, 201);
    const collectionId = collection.body.results.id;
    const id = await createMemory(
      { ...tenant, collectionId },
      {
        kind: 'conversation',
        occurred_at: '2021-03-01T10:00:00Z',
        messages: [
          { role: 'user', content: 'I submitted the expense report yesterday.', timestamp: '2023-05-08T13:56:00Z' },
          { role: 'user', content: 'The manager approved the expense report.' },
        ],
      },
    );
    await waitForStatus(tenant.api, id, ['complete']);
    const instances = await eventually(async () => {
      const list = await tenant.api.get(`/v1/workflows?collection_id=${collectionId}`);
      assert.equal(list.status, 200);
      assert.ok(list.body.results.length > 0, 'an instance was derived');
      return list.body.results;
    });
    const detail = await tenant.api.get(`/v1/workflows/${instances[0].id}?collection_id=${collectionId}`);
    assert.equal(detail.status, 200);
    const traces = detail.body.results.history.map(
      (entry: { trace: { verb_class: string; occurred_at: string; occurred_at_source: string } }) => entry.trace,
    );
    const submit = traces.find((trace: { verb_class: string }) => trace.verb_class === 'submit');
    const approve = traces.find((trace: { verb_class: string }) => trace.verb_class === 'approve');
    assert.ok(submit && approve, JSON.stringify(traces));
    assert.equal(submit.occurred_at, '2023-05-07T13:56:00.000Z', '"yesterday" against the message timestamp');
    assert.equal(submit.occurred_at_source, 'explicit');
    assert.equal(approve.occurred_at, '2021-03-01T10:00:00.000Z', 'no timestamp and no date: the memory occurred_at');
    assert.equal(approve.occurred_at_source, 'memory_time');
  });
});
