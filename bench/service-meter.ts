/**
 * What the service did over a phase, from its Prometheus metrics (GET /metrics answers loopback
 * peers): its garbage collections (engram_nodejs_gc_duration_seconds, by kind) and how long it took
 * itself to answer one route (engram_http_request_duration_seconds, body read included), and how
 * long its event loop was held up (engram_nodejs_eventloop_lag_*). Beside the
 * client's own timings these tell a phase's tail caused by the collector, or by the service at all,
 * from one made on the way (loopback, the client).
 */
import { info, metric } from './stats.js';

interface Totals {
  gc: Map<string, { count: number; seconds: number }>;
  /**
   * The event loop's delays since the scrape before (prom-client resets its delay histogram at each
   * scrape), seconds: a request that comes while the loop runs something else waits before the
   * service's own timing starts, so only the client sees that wait.
   */
  loopDelay: { max: number; p99: number };
  /** Cumulative count of the route's answers by bucket bound (seconds), summed over statuses. */
  route: Map<number, number>;
}

/** The service's metrics as Prometheus text lines, or null when it does not answer them. */
export async function metricLines(baseUrl: string): Promise<string[] | null> {
  try {
    const response = await fetch(`${baseUrl}/metrics`);
    return response.ok ? (await response.text()).split('\n') : null;
  } catch {
    return null;
  }
}

/**
 * A phase's figures from two scrapes of GET /metrics: `read` scrapes now, and `report(label, …)`
 * scrapes again and prints what changed between the two (`print`, given the report's further
 * arguments), or a line saying the service did not answer (`what`: the figures missing).
 */
export async function metricsPhase<T, Extra extends unknown[] = []>(
  read: () => Promise<T | null>,
  what: string,
  print: (label: string, before: T, after: T, ...extra: Extra) => void,
): Promise<{ report(label: string, ...extra: Extra): Promise<void> }> {
  const before = await read();
  return {
    async report(label, ...extra) {
      const after = await read();
      if (!before || !after) return info(`   ${label}: GET /metrics unavailable, no ${what}`);
      print(label, before, after, ...extra);
    },
  };
}

/**
 * The `_count` and `_sum` lines of one histogram or summary, by the key `keyOf` makes of their
 * labels (null: the line is not wanted).
 */
function countsAndSums(
  lines: string[],
  name: string,
  keyOf: (labels: string) => string | null,
): Map<string, { count: number; seconds: number }> {
  const pattern = new RegExp(`^${name}_(count|sum)\\{(.*)\\} (\\S+)`);
  const totals = new Map<string, { count: number; seconds: number }>();
  for (const line of lines) {
    const match = pattern.exec(line);
    const key = match ? keyOf(match[2]!) : null;
    if (!match || key === null) continue;
    const entry = totals.get(key) ?? { count: 0, seconds: 0 };
    if (match[1] === 'count') entry.count = Number(match[3]);
    else entry.seconds = Number(match[3]);
    totals.set(key, entry);
  }
  return totals;
}

async function scrape(baseUrl: string, route: string): Promise<Totals | null> {
  const lines = await metricLines(baseUrl);
  if (!lines) return null;
  const gc = countsAndSums(lines, 'engram_nodejs_gc_duration_seconds', (labels) => /^kind="(\w+)"$/.exec(labels)?.[1] ?? null);
  const totals: Totals = { gc, route: new Map(), loopDelay: { max: Number.NaN, p99: Number.NaN } };
  for (const line of lines) {
    const delay = /^engram_nodejs_eventloop_lag_(max|p99)_seconds (\S+)/.exec(line);
    if (delay) {
      totals.loopDelay[delay[1] as 'max' | 'p99'] = Number(delay[2]);
      continue;
    }
    const bucket = /^engram_http_request_duration_seconds_bucket\{(.*)\} (\S+)/.exec(line);
    if (!bucket || !bucket[1]!.includes(`route="${route}"`) || !bucket[1]!.includes('method="POST"')) continue;
    const le = /le="([^"]+)"/.exec(bucket[1]!)?.[1];
    if (le === undefined || le === '+Inf') continue;
    totals.route.set(Number(le), (totals.route.get(Number(le)) ?? 0) + Number(bucket[2]));
  }
  return totals;
}

/**
 * Scrapes now; `report` scrapes again and prints, under `label`, the collections per 100 calls, the
 * collector's time per call, and how many of the calls the service itself took over 50 and 100 ms on.
 */
export function serviceMeter(baseUrl: string, route: string): Promise<{ report(label: string, calls: number): Promise<void> }> {
  return metricsPhase(
    () => scrape(baseUrl, route),
    'service figures',
    (label, before, after, calls: number) => {
      const gcDelta = (kind: string) => ({
        count: (after.gc.get(kind)?.count ?? 0) - (before.gc.get(kind)?.count ?? 0),
        ms: ((after.gc.get(kind)?.seconds ?? 0) - (before.gc.get(kind)?.seconds ?? 0)) * 1000,
      });
      const gcMs = [...after.gc.keys()].reduce((sum, kind) => sum + gcDelta(kind).ms, 0);
      metric(`${label}_service_major_gcs_per_100_calls`, (gcDelta('major').count * 100) / calls, 'count');
      metric(`${label}_service_gc_ms_per_call`, gcMs / calls, 'ms');
      const within = (seconds: number) => (after.route.get(seconds) ?? 0) - (before.route.get(seconds) ?? 0);
      metric(`${label}_service_over_50ms`, calls - within(0.05), 'calls');
      metric(`${label}_service_over_100ms`, calls - within(0.1), 'calls');
      metric(`${label}_service_loop_delay_max_ms`, after.loopDelay.max * 1000, 'ms');
      metric(`${label}_service_loop_delay_p99_ms`, after.loopDelay.p99 * 1000, 'ms');
    },
  );
}

/** Sum and count of each worker-pool task (engram_worker_pool_task_seconds, outcome ok), by `pool/task`. */
async function scrapePoolTasks(baseUrl: string): Promise<Map<string, { count: number; seconds: number }> | null> {
  const lines = await metricLines(baseUrl);
  if (!lines) return null;
  return countsAndSums(lines, 'engram_worker_pool_task_seconds', (labels) => {
    if (!labels.includes('outcome="ok"')) return null;
    const pool = /pool="([^"]+)"/.exec(labels)?.[1];
    const task = /task="([^"]+)"/.exec(labels)?.[1];
    return pool && task ? `${pool}/${task}` : null;
  });
}

/**
 * Scrapes now; `report` prints, for each worker-pool task run over the phase, how many ran and
 * their mean time from hand-over to answer (queueing included): where a memory's wall time went
 * among the threads, which no client timing shows.
 */
export function poolTaskMeter(baseUrl: string): Promise<{ report(label: string): Promise<void> }> {
  return metricsPhase(
    () => scrapePoolTasks(baseUrl),
    'pool task figures',
    (label, before, after) => {
      for (const [key, total] of after) {
        const count = total.count - (before.get(key)?.count ?? 0);
        if (count <= 0) continue;
        const name = key.replace(/[^a-zA-Z0-9]+/g, '_');
        const mean = ((total.seconds - (before.get(key)?.seconds ?? 0)) * 1000) / count;
        metric(`${label}_pool_${name}_mean_ms`, mean, 'ms');
        metric(`${label}_pool_${name}_count`, count, 'count');
      }
    },
  );
}
