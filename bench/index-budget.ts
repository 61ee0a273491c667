/**
 * The in-process search indexes under a memory budget (issue 20, item 1), measured in the bench
 * process itself against the stack's MongoDB: the same SearchIndex class the API uses, reading the
 * same store, with no HTTP or embedding in the way.
 *   cold load   a partition's load from MongoDB: tokenising every chunk (the load before persisted
 *               lexical snapshots), then cold from the snapshot that load left, then again;
 *               BENCH_COLD_LOAD_CHUNKS sets the size (default 20,000; 100000 is opt-in, since writing
 *               it takes 10+ minutes on the H2 stand-in of a busy 2-core machine), or the `search`
 *               scenario's 100k collection when that scenario ran; then the same collection in a
 *               process of its own (bench/cold-load.ts `fresh`), the fresh API process the goal of
 *               issue 25 names, on the bench's running store; bench/cold-load.ts also keeps one
 *               100k collection in a data dir of its own and loads it cold as often as needed;
 *   budget      BENCH_BUDGET_COLLECTIONS (8) collections of BENCH_BUDGET_CHUNKS (2,000) chunks searched
 *               round-robin under a budget that holds 3: RSS of this process against the budget,
 *               the peak index bytes, and a search that reloads against one that does not.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createLogger } from '../core/logger.js';
import { SERVICE_NODE_FLAGS } from '../runtime/gc-tuning.js';
import { SearchIndex } from '../search/search-index.js';
import type { Store } from '../store/index.js';
import { CpuMeter } from './cpu.js';
import { info, metric, metricWithGoal, percentile } from './stats.js';

// Silent: pino writes to stdout, which carries only the bench's metric lines.
const logger = createLogger('bench-index', 'silent');

/** Loads one collection into a fresh index (CPU-seconds and wall ms). */
async function timedLoad(
  store: Store,
  collectionId: string,
  modelId: string,
  dimensions: number,
  options: { snapshotReads?: boolean } = {},
): Promise<{ ms: number; cpuMs: number; chunks: number; fromSnapshot: boolean }> {
  const index = new SearchIndex(store, modelId, dimensions, logger, options);
  await index.start();
  try {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await index.ensureLoaded(collectionId);
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    return {
      ms,
      cpuMs: (used.user + used.system) / 1000,
      chunks: index.loadedChunkCount(),
      fromSnapshot: index.budgetStats().snapshotLoads > 0,
    };
  } finally {
    // Waits for the snapshot a tokenising load writes, so the next load can read it.
    await index.stop();
  }
}

/**
 * Loads one collection into a fresh index three times: tokenising every chunk's text (snapshots
 * not read; the load leaves one), then cold from that snapshot, then once more. Wall ms and this
 * process's CPU ms each (the store's CPU is not in it).
 */
export async function coldLoad(
  store: Store,
  collectionId: string,
  modelId: string,
  dimensions: number,
  label: string,
  running: { mongoUri: string; db: string; servicePid: number },
): Promise<{ coldMs: number; reloadMs: number; chunks: number }> {
  const tokenising = await timedLoad(store, collectionId, modelId, dimensions, { snapshotReads: false });
  const cold = await timedLoad(store, collectionId, modelId, dimensions);
  const again = await timedLoad(store, collectionId, modelId, dimensions);
  const { chunks } = cold;
  info(
    `   load of ${tokenising.chunks} chunks tokenising their text: ${tokenising.ms.toFixed(0)} ms (${tokenising.cpuMs.toFixed(0)} ms CPU); ` +
      `cold${cold.fromSnapshot ? ' from its snapshot' : ' (no snapshot: collection below SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS)'}: ${cold.ms.toFixed(0)} ms (${cold.cpuMs.toFixed(0)} ms CPU, ${((chunks / cold.ms) * 1000).toFixed(0)} chunks/s), ` +
      `again: ${again.ms.toFixed(0)} ms (${again.cpuMs.toFixed(0)} ms CPU)`,
  );
  metric(`index_tokenising_load_${label}`, tokenising.ms, 'ms');
  metric(`index_tokenising_load_${label}_cpu`, tokenising.cpuMs, 'ms');
  metric(`index_cold_load_${label}`, cold.ms, 'ms');
  metric(`index_cold_load_${label}_cpu`, cold.cpuMs, 'ms');
  metric(`index_cold_load_${label}_from_snapshot`, cold.fromSnapshot ? 1 : 0, 'bool');
  metric(`index_reload_${label}`, again.ms, 'ms');
  metric(`index_cold_load_${label}_chunks_per_second`, (chunks / cold.ms) * 1000, 'chunks/s');
  await freshProcessLoad(collectionId, chunks, modelId, dimensions, label, running);
  return { coldMs: cold.ms, reloadMs: again.ms, chunks };
}

