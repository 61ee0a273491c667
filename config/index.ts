/**
 * The one validated configuration module. Every process reads its settings here, from the
 * environment, with defaults that suit the embedded development stack.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { PURGE_STEPS } from '../core/purge-steps.js';

/** Repository root, whether running from source (config/) or from the build (dist/config/). */
export function projectRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = path.basename(path.dirname(here)) === 'dist' ? '../..' : '..';
  return path.resolve(here, up);
}

function defaultModelsDir(): string | undefined {
  const candidate = path.resolve(projectRoot(), '..', 'shared', 'models');
  return existsSync(candidate) ? candidate : undefined;
}

const booleanFromEnv = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const configSchema = z.object({
  ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  PUBLIC_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  DATA_DIR: z.string().default(path.join(projectRoot(), 'data')),

  MONGODB_URI: z.string().min(1).optional(),
  MONGODB_DB: z.string().min(1).default('engram'),

  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('memory-ingest'),
  TEMPORAL_UI_URL: z.string().optional(),

  MODELS_DIR: z.string().optional(),
  ALLOW_REMOTE_MODELS: booleanFromEnv.default(false),
  EMBEDDING_MODEL: z.string().min(1).default('Xenova/e5-small-v2'),
  EMBEDDING_BATCH_SIZE: z.coerce.number().int().min(1).max(256).default(32),

  CHUNK_MAX_CHARS: z.coerce.number().int().min(200).max(20000).default(1200),
  MAX_TEXT_CHARS: z.coerce.number().int().min(1000).default(2_000_000),
  MAX_CHUNKS_PER_MEMORY: z.coerce.number().int().min(1).default(5000),
  // JSON bodies carry base64 content parts: 4/3 of INLINE_PART_MAX_BYTES each, plus the rest.
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
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
  UPLOAD_SIGNING_SECRET: z.string().min(32).optional(),

  RATE_LIMIT_PER_SECOND: z.coerce.number().min(0.1).default(200),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(400),

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
  /** A subscriber that reads nothing (its socket stays full) this long is closed with 1013 slow_consumer. */
  WS_SLOW_CONSUMER_MAX_PAUSE_MS: z.coerce.number().int().min(100).default(60_000),
  /** Sign live-event frames (Ed25519). The keyset comes from EVENT_SIGNING_KEYSET (JSON) or a file. */
  EVENT_SIGNING: booleanFromEnv.default(true),
  EVENT_SIGNING_KEYSET: z.string().min(2).optional(),
  EVENT_SIGNING_KEYSET_PATH: z.string().optional(),
  WS_TICKET_TTL_SECONDS: z.coerce.number().int().min(5).max(3600).default(60),
  SEARCH_DEFAULT_LIMIT: z.coerce.number().int().min(1).max(100).default(10),
  /** A chunk found only by the vector signal needs at least this cosine (e5: unrelated text scores ~0.7). */
  SEARCH_MIN_SIMILARITY: z.coerce.number().min(-1).max(1).default(0.78),
  /** memory_unconfident (low_activation) when the best result's activation is below this; see docs/search.md. */
  SEARCH_UNCONFIDENT_MIN_ACTIVATION: z.coerce.number().min(0).max(1).default(0.05),
  /** memory_unconfident (low_fact_confidence) when the relevant facts' mean confidence is below this. */
  SEARCH_UNCONFIDENT_MIN_FACT_CONFIDENCE: z.coerce.number().min(0).max(1).default(0.5),
  /** Entities of one collection whose name embeddings are at least this similar (and share a word) merge. */
  ENTITY_SIMILARITY_THRESHOLD: z.coerce.number().min(0).max(1).default(0.93),
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
  /** How often each API process finishes deletes a crash interrupted (those older than this). */
  DELETE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(200).default(10_000),

  /**
   * Test-only fault injection: the process kills itself (SIGKILL) right after this step of a
   * memory delete (store/memory-purge.ts). Refused unless ALLOW_FAULT_INJECTION is true.
   */
  ALLOW_FAULT_INJECTION: booleanFromEnv.default(false),
  FAULT_INJECT_CRASH_AT: z.enum(PURGE_STEPS).optional(),

  // ---- Metrics (docs/operations.md) ----
  /** When set, GET /metrics needs `Authorization: Bearer <token>`; unset, it answers loopback peers only. */
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  /** A worker-only process (ROLE=worker) serves GET /metrics on this port (on HOST) when set; API processes use PORT. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
});

export type Config = z.infer<typeof configSchema> & { MODELS_DIR: string | undefined };

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // `VAR=` in a shell means "unset", not "set to nothing".
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = configSchema
    .refine((config) => !config.FAULT_INJECT_CRASH_AT || config.ALLOW_FAULT_INJECTION, {
      path: ['FAULT_INJECT_CRASH_AT'],
      message: 'fault injection is for tests only: set ALLOW_FAULT_INJECTION=true to use it',
    })
    .safeParse(given);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return { ...parsed.data, MODELS_DIR: parsed.data.MODELS_DIR ?? defaultModelsDir() };
}
