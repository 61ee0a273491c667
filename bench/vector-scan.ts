/**
 * Vector scan latency in-process, without the service around it: one partition of random unit
 * vectors (e5-small-v2's 384 dimensions) at 10k and 100k chunks, searched with random queries.
 * Random vectors are the worst case for any pruning, and the exact scan does not care; they only
 * stand in for real embeddings' size. Seeded, so every run scores the same data.
 */
import { VectorIndex } from '../search/vector-index.js';
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

export async function vectorScanScenario(): Promise<void> {
  for (const { label, chunks } of SIZES) {
    const random = seededRandom(0x5ca9 + chunks);
    const index = new VectorIndex(DIMENSIONS);
    const partition = index.createPartition('bench');
    const started = performance.now();
    const vector = new Float32Array(DIMENSIONS); // upsert copies it, so one buffer serves every chunk
    for (let i = 0; i < chunks; i++) partition.upsert(`m${i}:0`, `m${i}`, fillUnit(random, vector));
    info(
      `vector scan ${label}: ${chunks} x ${DIMENSIONS} loaded in ${((performance.now() - started) / 1000).toFixed(1)} s (${partition.backend} kernel)`,
    );

    const queries = Array.from({ length: WARMUP_QUERIES + MEASURED_QUERIES }, () => fillUnit(random, new Float32Array(DIMENSIONS)));
    const samples: number[] = [];
    for (const [i, query] of queries.entries()) {
      const begun = performance.now();
      const hits = index.search(query, ['bench'], K);
      const elapsed = performance.now() - begun;
      if (hits.length !== Math.min(K, chunks)) throw new Error(`vector scan returned ${hits.length} hits, expected ${K}`);
      if (i >= WARMUP_QUERIES) samples.push(elapsed);
    }
    metric(`vector_scan_${label}_p50`, percentile(samples, 50), 'ms');
    metric(`vector_scan_${label}_p95`, percentile(samples, 95), 'ms');
    info(`vector scan ${label}: ${MEASURED_QUERIES} queries, k=${K}, max ${Math.max(...samples).toFixed(1)} ms`);
    index.dropPartition('bench');
    // Let the next size start from a settled heap; also keeps the bench's async shape.
    await new Promise((resolve) => setImmediate(resolve));
  }
}