/** The goal of issue 25: the first search of a 100k-chunk collection in a fresh API process. */
const FRESH_PROCESS_GOAL_MS = 2000;

/**
 * The collection's first load and search in a process of its own (bench/cold-load.ts `fresh`), as
 * a freshly started API process meets a running store: this process has loaded it three times
 * already and holds the earlier scenarios' memory, which a fresh one does not. Then the same in a
 * second fresh process at once, printed apart: the first pays for memory the VM's host must back
 * again (docs/operations.md), the second mostly finds the pages the first let go still backed, so
 * the two tell the VM's share from the load's own.
 */
async function freshProcessLoad(
  collectionId: string,
  chunks: number,
  modelId: string,
  dimensions: number,
  label: string,
  running: { mongoUri: string; db: string; servicePid: number },
): Promise<void> {
  // What the rest of the machine did meanwhile: the whole bench measures this load 2-3 times as
  // long in CPU as a quiet machine does (docs/operations.md), so a reader can tell contention.
  const meter = new CpuMeter(running.servicePid);
  const figure = await freshProcessFigures(collectionId, chunks, modelId, dimensions, running);
  const usage = meter.stop();
  info(
    `   in a fresh process: ${figure('ms').toFixed(0)} ms (${figure('cpu').toFixed(0)} ms CPU of which ${figure('system_cpu').toFixed(0)} ms in the kernel, ${figure('page_faults')} pages first touched, ${figure('gc_ms').toFixed(0)} ms GC)`,
  );
  metricWithGoal(`index_cold_load_${label}_fresh_process`, figure('ms'), FRESH_PROCESS_GOAL_MS, 'ms');
  metric(`index_cold_load_${label}_fresh_process_cpu`, figure('cpu'), 'ms');
  // Of it, the kernel's: on these VMs a page's first touch costs 2-14 µs (docs/operations.md).
  metric(`index_cold_load_${label}_fresh_process_system_cpu`, figure('system_cpu'), 'ms');
  metric(`index_cold_load_${label}_fresh_process_main_thread_cpu`, figure('main_thread_cpu'), 'ms');
  metric(`index_cold_load_${label}_fresh_process_page_faults`, figure('page_faults'), 'count');
  // What a first touch cost this time: about 2 µs when the VM's host still backs the free memory, 8-14 µs when it must back it again.
  metric(`index_cold_load_${label}_fresh_process_kernel_us_per_page`, kernelUsPerPage(figure), 'us');
  metric(`index_cold_load_${label}_fresh_process_gc`, figure('gc_ms'), 'ms');
  metric(`index_cold_load_${label}_fresh_process_from_snapshot`, figure('from_snapshot'), 'bool');
  if (usage) {
    // The fresh process is the bench's child: its CPU is in "other".
    metric(`index_cold_load_${label}_fresh_process_machine_busy`, usage.machineBusyPct, '%');
    for (const group of ['mongo', 'service', 'temporal', 'bench'])
      metric(`index_cold_load_${label}_fresh_process_meanwhile_${group}_cpu`, (usage.seconds[group] ?? 0) * 1000, 'ms');
  }
  const second = await freshProcessFigures(collectionId, chunks, modelId, dimensions, running);
  info(
    `   in a second fresh process right after: ${second('ms').toFixed(0)} ms (${second('system_cpu').toFixed(0)} ms in the kernel, ${second('page_faults')} pages first touched)`,
  );
  metric(`index_cold_load_${label}_second_fresh_process`, second('ms'), 'ms');
  metric(`index_cold_load_${label}_second_fresh_process_kernel_us_per_page`, kernelUsPerPage(second), 'us');
}

