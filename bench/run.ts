/**
 * `npm run bench`: boots the stack the way `npm run dev` runs it (embedded Temporal dev server and
 * MongoDB stand-in unless MONGODB_URI / TEMPORAL_ADDRESS are set, then ONE service process with
 * ROLE=all: API + in-process worker with eager workflow start), and measures, by scenario name:
 *   latency      1. POST → searchable latency of a 1 KB text, with a Temporal-history breakdown;
 *   ingest       2. ingestion throughput of 500 × 1 KB texts from 16 concurrent clients;
 *   retrieval    7. retrieval quality (recall@5/10, MRR) of vector, lexical, vector+lexical and fused
 *                   search on a conversational-memory corpus, in a fresh collection (bench/retrieval/);
 *   search       4. search latency over 10,000 and 100,000 synthetic chunks (random vectors,
 *                   Zipf-distributed synthetic text), each in its own collection;
 *   index-budget 4b. in-process index cold load and reload, and RSS under the memory budget while
 *                   searching more collections than it holds (bench/index-budget.ts; the 100k cold
 *                   load is opt-in with BENCH_COLD_LOAD_CHUNKS=100000 unless `search` ran);
 *   events       6. live events: append → WebSocket receipt latency and delivery rate;
 *   fairness    10. against an API process of its own with a small index budget and session caps, one
 *                   tenant floods searches past the budget and holds sockets at its key and tenant caps
 *                   while another ingests, subscribes, disconnects and resumes: its events lost (against
 *                   the memories it created), search p95 idle vs loaded, index bytes vs budget and RSS;
 *   device      11. device memory: snapshot size, export/import time, device create and search beside
 *                   collection search, on 1,000 memories (bench/device.ts; BENCH_DEVICE_MEMORIES);
 *   device-open 11b. one device search on a 1,000-memory snapshot built in-process, in CPU time: format
 *                   1.1 opened in full, 2.0 opened in full, 2.0 prepared, 2.0 sent again as the same bytes
 *                   (bench/device-open.ts; no stack);
 *   webhooks    13. webhook delivery: events/s to 1 and to 20 subscriptions, append → receipt p50/p95,
 *                   through a delivering process of its own to a loopback HTTPS receiver (bench/webhooks.ts);
 *   flatcost    13. 500 × 1 KB memories into an empty database, then again after a bulk pre-fill of 200,000
 *                   chunks / 20,000 memories over 50 collections of 2 tenants: throughput and CPU per memory side
 *                   by side, and the store's disk vs logical bytes after the load and a clean restart (bench/flatcost.ts;
 *                   it runs last among the stack scenarios, with an API process and a database of its own);
 *   locomo      14. retrieval quality on the LoCoMo development half (../shared/bench-data/locomo), through
 *                   the API: recall_any@5/@10, recall_all@10, MRR overall and per category, for the fused
 *                   ranking beside BM25 alone and vector alone; search p50/p95, ingestion throughput (bench/locomo/);
 * then, after the whole stack is stopped:
 *   embed        3. raw embedding throughput of the model alone (and pipeline ÷ raw, with ingest);
 *   extractors   5. file extraction alone: OCR, PDF text layer, transcription;
 *   vector-scan  8. the vector index's brute-force scan alone (bench/vector-scan.ts);
 *   soak         9. the embedded store's durability: documents written across SIGKILLs of the store, read back (bench/soak.ts).
 *   workflows   12. procedures (the /v1/workflows reads): pattern precision/recall, instance linking, position and verb-class accuracy on
 *                generated procedural conversations; derivation, storage and mining speed at 10k traces (bench/procedures/).
 *   extraction  the structure extractor on a labelled development set of 155 sentences and a check set of
 *                60: entity and triple precision, recall and F1, category accuracy; CPU ms per KB (bench/extraction/).
 *
 * BENCH_ONLY=<name>[,<name>...] runs only those scenarios, e.g. `BENCH_ONLY=retrieval` or
 * `BENCH_ONLY=retrieval,search` (the stack still boots, unless only stack-less scenarios are
 * named). Other knobs: BENCH_LATENCY_RUNS, BENCH_INGEST_COUNT, BENCH_RETRIEVAL_SEED, BENCH_SERVICE_LOG_LEVEL,
 * BENCH_MONGO_BACKEND=journal|memory|h2 (default EMBEDDED_MONGO_BACKEND, journal), BENCH_KEEP_DB.
 *
 * stdout carries only `name value unit` lines; progress and notes go to stderr. It only measures:
 * there are no timed assertions. Exit code 1 on any failure, after tearing everything down.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, loadEmbeddedMongoConfig, projectRoot } from '../config/index.js';
import { exitWithCleanup, freePort, registerCleanup, type MongoStandinBackend } from '../dev/embedded.js';
import { spawnService, startBackingServices, stopChild, waitForReady, type BackingServices } from '../dev/stack.js';
import { loadEmbedder } from '../models/embedder.js';
import { createAdminService } from '../services/admin.js';
import { openStore, type Store } from '../store/index.js';
import { fetchBreakdowns } from './breakdown.js';
import {
  FLATCOST_CHUNKS,
  FLATCOST_MEMORIES,
  prefillStore,
  reportFlatCost,
  reportFootprint,
  storeFootprint,
  type IngestFigures,
} from './flatcost.js';
import { deviceScenario } from './device.js';
import { deviceOpenScenario } from './device-open.js';
import { embeddingBatchMeter } from './embedding-batches.js';
import { eventScenario } from './events.js';
import { FAIRNESS_LIMITS, fairnessScenario } from './fairness.js';
import { extractorScenario, officeScenario } from './extractors.js';
import { CpuMeter, type CpuUsage } from './cpu.js';
import { ApiClient, type MemoryRecord } from './client.js';
import { retrievalScenario } from './retrieval/scenario.js';
import { locomoScenario } from './locomo/scenario.js';
import { extractionScenario } from './extraction/scenario.js';
import { budgetScenario, coldLoad } from './index-budget.js';
import { info, metric, percentile, sleep } from './stats.js';
import { SyntheticText, writeSyntheticCorpus } from './synthetic.js';
import { makeTexts, seededRandom, type BenchText } from './texts.js';
import { soakScenario } from './soak.js';
import { vectorScanScenario } from './vector-scan.js';
import { webhookScenario } from './webhooks.js';
import { procedureScenario } from './procedures/scenario.js';
import { validityScenario } from './validity/scenario.js';

const LATENCY_WARMUPS = 5;
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 50);
const INGEST_COUNT = Number(process.env.BENCH_INGEST_COUNT ?? 500);
const INGEST_CONCURRENCY = 16;
/** flatcost: memories ingested (unmeasured) before its "empty" phase. */
const FLATCOST_WARMUP = 32;
/** Search latency is measured at each size, each in its own collection (100 chunks per memory). */
const SEARCH_SIZES = [
  { label: '10k', memories: 100 },
  { label: '100k', memories: 1000 },
];
const SEARCH_CHUNKS_PER_MEMORY = 100;
/** The service's SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS default: collections this large get a lexical snapshot after a load. */
const SNAPSHOT_MIN_CHUNKS_DEFAULT = loadConfig({}).SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS;
/** index-budget: the cold-load collection's size when the search scenario's 100k one is not there. */
const COLD_LOAD_CHUNKS = Number(process.env.BENCH_COLD_LOAD_CHUNKS ?? 20_000);
/** index-budget: collections searched round-robin under a budget that holds 3 of them, and their size. */
const BUDGET_COLLECTIONS = Number(process.env.BENCH_BUDGET_COLLECTIONS ?? 8);
const BUDGET_CHUNKS = Number(process.env.BENCH_BUDGET_CHUNKS ?? 2000);
/** e5-small-v2, the default model; the index-budget scenario writes vectors of this size. */
const EMBEDDING_DIMENSIONS = 384;
const SEARCH_WARMUPS = 5;
const SEARCH_RUNS = 200;
const EMBED_BATCH = 32;
const POLL_MS = 5;
const MEMORY_TIMEOUT_MS = 120_000;
/**
 * Ingestion fails when no memory has completed for this long (a stalled pipeline), not after a
 * fixed total: on a shared 2-core machine 500 memories took over 700 s while progressing steadily,
 * and a fixed 420 s deadline stopped the whole bench there.
 */
