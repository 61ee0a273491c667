/**
 * The one validated configuration module. Every process reads its settings here, from the
 * environment, with defaults that suit the embedded development stack.
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { PURGE_STEPS } from '../core/purge-steps.js';
import { DEFAULT_FACT_LEXICON, factLexiconSchema, type FactLexicon } from '../core/fact-lexicon.js';

/** Repository root, whether running from source (config/) or from the build (dist/config/). */
export function projectRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = path.basename(path.dirname(here)) === 'dist' ? '../..' : '..';
  return path.resolve(here, up);
}

/**
 * A quarter of the machine's memory (the JVM's own default cap), at least 4 GiB: the embedded store
 * keeps its data in this heap, and the JVM takes only what it uses below the cap. A fixed 4 GiB ran
 * out during the whole bench on a 24 GiB machine (docs/durability.md).
 */
export function defaultEmbeddedHeapMb(machineBytes: number): number {
  return Math.max(4096, Math.floor(machineBytes / 4 / 1024 / 1024));
}

function defaultModelsDir(): string | undefined {
  const candidate = path.resolve(projectRoot(), '..', 'shared', 'models');
  return existsSync(candidate) ? candidate : undefined;
}

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const commaList = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

const configSchema = z.object({
  ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  PUBLIC_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** `auto`: readable lines when stdout is a terminal, JSON lines otherwise. */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  DATA_DIR: z.string().default(path.join(projectRoot(), 'data')),

  MONGODB_URI: z.string().min(1).optional(),
  MONGODB_DB: z.string().min(1).default('engram'),
  /**
   * The embedded MongoDB stand-in (started when MONGODB_URI is unset): `journal` keeps data in
   * its heap, with indexes, a journal and snapshots under DATA_DIR/mongo-store (docs/durability.md);
   * `memory` keeps nothing on disk; `h2` is mongo-java-server's H2 file, kept for comparison.
   */
  EMBEDDED_MONGO_BACKEND: z.enum(['journal', 'memory', 'h2']).default('journal'),
  /** The stand-in's JVM heap cap in MiB. The embedded store holds all its data in this heap. */
  EMBEDDED_MONGO_HEAP_MB: z.coerce
    .number()
    .int()
    .min(256)
    .max(1_048_576)
    .default(() => defaultEmbeddedHeapMb(totalmem())),
  /** How often the stand-in fsyncs its journal: what an OS crash or power cut (not a process crash) can lose. */
  EMBEDDED_MONGO_FSYNC_MS: z.coerce.number().int().min(1).max(60_000).default(100),

  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('memory-ingest'),
  TEMPORAL_UI_URL: z.string().optional(),

  MODELS_DIR: z.string().optional(),
  ALLOW_REMOTE_MODELS: booleanFromEnv.default(false),
  EMBEDDING_MODEL: z.string().min(1).default('Xenova/e5-small-v2'),
  EMBEDDING_BATCH_SIZE: z.coerce.number().int().min(1).max(256).default(32),
  /**
   * onnxruntime's intra-op threads for an embedding call (0: its own choice, one per core). Its
   * threads never spin whatever the count (core/onnx-session.ts); fewer leave more of the cores to
   * the rest of a shared machine.
   */
  EMBEDDING_THREADS: z.coerce.number().int().min(0).max(64).default(0),
  /**
   * A process that answers searches embeds their queries on a model thread of its own, so a search
   * never waits for a passage call (a device create's, the worker's batch). It holds a second copy
   * of the model: about 150 MB more per API process (docs/decisions.md). Off: queries share the
   * bulk thread and go ahead of queued passages, but wait for the call that runs.
   */
  EMBEDDING_QUERY_THREAD: booleanFromEnv.default(true),
  /** How long an ingestion's embedding request may wait for others to fill its model call, while several memories are in flight. */
  EMBEDDING_COALESCE_MS: z.coerce.number().int().min(0).max(1000).default(20),

  CHUNK_MAX_CHARS: z.coerce.number().int().min(200).max(20000).default(1200),
  MAX_TEXT_CHARS: z.coerce.number().int().min(1000).default(2_000_000),
  MAX_CHUNKS_PER_MEMORY: z.coerce.number().int().min(1).default(5000),
  // JSON bodies carry base64 content parts: 4/3 of INLINE_PART_MAX_BYTES each, plus the rest.
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
  /**
   * Request bodies an API process holds at once (declared lengths; a chunked body counts as
   * BODY_LIMIT_BYTES), in all and per tenant: beyond, 503 server_busy / 429 rate_limited before
   * the body is read. One body alone is always admitted.
   */
  BODY_BYTES_IN_FLIGHT_MAX: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * 1024 * 1024),
  BODY_BYTES_IN_FLIGHT_PER_TENANT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(96 * 1024 * 1024),
  INLINE_PART_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(5 * 1024 * 1024),
  MAX_CONTENT_PARTS: z.coerce.number().int().min(1).max(100).default(20),
  UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(100 * 1024 * 1024),
  UPLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(10).max(86_400).default(900),
  /** HMAC key for presigned upload URLs; every API process must share it. Generated under DATA_DIR when unset. */
  UPLOAD_SIGNING_SECRET: z.string().min(32, 'UPLOAD_SIGNING_SECRET must be at least 32 characters').optional(),
  /** A file holding UPLOAD_SIGNING_SECRET (e.g. a compose secret under /run/secrets); read at start-up. */
  UPLOAD_SIGNING_SECRET_FILE: z.string().min(1).optional(),

  /**
   * Production mode: an API process (ROLE=api or all) refuses to start unless the secrets every
   * replica must share are given (UPLOAD_SIGNING_SECRET or its _FILE, and an event signing keyset
   * in EVENT_SIGNING_KEYSET or an existing EVENT_SIGNING_KEYSET_PATH file), instead of making its own.
   */
  PRODUCTION_MODE: booleanFromEnv.default(false),

  RATE_LIMIT_PER_SECOND: z.coerce.number().min(0.1).default(200),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(400),
  /** Failed authentications per client address (socket peer): token bucket rate and burst (429 past it). */
  AUTH_FAILURE_RATE_PER_SECOND: z.coerce.number().min(0.01).default(1),
  AUTH_FAILURE_BURST: z.coerce.number().int().min(1).default(30),

  /**
   * Event-log retention, per tenant: each tenant keeps at least its own newest N events, whatever
   * other tenants append (docs/events.md#retention). Replaces the global EVENT_LOG_MAX_EVENTS.
   */
  EVENT_LOG_MAX_EVENTS_PER_TENANT: z.coerce.number().int().min(10).default(20_000),
  /** memory_unconfident events one API key may cause, per minute (sustained), and in a burst; beyond: not emitted. */
  UNCONFIDENT_EVENTS_PER_KEY_PER_MINUTE: z.coerce.number().min(0.1).default(60),
  UNCONFIDENT_EVENTS_PER_KEY_BURST: z.coerce.number().int().min(1).default(10),

  /** Searches of one tenant that run at once in an API process; more wait (up to the second), then 429. */
  SEARCH_MAX_CONCURRENT_PER_TENANT: z.coerce.number().int().min(1).default(2),
  SEARCH_MAX_QUEUED_PER_TENANT: z.coerce.number().int().min(0).default(64),

  /** Open live-event WebSocket sessions allowed per API key, per tenant, and per API process (close 4429 above). */
  WS_MAX_SESSIONS_PER_KEY: z.coerce.number().int().min(1).default(16),
  WS_MAX_SESSIONS_PER_TENANT: z.coerce.number().int().min(1).default(64),
  WS_MAX_SESSIONS_PER_PROCESS: z.coerce.number().int().min(1).default(2000),
  /** Recent events each API process keeps in memory for its sessions (one copy, all tenants); older ones are read from the log. */
  EVENT_FANOUT_MAX_EVENTS: z.coerce.number().int().min(10).default(5000),
  EVENT_FANOUT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .default(16 * 1024 * 1024),
  /** How often each API process looks for revoked keys among its open sessions (they close with 4401). */
  WS_REVOCATION_CHECK_MS: z.coerce.number().int().min(100).default(2000),

  /** Unsent bytes a slow WebSocket subscriber may have before it is closed (it resumes by replay). */
  WS_MAX_BUFFERED_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .default(8 * 1024 * 1024),
  /** Frames one WebSocket session may send per second (sustained) and in a burst; beyond, they are dropped (error `rate_limited`). */
  WS_MAX_FRAMES_PER_SECOND: z.coerce.number().min(1).default(20),
  WS_FRAME_BURST: z.coerce.number().int().min(5).default(40),
  /** A subscriber id's last ack is forgotten after this long without a new one (ids are client-chosen). */
  WS_ACK_RETENTION_HOURS: z.coerce.number().min(1).default(168),
  /** A subscriber that reads nothing (its socket stays full) this long is closed with 1013 slow_consumer. */
  WS_SLOW_CONSUMER_MAX_PAUSE_MS: z.coerce.number().int().min(100).default(60_000),
  /** Sign live-event frames (Ed25519). The keyset comes from EVENT_SIGNING_KEYSET (JSON) or a file. */
  EVENT_SIGNING: booleanFromEnv.default(true),
  EVENT_SIGNING_KEYSET: z.string().min(2).optional(),
  EVENT_SIGNING_KEYSET_PATH: z.string().optional(),
  WS_TICKET_TTL_SECONDS: z.coerce.number().int().min(5).max(3600).default(60),
  /**
   * Memory budget of each API process's in-process search indexes (bytes). Past it, the least
   * recently searched collections are evicted whole and reloaded from MongoDB when next searched.
   */
  SEARCH_INDEX_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .default(1024 * 1024 * 1024),
  /**
   * Collections of at least this many chunks get their search partitions (lexical index, vector
   * rows, graph) persisted after a load that read their chunks, and later loads read them instead
   * (store/index-snapshots.ts). 0 turns it off.
   */
  SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS: z.coerce.number().int().min(0).default(2000),
  /** Collections a tenant may have (POST /v1/collections answers 409 collection_limit_reached past it). */
  MAX_COLLECTIONS_PER_TENANT: z.coerce.number().int().min(1).default(1000),
  /** Collections a memory may belong to (collection_ids of PATCH /v1/memories/{id}); each one copies its chunks into another index partition. */
  MAX_COLLECTIONS_PER_MEMORY: z.coerce.number().int().min(1).max(100).default(20),
  SEARCH_DEFAULT_LIMIT: z.coerce.number().int().min(1).max(100).default(10),
  /** A chunk found only by the vector signal needs at least this cosine (e5: unrelated text scores ~0.7). */
  SEARCH_MIN_SIMILARITY: z.coerce.number().min(-1).max(1).default(0.78),
  /** memory_unconfident (low_activation) when the best result's activation is below this; see docs/search.md. */
  SEARCH_UNCONFIDENT_MIN_ACTIVATION: z.coerce.number().min(0).max(1).default(0.05),
  /** memory_unconfident (low_fact_confidence) when the relevant facts' mean confidence is below this. */
  SEARCH_UNCONFIDENT_MIN_FACT_CONFIDENCE: z.coerce.number().min(0).max(1).default(0.5),
  /** Entities of one collection whose name embeddings are at least this similar (and share a word) merge. */
  ENTITY_SIMILARITY_THRESHOLD: z.coerce.number().min(0).max(1).default(0.93),
  /** A JSON file replacing the functional-predicate lexicon (core/fact-lexicon.ts; docs/search.md). */
  FACT_LEXICON_FILE: z.string().min(1).optional(),
  IDEMPOTENCY_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(24 * 3600),
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(1000).default(30_000),

  /** Server-side deadline of every API request except presigned upload PUTs (503 request_timeout past it). */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1).default(30_000),
  /**
   * Index-change feed retention (entries). An API process that falls further behind than this
   * (paused, partitioned) reloads its loaded search partitions from the store.
   */
  INDEX_FEED_MAX_ENTRIES: z.coerce.number().int().min(10).default(200_000),
  /**
   * Where procedure reads (GET /v1/workflows, /v1/workflow-patterns) come from: `mongodb` (the
   * traces, instances and patterns derived at ingestion), or `none` for a deployment without a
   * graph read backend, where they answer 503 graph_read_backend_unavailable.
   */
  GRAPH_READ_BACKEND: z.enum(['mongodb', 'none']).default('mongodb'),
  /** How often worker processes run the full pattern mines owed by collections quiet for as long (docs/workflows.md). */
  WORKFLOW_MINE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(200).default(10_000),
  /** How often each API process finishes deletes a crash interrupted (those older than this). */
  DELETE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(200).default(10_000),

  /**
   * Test-only fault injection: the process kills itself (SIGKILL) right after this step of a
   * memory delete (store/memory-purge.ts). Refused unless ALLOW_FAULT_INJECTION is true.
   */
  ALLOW_FAULT_INJECTION: booleanFromEnv.default(false),
  FAULT_INJECT_CRASH_AT: z.enum(PURGE_STEPS).optional(),

  // ---- Device memory (docs/device-memory.md) ----
  /** Largest snapshot accepted or produced, in bytes (inline bodies, downloads, exports). */
  SNAPSHOT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .default(32 * 1024 * 1024),
  SNAPSHOT_MAX_EPISODES: z.coerce.number().int().min(1).default(20_000),
  SNAPSHOT_MAX_ENTITIES: z.coerce.number().int().min(1).default(200_000),
  SNAPSHOT_MAX_FACTS: z.coerce.number().int().min(1).default(400_000),
  SNAPSHOT_MAX_MENTIONS: z.coerce.number().int().min(1).default(2_000_000),
  /** The keyset that signs snapshots (JSON, like EVENT_SIGNING_KEYSET); otherwise a file under DATA_DIR. */
  SNAPSHOT_SIGNING_KEYSET: z.string().min(2).optional(),
  SNAPSHOT_SIGNING_KEYSET_PATH: z.string().optional(),
  /** How long an imported (ephemeral) collection lives. */
  EPHEMERAL_COLLECTION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(3600),
  EPHEMERAL_SWEEP_INTERVAL_MS: z.coerce.number().int().min(200).default(30_000),
  /** Device-mode calls (create, search, export, import) running at once per API process; more get 503. */
  DEVICE_MAX_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** Device-mode calls of one tenant at once per API process (503 device_busy beyond): one tenant cannot take every slot. */
  DEVICE_MAX_CONCURRENCY_PER_TENANT: z.coerce.number().int().min(1).max(256).default(2),
  /**
   * Device snapshots kept prepared per API process (verified, parsed, graph index built), so a
   * snapshot sent again is not opened again. Held under SEARCH_INDEX_MAX_BYTES with the partitions.
   * 0 turns it off.
   */
  DEVICE_SNAPSHOT_CACHE_ENTRIES: z.coerce.number().int().min(0).max(10_000).default(32),
  /**
   * Worker threads for CPU-heavy API work (structure extraction of device creates). Default: the
   * cores less one (at least one), so the event loop and the embedding model keep a core.
   */
  CPU_POOL_THREADS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(Math.max(1, availableParallelism() - 1)),
  /** Comma-separated host patterns (`*.s3.amazonaws.com`) signed URLs may name; empty: any public host. */
  OUTBOUND_ALLOWED_HOSTS: commaList,
  /** Ports besides 443 that signed URLs may use. */
  OUTBOUND_ALLOWED_PORTS: commaList.pipe(
    z.array(
      z
        .string()
        .regex(/^\d{1,5}$/, 'ports are numbers')
        .transform(Number),
    ),
  ),
  /** DNS servers for signed-URL hosts (`ip` or `ip:port`); empty: the system's. */
  OUTBOUND_DNS_SERVERS: commaList,
  OUTBOUND_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5000),
  OUTBOUND_TOTAL_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  /**
   * UNSAFE, test-only: one `host:port` signed URLs may reach whatever it resolves to (the test
   * suite's loopback HTTPS server). Refused unless ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN is true.
   */
  ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: booleanFromEnv.default(false),
  OUTBOUND_UNSAFE_TEST_ORIGIN: z
    .string()
    .regex(/^[a-z0-9.-]+:\d{1,5}$/i, 'must be host:port')
    .optional(),

  // ---- Webhooks (docs/webhooks.md) ----
  /** Whether this process delivers webhooks (worker and all roles only; the API never delivers). */
  WEBHOOK_DELIVERY: booleanFromEnv.default(true),
  /** Delays in ms before attempt 1, 2, 3…; past the end the last one repeats. Default: the Standard Webhooks example. */
  WEBHOOK_RETRY_SCHEDULE_MS: z
    .string()
    .default('0,5000,300000,1800000,7200000,18000000,36000000,36000000')
    .transform((value) => value.split(',').map((item) => item.trim()))
    .pipe(
      z
        .array(z.string().regex(/^\d+$/, 'delays are integers (ms)').transform(Number))
        .min(2, 'give at least the first attempt and one retry'),
    ),
  /** An endpoint that has failed without a success this long is disabled (a webhook_disabled event is emitted). */
  WEBHOOK_DISABLE_AFTER_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(5 * 86_400_000),
  /** After a secret rotation the previous secret still signs (a second v1 signature) this long. */
  WEBHOOK_SECRET_OVERLAP_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .default(86_400),
  /** The whole of one delivery attempt: DNS, connect, TLS, request and response. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(15_000, 'WEBHOOK_TIMEOUT_MS is at most 15000').default(15_000),
  /** How long a delivering process holds a subscription without renewing it; after a crash another takes over after this. */
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(500).default(30_000),
  /** Subscriptions one process delivers to at once (each one in order, one request at a time). */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(32),
  /** Subscriptions a tenant may have (409 webhook_limit_reached above). */
  WEBHOOK_MAX_PER_TENANT: z.coerce.number().int().min(1).default(50),

  // ---- Metrics (docs/operations.md) ----
  /** When set, GET /metrics needs `Authorization: Bearer <token>`; unset, it answers loopback peers only. */
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  /** A worker-only process (ROLE=worker) serves GET /metrics on this port (on HOST) when set; API processes use PORT. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
});

export type Config = z.infer<typeof configSchema> & { MODELS_DIR: string | undefined; FACT_LEXICON: FactLexicon };

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // `VAR=` in a shell means "unset", not "set to nothing".
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = configSchema
    .refine((config) => !config.FAULT_INJECT_CRASH_AT || config.ALLOW_FAULT_INJECTION, {
      path: ['FAULT_INJECT_CRASH_AT'],
      message: 'fault injection is for tests only: set ALLOW_FAULT_INJECTION=true to use it',
    })
    .refine((config) => !config.OUTBOUND_UNSAFE_TEST_ORIGIN || config.ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN, {
      path: ['OUTBOUND_UNSAFE_TEST_ORIGIN'],
      message: 'admits one host whatever it resolves to (tests only): set ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN=true to use it',
    })
    .refine((config) => !(config.UPLOAD_SIGNING_SECRET && config.UPLOAD_SIGNING_SECRET_FILE), {
      path: ['UPLOAD_SIGNING_SECRET_FILE'],
      message: 'set UPLOAD_SIGNING_SECRET or UPLOAD_SIGNING_SECRET_FILE, not both',
    })
    .transform((config, context) => {
      const file = config.UPLOAD_SIGNING_SECRET_FILE;
      if (!file) return config;
      let secret: string;
      try {
        secret = readFileSync(file, 'utf8').trim();
      } catch (error) {
        context.addIssue({
          code: 'custom',
          path: ['UPLOAD_SIGNING_SECRET_FILE'],
          message: `cannot read ${file}: ${(error as Error).message}`,
        });
        return z.NEVER;
      }
      if (secret.length < 32) {
        context.addIssue({ code: 'custom', path: ['UPLOAD_SIGNING_SECRET_FILE'], message: `${file} must hold at least 32 characters` });
        return z.NEVER;
      }
      return { ...config, UPLOAD_SIGNING_SECRET: secret };
    })
    .transform((config, context) => {
      const lexicon = readFactLexicon(config.FACT_LEXICON_FILE);
      if (typeof lexicon === 'string') {
        context.addIssue({ code: 'custom', path: ['FACT_LEXICON_FILE'], message: lexicon });
        return z.NEVER;
      }
      return { ...config, FACT_LEXICON: lexicon };
    })
    .superRefine((config, context) => {
      for (const issue of productionIssues(config)) context.addIssue({ code: 'custom', ...issue });
    })
    .safeParse(given);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return { ...parsed.data, MODELS_DIR: parsed.data.MODELS_DIR ?? defaultModelsDir() };
}

type ParsedConfig = z.infer<typeof configSchema>;

export type EmbeddedMongoConfig = Pick<Config, 'EMBEDDED_MONGO_BACKEND' | 'EMBEDDED_MONGO_HEAP_MB' | 'EMBEDDED_MONGO_FSYNC_MS'>;

/**
 * Only the embedded stand-in's settings, for the launchers (dev, the test runner, the bench) that
 * start it without being a service process themselves.
 */
