/**
 * Vector scan latency in-process, without the service around it: one partition of random unit
 * vectors (e5-small-v2's 384 dimensions) at 10k and 100k chunks, searched with random queries,
 * as the service searches it and with every row scanned in float32, side by side.
 * Random vectors are the worst case for any pruning, and the exact scan does not care; they only
 * stand in for real embeddings' size. Seeded, so every run scores the same data.
 */
import { Partition, type VectorHit } from '../search/vector-index.js';
import { info, metric, percentile } from './stats.js';
import { seededRandom } from './texts.js';

const DIMENSIONS = 384;
const SIZES = [
  { label: '10k', chunks: 10_000 },
  { label: '100k', chunks: 100_000 },
];
/** About what the search service asks for (limit x overfetch), and the same for every size. */
const K = 50;
const WARMUP_QUERIES = 20;
const MEASURED_QUERIES = 200;

function fillUnit(random: () => number, into: Float32Array): Float32Array {
  let norm = 0;
  for (let d = 0; d < into.length; d++) {
    const value = random() * 2 - 1;
    into[d] = value;
    norm += value * value;
  }
  norm = Math.sqrt(norm);
  for (let d = 0; d < into.length; d++) into[d]! /= norm;
  return into;
}

/** One partition searched with random queries: per-query milliseconds after the warm-up, and every answer. */
function timeSearches(partition: Partition, queries: Float32Array[]): { samples: number[]; answers: string[] } {
  const samples: number[] = [];
  const answers: string[] = [];
  for (const [i, query] of queries.entries()) {
    const top: VectorHit[] = [];
    const begun = performance.now();
    partition.collectTop(query, K, top, new Set());
    const elapsed = performance.now() - begun;
    if (top.length !== Math.min(K, partition.size)) throw new Error(`vector scan returned ${top.length} hits, expected ${K}`);
    if (i >= WARMUP_QUERIES) samples.push(elapsed);
    answers.push(top.map((hit) => `${hit.chunkId}=${hit.score}`).join(' '));
  }
  return { samples, answers };
}

/**
 * Each size twice: as the service scans it (through the 8-bit sketch from the size where
 * partitions get one, search/row-sketch.ts) and every row in float32, with the same queries. Both
 * must give the same hits with the same scores, bit for bit.
 */
export async function vectorScanScenario(): Promise<void> {
  for (const { label, chunks } of SIZES) {
    const random = seededRandom(0x5ca9 + chunks);
    const partition = new Partition(DIMENSIONS);
    const full = new Partition(DIMENSIONS, 1024, { sketchMinRows: Infinity });
    const started = performance.now();
    const vector = new Float32Array(DIMENSIONS); // upsert copies it, so one buffer serves every chunk
    for (let i = 0; i < chunks; i++) {
      fillUnit(random, vector);
      partition.upsert(`m${i}:0`, `m${i}`, vector);
      full.upsert(`m${i}:0`, `m${i}`, vector);
    }
    info(
      `vector scan ${label}: ${chunks} x ${DIMENSIONS} loaded in ${((performance.now() - started) / 1000).toFixed(1)} s (${partition.backend} kernel)`,
    );
    // A first search starts the sketch's build in the background (where the partition has one).
    partition.collectTop(fillUnit(random, new Float32Array(DIMENSIONS)), K, [], new Set());
    const building = performance.now();
    while (!partition.sketchReady && performance.now() - building < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
    if (partition.sketchReady) info(`vector scan ${label}: sketch built in ${(performance.now() - building).toFixed(0)} ms`);

    const queries = Array.from({ length: WARMUP_QUERIES + MEASURED_QUERIES }, () => fillUnit(random, new Float32Array(DIMENSIONS)));
    const served = timeSearches(partition, queries);
    const scanned = timeSearches(full, queries);
    const differing = served.answers.filter((answer, i) => answer !== scanned.answers[i]).length;
    if (differing > 0) throw new Error(`vector scan ${label}: ${differing} queries answered differently through the sketch`);
    metric(`vector_scan_${label}_p50`, percentile(served.samples, 50), 'ms');
    metric(`vector_scan_${label}_p95`, percentile(served.samples, 95), 'ms');
    metric(`vector_scan_${label}_full_p50`, percentile(scanned.samples, 50), 'ms');
    metric(`vector_scan_${label}_full_p95`, percentile(scanned.samples, 95), 'ms');
    metric(`vector_scan_${label}_bytes`, partition.bytes / 2 ** 20, 'MiB');
    metric(`vector_scan_${label}_full_bytes`, full.bytes / 2 ** 20, 'MiB');
    info(
      `vector scan ${label}: ${MEASURED_QUERIES} queries, k=${K}, max ${Math.max(...served.samples).toFixed(1)} ms (${partition.sketchReady ? 'through the sketch' : 'no sketch at this size'}), every answer the same as the full scan's`,
    );
    // Let the next size start from a settled heap; also keeps the bench's async shape.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
