import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Db } from 'mongodb';
import { retentionCutoff, SequencedLog, seqsAfter, settleClash, trimsItself, type LogEntry } from './sequenced-log.js';

describe('sequenced log: the pure rules', () => {
  it('a batch takes the seqs right after the newest committed one, in its order', () => {
    assert.deepEqual(seqsAfter(0, 3), [1, 2, 3]);
    assert.deepEqual(seqsAfter(41, 2), [42, 43]);
    assert.deepEqual(seqsAfter(7, 0), []);
  });

  const cutoffs: [latest: number, maxEntries: number, cutoff: number | null][] = [
    [0, 10, null],
    [10, 10, null],
    [11, 10, 1],
    [25, 10, 15],
    [1000, 1, 999],
  ];
  for (const [latest, maxEntries, cutoff] of cutoffs) {
    it(`retention: newest ${latest}, keep ${maxEntries} → trim through ${cutoff}`, () => {
      assert.equal(retentionCutoff(latest, maxEntries), cutoff);
    });
  }

  const trimming: [capped: boolean, retention: 'global' | 'owner' | undefined, trims: boolean][] = [
    [false, undefined, true],
    [false, 'global', true],
    [false, 'owner', false],
    [true, 'global', false],
    [true, undefined, false],
  ];
  for (const [capped, retention, trims] of trimming) {
    it(`trims itself: capped=${capped}, retention=${retention ?? 'default'} → ${trims}`, () => {
      assert.equal(trimsItself(capped, retention), trims);
    });
  }

  it('after a clash: what is stored resolves with its stored seq, the rest is retried in order', () => {
    const settled = settleClash(
      ['a', 'b', 'c', 'd'],
      ['ia', 'ib', 'ic', 'id'],
      new Map([
        ['ia', 7],
        ['ic', 9],
      ]),
    );
    assert.deepEqual(settled.committed, [
      ['a', 7],
      ['c', 9],
    ]);
    assert.deepEqual(settled.retry, ['b', 'd']);
  });
});

interface Entry extends LogEntry {
  writer: string;
  n: number;
}

/**
 * The one collection two processes share, as the driver shows it to SequencedLog: unique `_id`
 * and `seq` (the seq_unique index), an ordered insertMany that stops at its first clash with the
 * earlier documents kept and throws code 11000, and a yield before each read and insert so two
 * writers interleave as two processes do.
 */
function sharedLogCollection() {
  const docs: Entry[] = [];
  const stats = { clashes: 0 };
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const matches = (doc: Entry, query: Record<string, unknown>) =>
    Object.entries(query).every(([field, condition]) => {
      const value = (doc as Record<string, unknown>)[field];
      if (condition && typeof condition === 'object') {
        const ops = condition as { $gt?: number; $lte?: number; $in?: unknown[] };
        if (ops.$gt !== undefined && !((value as number) > ops.$gt)) return false;
        if (ops.$lte !== undefined && !((value as number) <= ops.$lte)) return false;
        if (ops.$in !== undefined && !ops.$in.includes(value)) return false;
        return true;
      }
      return value === condition;
    });
  const collection = {
    createIndex: async () => 'seq_unique',
    find(query: Record<string, unknown>, options: { sort?: { seq: 1 | -1 }; limit?: number } = {}) {
      const read = async () => {
        await tick();
        let found = docs.filter((doc) => matches(doc, query)).map((doc) => ({ ...doc }));
        if (options.sort) found.sort((a, b) => (a.seq - b.seq) * options.sort!.seq);
        if (options.limit) found = found.slice(0, options.limit);
        return found;
      };
      return { toArray: read, next: async () => (await read())[0] ?? null };
    },
    async insertMany(batch: Entry[]) {
      for (const doc of batch) {
        await tick();
        if (docs.some((other) => other.seq === doc.seq || other._id === doc._id)) {
          stats.clashes += 1;
          throw Object.assign(new Error(`E11000 duplicate key error: seq ${doc.seq}`), { code: 11000 });
        }
        docs.push({ ...doc });
      }
      return { insertedCount: batch.length };
    },
    async deleteMany(query: Record<string, unknown>) {
      const before = docs.length;
      for (let i = docs.length - 1; i >= 0; i--) if (matches(docs[i]!, query)) docs.splice(i, 1);
      return { deletedCount: before - docs.length };
    },
  };
  // Only what SequencedLog.open calls; the cast stands for the driver's Db, which has far more.
  const db = {
    listCollections: () => ({ toArray: async () => [] }),
    collection: () => collection,
  } as unknown as Db;
  return { docs, db, stats };
}