const INGEST_STALL_MS = 180_000;

/** Every scenario, in the order they run, and whether it needs the service running (`stack`) or not. */
const SCENARIO_NEEDS = {
  latency: 'stack',
  ingest: 'stack',
  retrieval: 'stack',
  search: 'stack',
  'index-budget': 'stack',
  events: 'stack',
  fairness: 'stack',
  device: 'stack',
  'device-open': 'none',
  flatcost: 'stack',
  embed: 'none',
  extractors: 'none',
  office: 'none',
  'vector-scan': 'none',
  soak: 'none',
  workflows: 'none',
  webhooks: 'stack',
  validity: 'none',
  locomo: 'stack',
  extraction: 'none',
} as const satisfies Record<string, 'stack' | 'none'>;
type Scenario = keyof typeof SCENARIO_NEEDS;
const SCENARIOS = Object.keys(SCENARIO_NEEDS) as Scenario[];
const STACK_SCENARIOS = SCENARIOS.filter((scenario) => SCENARIO_NEEDS[scenario] === 'stack');

/** BENCH_ONLY=a,b: only those scenarios; unset or empty: all of them. */
function selectedScenarios(value: string | undefined): Set<Scenario> {
  const names = (value ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (names.length === 0) return new Set(SCENARIOS);
  const unknown = names.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    process.stderr.write(`[bench] BENCH_ONLY: unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}\n`);
    process.exit(2);
  }
  return new Set(names as Scenario[]);
}
const selected = selectedScenarios(process.env.BENCH_ONLY);
const runs = (scenario: Scenario): boolean => selected.has(scenario);

// The embedded store `npm run dev` uses (EMBEDDED_MONGO_BACKEND, default journal); BENCH_MONGO_BACKEND=memory|h2 compares.
const mongoBackend: MongoStandinBackend =
  process.env.BENCH_MONGO_BACKEND === 'memory' || process.env.BENCH_MONGO_BACKEND === 'h2'
    ? process.env.BENCH_MONGO_BACKEND
    : loadEmbeddedMongoConfig(process.env).EMBEDDED_MONGO_BACKEND;
const benchStarted = performance.now();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-bench-'));

/** What every service process the bench starts is given: its backing services and database, a quiet log, no rate limit. */
const serviceEnv = (backing: BackingServices, db: string): Record<string, string> => ({
  MONGODB_URI: backing.mongoUri,
  MONGODB_DB: db,
  TEMPORAL_ADDRESS: backing.temporalAddress,
  DATA_DIR: dataDir,
  LOG_LEVEL: process.env.BENCH_SERVICE_LOG_LEVEL ?? 'warn',
  RATE_LIMIT_PER_SECOND: '100000',
  RATE_LIMIT_BURST: '100000',
});
const logDir = path.join(projectRoot(), 'data', 'bench-logs');
const logFile = path.join(logDir, 'service.log');
mkdirSync(logDir, { recursive: true });
rmSync(logFile, { force: true });
const dbName = `engram_bench_${Date.now().toString(36)}`;

let backing: BackingServices | undefined;
let service: ChildProcess | undefined;
let store: Store | undefined;
let tornDown = false;

async function closeStore(): Promise<void> {
  const open = store;
  store = undefined;
  if (!open) return;
  // Our own database on a MongoDB the caller provided: leave nothing behind.
  if (process.env.MONGODB_URI && !process.env.BENCH_KEEP_DB) await open.database.db.dropDatabase().catch(() => undefined);
  await open.close().catch(() => undefined);
}

