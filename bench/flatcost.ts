/**
 * Flat cost (issue 25): does a memory cost the same however much the store already holds?
 *   1. 500 × 1 KB memories ingested through the API into an (almost) empty store;
 *   2. a bulk pre-fill of BENCH_FLATCOST_CHUNKS (200,000) chunks in BENCH_FLATCOST_MEMORIES (20,000)
 *      complete memories over 50 collections of 2 tenants, written straight through the store
 *      layer (bench/synthetic.ts: memories, chunks with 384-dim vectors, graph entities, facts and
 *      mentions, index-change entries), since filling it through the API would take hours;
 *   3. the same 500 memories through the API again, into a new collection of the loaded store.
 * Prints both throughputs and the stack's CPU per memory (service, MongoDB, Temporal) side by side
 * with their ratios, and the store's disk bytes beside its logical bytes after the load and again
 * after a clean restart of the store.
 */
import path from 'node:path';
import type { Config } from '../config/index.js';
import { freePort, registerCleanup } from '../dev/embedded.js';
import { spawnService, stopChild, waitForReady, type BackingServices } from '../dev/stack.js';
import { createAdminService } from '../services/admin.js';
import { openStore, type Store } from '../store/index.js';
import { ApiClient } from './client.js';
import { ingestScenario } from './pipeline.js';
import { info, metric, seconds } from './stats.js';
import { makeTexts } from './texts.js';
import { SyntheticText } from './synthetic.js';
import { writeSyntheticCorpus } from './synthetic.js';
import { benchNumber } from './env.js';

export const FLATCOST_CHUNKS = benchNumber('BENCH_FLATCOST_CHUNKS', 200_000);
export const FLATCOST_MEMORIES = benchNumber('BENCH_FLATCOST_MEMORIES', 20_000);
/** flatcost: memories ingested (unmeasured) before its "empty" phase. */
const FLATCOST_WARMUP = 32;
const TENANTS = 2;
const COLLECTIONS = 50;

export interface IngestFigures {
  throughput: number;
  /** CPU-seconds per memory by group (service, mongo, temporal), NaN when /proc is unreadable. */
  cpuMsPerMemory: { service: number; mongo: number; temporal: number; stack: number };
}

export interface StoreFootprint {
  /** Bytes of the stored documents (BSON), without indexes. */
  logicalBytes: number;
  /** Bytes of the store's files on disk. */
  diskBytes: number;
  source: string;
}

/**
 * The store's own figures: the embedded stand-in answers `engramStats` (its live document bytes
 * and its snapshot + journal files); a real MongoDB answers `dbStats` (dataSize, and storageSize +
 * indexSize for what its files hold for this database).
 */
export async function storeFootprint(store: Store): Promise<StoreFootprint | null> {
  const admin = store.database.client.db('admin');
  try {
    const stats = (await admin.command({ engramStats: 1, db: store.database.db.databaseName })) as {
      store?: { liveBytes?: number; diskBytes?: number; persistent?: boolean };
    };
    if (stats.store && typeof stats.store.liveBytes === 'number' && typeof stats.store.diskBytes === 'number') {
      return { logicalBytes: stats.store.liveBytes, diskBytes: stats.store.diskBytes, source: 'engramStats (whole stand-in)' };
    }
  } catch {
    // not the stand-in
  }
  try {
    const stats = (await store.database.db.command({ dbStats: 1 })) as { dataSize?: number; storageSize?: number; indexSize?: number };
    if (typeof stats.dataSize === 'number' && typeof stats.storageSize === 'number') {
      return { logicalBytes: stats.dataSize, diskBytes: stats.storageSize + (stats.indexSize ?? 0), source: 'dbStats' };
    }
  } catch {
    // no figures
  }
  return null;
}

