/**
 * Durability soak of the embedded store `npm run dev` keeps its data in (the stand-in's journal
 * backend, or another EMBEDDED_MONGO_BACKEND / BENCH_MONGO_BACKEND for comparison): concurrent
 * writers insert documents, update and delete some of them, and count what the server
 * acknowledged, while the store process is SIGKILLed at random points and restarted after each
 * kill. At the end the store is stopped cleanly and started again, and every acknowledged write
 * is checked: inserted documents present with their content, acknowledged updates not rolled
 * back, acknowledged deletes not resurrected.
 *
 * BENCH_SOAK_DOCS (default 1,000,000) documents, BENCH_SOAK_KILLS (20) kills, BENCH_SOAK_WRITERS
 * (8) concurrent writers, BENCH_SOAK_DOC_BYTES (about 1,000) per document. The CI-sized run
 * (20,000 documents, 3 kills) is test/e2e/store-durability.test.ts.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Binary, MongoClient, type Collection } from 'mongodb';
import { loadEmbeddedMongoConfig } from '../config/index.js';
import { freePort, mongoStoreDir, startMongoStandin, type EmbeddedMongo, type MongoStandinBackend } from '../dev/embedded.js';
import { info, metric } from './stats.js';
import { seededRandom } from './texts.js';
import { benchNumber } from './env.js';

const BATCH = 50;

export interface SoakOptions {
  docs: number;
  kills: number;
  writers: number;
  docBytes: number;
  backend: MongoStandinBackend;
  dataDir: string;
  heapMb?: number;
  seed?: number;
  log?: (line: string) => void;
}

export interface SoakResult {
  acknowledgedInserts: number;
  acknowledgedUpdates: number;
  acknowledgedDeletes: number;
  /** Acknowledged inserts missing, acknowledged updates rolled back, acknowledged deletes resurrected. */
  lost: number;
  /** Documents read back whose content does not match what was written. */
  corrupt: number;
  storageErrors: number;
  kills: number;
  writeSeconds: number;
  docsPerSecond: number;
  /** Sum of the stored documents' BSON sizes (the store's own figure), and the files on disk. */
  logicalBytesAfterLoad: number;
  diskBytesAfterLoad: number;
  logicalBytesAfterRestart: number;
  diskBytesAfterRestart: number;
  restartSeconds: number[];
}

interface SoakDoc {
  _id: string;
  n: number;
  v: number;
  h: string;
  text: string;
  blob: Binary;
}

/** What the writers know about one document. */
interface Known {
  /** Highest version whose write (insert or update) was acknowledged. */
  ackedVersion: number;
  /** Highest version ever sent (acknowledged or not). */
  sentVersion: number;
  deleteAcked: boolean;
  deleteSent: boolean;
}

function contentHash(text: string, blob: Buffer, v: number): string {
  return createHash('sha1').update(text).update(blob).update(String(v)).digest('hex').slice(0, 16);
}

/** Bytes of the store's files (the journal backend's directory, or the H2 file). */
export function storeDiskBytes(dataDir: string, backend: MongoStandinBackend): number {
  if (backend === 'h2') {
    try {
      return statSync(path.join(dataDir, 'mongo.h2.mv.db')).size;
    } catch {
      return 0;
    }
  }
  if (backend !== 'journal') return 0;
  const dir = mongoStoreDir(dataDir);
  let total = 0;
  for (const name of readdirSync(dir)) total += statSync(path.join(dir, name)).size;
  return total;
}

/** The store's own figure for the logical size of its data: the sum of the documents' BSON sizes. */
async function logicalBytes(uri: string): Promise<number> {
  const client = new MongoClient(uri, { retryWrites: false });
  await client.connect();
  try {
    const stats = await client.db('soak').command({ dbStats: 1 });
    return Number(stats.dataSize ?? 0);
  } finally {
    await client.close();
  }
}

const STORAGE_ERROR =
  /damaged|compaction failed|journal write failed|OutOfMemoryError|IllegalStateException|Chunk \d+ not found|MVStoreException/g;

function storageErrors(dataDir: string): number {
  try {
    return (readFileSync(path.join(dataDir, 'mongo.log'), 'utf8').match(STORAGE_ERROR) ?? []).length;
  } catch {
    return 0;
  }
}

