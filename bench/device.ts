/**
 * 11) device memory: a 1,000-memory collection (BENCH_DEVICE_MEMORIES) ingested through the
 * pipeline, then
 *   - snapshot bytes per 1,000 memories, with what each part of the body costs;
 *   - export and import time per 1,000 memories (inline, over HTTP, median of 3);
 *   - device search p50/p95 on the exported snapshot beside collection search on the collection
 *     (the first device search opens the snapshot in full; the next ones find it prepared);
 *   - device create p50/p95 on the 1,000-memory snapshot;
 *   - the service's CPU time per device search and per device create (steadier than wall time
 *     on a shared machine);
 *   - how often device search names the same top-5 entities as collection search names for the
 *     query (should be 1), and how often those are also collection search's top 5 shown (its hits'
 *     entities follow the query's own: device search has no hits);
 *   - another tenant's collection search p50/p95 while large device creates run, beside its idle
 *     figures (issue 26: device work must not stall other tenants);
 *   - the API's RSS while exporting a collection over the snapshot caps: over the episode cap
 *     (refused from the counts, before reading) and over the byte cap only (read page by page until
 *     the bytes pass SNAPSHOT_MAX_BYTES, then refused).
 * Lines with a goal (issue 28) are followed by `<name>_goal` lines.
 */
import { canonicalJson } from '../core/canonical-json.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient } from './client.js';
import { deviceSearchesInClient, timedPost, type DeviceCall } from './device-client.js';
import { CpuMeter } from './cpu.js';
import { info, metric, metricWithGoal, percentile, sleep } from './stats.js';
import { makeQueries, makeTexts } from './texts.js';
import { benchNumber } from './env.js';
import { serviceMeter } from './service-meter.js';

const MEMORIES = benchNumber('BENCH_DEVICE_MEMORIES', 1000);
/** Characters of each large device create (MAX_TEXT_CHARS allows 2,000,000; this keeps the run minutes long). */
const LARGE_CREATE_CHARS = benchNumber('BENCH_DEVICE_LARGE_CHARS', 200_000);
const LOAD_SEARCHES = 40;
/** The route device and collection searches share (its template, as GET /metrics labels it). */
const SEARCH_ROUTE = '/v1/memories/search';
const CONCURRENCY = 16;
const SEARCH_RUNS = 60;
const CREATE_RUNS = 20;

const median = (values: number[]): number => percentile(values, 50);

/** What the load and over-cap lines need from the bench beside the API. */
export interface DeviceLoadDeps {
  /** A fresh tenant with a key and a collection. */
  tenant: (name: string) => Promise<{ tenantId: string; apiKey: string; collectionId: string }>;
  /** Completed memories of a collection. */
  countComplete: (tenantId: string, collectionId: string) => Promise<number>;
  /** Fills a collection with `memories` one-chunk memories of `wordsPerChunk` words straight through the store. */
  prefill: (tenantId: string, collectionId: string, memories: number, wordsPerChunk: number) => Promise<void>;
  /** The API process's resident set, MB. */
  rssMb: () => number | null;
  /** SNAPSHOT_MAX_EPISODES of the service. */
  maxEpisodes: number;
  /** SNAPSHOT_MAX_BYTES of the service. */
  maxBytes: number;
}

/** The service's CPU-seconds over `runs` calls, per call in ms (null off Linux). */
function cpuPerCall(meter: CpuMeter, runs: number): number | null {
  const usage = meter.stop();
  return usage ? ((usage.seconds.service ?? 0) * 1000) / runs : null;
}

