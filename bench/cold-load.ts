/**
 * The cold load of one large collection, repeatable without rewriting it (issue 25, cold load).
 * Writing a 100,000-chunk collection through the bench takes minutes; this keeps one in a data dir of
 * its own and loads it in a fresh process as often as needed:
 *
 *   scripts/node dist/bench/cold-load.js fill <dataDir> [chunks=100000]
 *       starts the embedded stand-in (journal backend) on <dataDir>, writes a synthetic collection
 *       through the store layer (bench/synthetic.ts, as the bench does), loads it once tokenising its
 *       text so that the load leaves its index snapshot, and stops the store cleanly;
 *   scripts/node --scavenger-max-new-space-capacity-mb=8 [--cpu-prof] dist/bench/cold-load.js load <dataDir> [runs=1]
 *       starts the stand-in on the same data dir and loads the collection into a fresh SearchIndex of
 *       this process, then runs one search: wall ms, this process's CPU ms, and the stand-in's CPU ms
 *       over the load (from /proc), as `name value unit` lines. The first load of the process is the
 *       cold one; later runs reuse the warm process (JIT, module loading) and are printed apart.
 *
 *   scripts/node dist/bench/cold-load.js fresh <collectionId> <chunks> <model> <dimensions>
 *       the same load of any collection on a store already running (COLD_LOAD_MONGO_URI and
 *       COLD_LOAD_DB; COLD_LOAD_MONGO_PID for its CPU): `npm run bench` runs it as a process of its
 *       own, the fresh API process the goal of issue 25 names, on the bench's warm store.
 *
 * Started as a service process is (runtime/gc-tuning.ts SERVICE_NODE_FLAGS, which `npm run bench`
 * gives the fresh process): without the flag, new space is not capped and the load holds about
 * 70 MB more.
 *
 * The store's own start (it reads its whole journal before it listens) is not timed: an API process
 * finds it running. COLD_LOAD_MONGO_URI and COLD_LOAD_MONGO_PID name a stand-in already serving the
 * data dir instead (no start per run).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { constants as perfConstants } from 'node:perf_hooks';
import { loadConfig } from '../config/index.js';
import { createLogger } from '../core/logger.js';
import { freePort, startMongoStandin } from '../dev/embedded.js';
import { SearchIndex } from '../search/search-index.js';
import { createAdminService } from '../services/admin.js';
import { openStore } from '../store/index.js';
import { tuneGarbageCollector } from '../runtime/gc-tuning.js';
import { recordCollections } from './collections.js';
import { processCpuSeconds } from './cpu.js';
import { info, metric } from './stats.js';
import { SyntheticText, writeSyntheticCorpus } from './synthetic.js';
import { seededRandom } from './texts.js';

const logger = createLogger('bench-cold-load', 'silent');
const DIMENSIONS = 384;
const CHUNKS_PER_MEMORY = 100;
const MODEL_ID = 'bench-synthetic';

interface Corpus {
  collectionId: string;
  chunks: number;
}

/** A collection to load and what its vectors are. */
interface Target extends Corpus {
  model: string;
  dimensions: number;
  /** Fail unless the load comes from the collection's snapshot. */
  snapshotRequired: boolean;
}

type Store = Awaited<ReturnType<typeof openStore>>;

/** CPU ms a process has used so far (NaN when /proc cannot tell). */
const processCpuMs = (pid: number): number => (processCpuSeconds(pid) ?? Number.NaN) * 1000;