async function stopStack(): Promise<void> {
  await closeStore();
  await stopChild(service);
  service = undefined;
  await backing?.stop();
  backing = undefined;
}

let keepDataDir = false;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => (interrupted = true));

/** Service first, then the backing services it talks to. Registered once they exist (cleanups run last-first). */
async function teardown(): Promise<void> {
  if (tornDown) return;
  tornDown = true;
  await stopStack().catch((error: unknown) => info(`teardown: ${(error as Error).message}`));
}

// Registered first, so it runs last: after a failure the backing services' logs stay for inspection.
registerCleanup(async () => {
  if (keepDataDir && !interrupted) info(`kept ${dataDir} (Temporal and MongoDB stand-in logs: temporal.log, mongo.log)`);
  else rmSync(dataDir, { recursive: true, force: true });
});

const seconds = (ms: number): number => ms / 1000;

function readRssMb(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    const peak = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1];
    if (!rss) return null;
    return { rss: Number(rss) / 1024, peak: peak ? Number(peak) / 1024 : Number.NaN };
  } catch {
    return null;
  }
}

/** Prints a phase's CPU use: metrics with the given prefix, or only a stderr line. */
function reportCpu(phase: string, usage: CpuUsage | null, asMetrics: boolean): void {
  if (!usage) return;
  const parts = Object.entries(usage.seconds).map(([group, value]) => `${group} ${value.toFixed(1)}`);
  info(
    `   CPU-seconds during ${phase} (${usage.wallSeconds.toFixed(1)} s wall, ${os.cpus().length} cores, machine ${usage.machineBusyPct.toFixed(0)} % busy): ${parts.join(', ')}`,
  );
  if (usage.seconds.other !== undefined && usage.seconds.other > 0.15 * usage.wallSeconds) {
    info(
      `   WARNING: ${usage.seconds.other.toFixed(1)} CPU-seconds went to other work on this machine during ${phase}: figures are skewed by it`,
    );
  }
  if (!asMetrics) return;
  for (const [group, value] of Object.entries(usage.seconds)) metric(`${phase}_cpu_${group}_seconds`, value, 's');
  metric(`${phase}_cpu_machine_busy`, usage.machineBusyPct, '%');
}

/** Polls GET /v1/memories/{id} every POLL_MS until the memory leaves the pipeline. */
async function waitForMemory(api: ApiClient, id: string, started: number): Promise<MemoryRecord> {
  for (;;) {
    const record = await api.getMemory(id);
    if (record.status === 'complete' || record.status === 'failed') return record;
    if (performance.now() - started > MEMORY_TIMEOUT_MS)
      throw new Error(`memory ${id} still ${record.status} after ${MEMORY_TIMEOUT_MS} ms`);
    await sleep(POLL_MS);
  }
}

interface LatencySample {
  id: string;
  workflowId: string;
  totalMs: number;
  acceptMs: number;
}

async function latencyScenario(
  api: ApiClient,
  collectionId: string,
  temporalAddress: string,
  namespace: string,
  servicePid: number,
): Promise<{ embeddingModel: string; sampleId: string }> {
  info(`1) POST → searchable: ${LATENCY_WARMUPS} warm-ups + ${LATENCY_RUNS} sequential 1 KB memories (poll every ${POLL_MS} ms)`);
  const texts = makeTexts(LATENCY_WARMUPS + LATENCY_RUNS, 1001);
  const samples: LatencySample[] = [];
  let misses = 0;
  let failed = 0;
  let embeddingModel: string | null = null;
  const searchMs: number[] = [];
  let meter: CpuMeter | null = null;
  for (const [index, item] of texts.entries()) {
    const warmup = index < LATENCY_WARMUPS;
    if (index === LATENCY_WARMUPS) meter = new CpuMeter(servicePid);
    const t0 = performance.now();
    const created = await api.createMemory(collectionId, item.text, `latency-${index}`);
    const accepted = performance.now();
    const record = await waitForMemory(api, created.id, t0);
    const complete = performance.now();
    if (record.status === 'failed') {
      failed += 1;
      info(`  memory ${created.id} failed: ${record.status_message ?? '(no message)'}`);
      continue;
    }
    embeddingModel ??= record.embedding_model;
    const searchStarted = performance.now();
    const found = await api.search(item.query, [collectionId], 10);
    const searched = performance.now();
    const hit = found.hits.some((h) => h.memory_id === created.id);
    if (warmup) continue;
    searchMs.push(searched - searchStarted);
    if (!hit) misses += 1;
    samples.push({ id: created.id, workflowId: created.workflow_id, totalMs: complete - t0, acceptMs: accepted - t0 });
    if (samples.length % 10 === 0) info(`  ${samples.length}/${LATENCY_RUNS} (last ${(complete - t0).toFixed(1)} ms)`);
  }
  reportCpu('latency', meter?.stop() ?? null, false);
  if (samples.length === 0 || !embeddingModel) throw new Error('no memory completed in the latency scenario');

  const totals = samples.map((s) => s.totalMs);
  metric('post_to_searchable_p50', percentile(totals, 50), 'ms');
  metric('post_to_searchable_p95', percentile(totals, 95), 'ms');
  metric('post_to_searchable_misses', misses, 'count');
  metric('post_to_searchable_failed', failed, 'count');
  metric(
    'post_accept_p50',
    percentile(
      samples.map((s) => s.acceptMs),
      50,
    ),
    'ms',
  );
  metric(
    'post_accept_p95',
    percentile(
      samples.map((s) => s.acceptMs),
      95,
    ),
    'ms',
  );
  metric('searchable_check_search_p50', percentile(searchMs, 50), 'ms');

  info('   breakdown from Temporal histories (ActivityTaskStarted → ActivityTaskCompleted summed = compute)');
  const { breakdowns, errors } = await fetchBreakdowns(
    temporalAddress,
    namespace,
    samples.map((s) => s.workflowId),
  );
  for (const error of errors.slice(0, 5)) info(`  history: ${error}`);
  const compute: number[] = [];
  const orchestration: number[] = [];
  const workflow: number[] = [];
  const outside: number[] = [];
  const tail: number[] = [];
  const outsideToLastActivity: number[] = [];
  const perActivity = new Map<string, number[]>();
  let activityCount = 0;
  let workflowTaskCount = 0;
  for (const sample of samples) {
    const breakdown = breakdowns.get(sample.workflowId);
    if (!breakdown) continue;
    compute.push(breakdown.computeMs);
    orchestration.push(breakdown.orchestrationMs);
    workflow.push(breakdown.workflowMs);
    outside.push(sample.totalMs - breakdown.workflowMs);
    tail.push(breakdown.tailMs);
    outsideToLastActivity.push(sample.totalMs - breakdown.toLastActivityMs);
    for (const [name, ms] of breakdown.perActivity) perActivity.set(name, [...(perActivity.get(name) ?? []), ms]);
    activityCount += breakdown.activities;
    workflowTaskCount += breakdown.workflowTasks;
  }
  if (workflow.length > 0) {
    info(
      `   ${workflow.length} histories: ${(activityCount / workflow.length).toFixed(1)} activities and ${(workflowTaskCount / workflow.length).toFixed(1)} workflow tasks per workflow`,
    );
    metric('breakdown_workflow_p50', percentile(workflow, 50), 'ms');
    metric('breakdown_compute_p50', percentile(compute, 50), 'ms');
    metric('breakdown_orchestration_p50', percentile(orchestration, 50), 'ms');
    metric('breakdown_outside_workflow_p50', percentile(outside, 50), 'ms');
    // The memory turns `complete` inside the last activity, before the workflow closes: the close
    // (one more workflow task) is after the searchable point, so total − workflow can be negative.
    metric('breakdown_workflow_tail_p50', percentile(tail, 50), 'ms');
    metric('breakdown_outside_to_last_activity_p50', percentile(outsideToLastActivity, 50), 'ms');
    for (const [name, values] of perActivity) metric(`breakdown_activity_${name}_p50`, percentile(values, 50), 'ms');
    info('   note: status turns complete inside the last activity; workflow_ms also counts the close after it (breakdown_workflow_tail),');
    info(
      '   so outside_workflow = total − workflow_ms can be negative; outside_to_last_activity = total − (last activity done − workflow start)',
    );
  }
  return { embeddingModel, sampleId: samples[0]!.id };
}