export async function deviceScenario(
  baseUrl: string,
  apiKey: string,
  collectionId: string,
  countComplete: () => Promise<number>,
  servicePid: number,
  load?: DeviceLoadDeps,
): Promise<void> {
  const api = new ApiClient(baseUrl, apiKey);
  info(`11) device memory: ${MEMORIES} × ~600-character memories ingested, then export, import, device search and create`);
  const texts = makeTexts(MEMORIES, 1010, 600);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < texts.length) await api.createMemory(collectionId, texts[next++]!.text);
    }),
  );
  const deadline = Date.now() + 900_000;
  while ((await countComplete()) < MEMORIES) {
    if (Date.now() > deadline) throw new Error('device bench: ingestion did not finish in 15 minutes');
    await sleep(500);
  }
  const scale = 1000 / MEMORIES;

  const exports: number[] = [];
  let snapshotText = '';
  for (let run = 0; run < 3; run++) {
    const exported = await timedPost(baseUrl, apiKey, '/v1/device-memory/snapshot/export', { collection_id: collectionId });
    exports.push(exported.ms);
    snapshotText = exported.text.slice('{"results":'.length, -1);
  }
  const snapshot = JSON.parse(snapshotText) as {
    counts: Record<string, number>;
    body: { episodes: { chunks: { text: string; vector: string | null }[]; mentions: unknown }[]; entities: unknown[]; facts: unknown[] };
  };
  const bytes = Buffer.byteLength(snapshotText);
  const textBytes = snapshot.body.episodes.reduce(
    (sum, episode) => sum + episode.chunks.reduce((s, chunk) => s + Buffer.byteLength(chunk.text), 0),
    0,
  );
  const vectorBytes = snapshot.body.episodes.reduce(
    (sum, episode) => sum + episode.chunks.reduce((s, chunk) => s + (chunk.vector?.length ?? 0), 0),
    0,
  );
  metric('device_snapshot_bytes_per_1k_memories', (bytes / 1024 / 1024) * scale, 'MiB');
  metricWithGoal('device_snapshot_kib_per_memory', bytes / 1024 / MEMORIES, 4, 'KiB');
  metric('device_snapshot_chunk_text_share', textBytes / bytes, 'ratio');
  metric('device_snapshot_chunk_vector_share', vectorBytes / bytes, 'ratio');
  const sectionBytes = (items: unknown[]) => Buffer.byteLength(canonicalJson(items));
  metric('device_snapshot_entities_share', sectionBytes(snapshot.body.entities) / bytes, 'ratio');
  metric('device_snapshot_facts_share', sectionBytes(snapshot.body.facts) / bytes, 'ratio');
  metric('device_snapshot_mentions_share', sectionBytes(snapshot.body.episodes.map((episode) => episode.mentions)) / bytes, 'ratio');
  metric('device_snapshot_entities_per_1k_memories', (snapshot.counts.entities ?? 0) * scale, 'entities');
  metric('device_export_ms_per_1k_memories', median(exports) * scale, 'ms');

  // Queries that name what the corpus talks about, plus free-form ones.
  const queries = makeQueries(SEARCH_RUNS, 1011);
  // The top 5 of the entities the query names (found_by "query" in collection mode). Collection
  // search follows them with the entities its hits mention (found_by "hits"); device search retrieves
  // no chunks, so it has no hits and shows the query's part only (docs/search.md).
  const shown = (text: string) =>
    (JSON.parse(text) as { results: { entities?: { name: string; found_by?: string }[] | null } }).results.entities ?? [];
  const top = (entities: { name: string; found_by?: string }[], withHits: boolean) =>
    entities
      .filter((entity) => withHits || entity.found_by !== 'hits')
      .slice(0, 5)
      .map((entity) => entity.name)
      .join('|');
  const collectionTimes: number[] = [];
  const collectionShown: { name: string; found_by?: string }[][] = [];
  for (const query of queries) {
    const collection = await timedPost(baseUrl, apiKey, '/v1/memories/search', {
      query,
      collection_ids: [collectionId],
      track_access: false,
    });
    collectionTimes.push(collection.ms);
    collectionShown.push(shown(collection.text));
  }
  // Device searches in a run of their own, so the service's CPU time over them is theirs alone.
  // The first opens the snapshot in full (every check, the graph index built); the others find it
  // prepared. Its time and CPU are lines of their own, beside the prepared searches' percentiles:
  // one search in 60 weighs little in the p95 of all of them.
  const deviceTimes: number[] = [];
  let agree = 0;
  let agreeWithHits = 0;
  let searchMeter = new CpuMeter(servicePid);
  const first = await timedPost(
    baseUrl,
    apiKey,
    '/v1/memories/search',
    `{"query":${JSON.stringify(queries[0]!)},"snapshot":${snapshotText}}`,
  );
  const firstCpu = cpuPerCall(searchMeter, 1);
  // Scraped before the CPU meter starts again, so the scrape's CPU is not the searches'.
  const serviceSide = await serviceMeter(baseUrl, SEARCH_ROUTE);
  searchMeter = new CpuMeter(servicePid);
  // The prepared searches come from a client process of their own (bench/device-client.ts).
  const clientDir = mkdtempSync(path.join(os.tmpdir(), 'engram-device-client-'));
  let prepared: DeviceCall[];
  try {
    writeFileSync(path.join(clientDir, 'snapshot.json'), snapshotText);
    writeFileSync(path.join(clientDir, 'queries.json'), JSON.stringify(queries.slice(1)));
    prepared = await deviceSearchesInClient(baseUrl, apiKey, path.join(clientDir, 'snapshot.json'), path.join(clientDir, 'queries.json'));
  } finally {
    rmSync(clientDir, { recursive: true, force: true });
  }
  for (const [i, device] of [first, ...prepared].entries()) {
    deviceTimes.push(device.ms);
    const deviceTop = top(shown(device.text), false);
    if (deviceTop === top(collectionShown[i]!, false)) agree += 1;
    if (deviceTop === top(collectionShown[i]!, true)) agreeWithHits += 1;
  }
  const preparedCpu = cpuPerCall(searchMeter, queries.length - 1);
  // Whether the prepared searches' tail is the service's (the collector's, set off by the request
  // bodies, or other work) or made on the way: beside the client's count of calls over 50 ms.
  await serviceSide.report('device_search_prepared', queries.length - 1);
  metric('device_search_prepared_client_over_50ms', deviceTimes.slice(1).filter((ms) => ms > 50).length, 'calls');
  // Of those, the calls with at least 5 ms of the client process's own collections inside them.
  metric(
    'device_search_prepared_client_gc_over_50ms',
    prepared.filter((call) => call.ms > 50 && (call.clientGcMs ?? 0) >= 5).length,
    'calls',
  );
  metric('device_search_prepared_client_gc_ms_max', Math.max(0, ...prepared.map((call) => call.clientGcMs ?? 0)), 'ms');
  metric('device_search_first_ms', deviceTimes[0]!, 'ms');
  // /proc's CPU times tick every 10 ms: this one call's figure is that coarse.
  if (firstCpu !== null) metric('device_search_first_service_cpu_ms', firstCpu, 'ms');
  metricWithGoal('device_search_p50_ms', percentile(deviceTimes, 50), 50, 'ms');
  metricWithGoal('device_search_p95_ms', percentile(deviceTimes, 95), 50, 'ms');
  metric('device_search_prepared_p50_ms', percentile(deviceTimes.slice(1), 50), 'ms');
  metric('device_search_prepared_p95_ms', percentile(deviceTimes.slice(1), 95), 'ms');
  if (firstCpu !== null && preparedCpu !== null)
    metric('device_search_service_cpu_ms', (firstCpu + preparedCpu * (queries.length - 1)) / queries.length, 'ms');
  if (preparedCpu !== null) metric('device_search_prepared_service_cpu_ms', preparedCpu, 'ms');
  metric('device_collection_search_p50_ms', percentile(collectionTimes, 50), 'ms');
  metric('device_collection_search_p95_ms', percentile(collectionTimes, 95), 'ms');
  metricWithGoal('device_search_same_top5_entities_ratio', agree / queries.length, 1, 'ratio');
  // No goal: how often the query's own entities fill collection search's top 5 (no hit-mentioned ones in it).
  metric('device_search_same_top5_with_hit_entities_ratio', agreeWithHits / queries.length, 'ratio');

  // Imported after the searches: an import opens the snapshot and keeps it prepared, so the first
  // search after it found it prepared and only built the graph index (that was the first-search
  // line until 2026-11-27), not the full open it is meant to show.
  const imports: number[] = [];
  for (let run = 0; run < 3; run++)
    imports.push((await timedPost(baseUrl, apiKey, '/v1/device-memory/snapshot/import', `{"snapshot":${snapshotText}}`)).ms);
  metric('device_import_ms_per_1k_memories', median(imports) * scale, 'ms');

  const createTimes: number[] = [];
  const newTexts = makeTexts(CREATE_RUNS, 1012, 600);
  const createMeter = new CpuMeter(servicePid);
  for (const text of newTexts) {
    createTimes.push(
      (await timedPost(baseUrl, apiKey, '/v1/memories', `{"raw_text":${JSON.stringify(text.text)},"snapshot":${snapshotText}}`)).ms,
    );
  }
  const createCpu = cpuPerCall(createMeter, newTexts.length);
  // Goal: no slower than POST → searchable in collection mode (issue 28: p50 <= 120 ms, p95 <= 200 ms).
  metricWithGoal('device_create_p50_ms', percentile(createTimes, 50), 120, 'ms');
  metricWithGoal('device_create_p95_ms', percentile(createTimes, 95), 200, 'ms');
  if (createCpu !== null) metric('device_create_service_cpu_ms', createCpu, 'ms');
  info(
    `   snapshot of ${MEMORIES} memories: ${(bytes / 1024 / 1024).toFixed(2)} MiB, ${snapshot.counts.entities} entities, ${snapshot.counts.facts} facts`,
  );
  if (load) {
    await searchUnderDeviceLoad(baseUrl, apiKey, snapshotText, load);
    await exportOverCaps(baseUrl, load);
  }
}

