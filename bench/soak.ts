/**
 * Storage soak of the embedded MongoDB stand-in's durable (H2) backend, the store `npm run dev`
 * keeps its data in: concurrent writers insert chunk-like documents (text and a 384-float vector,
 * as the 100k search scenario does) and count what the server acknowledged; then the stand-in is
 * stopped cleanly and restarted, and every acknowledged document is looked for; then the same
 * again with a SIGKILL in the middle of writing. Reports what was lost each way and the storage
 * errors the stand-in logged (`Chunk … not found` is MVStore's).
 *
 * BENCH_SOAK_DOCS (default 40,000) documents per phase, BENCH_SOAK_WRITERS (8) concurrent writers.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Binary, MongoClient } from 'mongodb';
import { freePort, startMongoStandin, type EmbeddedMongo } from '../dev/embedded.js';
import { info, metric, sleep } from './stats.js';
import { seededRandom } from './texts.js';

const DOCS = Number(process.env.BENCH_SOAK_DOCS ?? 40_000);
const WRITERS = Number(process.env.BENCH_SOAK_WRITERS ?? 8);
const BATCH = 50;

interface Phase {
  acknowledged: Set<string>;
  seconds: number;
}

async function write(uri: string, prefix: string, count: number, stopAfter: number | null, onStop?: () => Promise<void>): Promise<Phase> {
  const client = new MongoClient(uri, { retryWrites: false, serverSelectionTimeoutMS: 5_000 });
  await client.connect();
  const chunks = client.db('soak').collection<{ _id: string; text: string; embedding: Binary; n: number }>('chunks');
  const random = seededRandom(7);
  const acknowledged = new Set<string>();
  const started = performance.now();
  let next = 0;
  let stopped = false;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < count && !stopped) {
        const from = next;
        next += BATCH;
        const docs = Array.from({ length: Math.min(BATCH, count - from) }, (_, i) => {
          const vector = new Float32Array(384);
          for (let d = 0; d < vector.length; d++) vector[d] = random() * 2 - 1;
          return {
            _id: `${prefix}-${from + i}`,
            text: `soak document ${from + i} `.repeat(40),
            embedding: new Binary(Buffer.from(vector.buffer)),
            n: from + i,
          };
        });
        try {
          await chunks.insertMany(docs, { ordered: true });
          for (const doc of docs) acknowledged.add(doc._id);
        } catch {
          // Not acknowledged (the server went away): not counted, whatever reached the disk.
        }
        if (stopAfter !== null && !stopped && acknowledged.size >= stopAfter) {
          stopped = true;
          await onStop?.();
        }
      }
    }),
  );
  await client.close(true);
  return { acknowledged, seconds: (performance.now() - started) / 1000 };
}

async function missing(uri: string, acknowledged: Set<string>): Promise<number> {
  const client = new MongoClient(uri, { retryWrites: false });
  await client.connect();
  try {
    const stored = new Set<string>();
    for await (const doc of client
      .db('soak')
      .collection<{ _id: string }>('chunks')
      .find({}, { projection: { _id: 1 } })) {
      stored.add(doc._id);
    }
    let lost = 0;
    for (const id of acknowledged) if (!stored.has(id)) lost++;
    return lost;
  } finally {
    await client.close();
  }
}

const storageErrors = (dataDir: string): number =>
  (readFileSync(path.join(dataDir, 'mongo.log'), 'utf8').match(/Chunk \d+ not found|MVStoreException|IllegalStateException/g) ?? []).length;

export async function soakScenario(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-soak-'));
  const port = await freePort();
  let mongo: EmbeddedMongo = await startMongoStandin({ dataDir, port, backend: 'h2' });
  try {
    info(`9) storage soak of the H2 stand-in: ${DOCS} documents (~2.5 KB) by ${WRITERS} writers, clean restart, then a SIGKILL mid-write`);
    const clean = await write(mongo.uri, 'clean', DOCS, null);
    metric('soak_write_docs_per_second', clean.acknowledged.size / clean.seconds, 'docs/s');
    await mongo.stop();
    mongo = await startMongoStandin({ dataDir, port, backend: 'h2' });
    metric('soak_acknowledged', clean.acknowledged.size, 'count');
    metric('soak_lost_after_clean_restart', await missing(mongo.uri, clean.acknowledged), 'count');

    const killed = await write(mongo.uri, 'killed', DOCS, Math.floor(DOCS / 2), async () => {
      await mongo.kill();
    });
    await sleep(500);
    mongo = await startMongoStandin({ dataDir, port, backend: 'h2' });
    metric('soak_acknowledged_before_kill', killed.acknowledged.size, 'count');
    metric('soak_lost_after_kill', await missing(mongo.uri, killed.acknowledged), 'count');
    metric('soak_lost_earlier_after_kill', await missing(mongo.uri, clean.acknowledged), 'count');
    metric('soak_storage_errors_logged', storageErrors(dataDir), 'count');
  } finally {
    await mongo.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