export function reportFootprint(label: string, footprint: StoreFootprint | null): void {
  if (!footprint) {
    info(`   store footprint ${label}: the store reports no figures`);
    return;
  }
  const ratio = footprint.diskBytes / Math.max(1, footprint.logicalBytes);
  info(
    `   store footprint ${label} (${footprint.source}): ${(footprint.diskBytes / 1048576).toFixed(1)} MB on disk for ${(footprint.logicalBytes / 1048576).toFixed(1)} MB of documents (${ratio.toFixed(2)}x; goal <= 3x)`,
  );
  metric(`flatcost_store_logical_mb_${label}`, footprint.logicalBytes / 1048576, 'MB');
  metric(`flatcost_store_disk_mb_${label}`, footprint.diskBytes / 1048576, 'MB');
  metric(`flatcost_store_disk_ratio_${label}`, ratio, 'ratio');
}

/** Step 2: the pre-fill, straight through the store layer. Returns the seconds it took. */
export async function prefillStore(store: Store, tenantIds: string[], collectionIds: string[][], embeddingModel: string): Promise<number> {
  const chunksPerMemory = Math.max(1, Math.round(FLATCOST_CHUNKS / FLATCOST_MEMORIES));
  const perCollection = Math.ceil(FLATCOST_MEMORIES / (TENANTS * COLLECTIONS));
  info(
    `   pre-fill through the store layer (not the API: that would take hours): ${TENANTS} tenants × ${COLLECTIONS} collections × ${perCollection} memories × ${chunksPerMemory} chunks of ~1 KB with 384-dim vectors, graph rows and index-change entries`,
  );
  const text = new SyntheticText();
  const started = performance.now();
  let written = 0;
  let lastReport = started;
  for (let c = 0; c < COLLECTIONS; c++) {
    for (let t = 0; t < TENANTS; t++) {
      await writeSyntheticCorpus(store, {
        tenantId: tenantIds[t]!,
        collectionId: collectionIds[t]![c]!,
        embeddingModel,
        dimensions: 384,
        memories: perCollection,
        chunksPerMemory,
        seed: 9000 + c * TENANTS + t,
        text,
        wordsPerChunk: 150,
      });
      written += perCollection * chunksPerMemory;
      const now = performance.now();
      if (now - lastReport > 15_000) {
        lastReport = now;
        info(`   ${written} chunks written (${((written / (now - started)) * 1000).toFixed(0)}/s)`);
      }
    }
  }
  const prefillSeconds = seconds(performance.now() - started);
  info(`   pre-filled ${written} chunks in ${prefillSeconds.toFixed(1)} s`);
  metric('flatcost_prefill_chunks', written, 'count');
  metric('flatcost_prefill_memories', perCollection * TENANTS * COLLECTIONS, 'count');
  metric('flatcost_prefill_seconds', prefillSeconds, 's');
  return prefillSeconds;
}

export function reportFlatCost(empty: IngestFigures, loaded: IngestFigures): void {
  const row = (name: string, a: number, b: number, unit: string) =>
    info(`   ${name.padEnd(26)} ${a.toFixed(2).padStart(10)} ${b.toFixed(2).padStart(10)} ${unit.padEnd(12)} ${(b / a).toFixed(2)}`);
  info(`   ${''.padEnd(26)} ${'empty'.padStart(10)} ${'loaded'.padStart(10)} ${''.padEnd(12)} loaded/empty`);
  row('throughput', empty.throughput, loaded.throughput, 'memories/s');
  for (const group of ['service', 'mongo', 'temporal', 'stack'] as const) {
    row(`CPU per memory: ${group}`, empty.cpuMsPerMemory[group], loaded.cpuMsPerMemory[group], 'ms');
  }
  metric('flatcost_throughput_ratio', loaded.throughput / empty.throughput, 'ratio');
  // The same comparison in CPU: empty ÷ loaded, so that 1 is flat and below 1 is dearer when loaded.
  metric('flatcost_cpu_ratio', empty.cpuMsPerMemory.stack / loaded.cpuMsPerMemory.stack, 'ratio');
  info('   goal: throughput ratio >= 0.8 (timings under machine contention are noisy: the CPU ratio is the steadier figure)');
}