/**
 * Another tenant searches its own collection, idle and then while large device creates run (two
 * tenants, two each: the per-tenant share of the device slots), in one run.
 */
async function searchUnderDeviceLoad(baseUrl: string, apiKey: string, snapshotText: string, load: DeviceLoadDeps): Promise<void> {
  const other = await load.tenant('device-other');
  const otherApi = new ApiClient(baseUrl, other.apiKey);
  const otherTexts = makeTexts(20, 1013, 600);
  for (const text of otherTexts) await otherApi.createMemory(other.collectionId, text.text);
  const deadline = Date.now() + 300_000;
  while ((await load.countComplete(other.tenantId, other.collectionId)) < otherTexts.length) {
    if (Date.now() > deadline) throw new Error("device bench: the other tenant's memories did not complete in 5 minutes");
    await sleep(250);
  }
  const queries = makeQueries(LOAD_SEARCHES, 1014);
  /** Each search's round trip, and the server's own timings of its stages (what the contention slows). */
  const stages: Record<'idle' | 'loaded', Record<string, number[]>> = { idle: {}, loaded: {} };
  const searchAll = async (phase: 'idle' | 'loaded'): Promise<number[]> => {
    const times: number[] = [];
    for (const query of queries) {
      const answer = await timedPost(baseUrl, other.apiKey, '/v1/memories/search', {
        query,
        collection_ids: [other.collectionId],
        track_access: false,
      });
      times.push(answer.ms);
      const timings = (JSON.parse(answer.text) as { results: { timings_ms: Record<string, number> } }).results.timings_ms;
      for (const [stage, ms] of Object.entries(timings)) (stages[phase][stage] ??= []).push(ms);
    }
    return times;
  };
  const idle = await searchAll('idle');

  const second = await load.tenant('device-load');
  // A snapshot is its tenant's own: the second tenant creates on an export of its (empty) collection.
  const secondSnapshot = (
    await timedPost(baseUrl, second.apiKey, '/v1/device-memory/snapshot/export', { collection_id: second.collectionId })
  ).text.slice('{"results":'.length, -1);
  const large = makeTexts(Math.ceil(LARGE_CREATE_CHARS / 600), 1015, 600)
    .map((text) => text.text)
    .join('\n\n')
    .slice(0, LARGE_CREATE_CHARS);
  const outcomes = new Map<number, number>();
  let stop = false;
  const creator = async (key: string, snapshot: string): Promise<void> => {
    while (!stop) {
      const response = await fetch(`${baseUrl}/v1/memories`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: `{"raw_text":${JSON.stringify(large)},"snapshot":${snapshot}}`,
      });
      await response.arrayBuffer();
      outcomes.set(response.status, (outcomes.get(response.status) ?? 0) + 1);
      if (response.status === 503) await sleep(200);
    }
  };
  const creators = [
    creator(apiKey, snapshotText),
    creator(apiKey, snapshotText),
    creator(second.apiKey, secondSnapshot),
    creator(second.apiKey, secondSnapshot),
  ];
  await sleep(1000); // the creates are under way
  const loaded = await searchAll('loaded');
  stop = true;
  await Promise.all(creators);
  metric('device_load_other_tenant_search_idle_p50_ms', percentile(idle, 50), 'ms');
  metric('device_load_other_tenant_search_idle_p95_ms', percentile(idle, 95), 'ms');
  metric('device_load_other_tenant_search_p50_ms', percentile(loaded, 50), 'ms');
  metric('device_load_other_tenant_search_p95_ms', percentile(loaded, 95), 'ms');
  metric('device_load_other_tenant_search_p95_ratio', percentile(loaded, 95) / percentile(idle, 95), 'ratio');
  info(
    `   the other tenant's search stages, p50/p95 idle → loaded (server timings, ms): ${Object.keys(stages.loaded)
      .map((stage) => {
        const at = (phase: 'idle' | 'loaded', rank: number) => percentile(stages[phase][stage] ?? [], rank).toFixed(1);
        return `${stage} ${at('idle', 50)}/${at('idle', 95)} → ${at('loaded', 50)}/${at('loaded', 95)}`;
      })
      .join(', ')}`,
  );
  info(
    `   4 device creates of ${LARGE_CREATE_CHARS} characters at a time (2 tenants × 2) while another tenant searched; answers: ${[
      ...outcomes,
    ]
      .map(([status, count]) => `${count} × ${status}`)
      .join(', ')}`,
  );
}