export async function runStoreSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const random = seededRandom(options.seed ?? 7);
  const port = await freePort();
  const start = () => startMongoStandin({ dataDir: options.dataDir, port, backend: options.backend, heapMb: options.heapMb });
  const restartSeconds: number[] = [];
  let mongo: EmbeddedMongo = await start();
  const uri = mongo.uri;

  // Kill points: acknowledged-insert counts, spread at random over the run.
  const killAt = Array.from({ length: options.kills }, () => Math.floor(random() * options.docs)).sort((a, b) => a - b);
  const known = new Map<string, Known>();
  const ids: string[] = [];
  let acknowledgedInserts = 0;
  let acknowledgedUpdates = 0;
  let acknowledgedDeletes = 0;
  let nextN = 0;
  let kills = 0;
  let restarting: Promise<void> | null = null;

  const client = new MongoClient(uri, { retryWrites: false, serverSelectionTimeoutMS: 60_000, maxPoolSize: options.writers + 2 });
  await client.connect();
  const docs: Collection<SoakDoc> = client.db('soak').collection<SoakDoc>('docs');
  await docs.createIndex({ n: 1 });

  const textLength = Math.max(16, Math.floor(options.docBytes * 0.55));
  const blobLength = Math.max(16, Math.floor(options.docBytes * 0.35));
  const makeDoc = (n: number, v: number): SoakDoc => {
    const text = `soak document ${n} v${v} `.padEnd(textLength, 'abcdefghij');
    const blob = Buffer.alloc(blobLength, n % 251);
    blob.writeUInt32LE(n >>> 0, 0);
    return { _id: `d${n}`, n, v, h: contentHash(text, blob, v), text, blob: new Binary(blob) };
  };

  const killAndRestart = async (): Promise<void> => {
    kills++;
    log(`soak: SIGKILL ${kills}/${options.kills} of the store after ${acknowledgedInserts} acknowledged inserts`);
    await mongo.kill();
    const started = performance.now();
    mongo = await start();
    restartSeconds.push((performance.now() - started) / 1000);
  };

  const writer = async (seed: number): Promise<void> => {
    const rnd = seededRandom(seed);
    while (acknowledgedInserts < options.docs) {
      if (restarting) {
        await restarting;
        continue;
      }
      const roll = rnd();
      try {
        if (roll < 0.1 && ids.length > 100) {
          // Update a few acknowledged documents to a new version.
          const targets = Array.from({ length: 5 }, () => ids[Math.floor(rnd() * ids.length)]!);
          for (const id of targets) {
            const k = known.get(id)!;
            if (k.deleteSent) continue;
            const v = k.sentVersion + 1;
            k.sentVersion = v;
            const next = makeDoc(Number(id.slice(1)), v);
            // Only forward: two writers' updates of one document may reach the server in either order.
            await docs.updateOne({ _id: id, v: { $lt: v } }, { $set: { v, h: next.h, text: next.text } });
            k.ackedVersion = Math.max(k.ackedVersion, v);
            acknowledgedUpdates++;
          }
        } else if (roll < 0.13 && ids.length > 100) {
          const id = ids[Math.floor(rnd() * ids.length)]!;
          const k = known.get(id)!;
          if (!k.deleteSent) {
            k.deleteSent = true;
            await docs.deleteOne({ _id: id });
            k.deleteAcked = true;
            acknowledgedDeletes++;
          }
        } else {
          const from = nextN;
          nextN += BATCH;
          const batch = Array.from({ length: BATCH }, (_, i) => makeDoc(from + i, 0));
          for (const doc of batch) known.set(doc._id, { ackedVersion: -1, sentVersion: 0, deleteAcked: false, deleteSent: false });
          await docs.insertMany(batch, { ordered: true });
          for (const doc of batch) {
            known.get(doc._id)!.ackedVersion = 0;
            ids.push(doc._id);
          }
          acknowledgedInserts += batch.length;
        }
      } catch {
        // Not acknowledged (the store was killed): whatever reached it may or may not be there.
      }
      if (kills < killAt.length && acknowledgedInserts >= killAt[kills]! && !restarting) {
        restarting = killAndRestart().finally(() => {
          restarting = null;
        });
        await restarting;
      }
    }
  };

  const writeStarted = performance.now();
  await Promise.all(Array.from({ length: options.writers }, (_, i) => writer(1000 + i)));
  // Writing time, without the time the store spent restarting after the kills.
  const writeSeconds = (performance.now() - writeStarted) / 1000 - restartSeconds.reduce((a, b) => a + b, 0);
  await client.close(true);

  const logicalBytesAfterLoad = await logicalBytes(uri);
  const diskBytesAfterLoad = storeDiskBytes(options.dataDir, options.backend);
  await mongo.stop();
  const restarted = performance.now();
  mongo = await start();
  restartSeconds.push((performance.now() - restarted) / 1000);

  // Read everything back.
  let lost = 0;
  let corrupt = 0;
  const reader = new MongoClient(uri, { retryWrites: false });
  await reader.connect();
  try {
    const seen = new Set<string>();
    for await (const doc of reader.db('soak').collection<SoakDoc>('docs').find({})) {
      seen.add(doc._id);
      const k = known.get(doc._id);
      if (!k) continue;
      if (k.deleteAcked) {
        lost++; // an acknowledged delete came back
        continue;
      }
      if (doc.v < k.ackedVersion) lost++; // an acknowledged update was rolled back
      const blob = Buffer.from(doc.blob.buffer);
      if (contentHash(doc.text, blob, doc.v) !== doc.h || doc.n !== Number(doc._id.slice(1))) corrupt++;
    }
    for (const [id, k] of known) {
      if (k.ackedVersion >= 0 && !k.deleteSent && !seen.has(id)) lost++;
    }
  } finally {
    await reader.close();
  }
  const logicalBytesAfterRestart = await logicalBytes(uri);
  const diskBytesAfterRestart = storeDiskBytes(options.dataDir, options.backend);
  await mongo.stop();
  return {
    acknowledgedInserts,
    acknowledgedUpdates,
    acknowledgedDeletes,
    lost,
    corrupt,
    storageErrors: storageErrors(options.dataDir),
    kills,
    writeSeconds,
    docsPerSecond: acknowledgedInserts / Math.max(writeSeconds, 1e-9),
    logicalBytesAfterLoad,
    diskBytesAfterLoad,
    logicalBytesAfterRestart,
    diskBytesAfterRestart,
    restartSeconds,
  };
}

