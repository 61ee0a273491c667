/**
 * Persisted partitions (issue 25, cold load): an API process that loads a collection large enough
 * (here: any, SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS=1) leaves a snapshot of its lexical index, vector
 * rows and graph in the store; another process loads from it, brings it up to date from the index
 * feed, and answers exactly as a process that read every chunk. A memory delete leaves no snapshot
 * behind, and no later snapshot holds a byte of the deleted memory.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { connectDatabase, type Database } from '../../store/db.js';
import { Api, createMemory, eventually, newTenant, stack, waitForStatus, type TenantFixture } from '../support/client.js';
import { startApiProcess } from '../support/processes.js';

const SNAPSHOTS = { SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS: '1' };

const TEXTS = [
  'Marisol Vega repairs harpsichords in a workshop near the Lisbon cathedral. She tunes them by ear.',
  'The quarterly report says the Oslo office doubled its harpsichord sales while Lisbon stayed flat?',
  'Ticket ZX-4471: the tuning fork shipment to Porto arrived late on 3 March 2024.',
];
const QUERIES = ['harpsichord repairs Lisbon', 'Oslo office sales', 'ZX-4471 tuning fork', 'cathedral workshop'];

type Hit = { memory_id: string; chunk_index: number; score: number; raw_scores: { cosine: number | null; bm25: number | null } };

/** The hits in order with every score (vector, lexical and fused), and the graph's entities. */
async function ranked(
  api: Api,
  collectionId: string,
  query: string,
): Promise<{ hits: { memory: string; chunk: number; score: number; cosine: number | null; bm25: number | null }[]; entities: unknown }> {
  const response = await api.search([collectionId], query, { limit: 10 });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return {
    hits: (response.body.results.hits as Hit[]).map((hit) => ({
      memory: hit.memory_id,
      chunk: hit.chunk_index,
      score: hit.score,
      cosine: hit.raw_scores.cosine,
      bm25: hit.raw_scores.bm25,
    })),
    entities: response.body.results.entities,
  };
}

async function loads(baseUrl: string, source: 'chunks' | 'snapshot'): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`engram_index_loads{source="${source}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('persisted search partitions', () => {
  let tenant: TenantFixture;
  let database: Database;
  const processes: ChildProcess[] = [];
  const heads = () => database.db.collection('index_snapshots').countDocuments({ tenant_id: tenant.tenantId });

  before(async () => {
    tenant = await newTenant('index-snapshots');
    const info = stack();
    database = await connectDatabase(info.serviceEnv.MONGODB_URI!, info.serviceEnv.MONGODB_DB!);
  });
  after(async () => {
    for (const child of processes) await stopChild(child);
    await database.close();
  });

  it('loads a collection from its snapshot, up to date, and ranks exactly as a load from the chunks (vector, lexical and fused scores, graph entities)', async () => {
    const ids: string[] = [];
    for (const text of TEXTS) ids.push(await createMemory(tenant, { raw_text: text }));
    for (const id of ids) await waitForStatus(tenant.api, id, ['complete']);

    const writer = await startApiProcess('api-snapshot-writer', SNAPSHOTS);
    processes.push(writer.child);
    const writerApi = new Api(writer.baseUrl, tenant.apiKey);
    await ranked(writerApi, tenant.collectionId, QUERIES[0]!);
    assert.equal(await loads(writer.baseUrl, 'chunks'), 1, 'the first load tokenises');
    await eventually(async () => assert.ok((await heads()) > 0, 'a snapshot is written'));

    // Written after the snapshot: the reader must learn it from the feed.
    const later = await createMemory(tenant, { raw_text: 'Quillon Batiste restores clavichords in Ghent.' });
    await waitForStatus(tenant.api, later, ['complete']);

    const reader = await startApiProcess('api-snapshot-reader', SNAPSHOTS);
    processes.push(reader.child);
    const readerApi = new Api(reader.baseUrl, tenant.apiKey);
    const found = await ranked(readerApi, tenant.collectionId, 'Quillon clavichords Ghent');
    assert.equal(await loads(reader.baseUrl, 'snapshot'), 1, 'the second process loads from the snapshot');
    assert.equal(await loads(reader.baseUrl, 'chunks'), 0);
    assert.equal(found.hits[0]?.memory, later, 'the memory written after the snapshot is found first');

    // The stack's own API never writes or reads snapshots of so small a collection: it tokenised.
    for (const query of [...QUERIES, 'Quillon clavichords Ghent']) {
      assert.deepEqual(await ranked(readerApi, tenant.collectionId, query), await ranked(tenant.api, tenant.collectionId, query), query);
    }
  });

  it('removes the tenant’s snapshots when a memory is deleted', async () => {
    assert.ok((await heads()) > 0, 'the previous test left a snapshot');
    const listed = await tenant.api.get(`/v1/memories?collection_id=${tenant.collectionId}`);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const victim = (listed.body.results as { id: string }[])[0]!.id;
    const victimChunks = await database.db.collection('chunks').find({ memory_id: victim }).toArray();
    assert.ok(victimChunks.length > 0);
    assert.equal((await tenant.api.delete(`/v1/memories/${victim}`)).status, 200);
    await eventually(async () => assert.equal(await heads(), 0, 'no snapshot holds the deleted memory’s terms'));

    // A process loading the collection now leaves a new snapshot, with nothing of the deleted memory.
    const after = await startApiProcess('api-snapshot-after-delete', SNAPSHOTS);
    processes.push(after.child);
    await ranked(new Api(after.baseUrl, tenant.apiKey), tenant.collectionId, QUERIES[0]!);
    await eventually(async () => assert.ok((await heads()) > 0, 'a new snapshot is written'));
    const parts = await database.db.collection('index_snapshots').find({ tenant_id: tenant.tenantId, kind: 'part' }).toArray();
    const bytes = Buffer.concat(parts.map((part) => Buffer.from((part.data as { buffer: Uint8Array }).buffer)));
    assert.equal(bytes.indexOf(Buffer.from(victim, 'utf8')), -1, 'not its id');
    for (const chunk of victimChunks) {
      const vector = Buffer.from((chunk.embedding as { buffer: Uint8Array }).buffer);
      assert.equal(bytes.indexOf(vector), -1, 'not its vectors');
    }
  });
});
