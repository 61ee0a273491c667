/**
 * Hot queries are served by indexes, so their cost does not grow with everything else stored.
 *
 * The store's hot collections are padded with thousands of documents of another tenant, then the
 * service does what users and its own sweeps do all the time: ingest, list a collection's
 * memories, read a memory, search (entities and their mentions), replay the event log after a
 * seq, follow the index feed, delete a memory (its chunks and mentions), and run its due sweeps.
 * The store's own counters (the embedded store's `engramStats`; MongoDB's profiler on a real server) must
 * then show no collection scan on a hot collection, and no query that read any of the padding.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db, Document } from 'mongodb';
import { createMemory, newTenant, sleep, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';
import { RawSocket } from '../support/ws.js';

const PADDING = 3000;
const PAD_TENANT = 'store-plans-padding';

/** Where a scan would cost the most: what every ingestion, read, delete and sweep touches. */
const HOT = [
  'memories',
  'chunks',
  'graph_mentions',
  'graph_entities',
  'memory_events',
  'index_changes',
  'memory_purges',
  'idempotency_keys',
];

interface ShapeStats {
  ns: string;
  shape: string;
  plan: string;
  count: number;
  maxDocsExamined: number;
}

/**
 * Per query shape: its plan and the most documents one query of that shape examined. The embedded
 * store counts them itself (`engramStats`); a real MongoDB (MONGODB_URI) through its profiler.
 */
async function readPlans(db: Db, reset: boolean): Promise<ShapeStats[]> {
  try {
    const stats = (await db.admin().command({ engramStats: 1, db: db.databaseName, reset })) as {
      collections: { ns: string; shapes: Omit<ShapeStats, 'ns'>[] }[];
    };
    return stats.collections.flatMap((collection) => collection.shapes.map((shape) => ({ ns: collection.ns, ...shape })));
  } catch (error) {
    if ((error as { code?: number }).code !== 59) throw error; // 59: no such command, i.e. not the embedded store
  }
  if (reset) {
    await db.command({ profile: 0 });
    await db
      .collection('system.profile')
      .drop()
      .catch(() => undefined);
    await db.command({ profile: 2 });
    return [];
  }
  const byShape = new Map<string, ShapeStats>();
  for await (const op of db.collection('system.profile').find({ op: { $in: ['query', 'getmore', 'update', 'remove', 'command'] } })) {
    const filter = (op.command?.filter ?? op.command?.q ?? op.command?.query ?? {}) as Document;
    const shape = JSON.stringify(Object.keys(filter));
    const plan = String(op.planSummary ?? '').startsWith('COLLSCAN') ? 'COLLSCAN' : String(op.planSummary ?? '');
    const key = `${op.ns} ${shape} ${plan}`;
    const entry = byShape.get(key) ?? { ns: String(op.ns), shape, plan, count: 0, maxDocsExamined: 0 };
    entry.count++;
    entry.maxDocsExamined = Math.max(entry.maxDocsExamined, Number(op.docsExamined ?? 0));
    byShape.set(key, entry);
  }
  await db.command({ profile: 0 });
  return [...byShape.values()];
}

/** Another tenant's rows in each hot collection, shaped like the real ones; scanning them is what must not happen. */
async function pad(db: Db): Promise<void> {
  const now = new Date();
  const range = (prefix: string, make: (i: number) => Document) =>
    Array.from({ length: PADDING }, (_, i) => ({ _id: `${prefix}-${i}`, ...make(i) }));
  await db.collection('memories').insertMany(
    range('pad-memory', (i) => ({
      tenant_id: PAD_TENANT,
      collection_ids: [`pad-collection-${i % 50}`],
      status: 'complete',
      created_at: now,
      updated_at: now,
      content: { kind: 'raw_text' },
      metadata: {},
    })) as Document[],
  );
  await db.collection('chunks').insertMany(
    range('pad-chunk', (i) => ({
      memory_id: `pad-memory-${i % 300}`,
      collection_ids: [`pad-collection-${i % 50}`],
      embedding_model: 'padding',
      index: i,
      text: 'padding',
    })) as Document[],
  );
  await db.collection('graph_mentions').insertMany(
    range('pad-mention', (i) => ({
      memory_id: `pad-memory-${i % 300}`,
      collection_id: `pad-collection-${i % 50}`,
      target_id: `pad-entity-${i % 500}`,
    })) as Document[],
  );
  await db.collection('graph_entities').insertMany(
    range('pad-entity', (i) => ({
      collection_id: `pad-collection-${i % 50}`,
      alias_keys: [`padding ${i}`],
      tokens: ['padding'],
    })) as Document[],
  );
}

async function unpad(db: Db): Promise<void> {
  for (const [name, prefix] of [
    ['memories', 'pad-memory'],
    ['chunks', 'pad-chunk'],
    ['graph_mentions', 'pad-mention'],
    ['graph_entities', 'pad-entity'],
  ] as const) {
    await db.collection<{ _id: string }>(name).deleteMany({ _id: { $regex: `^${prefix}-` } });
  }
}

describe('hot queries and the store', () => {
  let db: Db;
  let tenant: TenantFixture;

  before(async () => {
    db = await database();
    tenant = await newTenant('plans');
    await pad(db);
  });

  after(async () => {
    await unpad(db);
    await closeDatabase();
  });

  it('serves every hot query from an index: none scans a collection or reads another tenant’s rows', async () => {
    await readPlans(db, true);

    const ids: string[] = [];
    for (const name of ['Astrid', 'Bengt', 'Cecilia']) {
      ids.push(
        await createMemory(tenant, {
          collection_id: tenant.collectionId,
          raw_text: `${name} Lindqvist runs the Malmö office. ${name} met Oskar Berg from Lund about the harbour crane.`,
        }),
      );
    }
    for (const id of ids) await waitForStatus(tenant.api, id, ['complete']);

    // A subscriber resuming from seq 0: the event log read after a seq.
    const socket = await RawSocket.open(tenant.api, '&subscriber_id=plans');
    try {
      socket.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['ingestion_progress'], last_ack_seq: 0 });
      await socket.next((frame) => frame.action === 'event');
    } finally {
      socket.close();
    }
    const list = await tenant.api.get(`/v1/memories?collection_ids=${tenant.collectionId}&limit=2`);
    assert.equal(list.status, 200);
    assert.equal((await tenant.api.get(`/v1/memories/${ids[0]}`)).status, 200);
    const search = await tenant.api.post('/v1/memories/search', {
      query: 'Who runs the Malmö office?',
      collection_ids: [tenant.collectionId],
    });
    assert.equal(search.status, 200);
    assert.ok([200, 204].includes((await tenant.api.delete(`/v1/memories/${ids[1]}`)).status));
    // The sweeps (deletes, collection changes, pattern mines) run every second or two in the test stack.
    await sleep(3000);

    const plans = await readPlans(db, false);
    const hot = plans.filter((p) => HOT.includes(p.ns.slice(db.databaseName.length + 1)));
    assert.ok(
      ['memories', 'chunks', 'graph_mentions', 'memory_events', 'index_changes'].every((name) =>
        hot.some((p) => p.ns.endsWith(`.${name}`)),
      ),
      `the window saw queries on every hot collection: ${[...new Set(hot.map((p) => p.ns))].join(', ')}`,
    );
    const scans = hot.filter((p) => p.plan === 'COLLSCAN' && p.maxDocsExamined > 0);
    assert.deepEqual(scans, [], 'collection scans on hot collections');
    const readPadding = hot.filter((p) => p.maxDocsExamined >= PADDING);
    assert.deepEqual(readPadding, [], 'queries that read another tenant’s rows');
  });
});