export async function soakScenario(): Promise<void> {
  const docs = benchNumber('BENCH_SOAK_DOCS', 1_000_000);
  const kills = benchNumber('BENCH_SOAK_KILLS', 20);
  const writers = benchNumber('BENCH_SOAK_WRITERS', 8);
  const docBytes = benchNumber('BENCH_SOAK_DOC_BYTES', 1000);
  const settings = loadEmbeddedMongoConfig(process.env);
  const backend: MongoStandinBackend =
    process.env.BENCH_MONGO_BACKEND === 'memory' ||
    process.env.BENCH_MONGO_BACKEND === 'h2' ||
    process.env.BENCH_MONGO_BACKEND === 'journal'
      ? process.env.BENCH_MONGO_BACKEND
      : settings.EMBEDDED_MONGO_BACKEND;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-soak-'));
  try {
    info(
      `9) storage soak of the ${backend} stand-in: ${docs} documents (~${docBytes} B) by ${writers} writers, ${kills} SIGKILLs at random points, then a clean restart`,
    );
    const result = await runStoreSoak({
      docs,
      kills,
      writers,
      docBytes,
      backend,
      dataDir,
      heapMb: settings.EMBEDDED_MONGO_HEAP_MB,
      log: (line) => info(line),
    });
    metric('soak_acknowledged_inserts', result.acknowledgedInserts, 'count');
    metric('soak_acknowledged_updates', result.acknowledgedUpdates, 'count');
    metric('soak_acknowledged_deletes', result.acknowledgedDeletes, 'count');
    metric('soak_kills', result.kills, 'count');
    metric('soak_acknowledged_writes_lost', result.lost, 'count');
    metric('soak_documents_corrupt', result.corrupt, 'count');
    metric('soak_storage_errors_logged', result.storageErrors, 'count');
    metric('soak_write_docs_per_second', result.docsPerSecond, 'docs/s');
    metric('soak_logical_bytes_after_load', result.logicalBytesAfterLoad, 'bytes');
    metric('soak_disk_bytes_after_load', result.diskBytesAfterLoad, 'bytes');
    metric('soak_disk_ratio_after_load', result.diskBytesAfterLoad / Math.max(1, result.logicalBytesAfterLoad), 'x');
    metric('soak_logical_bytes_after_restart', result.logicalBytesAfterRestart, 'bytes');
    metric('soak_disk_bytes_after_restart', result.diskBytesAfterRestart, 'bytes');
    metric('soak_disk_ratio_after_restart', result.diskBytesAfterRestart / Math.max(1, result.logicalBytesAfterRestart), 'x');
    const sorted = [...result.restartSeconds].sort((a, b) => a - b);
    metric('soak_restart_seconds_p50', sorted[Math.floor(sorted.length / 2)] ?? 0, 's');
    metric('soak_restart_seconds_max', sorted[sorted.length - 1] ?? 0, 's');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