/** What the flat-cost scenario is given by bench/run.ts: the stack it shares, and a database of its own. */
export interface FlatCostContext {
  config: Config;
  services: BackingServices;
  taskQueue: string;
  db: string;
  serviceEnv: (backing: BackingServices, db: string) => Record<string, string>;
  logDir: string;
  ingestCount: number;
}

/**
 * 13) flat cost, with an API process (ROLE=all) and a database of its own, so that "empty" is
 * empty whatever ran before it; the bench's own service idles meanwhile. Runs last: its pre-fill
 * and the store restart at its end would skew any scenario after it.
 */
export async function flatCostScenario(context: FlatCostContext): Promise<void> {
  const { config, services, taskQueue, serviceEnv, logDir } = context;
  const flatDb = context.db;
  info(
    `13) flat cost: ${context.ingestCount} memories into an empty database, then into one pre-filled with ${FLATCOST_CHUNKS} chunks in ${FLATCOST_MEMORIES} memories`,
  );
  const port = await freePort();
  const flatService = spawnService(
    'api/main.js',
    {
      ROLE: 'all',
      ...serviceEnv(services, flatDb),
      TEMPORAL_TASK_QUEUE: `${taskQueue}-flat`,
      PORT: String(port),
    },
    path.join(logDir, 'flatcost-api.log'),
  );
  const stopFlatService = () => stopChild(flatService);
  registerCleanup(stopFlatService);
  const flatStore = await openStore({ ...config, MONGODB_DB: flatDb }, services.mongoUri);
  try {
    await waitForReady(`http://127.0.0.1:${port}`, 180_000, flatService);
    const admin = createAdminService(flatStore);
    const first = await admin.bootstrap('flatcost-a', 'empty', 'bench');
    const second = await admin.bootstrap('flatcost-b', 'first', 'bench');
    const api = new ApiClient(`http://127.0.0.1:${port}`, first.apiKey);
    const pid = flatService.pid ?? 0;
    // A few memories first, unmeasured: JIT warm-up of the service and the store would otherwise count against "empty".
    const warmup = await admin.createCollection(first.tenant.id, 'warm-up');
    await ingestScenario(api, flatStore, first.tenant.id, warmup.id, makeTexts(FLATCOST_WARMUP, 1212), pid, 'flatcost_warmup');
    const empty = await ingestScenario(
      api,
      flatStore,
      first.tenant.id,
      first.collection.id,
      makeTexts(context.ingestCount, 1313),
      pid,
      'flatcost_empty',
    );
    const [sample] = await flatStore.memories.collection.find({ tenant_id: first.tenant.id }, { limit: 1 }).toArray();
    const embeddingModel = sample?.embedding_model ?? config.EMBEDDING_MODEL;
    const tenantIds = [first.tenant.id, second.tenant.id];
    const collectionIds: string[][] = [];
    for (const tenantId of tenantIds) {
      const ids: string[] = [];
      for (let c = 0; c < 50; c++) ids.push((await admin.createCollection(tenantId, `prefill-${c}`)).id);
      collectionIds.push(ids);
    }
    await prefillStore(flatStore, tenantIds, collectionIds, embeddingModel);
    reportFootprint('after_load', await storeFootprint(flatStore));
    const loadedCollection = await admin.createCollection(first.tenant.id, 'loaded');
    const loaded = await ingestScenario(
      api,
      flatStore,
      first.tenant.id,
      loadedCollection.id,
      makeTexts(context.ingestCount, 1414),
      pid,
      'flatcost_loaded',
    );
    reportFlatCost(empty, loaded);
    await stopFlatService();
    if (services.restartMongo) {
      info('   restarting the store cleanly');
      const restartStarted = performance.now();
      await services.restartMongo();
      metric('flatcost_store_restart_seconds', seconds(performance.now() - restartStarted), 's');
      const reopened = await openStore({ ...config, MONGODB_DB: flatDb }, services.mongoUri);
      try {
        reportFootprint('after_restart', await storeFootprint(reopened));
      } finally {
        await reopened.close();
      }
    }
  } finally {
    await stopFlatService();
    await flatStore.close().catch(() => undefined);
  }
}