async function ingestScenario(
  api: ApiClient,
  db: Store,
  tenantId: string,
  collectionId: string,
  texts: BenchText[],
  servicePid: number,
  label = 'ingest',
): Promise<IngestFigures> {
  info(
    `${label === 'ingest' ? '2) ingestion' : `   ${label}`}: ${texts.length} × 1 KB memories from ${INGEST_CONCURRENCY} concurrent clients; completion counted in MongoDB every 100 ms`,
  );
  const filter = { tenant_id: tenantId, collection_ids: collectionId };
  let next = 0;
  let postsDone = 0;
  const started = performance.now();
  let postsFinished = Number.NaN;
  const meter = new CpuMeter(servicePid);
  const posting = Promise.all(
    Array.from({ length: INGEST_CONCURRENCY }, async () => {
      while (next < texts.length) {
        const index = next++;
        await api.createMemory(collectionId, texts[index]!.text, `${label}-${index}`);
        postsDone += 1;
      }
    }),
  ).then(() => {
    postsFinished = performance.now();
  });
  let postError: unknown = null;
  posting.catch((error: unknown) => {
    postError = error;
  });

  let complete: number;
  let failed: number;
  let lastReport = started;
  let lastDone = 0;
  let lastProgress = started;
  // When the completed count first reached each tenth of the corpus: shows the ramp-up.
  const reachedAt = new Map<number, number>();
  for (;;) {
    if (postError) throw postError;
    [complete, failed] = await Promise.all([
      db.memories.collection.countDocuments({ ...filter, status: 'complete' }),
      db.memories.collection.countDocuments({ ...filter, status: 'failed' }),
    ]);
    for (let tenth = 0; tenth <= 10; tenth++) {
      if (!reachedAt.has(tenth) && complete >= Math.max(1, (tenth * texts.length) / 10)) reachedAt.set(tenth, performance.now() - started);
    }
    if (complete + failed >= texts.length) break;
    const now = performance.now();
    if (complete + failed > lastDone) {
      lastDone = complete + failed;
      lastProgress = now;
    }
    if (now - lastProgress > INGEST_STALL_MS)
      throw new Error(
        `ingestion stalled: ${complete} of ${texts.length} complete, none more in the last ${INGEST_STALL_MS / 1000} s (${seconds(now - started).toFixed(0)} s in all)`,
      );
    if (now - lastReport > 5000) {
      info(`  ${postsDone} posted, ${complete} complete, ${failed} failed after ${seconds(now - started).toFixed(1)} s`);
      lastReport = now;
    }
    await sleep(100);
  }
  const finished = performance.now();
  const usage = meter.stop();
  await posting;
  const totalSeconds = seconds(finished - started);
  const throughput = complete / totalSeconds;
  metric(`${label}_throughput`, throughput, 'memories/s');
  metric(`${label}_total_seconds`, totalSeconds, 's');
  metric(`${label}_post_seconds`, seconds(postsFinished - started), 's');
  metric(`${label}_first_complete_seconds`, seconds(reachedAt.get(0) ?? Number.NaN), 's');
  const t10 = reachedAt.get(1);
  const t90 = reachedAt.get(9);
  if (t10 !== undefined && t90 !== undefined && t90 > t10) {
    // The rate between 10 % and 90 % completed: the pipeline's steady state, without ramp-up and drain.
    metric(`${label}_steady_throughput`, (0.8 * texts.length) / seconds(t90 - t10), 'memories/s');
  }
  metric(`${label}_failed`, failed, 'count');
  info(
    `   completed tenths at (s): ${[...reachedAt.entries()].map(([tenth, ms]) => `${tenth * 10}% ${seconds(ms).toFixed(1)}`).join(', ')}`,
  );
  reportCpu(label, usage, true);
  // CPU per memory of the whole stack (service + MongoDB + Temporal): robust to other load on the machine.
  const perMemory = (group: string): number => (usage && complete > 0 ? (1000 * (usage.seconds[group] ?? 0)) / complete : Number.NaN);
  const cpuMsPerMemory = {
    service: perMemory('service'),
    mongo: perMemory('mongo'),
    temporal: perMemory('temporal'),
    stack: perMemory('service') + perMemory('mongo') + perMemory('temporal'),
  };
  if (Number.isFinite(cpuMsPerMemory.stack)) metric(`${label}_stack_cpu_per_memory`, cpuMsPerMemory.stack, 'ms');
  return { throughput, cpuMsPerMemory };
}