/** Runs with the store at `uri` (database `db`), closed after. */
async function onStore<T>(uri: string, db: string, run: (store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig({ ...process.env, MONGODB_URI: 'mongodb://unused' });
  const store = await openStore({ ...config, MONGODB_DB: db }, uri);
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

async function withStore<T>(dataDir: string, run: (store: Store, mongoPid: number) => Promise<T>) {
  const running = process.env.COLD_LOAD_MONGO_URI;
  // A stand-in already serving the data dir (started by hand, pid given): loads measured in a
  // row without its 15-20 s start each time, as an API process finds a running store.
  if (running) return onStore(running, 'coldload', (store) => run(store, Number(process.env.COLD_LOAD_MONGO_PID)));
  const port = await freePort();
  const mongo = await startMongoStandin({ dataDir, port, backend: 'journal', heapMb: 4096 });
  try {
    return await onStore(mongo.uri, 'coldload', (store) => run(store, mongo.pid));
  } finally {
    await mongo.stop();
  }
}

async function fill(dataDir: string, chunks: number): Promise<void> {
  await withStore(dataDir, async (store) => {
    const admin = createAdminService(store);
    const boot = await admin.bootstrap('coldload', 'cold', 'bench cold load');
    const collection = await admin.createCollection(boot.tenant.id, `cold-${chunks}`);
    const started = performance.now();
    await writeSyntheticCorpus(store, {
      tenantId: boot.tenant.id,
      collectionId: collection.id,
      embeddingModel: MODEL_ID,
      dimensions: DIMENSIONS,
      memories: Math.max(1, Math.round(chunks / CHUNKS_PER_MEMORY)),
      chunksPerMemory: Math.min(chunks, CHUNKS_PER_MEMORY),
      seed: 6006,
      text: new SyntheticText(),
      onProgress: (written) => {
        if (written % 10_000 === 0) info(`   ${written} chunks written`);
      },
    });
    info(`   written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const index = new SearchIndex(store, MODEL_ID, DIMENSIONS, logger, { snapshotReads: false });
    await index.start();
    await index.ensureLoaded(collection.id);
    await index.stop(); // waits for the snapshot the tokenising load writes
    const corpus: Corpus = { collectionId: collection.id, chunks: index.loadedChunkCount() };
    writeFileSync(path.join(dataDir, 'cold-load.json'), JSON.stringify(corpus));
    info(`   ${corpus.chunks} chunks in collection ${corpus.collectionId}; snapshot written`);
  });
}

/** Loads the collection `runs` times into a fresh SearchIndex, then searches it: the first load of this process is the cold one. */
async function load(store: Store, mongoPid: number, corpus: Target, runs: number): Promise<void> {
  const text = new SyntheticText();
  const query = text.query(seededRandom(8008));
  for (let run = 0; run < runs; run++) {
    const label = run === 0 ? 'cold' : 'warm_process';
    const index = new SearchIndex(store, corpus.model, corpus.dimensions, logger);
    await index.start();
    const recording = recordCollections();
    const mongoCpu = processCpuMs(mongoPid);
    const cpu = process.cpuUsage();
    // The event loop's thread alone: process.cpuUsage also counts V8's concurrent GC threads.
    const mainThread = process.threadCpuUsage();
    // Pages first touched by the load: on these VMs a first touch costs 1-3 µs of kernel time.
    const faults = process.resourceUsage().minorPageFault;
    const started = performance.now();
    await index.ensureLoaded(corpus.collectionId);
    const loadedMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const usedOnLoop = process.threadCpuUsage(mainThread);
    const storeCpuMs = processCpuMs(mongoPid) - mongoCpu;
    const pageFaults = process.resourceUsage().minorPageFault - faults;
    const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
    await recording.stop();
    const gcs = recording.collections;
    const major = gcs.filter((entry) => entry.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR);
    const searched = performance.now();
    const vector = new Float32Array(corpus.dimensions).map((_, i) => Math.sin(i + 1));
    const hits = [...index.vectorSearch(vector, [corpus.collectionId], 10), ...index.lexicalSearch(query, [corpus.collectionId], 10).hits];
    const searchMs = performance.now() - searched;
    const fromSnapshot = index.budgetStats().snapshotLoads > 0;
    // The data dir's corpus always has one; a collection of the bench's may be below SNAPSHOT_MIN_CHUNKS.
    if (!fromSnapshot && corpus.snapshotRequired) throw new Error('the load did not come from the snapshot');
    if (index.loadedChunkCount() !== corpus.chunks) throw new Error(`loaded ${index.loadedChunkCount()} of ${corpus.chunks} chunks`);
    if (hits.length === 0) throw new Error('the first search found nothing');
    metric(`coldload_${label}_ms`, loadedMs, 'ms');
    metric(`coldload_${label}_cpu`, (used.user + used.system) / 1000, 'ms');
    metric(`coldload_${label}_system_cpu`, used.system / 1000, 'ms');
    metric(`coldload_${label}_main_thread_cpu`, (usedOnLoop.user + usedOnLoop.system) / 1000, 'ms');
    if (Number.isFinite(storeCpuMs)) metric(`coldload_${label}_store_cpu`, storeCpuMs, 'ms');
    metric(`coldload_${label}_page_faults`, pageFaults, 'count');
    metric(`coldload_${label}_rss`, rss / 2 ** 20, 'MB');
    // What the pages went to: the JS heap, and memory outside it (replies, typed arrays, WebAssembly).
    metric(`coldload_${label}_heap_used`, heapUsed / 2 ** 20, 'MB');
    metric(`coldload_${label}_external`, external / 2 ** 20, 'MB');
    metric(`coldload_${label}_array_buffers`, arrayBuffers / 2 ** 20, 'MB');
    metric(`coldload_${label}_first_search_ms`, searchMs, 'ms');
    metric(`coldload_${label}_from_snapshot`, fromSnapshot ? 1 : 0, 'bool');
    metric(
      `coldload_${label}_gc_ms`,
      gcs.reduce((sum, entry) => sum + entry.ms, 0),
      'ms',
    );
    metric(`coldload_${label}_major_gcs`, major.length, 'count');
    metric(
      `coldload_${label}_major_gc_ms`,
      major.reduce((sum, entry) => sum + entry.ms, 0),
      'ms',
    );
    await index.stop();
  }
}

const [mode, ...args] = process.argv.slice(2);
const [dataDir, count] = args;
// This process stands for a fresh API process: its collector is tuned as a service's is.
tuneGarbageCollector();
if (mode === 'fill' && dataDir) await fill(path.resolve(dataDir), Number(count ?? 100_000));
else if (mode === 'load' && dataDir) {
  const corpus = JSON.parse(readFileSync(path.join(path.resolve(dataDir), 'cold-load.json'), 'utf8')) as Corpus;
  await withStore(path.resolve(dataDir), (store, mongoPid) =>
    load(store, mongoPid, { ...corpus, model: MODEL_ID, dimensions: DIMENSIONS, snapshotRequired: true }, Number(count ?? 1)),
  );
} else if (mode === 'fresh' && args.length === 4 && process.env.COLD_LOAD_MONGO_URI && process.env.COLD_LOAD_DB) {
  const [collectionId, chunks, model, dimensions] = args as [string, string, string, string];
  const target = { collectionId, chunks: Number(chunks), model, dimensions: Number(dimensions), snapshotRequired: false };
  await onStore(process.env.COLD_LOAD_MONGO_URI, process.env.COLD_LOAD_DB, (store) =>
    load(store, Number(process.env.COLD_LOAD_MONGO_PID ?? Number.NaN), target, 1),
  );
} else {
  process.stderr.write(
    'usage: cold-load.js fill <dataDir> [chunks] | load <dataDir> [runs] | fresh <collectionId> <chunks> <model> <dimensions> (COLD_LOAD_MONGO_URI, COLD_LOAD_DB)\n',
  );
  process.exit(2);
}