type FreshFigure = (name: string) => number;

const kernelUsPerPage = (figure: FreshFigure): number => (figure('system_cpu') * 1000) / figure('page_faults');

/** One fresh process's load and first search: its `coldload_cold_*` figures by name (NaN when missing). */
async function freshProcessFigures(
  collectionId: string,
  chunks: number,
  modelId: string,
  dimensions: number,
  running: { mongoUri: string; db: string },
): Promise<FreshFigure> {
  const script = fileURLToPath(new URL('./cold-load.js', import.meta.url));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    // Started as a service process is (runtime/gc-tuning.ts): it stands for a fresh API process.
    [...SERVICE_NODE_FLAGS, script, 'fresh', collectionId, String(chunks), modelId, String(dimensions)],
    {
      env: { ...process.env, COLD_LOAD_MONGO_URI: running.mongoUri, COLD_LOAD_DB: running.db },
    },
  );
  const lines = new Map(
    stdout
      .split('\n')
      .map((line) => line.split(' '))
      .filter((fields) => fields.length === 3)
      .map(([name, value]) => [name!, Number(value)]),
  );
  return (name) => lines.get(`coldload_cold_${name}`) ?? Number.NaN;
}

export interface BudgetScenarioInput {
  store: Store;
  modelId: string;
  dimensions: number;
  /** Collections already written, more than the budget will hold. */
  collectionIds: string[];
  /** How many of those collections the budget is sized to hold. */
  fits: number;
  rounds: number;
  queries: string[];
}

const MB = 1024 * 1024;

// A full GC before each sample, so the figures are what is retained, not garbage awaiting
// collection (loads make plenty). --expose-gc cannot be passed through `npm run bench`.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/** RSS, and the JS heap plus ArrayBuffer bytes in use (the wasm row stores count in RSS only), after a full GC. */
function memorySample(): { rss: number; retained: number } {
  collectGarbage();
  const usage = process.memoryUsage();
  return { rss: usage.rss / MB, retained: (usage.heapUsed + usage.arrayBuffers) / MB };
}

/**
 * Searches `collectionIds` round-robin through an index whose budget holds `fits` of them: every
 * search of a collection not held is a reload. Reports the budget, the most the index held, this
 * process's RSS against it, and the cost of a search that reloads against one that does not.
 */