const open = (db: Db, maxEntries = 1_000_000, retention?: 'owner') =>
  SequencedLog.open<Entry>(db, 'log', { cappedCollections: false } as never, {
    maxEntries,
    maxBytes: 1 << 20,
    batchSize: 16,
    ...(retention ? { retention } : {}),
  });

describe('sequenced log: group commit between processes', () => {
  it('two writers appending at once get every seq exactly once, gap-free, each told its stored seq', async () => {
    const { docs, db, stats } = sharedLogCollection();
    const [first, second] = [await open(db), await open(db)];
    const append = (log: SequencedLog<Entry>, writer: string) =>
      Promise.all(
        Array.from({ length: 60 }, (_, n) => log.append({ _id: `${writer}-${n}`, writer, n }).then((seq) => ({ writer, n, seq }))),
      );
    const results = (await Promise.all([append(first, 'one'), append(second, 'two')])).flat();
    assert.ok(stats.clashes > 0, 'the writers did collide (else this tests nothing)');
    const seqs = docs.map((doc) => doc.seq).sort((a, b) => a - b);
    assert.deepEqual(seqs, seqsAfter(0, 120), 'seqs 1..120, none twice, none missing');
    for (const result of results) {
      assert.equal(docs.find((doc) => doc._id === `${result.writer}-${result.n}`)?.seq, result.seq, 'the seq answered is the one stored');
    }
    for (const writer of ['one', 'two']) {
      const own = results.filter((result) => result.writer === writer).sort((a, b) => a.n - b.n);
      assert.ok(
        own.every((result, index) => index === 0 || result.seq > own[index - 1]!.seq),
        `${writer}'s appends keep their order`,
      );
    }
  });

  it('trim keeps the newest maxEntries; an owner-trimmed log is never trimmed here', async () => {
    const global = sharedLogCollection();
    const log = await open(global.db, 10);
    await log.appendMany(Array.from({ length: 25 }, (_, n) => ({ _id: `e${n}`, writer: 'w', n })));
    assert.equal(await log.trim(), 15);
    assert.deepEqual(
      global.docs.map((doc) => doc.seq),
      seqsAfter(15, 10),
    );
    assert.equal(await log.oldestSeq(), 16);

    const owned = sharedLogCollection();
    const ownerLog = await open(owned.db, 10, 'owner');
    await ownerLog.appendMany(Array.from({ length: 25 }, (_, n) => ({ _id: `e${n}`, writer: 'w', n })));
    assert.equal(await ownerLog.trim(), 0);
    assert.equal(owned.docs.length, 25);
  });

  it('reads after a seq come in seq order, bounded by the limit', async () => {
    const { db } = sharedLogCollection();
    const log = await open(db);
    await log.appendMany(Array.from({ length: 10 }, (_, n) => ({ _id: `e${n}`, writer: 'w', n })));
    assert.deepEqual(
      (await log.readAfter(3, 4)).map((entry) => entry.seq),
      [4, 5, 6, 7],
    );
    assert.equal(await log.lastSeqAfter(3, 4), 7);
    assert.equal(await log.lastSeqAfter(10, 4), 10, 'nothing newer: the seq given');
    assert.equal(await log.latestSeq(), 10);
  });
});
