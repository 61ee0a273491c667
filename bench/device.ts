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
 *   - how often device search names the same top-5 entities as collection search (should be 1).
 * Lines with a goal (issue 28) are followed by `<name>_goal` lines.
 */
import { canonicalJson } from '../core/canonical-json.js';
import { ApiClient } from './client.js';
import { CpuMeter } from './cpu.js';
import { info, metric, percentile, sleep } from './stats.js';
import { makeQueries, makeTexts } from './texts.js';

const MEMORIES = Number(process.env.BENCH_DEVICE_MEMORIES ?? 1000);
const CONCURRENCY = 16;
const SEARCH_RUNS = 60;
const CREATE_RUNS = 20;

async function post(baseUrl: string, apiKey: string, path: string, body: unknown): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status >= 300) throw new Error(`POST ${path} → ${response.status}: ${text.slice(0, 300)}`);
  return { status: response.status, text, ms };
}

const median = (values: number[]): number => percentile(values, 50);

/** A figure and, beside it, its goal. */
function withGoal(name: string, value: number, goal: number, unit: string): void {
  metric(name, value, unit);
  metric(`${name}_goal`, goal, unit);
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
    const exported = await post(baseUrl, apiKey, '/v1/device-memory/snapshot/export', { collection_id: collectionId });
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
  withGoal('device_snapshot_kib_per_memory', bytes / 1024 / MEMORIES, 4, 'KiB');
  metric('device_snapshot_chunk_text_share', textBytes / bytes, 'ratio');
  metric('device_snapshot_chunk_vector_share', vectorBytes / bytes, 'ratio');
  const sectionBytes = (items: unknown[]) => Buffer.byteLength(canonicalJson(items));
  metric('device_snapshot_entities_share', sectionBytes(snapshot.body.entities) / bytes, 'ratio');
  metric('device_snapshot_facts_share', sectionBytes(snapshot.body.facts) / bytes, 'ratio');
  metric('device_snapshot_mentions_share', sectionBytes(snapshot.body.episodes.map((episode) => episode.mentions)) / bytes, 'ratio');
  metric('device_snapshot_entities_per_1k_memories', (snapshot.counts.entities ?? 0) * scale, 'entities');
  metric('device_export_ms_per_1k_memories', median(exports) * scale, 'ms');

  const imports: number[] = [];
  for (let run = 0; run < 3; run++)
    imports.push((await post(baseUrl, apiKey, '/v1/device-memory/snapshot/import', `{"snapshot":${snapshotText}}`)).ms);
  metric('device_import_ms_per_1k_memories', median(imports) * scale, 'ms');

  // Queries that name what the corpus talks about, plus free-form ones.
  const queries = makeQueries(SEARCH_RUNS, 1011);
  const top = (text: string) =>
    ((JSON.parse(text) as { results: { entities?: { name: string }[] | null } }).results.entities ?? [])
      .slice(0, 5)
      .map((e) => e.name)
      .join('|');
  const collectionTimes: number[] = [];
  const collectionTops: string[] = [];
  for (const query of queries) {
    const collection = await post(baseUrl, apiKey, '/v1/memories/search', { query, collection_ids: [collectionId], track_access: false });
    collectionTimes.push(collection.ms);
    collectionTops.push(top(collection.text));
  }
  // Device searches in a run of their own, so the service's CPU time over them is theirs alone.
  const deviceTimes: number[] = [];
  let agree = 0;
  const searchMeter = new CpuMeter(servicePid);
  for (const [i, query] of queries.entries()) {
    const device = await post(baseUrl, apiKey, '/v1/memories/search', `{"query":${JSON.stringify(query)},"snapshot":${snapshotText}}`);
    deviceTimes.push(device.ms);
    if (top(device.text) === collectionTops[i]) agree += 1;
  }
  const searchCpu = cpuPerCall(searchMeter, queries.length);
  metric('device_search_first_ms', deviceTimes[0]!, 'ms');
  withGoal('device_search_p50_ms', percentile(deviceTimes, 50), 50, 'ms');
  withGoal('device_search_p95_ms', percentile(deviceTimes, 95), 50, 'ms');
  if (searchCpu !== null) metric('device_search_service_cpu_ms', searchCpu, 'ms');
  metric('device_collection_search_p50_ms', percentile(collectionTimes, 50), 'ms');
  metric('device_collection_search_p95_ms', percentile(collectionTimes, 95), 'ms');
  withGoal('device_search_same_top5_entities_ratio', agree / queries.length, 1, 'ratio');

  const createTimes: number[] = [];
  const newTexts = makeTexts(CREATE_RUNS, 1012, 600);
  const createMeter = new CpuMeter(servicePid);
  for (const text of newTexts) {
    createTimes.push(
      (await post(baseUrl, apiKey, '/v1/memories', `{"raw_text":${JSON.stringify(text.text)},"snapshot":${snapshotText}}`)).ms,
    );
  }
  const createCpu = cpuPerCall(createMeter, newTexts.length);
  // Goal: no slower than POST → searchable in collection mode (issue 28: p50 <= 120 ms, p95 <= 200 ms).
  withGoal('device_create_p50_ms', percentile(createTimes, 50), 120, 'ms');
  withGoal('device_create_p95_ms', percentile(createTimes, 95), 200, 'ms');
  if (createCpu !== null) metric('device_create_service_cpu_ms', createCpu, 'ms');
  info(
    `   snapshot of ${MEMORIES} memories: ${(bytes / 1024 / 1024).toFixed(2)} MiB, ${snapshot.counts.entities} entities, ${snapshot.counts.facts} facts`,
  );
}