export function loadEmbeddedMongoConfig(env: NodeJS.ProcessEnv = process.env): EmbeddedMongoConfig {
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = configSchema
    .pick({ EMBEDDED_MONGO_BACKEND: true, EMBEDDED_MONGO_HEAP_MB: true, EMBEDDED_MONGO_FSYNC_MS: true })
    .safeParse(given);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** The lexicon FACT_LEXICON_FILE names, or the default; a string says what is wrong with the file. */
function readFactLexicon(file: string | undefined): FactLexicon | string {
  if (!file) return DEFAULT_FACT_LEXICON;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return `cannot read ${file}: ${(error as Error).message}`;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `${file} is not JSON: ${(error as Error).message}`;
  }
  const parsed = factLexiconSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  return `${file}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`;
}

/**
 * What production mode requires of a process that serves the API: the secrets that every replica
 * must share, given from outside. Without them each replica would make its own, so replicas would
 * refuse each other's upload URLs and clients' pinned signing keys would break on every redeploy.
 */
function productionIssues(config: ParsedConfig): { path: string[]; message: string }[] {
  if (!config.PRODUCTION_MODE) return [];
  const issues: { path: string[]; message: string }[] = [];
  // The unsafe test origin admits one host whatever it resolves to (loopback included): never in
  // production, whatever the role (docs/device-memory.md, "Test-only setting").
  if (config.ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN || config.OUTBOUND_UNSAFE_TEST_ORIGIN) {
    issues.push({
      path: [config.ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN ? 'ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN' : 'OUTBOUND_UNSAFE_TEST_ORIGIN'],
      message: 'PRODUCTION_MODE refuses the unsafe test-only outbound origin (it bypasses the address policy): unset it',
    });
  }
  if (config.ROLE === 'worker') {
    // A worker delivering webhooks signs v1a with the event key the API replicas publish: a key of
    // its own (created under DATA_DIR) would sign what no receiver can verify.
    if (config.WEBHOOK_DELIVERY && config.EVENT_SIGNING && !config.EVENT_SIGNING_KEYSET) {
      if (!config.EVENT_SIGNING_KEYSET_PATH || !existsSync(config.EVENT_SIGNING_KEYSET_PATH)) {
        issues.push({
          path: ['EVENT_SIGNING_KEYSET'],
          message:
            'PRODUCTION_MODE: a worker delivering webhooks needs the API replicas’ event keyset (EVENT_SIGNING_KEYSET, or an existing EVENT_SIGNING_KEYSET_PATH), or WEBHOOK_DELIVERY=false',
        });
      }
    }
    return issues;
  }
  if (!config.UPLOAD_SIGNING_SECRET) {
    issues.push({
      path: ['UPLOAD_SIGNING_SECRET'],
      message: 'PRODUCTION_MODE requires UPLOAD_SIGNING_SECRET (or UPLOAD_SIGNING_SECRET_FILE), shared by every API replica',
    });
  }
  if (!config.EVENT_SIGNING) {
    issues.push({ path: ['EVENT_SIGNING'], message: 'PRODUCTION_MODE requires signed event frames (EVENT_SIGNING=true)' });
  } else if (!config.EVENT_SIGNING_KEYSET && !config.EVENT_SIGNING_KEYSET_PATH) {
    issues.push({
      path: ['EVENT_SIGNING_KEYSET'],
      message:
        'PRODUCTION_MODE requires EVENT_SIGNING_KEYSET (JSON) or EVENT_SIGNING_KEYSET_PATH (an existing keyset file), shared by every API replica',
    });
  } else if (!config.EVENT_SIGNING_KEYSET && config.EVENT_SIGNING_KEYSET_PATH && !existsSync(config.EVENT_SIGNING_KEYSET_PATH)) {
    issues.push({
      path: ['EVENT_SIGNING_KEYSET_PATH'],
      message: `PRODUCTION_MODE requires the keyset file to exist (it is not created in production): ${config.EVENT_SIGNING_KEYSET_PATH}`,
    });
  }
  // Snapshots signed by one replica must verify on every other (docs/device-memory.md, Keys).
  if (!config.SNAPSHOT_SIGNING_KEYSET && !config.SNAPSHOT_SIGNING_KEYSET_PATH) {
    issues.push({
      path: ['SNAPSHOT_SIGNING_KEYSET'],
      message:
        'PRODUCTION_MODE requires SNAPSHOT_SIGNING_KEYSET (JSON) or SNAPSHOT_SIGNING_KEYSET_PATH (an existing keyset file), shared by every API replica',
    });
  } else if (!config.SNAPSHOT_SIGNING_KEYSET && config.SNAPSHOT_SIGNING_KEYSET_PATH && !existsSync(config.SNAPSHOT_SIGNING_KEYSET_PATH)) {
    issues.push({
      path: ['SNAPSHOT_SIGNING_KEYSET_PATH'],
      message: `PRODUCTION_MODE requires the keyset file to exist (it is not created in production): ${config.SNAPSHOT_SIGNING_KEYSET_PATH}`,
    });
  }
  return issues;
}