async function searchScenario(
  api: ApiClient,
  db: Store,
  tenantId: string,
  collectionId: string,
  size: { label: string; memories: number },
  text: SyntheticText,
  embeddingModel: string,
  dimensions: number,
  servicePid: number,
): Promise<void> {
  const { label } = size;
  const total = size.memories * SEARCH_CHUNKS_PER_MEMORY;
  info(`4) search at ${total} chunks: writing ${size.memories} memories × ${SEARCH_CHUNKS_PER_MEMORY} chunks directly through the store`);
  info(
    `   the ${total} vectors are SYNTHETIC (random unit vectors, ${dimensions} dims, model ${embeddingModel}): vector hits are meaningless, but a brute-force scan costs the same;`,
  );
  info(
    `   the text is synthetic too (~150 words per chunk from a ${text.words.length}-word Zipf-like vocabulary), queries 3–8 words from it: the lexical index has real work`,
  );
  const writeStarted = performance.now();
  let lastReport = writeStarted;
  await writeSyntheticCorpus(db, {
    tenantId,
    collectionId,
    embeddingModel,
    dimensions,
    memories: size.memories,
    chunksPerMemory: SEARCH_CHUNKS_PER_MEMORY,
    seed: 4004 + total,
    text,
    onProgress: (written) => {
      const now = performance.now();
      if (now - lastReport < 10_000) return;
      lastReport = now;
      info(`   ${written}/${total} chunks written (${(written / seconds(now - writeStarted)).toFixed(0)}/s)`);
    },
  });
  const writeSeconds = seconds(performance.now() - writeStarted);
  info(`   corpus written in ${writeSeconds.toFixed(1)} s (${(total / writeSeconds).toFixed(0)} chunks/s)`);
  metric(`search_${label}_write_seconds`, writeSeconds, 's');

  const random = seededRandom(5005 + total);
  const queries = Array.from({ length: SEARCH_WARMUPS + SEARCH_RUNS }, () => text.query(random));
  const client: number[] = [];
  const server: number[] = [];
  const stages = new Map<string, number[]>();
  let meter: CpuMeter | null = null;
  for (const [i, query] of queries.entries()) {
    if (i === SEARCH_WARMUPS) meter = new CpuMeter(servicePid);
    const started = performance.now();
    const results = await api.search(query, [collectionId], 10);
    const elapsed = performance.now() - started;
    if (i === 0) {
      const breakdown = Object.entries(results.timings_ms)
        .map(([stage, ms]) => `${stage} ${ms}`)
        .join(', ');
      info(`   first search (loads the partition): ${elapsed.toFixed(1)} ms client (server: ${breakdown}), ${results.total_hits} hits`);
      metric(`search_first_${label}`, elapsed, 'ms');
      if (results.timings_ms.index_ms !== undefined) metric(`search_index_load_${label}`, results.timings_ms.index_ms, 'ms');
      if (results.total_hits === 0)
        throw new Error(`search over the synthetic ${label} corpus returned no hits: the partition did not load its vectors`);
      // That load writes the collection's lexical snapshot in the background: let it finish
      // before measuring, so the measured searches do not share the CPU with it.
      if (total >= SNAPSHOT_MIN_CHUNKS_DEFAULT) {
        const waited = performance.now();
        while (!(await db.indexSnapshots.headOf(collectionId, embeddingModel)) && performance.now() - waited < 120_000) await sleep(250);
        info(`   its lexical snapshot written ${(performance.now() - waited).toFixed(0)} ms after the first search answered`);
      }
    }
    if (i < SEARCH_WARMUPS) continue;
    client.push(elapsed);
    server.push(results.timings_ms.total_ms);
    for (const [stage, ms] of Object.entries(results.timings_ms)) {
      if (stage === 'total_ms' || typeof ms !== 'number') continue;
      stages.set(stage, [...(stages.get(stage) ?? []), ms]);
    }
  }
  reportCpu(`search_${label}`, meter?.stop() ?? null, false);
  metric(`search_${label}_p50`, percentile(client, 50), 'ms');
  metric(`search_${label}_p95`, percentile(client, 95), 'ms');
  metric(`search_${label}_server_p50`, percentile(server, 50), 'ms');
  metric(`search_${label}_server_p95`, percentile(server, 95), 'ms');
  // Per-stage server timings, whatever stages this server version reports (embed_ms → search_10k_embed_p50).
  for (const [stage, values] of stages) {
    const name = stage.replace(/_ms$/, '');
    metric(`search_${label}_${name}_p50`, percentile(values, 50), 'ms');
    metric(`search_${label}_${name}_p95`, percentile(values, 95), 'ms');
  }
}

/** For a search-only run: one small memory through the pipeline, to learn the model and its dimension. */
async function probeEmbedding(api: ApiClient, collectionId: string): Promise<{ embeddingModel: string; sampleId: string }> {
  const [probe] = makeTexts(1, 1001);
  const created = await api.createMemory(collectionId, probe!.text, 'embedding-probe');
  const record = await waitForMemory(api, created.id, performance.now());
  if (record.status !== 'complete' || !record.embedding_model)
    throw new Error(`embedding probe ${created.id} ended ${record.status}: ${record.status_message ?? '(no message)'}`);
  return { embeddingModel: record.embedding_model, sampleId: created.id };
}

