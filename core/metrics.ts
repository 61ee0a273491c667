/**
 * Prometheus metrics (prom-client): one registry per process, the metric definitions in one place,
 * and small hooks where things happen. docs/operations.md documents each metric; the API serves
 * them at GET /metrics (api/routes/metrics).
 */
import { timingSafeEqual } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'engram_' });

const registers = [metricsRegistry];
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequestDuration = new Histogram({
  name: 'engram_http_request_duration_seconds',
  help: 'HTTP requests by method, route template and status (count is the request rate)',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: SECONDS,
  registers,
});

export const workflowsStarted = new Counter({
  name: 'engram_workflows_started_total',
  help: 'Workflows started by this process, by workflow type',
  labelNames: ['workflow'] as const,
  registers,
});

export const searchDuration = new Histogram({
  name: 'engram_search_duration_seconds',
  help: 'Collection search time by phase: embed (vector signal), index (lexical and vector scans), graph, fetch, total',
  labelNames: ['phase'] as const,
  buckets: SECONDS,
  registers,
});

/** Milliseconds per phase, as the search service measures them. */
export function observeSearch(phasesMs: Record<'embed' | 'index' | 'graph' | 'fetch' | 'total', number>): void {
  for (const [phase, ms] of Object.entries(phasesMs)) searchDuration.observe({ phase }, ms / 1000);
}

export const progressReported = new Counter({
  name: 'engram_ingestion_progress_total',
  help: 'ingestion_progress events appended by this process, by user_stage; complete and failed count finished and failed ingestion workflows',
  labelNames: ['user_stage'] as const,
  registers,
});

