/**
 * The embedded store's indexes only narrow what a query reads; they never change its answer. The
 * journal backend (with its own indexes and planner) and mongo-java-server's memory backend (which
 * scans) get the same documents, updates and deletes, then 300 seeded random queries of the shapes
 * the store code uses (equality and $in on compound, multikey and sparse keys, one- and two-sided
 * ranges, null, sorts with and without limits) and counts; every answer must be the same.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MongoClient, type Collection, type Document, type Filter, type Sort } from 'mongodb';
import { freePort, startMongoStandin, type EmbeddedMongo } from '../../dev/embedded.js';

interface Row extends Document {
  _id: string;
  n: number;
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 16807) % 2147483647) / 2147483647;
}

describe('the journal store answers like a scan', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-store-queries-'));
  const stores: EmbeddedMongo[] = [];
  const clients: MongoClient[] = [];
  let indexed: Collection<Row>;
  let scanned: Collection<Row>;

  before(async () => {
    for (const backend of ['journal', 'memory'] as const) {
      const store = await startMongoStandin({ dataDir: path.join(dataDir, backend), port: await freePort(), backend, heapMb: 256 });
      stores.push(store);
      const client = new MongoClient(store.uri, { retryWrites: false });
      await client.connect();
      clients.push(client);
    }
    [indexed, scanned] = clients.map((client) => client.db('queries').collection<Row>('rows')) as [Collection<Row>, Collection<Row>];
  });

  after(async () => {
    for (const client of clients) await client.close();
    for (const store of stores) await store.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('gives the same documents, order and counts for 300 random queries after random writes', async () => {
    const random = seeded(5);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
    for (const collection of [indexed, scanned]) {
      await collection.createIndex({ t: 1, c: 1, at: -1, _id: 1 });
      await collection.createIndex({ s: 1, at: 1 });
      await collection.createIndex({ tags: 1 });
      await collection.createIndex({ e: 1 }, { sparse: true });
      await collection.createIndex({ n: 1 }, { unique: true });
    }
    const rows: Row[] = [];
    for (let i = 0; i < 3000; i++) {
      const row: Row = {
        _id: `i${i}`,
        n: i,
        t: pick(['a', 'b', 'c']),
        c: pick([['x'], ['x', 'y'], ['z'], []]),
        s: pick(['accepted', 'complete', 'failed', null]),
        at: random() < 0.1 ? null : new Date(1e12 + Math.floor(random() * 1e6)),
      };
      if (random() < 0.7) row.tags = pick([['p'], ['p', 'q'], 'q', 5]);
      if (random() < 0.3) row.e = pick([1, 2, 'x', null]);
      if (random() < 0.1) delete row.at;
      rows.push(row);
    }
    for (const collection of [indexed, scanned]) await collection.insertMany(rows.map((row) => ({ ...row })));
    for (let i = 0; i < 300; i++) {
      const id = `i${Math.floor(random() * 3000)}`;
      const op = random();
      const value = pick(['a', 'b', 'd']);
      const at = new Date(1e12 + Math.floor(random() * 1e6));
      for (const collection of [indexed, scanned]) {
        if (op < 0.5) await collection.updateOne({ _id: id }, { $set: { t: value, at } });
        else if (op < 0.8) await collection.updateMany({ t: value, s: 'failed' }, { $set: { s: 'complete' } });
        else await collection.deleteOne({ _id: id });
      }
    }

    const mid = new Date(1e12 + 5e5);
    const mismatches: string[] = [];
    for (let i = 0; i < 300; i++) {
      const filter: Document = {};
      if (random() < 0.7) filter.t = random() < 0.5 ? pick(['a', 'b', 'c', 'd']) : { $in: [pick(['a', 'b']), pick(['c', 'd'])] };
      if (random() < 0.5) filter.c = random() < 0.5 ? pick(['x', 'y', 'z']) : { $in: ['x', 'z'] };
      if (random() < 0.4) filter.at = pick([{ $lt: mid }, { $gte: mid }, { $gt: mid, $lte: new Date(1e12 + 8e5) }, { $lte: mid }, null]);
      if (random() < 0.3) filter.s = pick(['accepted', 'complete', null, { $in: ['failed', null] }]);
      if (random() < 0.2) filter.tags = pick(['p', 'q', 5, { $in: ['q', 5] }]);
      if (random() < 0.2) filter.e = pick([1, 'x', null, { $gt: 0 }]);
      if (random() < 0.2) filter.n = pick([{ $gt: 1500 }, { $lt: 100 }, 77, { $in: [1, 2, 3000] }]);
      // Sorts that end in a unique key, so the expected order is fully determined.
      const sort = pick<Sort | undefined>([undefined, { at: -1, _id: 1 }, { n: -1 }, { n: 1 }, { s: 1, at: 1, _id: 1 }]);
      const limit = sort ? pick([0, 5, 20]) : 0;
      const answers = await Promise.all(
        [indexed, scanned].map(async (collection) => {
          let cursor = collection.find(filter as Filter<Row>, { projection: { _id: 1 } });
          if (sort) cursor = cursor.sort(sort);
          if (limit) cursor = cursor.limit(limit);
          const ids = (await cursor.toArray()).map((row) => row._id);
          return { ids: sort ? ids : [...ids].sort(), count: await collection.countDocuments(filter as Filter<Row>) };
        }),
      );
      const [a, b] = answers as [{ ids: string[]; count: number }, { ids: string[]; count: number }];
      if (JSON.stringify(a) !== JSON.stringify(b)) {
        mismatches.push(`${JSON.stringify({ filter, sort, limit })}: ${a.ids.length}/${a.count} against ${b.ids.length}/${b.count}`);
      }
    }
    assert.deepEqual(mismatches, []);
  });

  it('counts off an index alone where it can say the count exactly, and the counts stay a scan’s', async () => {
    const [indexedCounts, scannedCounts] = clients.map((client) => client.db('queries').collection<Row>('counts')) as [
      Collection<Row>,
      Collection<Row>,
    ];
    const rows: Row[] = [
      // An array holding a value twice, and one that two $in values reach: each document counts once.
      { _id: 'a', n: 1, c: ['x', 'x'], m: 'e5' },
      { _id: 'b', n: 2, c: ['x', 'y'], m: 'e5' },
      { _id: 'c', n: 3, c: 'x', m: 'e5' },
      { _id: 'd', n: 4, c: ['x'], m: 'other' },
      { _id: 'f', n: 6, m: 'e5' },
      { _id: 'g', n: 7, c: ['y'], m: null },
    ];
    for (const collection of [indexedCounts, scannedCounts]) {
      await collection.createIndex({ c: 1, m: 1, _id: 1 });
      await collection.insertMany(rows.map((row) => ({ ...row })));
    }
    const db = clients[0]!.db('queries');
    const filters: [Filter<Row>, 'COUNT_SCAN' | 'documents'][] = [
      [{ c: 'x', m: 'e5' }, 'COUNT_SCAN'],
      [{ c: { $in: ['x', 'y'] }, m: 'e5' }, 'COUNT_SCAN'],
      [{ c: { $eq: 'y' } }, 'COUNT_SCAN'],
      [{ c: 'z', m: 'e5' }, 'COUNT_SCAN'],
      // Not strings, or a key the index does not pin: counted through the documents.
      [{ c: 'x', m: null }, 'documents'],
      [{ c: 'x', n: { $gt: 1 } }, 'documents'],
      [{ c: ['x', 'x'] }, 'documents'],
    ];
    /** Each filter's count from both stores (they must agree) and the plans the indexed one used. */
    const countAll = async () => {
      await db.admin().command({ engramStats: 1, db: 'queries', reset: true });
      for (const [filter] of filters) {
        const [fast, slow] = await Promise.all([indexedCounts.countDocuments(filter), scannedCounts.countDocuments(filter)]);
        assert.equal(fast, slow, JSON.stringify(filter));
      }
      const stats = (await db.admin().command({ engramStats: 1, db: 'queries' })) as {
        collections: { ns: string; shapes: { shape: string; plan: string; count: number; docsExamined: number }[] }[];
      };
      return stats.collections.find((collection) => collection.ns === 'queries.counts')!.shapes;
    };

    const shapes = await countAll();
    const countScans = shapes.filter((shape) => shape.plan.startsWith('COUNT_SCAN'));
    const queriesOf = (list: typeof shapes) => list.reduce((sum, shape) => sum + shape.count, 0);
    assert.equal(queriesOf(countScans), filters.filter(([, plan]) => plan === 'COUNT_SCAN').length, JSON.stringify(shapes));
    assert.ok(
      countScans.every((shape) => shape.docsExamined === 0),
      'an index count reads no document',
    );
    assert.equal(
      queriesOf(shapes) - queriesOf(countScans),
      filters.filter(([, plan]) => plan === 'documents').length,
      JSON.stringify(shapes),
    );

    // An array inside the array: its key is a normalised form that could equal 'x', so from now on
    // the index alone no longer says the count (the matcher does not match it with 'x').
    for (const collection of [indexedCounts, scannedCounts]) await collection.insertOne({ _id: 'e', n: 5, c: [['x']], m: 'e5' });
    const after = await countAll();
    assert.deepEqual(
      after.filter((shape) => shape.plan.startsWith('COUNT_SCAN')),
      [],
      JSON.stringify(after),
    );
  });
});