async function rawEmbedScenario(texts: BenchText[]): Promise<{ throughput: number; cpuMsPerItem: number }> {
  const config = loadConfig({ ...process.env, MONGODB_DB: dbName });
  info(
    `3) raw embedding: ${config.EMBEDDING_MODEL} alone in the bench process, batches of ${EMBED_BATCH}, ${texts.length} texts; the service and backing services are already stopped (no part of the stack runs meanwhile)`,
  );
  const embedder = await loadEmbedder({
    modelId: config.EMBEDDING_MODEL,
    modelsDir: config.MODELS_DIR,
    allowRemoteModels: false,
    maxBatchSize: EMBED_BATCH,
  });
  const inputs = texts.map((t) => t.text);
  await embedder.embedPassages(inputs.slice(0, EMBED_BATCH)); // warm-up, untimed
  const meter = new CpuMeter(-1);
  const started = performance.now();
  let vectors = 0;
  for (let i = 0; i < inputs.length; i += EMBED_BATCH) {
    vectors += (await embedder.embedPassages(inputs.slice(i, i + EMBED_BATCH))).length;
  }
  const elapsed = seconds(performance.now() - started);
  const throughput = vectors / elapsed;
  const usage = meter.stop();
  reportCpu('embed_raw', usage, false);
  metric('embed_raw_throughput', throughput, 'chunks/s');
  metric('embed_raw_total_seconds', elapsed, 's');
  const cpuMsPerItem = usage ? (1000 * (usage.seconds.bench ?? Number.NaN)) / vectors : Number.NaN;
  if (usage) metric('embed_raw_cpu_per_chunk', cpuMsPerItem, 'ms');
  return { throughput, cpuMsPerItem };
}

let logSummarized = false;

function summarizeServiceLog(): void {
  if (logSummarized) return;
  logSummarized = true;
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return;
  }
  // Entries: pino JSON lines, or multi-line records from other loggers (e.g. the Temporal SDK's
  // default logger: "<ISO time> [LEVEL] message {...}"), or anything else (crash traces).
  const entries: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('{') || /^\d{4}-\d\d-\d\dT/.test(line) || entries.length === 0) entries.push(line);
    else entries[entries.length - 1] += `\n${line}`;
  }
  let json = 0;
  let foreign = 0;
  const problems: string[] = [];
  for (const entry of entries) {
    if (!entry.trim()) continue;
    try {
      const parsed = JSON.parse(entry) as { level?: number };
      json += 1;
      if ((parsed.level ?? 0) >= 40) problems.push(entry);
    } catch {
      foreign += 1;
      if (!/^\S+ \[(INFO|DEBUG|TRACE)\]/.test(entry)) problems.push(entry);
    }
  }
  info(
    `service log ${logFile}: ${json} JSON entries, ${foreign} non-JSON entries, ${problems.length} at warn level or above (or unrecognised)`,
  );
  for (const entry of problems.slice(0, 10)) info(`  ${entry.replace(/\s*\n\s*/g, ' ').slice(0, 600)}`);
}

interface PipelineFigures {
  throughput: number;
  cpuMsPerItem: number;
}

/**
 * 13) flat cost, with an API process (ROLE=all) and a database of its own, so that "empty" is
 * empty whatever ran before it; the bench's own service idles meanwhile. Runs last: its pre-fill
 * and the store restart at its end would skew any scenario after it.
 */
