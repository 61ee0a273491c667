/**
 * The event log's sequencer against the real database of the stack (the stand-in in CI):
 * several processes append at once while a reader follows; every seq is unique, the sequence
 * is contiguous, and the reader never sees a gap that is filled later.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { projectRoot } from '../../config/index.js';
import { connectDatabase, type Database } from '../../store/db.js';
import { SequencedLog, type LogEntry } from '../../store/sequenced-log.js';
import { stack } from '../support/client.js';

const run = promisify(execFile);

describe('sequenced log under concurrency', () => {
  let database: Database | null = null;
  after(async () => database?.close());

  it('gives 4 concurrent writers (3 processes + this one) unique, contiguous seqs and readers no gaps', async () => {
    const env = stack().serviceEnv;
    database = await connectDatabase(env.MONGODB_URI!, env.MONGODB_DB!);
    const name = `seq_test_${Date.now()}`;
    const log = await SequencedLog.open<LogEntry & { writer: string; n: number }>(database.db, name, database.capabilities, {
      maxEntries: 1_000_000,
      maxBytes: 64 * 1024 * 1024,
    });
    const perWriter = 300;
    const script = path.join(projectRoot(), 'dist', 'test', 'support', 'append-worker.js');

    let lastSeen = 0;
    let reading = true;
    const observed: number[] = [];
    const readerDeadline = Date.now() + 120_000;
    const reader = (async () => {
      while ((reading || lastSeen < perWriter * 4) && Date.now() < readerDeadline) {
        const batch = await log.readAfter(lastSeen, 500);
        for (const entry of batch) {
          assert.equal(entry.seq, lastSeen + 1, `reader saw seq ${entry.seq} right after ${lastSeen}: a gap`);
          lastSeen = entry.seq;
          observed.push(entry.seq);
        }
        if (batch.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();

    const children = ['a', 'b', 'c'].map((label) =>
      run(process.execPath, [script, env.MONGODB_URI!, env.MONGODB_DB!, name, String(perWriter), label]),
    );
    const local = Promise.all(Array.from({ length: perWriter }, (_, n) => log.append({ _id: `local-${n}`, writer: 'local', n })));
    let localSeqs: number[];
    try {
      [localSeqs] = await Promise.all([local, ...children]);
    } finally {
      reading = false;
    }
    await reader;

    const all = await database.db
      .collection(name)
      .find({}, { sort: { seq: 1 } })
      .toArray();
    assert.equal(all.length, perWriter * 4);
    assert.deepEqual(
      all.map((entry) => entry.seq),
      Array.from({ length: perWriter * 4 }, (_, i) => i + 1),
    );
    assert.equal(new Set(localSeqs).size, perWriter, 'each append resolved with its own seq');
    assert.equal(observed.length, perWriter * 4);
    // Within one writer, entries keep their submission order.
    for (const writer of ['a', 'b', 'c', 'local']) {
      const mine = all.filter((entry) => entry.writer === writer).map((entry) => entry.n as number);
      assert.deepEqual(
        mine,
        [...mine].sort((x, y) => x - y),
        `writer ${writer} kept its order`,
      );
    }
    await database.db.dropCollection(name);
  });

  it('keeps only the newest maxEntries when trimmed by seq (the stand-in has no capped collections)', async () => {
    const env = stack().serviceEnv;
    database ??= await connectDatabase(env.MONGODB_URI!, env.MONGODB_DB!);
    const name = `trim_test_${Date.now()}`;
    const log = await SequencedLog.open<LogEntry & { n: number }>(database.db, name, database.capabilities, {
      maxEntries: 100,
      maxBytes: 1024 * 1024,
    });
    await log.appendMany(Array.from({ length: 250 }, (_, n) => ({ _id: `e-${n}`, n })));
    if (log.isCapped) {
      // Real MongoDB: the server itself keeps at most maxEntries.
      assert.ok((await database.db.collection(name).countDocuments()) <= 100);
    } else {
      await log.trim();
      assert.equal(await log.oldestSeq(), 151);
    }
    assert.equal(await log.latestSeq(), 250);
    const replay = await log.readAfter(0, 1000);
    assert.equal(replay[replay.length - 1]!.seq, 250);
    assert.ok(
      replay.every((entry, index) => index === 0 || entry.seq === replay[index - 1]!.seq + 1),
      'what remains is contiguous',
    );
    await database.db.dropCollection(name);
  });
});
