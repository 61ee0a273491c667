/**
 * The service's embedding batch sizes over a phase, from its Prometheus histogram
 * (engram_embedding_batch_size on GET /metrics, which answers loopback peers): texts per model
 * call after micro-batching, passages and entity names together.
 */
import { metricLines, metricsPhase } from './service-meter.js';
import { info, metric } from './stats.js';

interface BatchHistogram {
  sum: number;
  count: number;
  /** Cumulative count of calls with at most `le` texts, by bucket bound. */
  buckets: Map<string, number>;
}

async function scrape(baseUrl: string): Promise<BatchHistogram | null> {
  const lines = await metricLines(baseUrl);
  if (!lines) return null;
  const histogram: BatchHistogram = { sum: 0, count: 0, buckets: new Map() };
  for (const line of lines) {
    const bucket = /^engram_embedding_batch_size_bucket\{le="([^"]+)"\} (\S+)/.exec(line);
    if (bucket) histogram.buckets.set(bucket[1]!, Number(bucket[2]));
    else if (line.startsWith('engram_embedding_batch_size_sum ')) histogram.sum = Number(line.split(' ')[1]);
    else if (line.startsWith('engram_embedding_batch_size_count ')) histogram.count = Number(line.split(' ')[1]);
  }
  return histogram;
}

/** Scrapes now; `report` scrapes again and prints the phase's batch figures under `label`. */
export function embeddingBatchMeter(baseUrl: string): Promise<{ report(label: string): Promise<void> }> {
  return metricsPhase(
    () => scrape(baseUrl),
    'embedding batch figures',
    (label, before, after) => {
      const calls = after.count - before.count;
      const texts = after.sum - before.sum;
      metric(`${label}_embedding_batch_mean`, calls > 0 ? texts / calls : Number.NaN, 'texts/call');
      metric(`${label}_embedding_calls`, calls, 'count');
      const shares: string[] = [];
      let below = 0;
      for (const [le, cumulative] of after.buckets) {
        const inBucket = cumulative - (before.buckets.get(le) ?? 0) - below;
        below += inBucket;
        if (inBucket > 0) shares.push(`≤${le}: ${inBucket}`);
      }
      info(`   ${label}: ${texts} texts in ${calls} model calls; calls by size ${shares.join(', ')}`);
    },
  );
}