async function flatCostScenario(config: ReturnType<typeof loadConfig>, services: BackingServices, taskQueue: string): Promise<void> {
  info(
    `13) flat cost: ${INGEST_COUNT} memories into an empty database, then into one pre-filled with ${FLATCOST_CHUNKS} chunks in ${FLATCOST_MEMORIES} memories`,
  );
  const flatDb = `${dbName}_flat`;
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
      makeTexts(INGEST_COUNT, 1313),
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
      makeTexts(INGEST_COUNT, 1414),
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

/** Boots the stack and runs the selected scenarios that need it; stops it again. */
async function stackScenarios(config: ReturnType<typeof loadConfig>, ingestTexts: BenchText[]): Promise<PipelineFigures | null> {
  const bootStarted = performance.now();
  backing = await startBackingServices({ dataDir, mongoBackend, temporalUiPort: null });
  registerCleanup(teardown);
  info(
    `backing services: MongoDB ${backing.mongoUri}${backing.embedded.mongo ? ' (embedded)' : ''}, Temporal ${backing.temporalAddress}${backing.embedded.temporal ? ' (embedded)' : ''}`,
  );
  const port = await freePort();
  const taskQueue = `memory-ingest-${dbName}`;
  service = spawnService(
    'api/main.js',
    {
      ROLE: 'all',
      ...serviceEnv(backing, dbName),
      TEMPORAL_TASK_QUEUE: taskQueue,
      PORT: String(port),
      // Importing a 1,000-memory snapshot writes ~10k documents; the stand-in commits each (~2 ms).
      REQUEST_TIMEOUT_MS: '300000',
      // The webhooks scenario's own process delivers, to its loopback receiver.
      WEBHOOK_DELIVERY: 'false',
    },
    logFile,
  );
  const servicePid = service.pid ?? 0;
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForReady(baseUrl, 180_000, service);
  info(
    `service (ROLE=all, pid ${servicePid}) ready at ${baseUrl} after ${seconds(performance.now() - bootStarted).toFixed(1)} s; log: ${logFile}`,
  );
  metric('bench_boot_seconds', seconds(performance.now() - bootStarted), 's');

  store = await openStore(config, backing.mongoUri);
  const admin = createAdminService(store);
  const boot = await admin.bootstrap('bench', 'latency', `bench ${new Date().toISOString()}`);
  const tenantId = boot.tenant.id;
  const api = new ApiClient(baseUrl, boot.apiKey);

  let embeddingModel: string | null = null;
  let sampleId: string | null = null;
  const searchCollections = new Map<string, string>();
  if (runs('latency')) {
    ({ embeddingModel, sampleId } = await latencyScenario(
      api,
      boot.collection.id,
      backing.temporalAddress,
      config.TEMPORAL_NAMESPACE,
      servicePid,
    ));
  }

  let pipeline: PipelineFigures | null = null;
  if (runs('ingest')) {
    const ingestCollection = await admin.createCollection(tenantId, 'ingest');
    const batches = await embeddingBatchMeter(baseUrl);
    const figures = await ingestScenario(api, store, tenantId, ingestCollection.id, ingestTexts, servicePid);
    await batches.report('ingest');
    pipeline = { throughput: figures.throughput, cpuMsPerItem: figures.cpuMsPerMemory.stack };
  }

  if (runs('retrieval')) {
    // Its own fresh collection: only the conversation corpus, nothing from the other scenarios.
    const retrievalCollection = await api.createCollection(`retrieval-${Date.now().toString(36)}`, 'retrieval-quality bench corpus');
    const interleavedCollection = await api.createCollection(
      `retrieval-interleaved-${Date.now().toString(36)}`,
      'retrieval-quality bench corpus, searched while ingested',
    );
    await retrievalScenario(api, retrievalCollection.id, interleavedCollection.id);
  }

  if (runs('locomo')) await locomoScenario(api);

  if (runs('search')) {
    if (!embeddingModel || !sampleId) ({ embeddingModel, sampleId } = await probeEmbedding(api, boot.collection.id));
    const [sampleChunk] = await store.chunks.forMemory(sampleId, { withEmbeddings: true });
    if (!sampleChunk?.embedding) throw new Error(`memory ${sampleId} has no stored embedding`);
    const dimensions = sampleChunk.embedding.buffer.byteLength / Float32Array.BYTES_PER_ELEMENT;
    const text = new SyntheticText();
    for (const size of SEARCH_SIZES) {
      const collection = await admin.createCollection(tenantId, `search-${size.label}`);
      await searchScenario(api, store, tenantId, collection.id, size, text, embeddingModel, dimensions, servicePid);
      searchCollections.set(size.label, collection.id);
    }
  }

  if (runs('index-budget')) {
    info('4b) in-process indexes: cold load of a collection, and searching more collections than the memory budget holds');
    const modelId = embeddingModel ?? config.EMBEDDING_MODEL;
    const dimensions = EMBEDDING_DIMENSIONS;
    const text = new SyntheticText();
    /** A synthetic collection of about `chunks` chunks, in memories of the search scenario's size. */
    const corpusStore = store; // narrowed here; a closure would not keep the narrowing
    const writeChunks = (collectionId: string, chunks: number, seed: number) =>
      writeSyntheticCorpus(corpusStore, {
        tenantId,
        collectionId,
        embeddingModel: modelId,
        dimensions,
        memories: Math.max(1, Math.round(chunks / SEARCH_CHUNKS_PER_MEMORY)),
        chunksPerMemory: Math.min(chunks, SEARCH_CHUNKS_PER_MEMORY),
        seed,
        text,
      });

    const budgetCollections: string[] = [];
    for (let i = 0; i < BUDGET_COLLECTIONS; i++) {
      const collection = await admin.createCollection(tenantId, `budget-${i}`);
      await writeChunks(collection.id, BUDGET_CHUNKS, 7007 + i);
      budgetCollections.push(collection.id);
    }
    const random = seededRandom(8008);
    await budgetScenario({
      store,
      modelId,
      dimensions,
      collectionIds: budgetCollections,
      fits: 3,
      rounds: 3,
      queries: Array.from({ length: 50 }, () => text.query(random)),
    });

    // After the budget part, so that its RSS baseline is not inflated by a 100k-chunk load.
    let coldCollection = searchCollections.get('100k');
    let label = '100k';
    if (!coldCollection) {
      const chunks = COLD_LOAD_CHUNKS;
      label = chunks % 1000 === 0 ? `${chunks / 1000}k` : String(chunks);
      info(
        `   writing a synthetic ${chunks}-chunk collection (BENCH_COLD_LOAD_CHUNKS=100000 for the 100k figure; the search scenario's is used when it runs)`,
      );
      const collection = await admin.createCollection(tenantId, `cold-${label}`);
      const written = performance.now();
      await writeChunks(collection.id, chunks, 6006);
      info(`   written in ${seconds(performance.now() - written).toFixed(1)} s`);
      coldCollection = collection.id;
    }
    await coldLoad(store, coldCollection, modelId, dimensions, label);
  }

  if (runs('events')) {
    info('6) live events: append → WebSocket receipt latency, and delivery rate of one API process');
    const eventsCollection = await admin.createCollection(tenantId, 'events');
    await eventScenario(baseUrl, boot.apiKey, store, tenantId, eventsCollection.id);
  }

  if (runs('webhooks')) {
    info('13) webhooks: events/s delivered to 1 and to 20 subscriptions, append → receipt latency');
    await webhookScenario({
      serviceEnv: serviceEnv(backing, dbName),
      logDir,
      store,
      tenantId,
      apiKey: boot.apiKey,
    });
  }

  if (runs('fairness')) {
    info('10) fairness: tenant A floods searches past the index budget and holds sockets at its caps; tenant B ingests, drops and resumes');
    // An API process of its own with the small limits (the bench service's worker ingests for it).
    const fairnessPort = await freePort();
    const fairnessApi = spawnService(
      'api/main.js',
      {
        ROLE: 'api',
        ...serviceEnv(backing, dbName),
        TEMPORAL_TASK_QUEUE: taskQueue,
        PORT: String(fairnessPort),
        ...FAIRNESS_LIMITS,
      },
      path.join(logDir, 'fairness-api.log'),
    );
    const stopFairnessApi = () => stopChild(fairnessApi);
    registerCleanup(stopFairnessApi);
    const fairnessUrl = `http://127.0.0.1:${fairnessPort}`;
    await waitForReady(fairnessUrl, 180_000, fairnessApi);
    try {
      await fairnessScenario({
        baseUrl: fairnessUrl,
        store,
        tenant: async (name) => {
          const created = await admin.bootstrap(`${name}-${Date.now().toString(36)}`, 'main', 'bench');
          return { tenantId: created.tenant.id, apiKey: created.apiKey, collectionId: created.collection.id };
        },
        extraKey: async (tenantId) => (await admin.createKey(tenantId, 'bench-second')).key,
        rssMb: () => readRssMb(fairnessApi.pid ?? 0)?.rss ?? null,
      });
    } finally {
      await stopFairnessApi();
    }
  }

  if (runs('device')) {
    const deviceCollection = await admin.createCollection(tenantId, 'device');
    await deviceScenario(
      baseUrl,
      boot.apiKey,
      deviceCollection.id,
      () => store!.memories.collection.countDocuments({ tenant_id: tenantId, collection_ids: deviceCollection.id, status: 'complete' }),
      servicePid,
      {
        tenant: async (name) => {
          const created = await admin.bootstrap(`${name}-${Date.now().toString(36)}`, 'main', 'bench');
          return { tenantId: created.tenant.id, apiKey: created.apiKey, collectionId: created.collection.id };
        },
        countComplete: (owner, collection) =>
          store!.memories.collection.countDocuments({ tenant_id: owner, collection_ids: collection, status: 'complete' }),
        prefill: async (owner, collection, memories) => {
          await writeSyntheticCorpus(store!, {
            tenantId: owner,
            collectionId: collection,
            embeddingModel: embeddingModel ?? config.EMBEDDING_MODEL,
            dimensions: EMBEDDING_DIMENSIONS,
            memories,
            chunksPerMemory: 1,
            wordsPerChunk: 20,
            seed: 9009,
          });
        },
        rssMb: () => readRssMb(servicePid)?.rss ?? null,
        maxEpisodes: config.SNAPSHOT_MAX_EPISODES,
      },
    );
  }

  const memory = readRssMb(servicePid);
  // Last: its pre-fill and the store restart would skew anything after it.
  if (runs('flatcost')) await flatCostScenario(config, backing, taskQueue);
  if (memory) {
    metric('bench_memory_rss_mb', memory.rss, 'MB');
    metric('bench_memory_peak_rss_mb', memory.peak, 'MB');
  } else {
    info(`could not read /proc/${servicePid}/status: no RSS figure`);
  }

  info('stopping the service and the backing services');
  await stopStack();
  summarizeServiceLog();
  return pipeline;
}

async function main(): Promise<void> {
  info(
    `node ${process.version}, ${os.cpus().length} CPUs, MongoDB stand-in backend ${mongoBackend}, data dir ${dataDir}; scenarios: ${[...selected].join(', ')}`,
  );
  const config = loadConfig({ ...process.env, MONGODB_DB: dbName });
  const ingestTexts = runs('ingest') || runs('embed') ? makeTexts(INGEST_COUNT, 2002) : [];

  const pipeline = STACK_SCENARIOS.some(runs) ? await stackScenarios(config, ingestTexts) : null;

  if (runs('embed')) {
    const raw = await rawEmbedScenario(ingestTexts);
    if (pipeline) {
      metric('pipeline_vs_raw_ratio', pipeline.throughput / raw.throughput, 'ratio');
      // The same comparison in CPU time (raw CPU per chunk ÷ whole-stack CPU per memory): what the
      // ratio would be on an otherwise idle machine if both were CPU-bound.
      if (Number.isFinite(pipeline.cpuMsPerItem) && Number.isFinite(raw.cpuMsPerItem)) {
        metric('pipeline_vs_raw_cpu_ratio', raw.cpuMsPerItem / pipeline.cpuMsPerItem, 'ratio');
      }
    }
  }

  if (runs('extractors')) {
    info('5) file extraction alone: OCR, PDF text layer, transcription (the stack is stopped)');
    await extractorScenario({ modelsDir: config.MODELS_DIR });
  }

  if (runs('office')) {
    info('5b) office formats alone: spreadsheets, decks, OpenDocument, EPUB (the stack is stopped)');
    await officeScenario();
  }

  if (runs('device-open')) {
    const embedder = await loadEmbedder({ modelId: config.EMBEDDING_MODEL, modelsDir: config.MODELS_DIR, allowRemoteModels: false });
    await deviceOpenScenario(embedder, {
      chunkMaxChars: config.CHUNK_MAX_CHARS,
      similarityThreshold: config.ENTITY_SIMILARITY_THRESHOLD,
      lexicon: config.FACT_LEXICON,
    });
  }

  if (runs('vector-scan')) {
    info('8) vector index scan alone (the stack is stopped)');
    await vectorScanScenario();
  }

  if (runs('soak')) await soakScenario();

  if (runs('workflows')) {
    info('10) procedures: derivation, chaining and mining quality on planted processes; store and mining speed');
    await procedureScenario();
  }

  if (runs('validity')) {
    info('11) facts that change over time: supersession on generated life histories, current-fact answers, ingestion cost');
    await validityScenario();
  }

  if (runs('extraction')) {
    info('12) structure extraction quality on the labelled development set (bench/extraction/dev-set.ts)');
    extractionScenario();
  }
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  exitCode = 1;
  if (interrupted) {
    info('interrupted: stopping');
  } else {
    keepDataDir = true;
    info(`FAILED: ${(error as Error).stack ?? String(error)}`);
    summarizeServiceLog();
  }
}
await teardown();
const total = seconds(performance.now() - benchStarted);
info(`bench finished in ${total.toFixed(1)} s${exitCode ? ' (with a failure)' : ''}`);
if (exitCode === 0) metric('bench_runtime_seconds', total, 's');
await exitWithCleanup(exitCode);