export async function budgetScenario(input: BudgetScenarioInput): Promise<void> {
  const { store, modelId, dimensions, collectionIds } = input;
  const probe = new SearchIndex(store, modelId, dimensions, logger);
  await probe.start();
  await probe.ensureLoaded(collectionIds[0]!);
  const partitionBytes = probe.partitionBytes(collectionIds[0]!);
  await probe.stop();
  const maxBytes = Math.ceil(partitionBytes * (input.fits + 0.5));
  info(
    `   ${collectionIds.length} collections of ~${(partitionBytes / 1048576).toFixed(1)} MB (estimated) each, budget ${(maxBytes / 1048576).toFixed(1)} MB (holds ${input.fits})`,
  );
  const baseline = memorySample();
  const index = new SearchIndex(store, modelId, dimensions, logger, { maxBytes });
  await index.start();
  const query = new Float32Array(dimensions);
  const reloads: number[] = [];
  const hits: number[] = [];
  let peakRss = baseline.rss;
  let peakRetained = baseline.retained;
  let peakBytes = 0;
  let search = 0;
  for (let round = 0; round < input.rounds; round++) {
    for (const collectionId of collectionIds) {
      for (let d = 0; d < dimensions; d++) query[d] = Math.sin(search * 31 + d);
      const loadsBefore = index.budgetStats().loads;
      const started = performance.now();
      await index.prepare([collectionId]);
      try {
        index.vectorSearch(query, [collectionId], 50);
        index.lexicalSearch(input.queries[search % input.queries.length]!, [collectionId], 50);
      } finally {
        index.release([collectionId]);
      }
      const elapsed = performance.now() - started;
      (index.budgetStats().loads > loadsBefore ? reloads : hits).push(elapsed);
      peakBytes = Math.max(peakBytes, index.budgetStats().bytes);
      const sample = memorySample();
      peakRss = Math.max(peakRss, sample.rss);
      peakRetained = Math.max(peakRetained, sample.retained);
      search++;
    }
    // Searching the same few again: these stay loaded (hits), the rest keep cycling.
    for (const collectionId of collectionIds.slice(-input.fits)) {
      const started = performance.now();
      await index.prepare([collectionId]);
      index.release([collectionId]);
      hits.push(performance.now() - started);
    }
  }
  const stats = index.budgetStats();
  await index.stop();
  info(
    `   ${search} searches: ${stats.loads} loads, ${stats.evictions} evictions; index held at most ${(peakBytes / MB).toFixed(1)} MB; after GC: RSS ${baseline.rss.toFixed(0)} → peak ${peakRss.toFixed(0)} MB, heap+buffers ${baseline.retained.toFixed(0)} → peak ${peakRetained.toFixed(0)} MB`,
  );

  // The same searches without a budget, for contrast: everything searched stays.
  const unbounded = new SearchIndex(store, modelId, dimensions, logger);
  await unbounded.start();
  let unboundedRetained = 0;
  let unboundedRss = 0;
  for (const collectionId of collectionIds) {
    await unbounded.prepare([collectionId]);
    unbounded.release([collectionId]);
    const sample = memorySample();
    unboundedRetained = Math.max(unboundedRetained, sample.retained);
    unboundedRss = Math.max(unboundedRss, sample.rss);
  }
  const unboundedBytes = unbounded.budgetStats().bytes;
  await unbounded.stop();
  info(
    `   unbounded, the same collections: index ${(unboundedBytes / MB).toFixed(1)} MB, after GC heap+buffers peak ${unboundedRetained.toFixed(0)} MB, RSS peak ${unboundedRss.toFixed(0)} MB`,
  );
  metric('index_budget_max_mb', maxBytes / MB, 'MB');
  metric('index_budget_partition_mb', partitionBytes / MB, 'MB');
  metric('index_budget_peak_index_mb', peakBytes / MB, 'MB');
  metric('index_budget_rss_baseline_mb', baseline.rss, 'MB');
  metric('index_budget_rss_peak_mb', peakRss, 'MB');
  metric('index_budget_rss_growth_mb', peakRss - baseline.rss, 'MB');
  metric('index_budget_retained_growth_mb', peakRetained - baseline.retained, 'MB');
  metric('index_unbounded_index_mb', unboundedBytes / MB, 'MB');
  metric('index_unbounded_retained_growth_mb', unboundedRetained - baseline.retained, 'MB');
  metric('index_unbounded_rss_peak_mb', unboundedRss, 'MB');
  metric('index_budget_evictions', stats.evictions, 'count');
  metric('index_budget_reload_p50', percentile(reloads, 50), 'ms');
  metric('index_budget_reload_p95', percentile(reloads, 95), 'ms');
  metric('index_budget_loaded_search_p50', percentile(hits, 50), 'ms');
}