/**
 * The API's RSS while it exports a collection over a cap: one over the episode cap (refused from
 * the counts) and one under every count cap whose snapshot would pass the byte cap (read page by
 * page, refused once the bytes read pass it). Both must leave the RSS where it was, give or take
 * the byte cap.
 */
async function exportOverCaps(baseUrl: string, load: DeviceLoadDeps): Promise<void> {
  // About 3.6 KB of text a chunk, and enough chunks that their text alone is twice the byte cap
  // (18,641 at the default 32 MiB, under the 20,000-episode cap).
  const wordsPerChunk = 600;
  const overBytes = Math.min(load.maxEpisodes, Math.ceil((2 * load.maxBytes) / (wordsPerChunk * 6)));
  const cases = [
    { cap: 'episode', prefix: 'device_export_over_caps', memories: load.maxEpisodes + 1, wordsPerChunk: 20 },
    { cap: 'byte', prefix: 'device_export_over_byte_cap', memories: overBytes, wordsPerChunk },
  ];
  for (const { cap, prefix, memories, wordsPerChunk: words } of cases) {
    const tenant = await load.tenant(`device-caps-${cap}`);
    await load.prefill(tenant.tenantId, tenant.collectionId, memories, words);
    const before = load.rssMb();
    let peak = before ?? 0;
    const sampler = setInterval(() => (peak = Math.max(peak, load.rssMb() ?? 0)), 10);
    const started = performance.now();
    const response = await fetch(`${baseUrl}/v1/device-memory/snapshot/export`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ collection_id: tenant.collectionId }),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, load.rssMb() ?? 0);
    if (before === null) {
      info('   could not read the API process RSS: no over-caps export figure');
      return;
    }
    metric(`${prefix}_api_rss_before_mb`, before, 'MB');
    metric(`${prefix}_api_peak_rss_mb`, peak, 'MB');
    metric(`${prefix}_api_rss_growth_mb`, peak - before, 'MB');
    metric(`${prefix}_ms`, ms, 'ms');
    info(`   export over the ${cap} cap (${memories} memories of ${words} words): ${response.status} ${text.slice(0, 160)}`);
  }
}
