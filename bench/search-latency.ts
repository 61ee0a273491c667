/**
 * Search latency at a size (bench/run.ts, scenario 4): a synthetic corpus written straight through
 * the store, then the first search (which loads the partition) and measured searches, client and
 * server side, with the server's per-stage timings.
 */
import { loadConfig } from '../config/index.js';
import type { Store } from '../store/index.js';
import type { ApiClient } from './client.js';
import { CpuMeter, reportCpu } from './cpu.js';
import { info, metric, metricWithGoal, percentile, seconds, sleep } from './stats.js';
import { writeSyntheticCorpus, type SyntheticText } from './synthetic.js';
import { seededRandom } from './texts.js';

/** Issue 28: a search over 100,000 chunks, server time. */
const SEARCH_100K_SERVER_P95_GOAL_MS = 40;

/** Search latency is measured at each size, each in its own collection (100 chunks per memory). */
export const SEARCH_CHUNKS_PER_MEMORY = 100;
/** The service's SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS default: collections this large get a lexical snapshot after a load. */
const SNAPSHOT_MIN_CHUNKS_DEFAULT = loadConfig({}).SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS;
const SEARCH_WARMUPS = 5;
const SEARCH_RUNS = 200;

export async function searchScenario(
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
  if (label === '100k') metricWithGoal(`search_${label}_server_p95`, percentile(server, 95), SEARCH_100K_SERVER_P95_GOAL_MS, 'ms');
  else metric(`search_${label}_server_p95`, percentile(server, 95), 'ms');
  // Per-stage server timings, whatever stages this server version reports (embed_ms → search_10k_embed_p50).
  for (const [stage, values] of stages) {
    const name = stage.replace(/_ms$/, '');
    metric(`search_${label}_${name}_p50`, percentile(values, 50), 'ms');
    metric(`search_${label}_${name}_p95`, percentile(values, 95), 'ms');
  }
}