export const activityDuration = new Histogram({
  name: 'engram_activity_duration_seconds',
  help: 'Temporal activity (ingestion stage) durations by activity type and outcome (completed, failed: a failed attempt that Temporal may retry)',
  labelNames: ['activity', 'outcome'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers,
});

export const workerPoolTaskDuration = new Histogram({
  name: 'engram_worker_pool_task_seconds',
  help: 'Tasks handed to a worker-thread pool (cpu: extraction and large JSON parses; model: embeddings and speech), from hand-over to answer (queueing included), by task and outcome (ok, failed, abandoned: its caller stopped waiting)',
  labelNames: ['pool', 'task', 'outcome'] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

/** A pool's PoolObserver (core/worker-pool.ts) that records into workerPoolTaskDuration. */
export const observePoolTasks =
  (pool: 'cpu' | 'bodies' | 'model' | 'model_query') =>
  (task: string, seconds: number, outcome: 'ok' | 'failed' | 'abandoned'): void =>
    workerPoolTaskDuration.observe({ pool, task, outcome }, seconds);

export const embeddingBatchSize = new Histogram({
  name: 'engram_embedding_batch_size',
  help: 'Texts per embedding model call (after micro-batching concurrent requests)',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128],
  registers,
});

export const embeddingBatchDuration = new Histogram({
  name: 'engram_embedding_batch_duration_seconds',
  help: 'Time of one embedding model call',
  buckets: SECONDS,
  registers,
});

export const requestBodyBytesInFlight = new Gauge({
  name: 'engram_request_body_bytes_in_flight',
  help: 'Request body bytes this API process has admitted and not yet released (each body by its Content-Length, or BODY_LIMIT_BYTES when chunked); bounded by BODY_BYTES_IN_FLIGHT_MAX',
  registers,
});

export const deviceCallsActive = new Gauge({
  name: 'engram_device_calls_active',
  help: 'Device-mode calls holding a slot in this API process (DEVICE_MAX_CONCURRENCY); an abandoned call gives its slot back at once',
  registers,
});

export const deviceSnapshotLookups = new Counter({
  name: 'engram_device_snapshot_cache_lookups_total',
  help: 'Device calls whose snapshot verified against its digest, by whether it was held prepared (hit) or opened in full (miss)',
  labelNames: ['result'] as const,
  registers,
});

export const websocketSessions = new Gauge({
  name: 'engram_websocket_sessions',
  help: 'Open live-event WebSocket sessions',
  registers,
});

export const websocketPausedSessions = new Gauge({
  name: 'engram_websocket_paused_sessions',
  help: 'Live-event sessions not sent to because their socket holds more than the soft buffer bound (the client is not reading)',
  registers,
});

export const websocketSlowConsumers = new Counter({
  name: 'engram_websocket_slow_consumers_total',
  help: 'Sessions closed with 1013 slow_consumer because the client fell too far behind',
  registers,
});

export const eventsDelivered = new Counter({
  name: 'engram_events_delivered_total',
  help: 'Event frames sent to WebSocket sessions',
  registers,
});

export const webhookAttempts = new Counter({
  name: 'engram_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome: delivered (2xx), retry (any other answer or none), gone (410)',
  labelNames: ['outcome'] as const,
  registers,
});

export const webhookDisabled = new Counter({
  name: 'engram_webhook_disabled_total',
  help: 'Webhook subscriptions disabled by delivery: gone (410) or failing (no success for WEBHOOK_DISABLE_AFTER_MS)',
  labelNames: ['reason'] as const,
  registers,
});

export const eventFramesSigned = new Counter({
  name: 'engram_event_frames_signed_total',
  help: 'Event frames signed by this process (each event once, shared by every session that sends it)',
  registers,
});

export const eventLogReads = new Counter({
  name: 'engram_event_log_reads_total',
  help: 'Reads of the durable event log by the live stream: follower (the one tail per process) or catch_up (a session behind it)',
  labelNames: ['reader'] as const,
  registers,
});

export const websocketSessionsRefused = new Counter({
  name: 'engram_websocket_sessions_refused_total',
  help: 'WebSocket sessions closed at once with 4429 too_many_sessions, by the cap reached (key, tenant, process)',
  labelNames: ['scope'] as const,
  registers,
});

export const websocketKeyRevocations = new Counter({
  name: 'engram_websocket_key_revocations_total',
  help: 'WebSocket sessions closed with 4401 key_revoked because their API key was revoked',
  registers,
});

export const unconfidentEventsSuppressed = new Counter({
  name: 'engram_unconfident_events_suppressed_total',
  help: 'memory_unconfident events not emitted because the API key exceeded its event rate',
  registers,
});

export const indexEntries = new Gauge({
  name: 'engram_index_entries',
  help: 'Entries in the in-process search indexes: vector rows, lexical postings, graph entities and facts',
  labelNames: ['index'] as const,
  registers,
});

export const indexBytes = new Gauge({
  name: 'engram_index_bytes',
  help: 'Bytes allocated by the in-process indexes: vector rows, lexical typed arrays (graph: entries only)',
  labelNames: ['index'] as const,
  registers,
});

export const indexBudgetBytes = new Gauge({
  name: 'engram_index_budget_bytes',
  help: 'Estimated bytes of the loaded search partitions (kind=used) and their budget SEARCH_INDEX_MAX_BYTES (kind=max)',
  labelNames: ['kind'] as const,
  registers,
});

export const indexEvictions = new Gauge({
  name: 'engram_index_evictions',
  help: 'Collections evicted from the in-process search indexes to stay within the memory budget, since the process started',
  registers,
});

export const indexLoads = new Gauge({
  name: 'engram_index_loads',
  help: 'Collections loaded into the in-process search indexes since the process started, by where their lexical index came from (source=chunks: tokenised; source=snapshot: read back)',
  labelNames: ['source'] as const,
  registers,
});

export const keyLookups = new Counter({
  name: 'engram_auth_key_lookups_total',
  help: 'API keys looked up in the database (cache misses of well-formed keys not recently refused)',
  registers,
});

export const ticketLookups = new Counter({
  name: 'engram_ws_ticket_lookups_total',
  help: 'WebSocket tickets looked up in the database (well-formed tickets presented at the upgrade)',
  registers,
});

export const uploadLookups = new Counter({
  name: 'engram_upload_lookups_total',
  help: 'Upload records read for a signed PUT (only after its signature verified)',
  registers,
});

export const eventLogSeq = new Gauge({
  name: 'engram_event_log_head_seq',
  help: 'Newest seq of the durable event log seen by this process (its rate is the append rate)',
  registers,
});

export const eventFollowerLag = new Gauge({
  name: 'engram_event_follower_lag_events',
  help: 'Events between the log head and the slowest live WebSocket session',
  registers,
});

let collector: (() => Promise<void>) | null = null;

/** The composition root registers how to read the gauges that are sampled at scrape time. */
export function setScrapeCollector(collect: () => Promise<void>): void {
  collector = collect;
}

/** The exposition text, after refreshing the sampled gauges. */
export async function scrapeMetrics(): Promise<string> {
  await collector?.();
  return metricsRegistry.metrics();
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

export function tokenMatches(header: string, token: string): boolean {
  const given = Buffer.from(header.replace(/^Bearer\s+/i, ''));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Who may scrape: with a token configured, whoever presents it; without, loopback peers only. The
 * peer is the socket's address, never X-Forwarded-For, which a client can write.
 */
export function metricsAccessAllowed(token: string | undefined, authorization: string, remoteAddress: string | undefined): boolean {
  return token ? tokenMatches(authorization, token) : isLoopback(remoteAddress);
}
