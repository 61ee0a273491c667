/**
 * The composition root: builds the store, the Temporal connection, the models, the worker and
 * the API for one process, according to its role (api, worker or all). `all` runs the API and a
 * worker on one shared NativeConnection so workflow starts can be eager (the first workflow task
 * is handed back in the start response, saving a dispatch round trip).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { createApp } from '../api/app.js';
import { AuthFailures } from '../core/auth-failures.js';
import { attachEventWebSocket } from '../api/websocket.js';
import { projectRoot, type Config } from '../config/index.js';
import { createLogger, type Logger } from '../core/logger.js';
import {
  deviceSnapshotLookups,
  eventFollowerLag,
  eventLogSeq,
  indexBudgetBytes,
  indexBytes,
  indexEntries,
  indexEvictions,
  indexLoads,
  setScrapeCollector,
  websocketSessions,
} from '../core/metrics.js';
import { WorkerPool } from '../core/worker-pool.js';
import { cpuThreadScript, pooledExtractor, type CpuTasks } from '../models/cpu-tasks.js';
import { jsonThreadScript, type JsonTasks } from '../models/json-tasks.js';
import { createFileExtractors } from '../extractors/files.js';
import { createLocalExtractor } from '../extractors/structure/local-extractor.js';
import { PredicateClassifier } from '../core/fact-lexicon.js';
import { loadEmbedder, type Embedder } from '../models/embedder.js';
import { openModelThread, openQueryModelThread, speechModelOnThread } from '../models/model-thread-client.js';
import { SearchIndex } from '../search/search-index.js';
import { PreparedSnapshotCache } from '../snapshot/prepared-cache.js';
import { activityInterceptors } from './activity-interceptors.js';
import { SERVICE_NODE_FLAGS, startedWithServiceFlags, tuneGarbageCollector } from './gc-tuning.js';
import { BackgroundTasks } from './background-tasks.js';
import { apiRepairs, processPlan } from './roles.js';
import { installTemporalLogging } from './temporal-logging.js';
import { serveWorkerMetrics } from './worker-metrics.js';
import { observePoolTasks } from '../core/metrics.js';
import { createAuthService } from '../services/auth.js';
import { createCollectionService } from '../services/collections.js';
import { OutboundClient } from '../core/outbound/client.js';
import { createDeviceMemoryService } from '../services/device-memory.js';
import { createEventSigning, type EventSigning } from '../services/event-signing.js';
import { openKeysetSource, type KeysetSource } from '../services/keyset-source.js';
import { createEventStream } from '../services/event-stream.js';
import { createHealthService } from '../services/health.js';
import { createMemoryService } from '../services/memories.js';
import { createOrchestrator, ensureSearchAttributes } from '../services/orchestrator.js';
import { createSearchService } from '../services/search.js';
import { createTicketService } from '../services/tickets.js';
import { createUploadService } from '../services/uploads.js';
import { startWebhookDelivery } from '../services/webhook-delivery.js';
import { createWebhookService } from '../services/webhooks.js';
import { createProcedureService } from '../services/procedures.js';
import { openStore, type Store } from '../store/index.js';

export interface RunningService {
  url: string | null;
  store: Store;
  logger: Logger;
  stop(): Promise<void>;
}

export interface ServiceEndpoints {
  mongoUri: string;
  temporalAddress: string;
}

function memoize<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = null;
      throw error;
    });
    return loading;
  };
}

function workflowSource(): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const bundle = path.join(projectRoot(), 'dist', 'workflow-bundle.js');
  // The prebuilt bundle (npm run build) saves ~2 s of bundling at every worker start.
  if (existsSync(bundle)) return { workflowBundle: { codePath: bundle } };
  return { workflowsPath: path.join(projectRoot(), 'dist', 'workflows', 'index.js') };
}

/**
 * The HMAC key for upload URLs. Production sets UPLOAD_SIGNING_SECRET (shared by all API
 * processes); development creates one under DATA_DIR once, so API processes sharing it agree.
 */
function uploadSigningSecret(config: Config): string {
  if (config.UPLOAD_SIGNING_SECRET) return config.UPLOAD_SIGNING_SECRET;
  const file = path.join(config.DATA_DIR, 'upload-signing.secret');
  if (!existsSync(file)) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    // Written aside, then linked into place: a concurrent reader never sees a half-written key.
    const temp = `${file}.${process.pid}`;
    writeFileSync(temp, randomBytes(32).toString('base64url'), { mode: 0o600 });
    try {
      linkSync(temp, file);
    } catch (error) {
      // Another process created it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temp);
    }
  }
  return readFileSync(file, 'utf8').trim();
}

/** Snapshots are always signed: SNAPSHOT_SIGNING_KEYSET, or a keyset file created on first start. */
async function snapshotKeys(config: Config, logger: Logger): Promise<KeysetSource> {
  const path_ = config.SNAPSHOT_SIGNING_KEYSET_PATH ?? path.join(config.DATA_DIR, 'snapshot-signing-keyset.json');
  if (!config.SNAPSHOT_SIGNING_KEYSET) mkdirSync(path.dirname(path_), { recursive: true });
  return openKeysetSource({ json: config.SNAPSHOT_SIGNING_KEYSET, path: path_ }, logger, 'snapshot');
}

/** Where the event signing keyset lives: EVENT_SIGNING_KEYSET, or a file created on first start. */
function eventKeysetLocation(config: Config): { json: string | undefined; path: string } {
  const path_ = config.EVENT_SIGNING_KEYSET_PATH ?? path.join(config.DATA_DIR, 'event-signing-keyset.json');
  if (!config.EVENT_SIGNING_KEYSET) mkdirSync(path.dirname(path_), { recursive: true });
  return { json: config.EVENT_SIGNING_KEYSET, path: path_ };
}

/** Frames are signed unless EVENT_SIGNING=false; the keyset file is created on first start. */
async function eventSigning(config: Config, logger: Logger): Promise<EventSigning | null> {
  if (!config.EVENT_SIGNING) return null;
  return createEventSigning(eventKeysetLocation(config), logger);
}

/**
 * An outbound client under the one SSRF policy (core/outbound/): signed-URL snapshots and
 * webhooks alike; webhooks bound a whole attempt by WEBHOOK_TIMEOUT_MS (at most 15 s).
 */
function outboundClient(config: Config, totalTimeoutMs: number, keepAlive = false): OutboundClient {
  return new OutboundClient({
    policy: {
      allowedPorts: new Set(config.OUTBOUND_ALLOWED_PORTS),
      allowedHosts: config.OUTBOUND_ALLOWED_HOSTS,
      unsafeTestOrigin: config.OUTBOUND_UNSAFE_TEST_ORIGIN ?? null,
    },
    dnsServers: config.OUTBOUND_DNS_SERVERS,
    connectTimeoutMs: Math.min(config.OUTBOUND_CONNECT_TIMEOUT_MS, totalTimeoutMs),
    totalTimeoutMs,
    keepAlive,
  });
}

export async function startService(config: Config, endpoints: ServiceEndpoints): Promise<RunningService> {
  tuneGarbageCollector();
  const plan = processPlan(config);
  const logger = createLogger(plan.api ? 'api' : 'worker', config.LOG_LEVEL, config.LOG_FORMAT);
  installTemporalLogging(logger, config.LOG_LEVEL);
  if (!startedWithServiceFlags())
    logger.warn(
      { code: 'ENGRAM_NODE_FLAGS', flags: SERVICE_NODE_FLAGS },
      'node was started without the service flags: new space is not capped, so the process holds up to about 100 MB more (docs/operations.md)',
    );
  const store = await openStore(config, endpoints.mongoUri);
  const crashAt = config.FAULT_INJECT_CRASH_AT;
  if (crashAt) {
    logger.warn({ crashAt }, 'FAULT INJECTION: this process kills itself at that delete step (tests only)');
    store.purge.onStep = (step) => {
      if (step === crashAt) process.kill(process.pid, 'SIGKILL');
    };
  }
  const connection = await NativeConnection.connect({ address: endpoints.temporalAddress });
  await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE).catch((error: unknown) =>
    logger.warn({ err: error }, 'could not verify custom search attributes (MemoryId, CollectionId, TenantId)'),
  );
  // Not niced (roles.ts, backgroundThreadNiceness).
  const modelThread = openModelThread(observePoolTasks('model'));
  const queryModelThread = plan.queryModelThread ? openQueryModelThread(observePoolTasks('model_query')) : null;
  const embedderOptions = {
    modelId: config.EMBEDDING_MODEL,
    modelsDir: config.MODELS_DIR,
    allowRemoteModels: config.ALLOW_REMOTE_MODELS,
    cacheDir: path.join(config.DATA_DIR, 'model-cache'),
    maxBatchSize: config.EMBEDDING_BATCH_SIZE,
    threads: config.EMBEDDING_THREADS,
    // Every model call of the process (embeddings, and speech windows in a worker) runs on a model
    // thread, never on the event loop; a search's query embedding on its own where there is one.
    thread: modelThread,
    ...(queryModelThread ? { queryThread: queryModelThread } : {}),
  };
  const embedder = memoize<Embedder>(() => loadEmbedder(embedderOptions));
  const stoppers: (() => Promise<void>)[] = [];
  const extractor = createLocalExtractor();
  const classifier = new PredicateClassifier(config.FACT_LEXICON);
  // CPU-heavy work of a process that serves the API runs on these threads, never on its event loop (DEVELOPERS.md).
  const cpu = plan.cpuPool
    ? new WorkerPool<CpuTasks>(cpuThreadScript, config.CPU_POOL_THREADS, 1, plan.backgroundThreadNiceness, observePoolTasks('cpu'))
    : null;
  // Large request bodies, at the process's priority and apart from the extraction (roles.ts), on a
  // thread script that serves the JSON tasks only: it never runs the extractor, so does not load it.
  const bodies =
    plan.requestBodyThreads > 0
      ? new WorkerPool<JsonTasks>(jsonThreadScript, plan.requestBodyThreads, 1, 0, observePoolTasks('bodies'))
      : null;
  // Loaded before the first request: a thread's start (then with the extractor's modules) cost the first large body 300 ms.
  bodies?.start();

  let worker: Worker | null = null;
  let workerRun: Promise<void> | null = null;
  if (plan.worker) {
    await embedder(); // Load the model before taking work, so the first memory is not slow.
    const fileExtractors = createFileExtractors({
      modelsDir: config.MODELS_DIR,
      allowRemoteModels: config.ALLOW_REMOTE_MODELS,
      speechModel: speechModelOnThread(modelThread, { modelsDir: config.MODELS_DIR, allowRemoteModels: config.ALLOW_REMOTE_MODELS }),
    });
    worker = await Worker.create({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      ...workflowSource(),
      activities: createActivities({
        store,
        embedder,
        files: fileExtractors,
        logger,
        chunkMaxChars: config.CHUNK_MAX_CHARS,
        maxChunksPerMemory: config.MAX_CHUNKS_PER_MEMORY,
        embeddingBatchSize: config.EMBEDDING_BATCH_SIZE,
        embeddingCoalesceMs: config.EMBEDDING_COALESCE_MS,
        // With the API in this process (ROLE=all), ingestion's extraction goes to the pool as well.
        extractor: cpu ? pooledExtractor(cpu, { key: 'ingestion' }) : extractor,
        entitySimilarityThreshold: config.ENTITY_SIMILARITY_THRESHOLD,
        classifier,
      }),
      // One slot is one memory's whole single pass (activities/ingest.ts ingestContent): enough of
      // them overlap store I/O and let the micro-batcher merge concurrent memories' chunks into
      // full model calls; CPU-bound work beyond that only queues (16 was tried: ingest CPU per memory
      // rose on a saturated machine, not yet explained, so it stays at 8).
      maxConcurrentActivityTaskExecutions: 8,
      maxConcurrentWorkflowTaskExecutions: 40,
      stickyQueueScheduleToStartTimeout: '3 seconds',
      interceptors: { activity: activityInterceptors },
    });
    workerRun = worker.run();
    workerRun.catch((error: unknown) => logger.error({ err: error }, 'worker stopped with an error'));
    // Full pattern mines owed (a change on a request path, or one that found the lease taken) run
    // here, in the worker, never in an API process's request (core/procedures/derivation.ts).
    const workerTasks = new BackgroundTasks(logger);
    workerTasks.every(
      config.WORKFLOW_MINE_SWEEP_INTERVAL_MS,
      () => store.procedures.sweepDueMines(config.WORKFLOW_MINE_SWEEP_INTERVAL_MS),
      'ran owed procedure pattern mines',
      'procedure mine sweep failed',
    );
    stoppers.push(async () => {
      await workerTasks.stop();
      if (worker?.getState() === 'RUNNING') worker.shutdown();
      await workerRun?.catch(() => undefined);
      await fileExtractors.close(); // after the worker drained: no activity still uses them
    });
  }

  if (plan.webhookDelivery) {
    const delivery = startWebhookDelivery({
      store,
      outbound: outboundClient(config, config.WEBHOOK_TIMEOUT_MS, true),
      keys: config.EVENT_SIGNING ? await openKeysetSource(eventKeysetLocation(config), logger, 'event') : null,
      logger,
      options: {
        schedule: config.WEBHOOK_RETRY_SCHEDULE_MS,
        disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
        leaseMs: config.WEBHOOK_LEASE_MS,
        concurrency: config.WEBHOOK_CONCURRENCY,
      },
    });
    stoppers.unshift(() => delivery.stop());
  }

  let url: string | null = null;
  if (plan.workerMetricsPort !== null) {
    stoppers.unshift(await serveWorkerMetrics(config, plan.workerMetricsPort, logger));
  }
  if (plan.api) {
    const model = await embedder();
    const orchestrator = createOrchestrator({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      eagerStart: plan.eagerWorkflowStart,
      logger,
    });
    const searchIndex = new SearchIndex(store, model.modelId, model.dimensions, logger, {
      maxBytes: config.SEARCH_INDEX_MAX_BYTES,
      snapshotMinChunks: config.SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS === 0 ? Infinity : config.SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS,
    });
    await searchIndex.start();
    const collections = createCollectionService(store, { maxCollectionsPerTenant: config.MAX_COLLECTIONS_PER_TENANT });
    const uploads = createUploadService({
      store,
      collections,
      logger,
      options: { secret: uploadSigningSecret(config), ttlSeconds: config.UPLOAD_URL_TTL_SECONDS, maxBytes: config.UPLOAD_MAX_BYTES },
    });
    const tickets = createTicketService(store, config.WS_TICKET_TTL_SECONDS);
    const signing = await eventSigning(config, logger);
    const memories = createMemoryService({
      store,
      orchestrator,
      collections,
      uploads,
      searchIndex,
      logger,
      maxCollectionsPerMemory: config.MAX_COLLECTIONS_PER_MEMORY,
    });
    const procedures = createProcedureService({ store, collections, backend: config.GRAPH_READ_BACKEND });
    const webhooks = createWebhookService({
      store,
      collections,
      outbound: outboundClient(config, config.WEBHOOK_TIMEOUT_MS),
      options: { secretOverlapSeconds: config.WEBHOOK_SECRET_OVERLAP_SECONDS, maxPerTenant: config.WEBHOOK_MAX_PER_TENANT },
    });
    const deviceMemory = createDeviceMemoryService({
      store,
      collections,
      embedder,
      extractor,
      classifier,
      cpu: { pool: cpu! },
      keys: await snapshotKeys(config, logger),
      snapshotCache: new PreparedSnapshotCache(config.DEVICE_SNAPSHOT_CACHE_ENTRIES, searchIndex, (hit) =>
        deviceSnapshotLookups.inc({ result: hit ? 'hit' : 'miss' }),
      ),
      outbound: outboundClient(config, config.OUTBOUND_TOTAL_TIMEOUT_MS),
      deleteMemories: (tenantId, ids, options) => memories.purge(tenantId, ids, options),
      logger,
      options: {
        caps: {
          maxEpisodes: config.SNAPSHOT_MAX_EPISODES,
          maxEntities: config.SNAPSHOT_MAX_ENTITIES,
          maxFacts: config.SNAPSHOT_MAX_FACTS,
          maxMentions: config.SNAPSHOT_MAX_MENTIONS,
          maxChunks: config.MAX_CHUNKS_PER_MEMORY,
        },
        maxBytes: config.SNAPSHOT_MAX_BYTES,
        chunkMaxChars: config.CHUNK_MAX_CHARS,
        entitySimilarityThreshold: config.ENTITY_SIMILARITY_THRESHOLD,
        ephemeralTtlSeconds: config.EPHEMERAL_COLLECTION_TTL_SECONDS,
        maxConcurrency: config.DEVICE_MAX_CONCURRENCY,
        maxConcurrencyPerTenant: config.DEVICE_MAX_CONCURRENCY_PER_TENANT,
      },
    });
    // One failed-authentication bucket per peer for API keys, signed uploads and WebSocket tickets.
    const authFailures = new AuthFailures(config.AUTH_FAILURE_RATE_PER_SECOND, config.AUTH_FAILURE_BURST);
    const app = createApp({
      config,
      logger,
      authFailures,
      bodyPool: bodies,
      services: {
        auth: createAuthService(store),
        collections,
        memories,
        deviceMemory,
        search: createSearchService({
          store,
          collections,
          searchIndex,
          embedder,
          extractor,
          classifier,
          logger,
          tuning: {
            minSimilarity: config.SEARCH_MIN_SIMILARITY,
            minActivation: config.SEARCH_UNCONFIDENT_MIN_ACTIVATION,
            minFactConfidence: config.SEARCH_UNCONFIDENT_MIN_FACT_CONFIDENCE,
          },
          unconfidentRate: { perMinute: config.UNCONFIDENT_EVENTS_PER_KEY_PER_MINUTE, burst: config.UNCONFIDENT_EVENTS_PER_KEY_BURST },
          tenantConcurrency: { limit: config.SEARCH_MAX_CONCURRENT_PER_TENANT, maxWaiting: config.SEARCH_MAX_QUEUED_PER_TENANT },
        }),
        health: createHealthService(store, orchestrator, searchIndex),
        uploads,
        tickets,
        procedures,
        webhooks,
        signingKeys: () => signing?.publicKeys() ?? Promise.resolve({ keys: [] }),
      },
    });
    const server = http.createServer(app.callback());
    const eventStream = createEventStream({
      store,
      logger,
      signer: signing?.signer ?? null,
      options: {
        maxFrameBytes: 64 * 1024,
        softBufferBytes: Math.min(1024 * 1024, Math.floor(config.WS_MAX_BUFFERED_BYTES / 2)),
        hardBufferBytes: config.WS_MAX_BUFFERED_BYTES,
        maxPauseMs: config.WS_SLOW_CONSUMER_MAX_PAUSE_MS,
        sessionLimits: {
          perKey: config.WS_MAX_SESSIONS_PER_KEY,
          perTenant: config.WS_MAX_SESSIONS_PER_TENANT,
          perProcess: config.WS_MAX_SESSIONS_PER_PROCESS,
        },
        revocationCheckMs: config.WS_REVOCATION_CHECK_MS,
        ringFrames: config.EVENT_FANOUT_MAX_EVENTS,
        ringBytes: config.EVENT_FANOUT_MAX_BYTES,
        inbound: { framesPerSecond: config.WS_MAX_FRAMES_PER_SECOND, burst: config.WS_FRAME_BURST, maxQueued: 16 },
      },
    });
    const detachWebSocket = attachEventWebSocket(server, { tickets, events: eventStream, logger, failures: authFailures });
    // Gauges sampled at scrape time (GET /metrics).
    setScrapeCollector(async () => {
      websocketSessions.set(eventStream.sessionCount());
      const head = await store.events.log.latestSeq();
      eventLogSeq.set(head);
      const slowest = eventStream.slowestCursor();
      eventFollowerLag.set(slowest === null ? 0 : Math.max(0, head - slowest));
      for (const { index, entries, bytes } of searchIndex.sizes()) {
        indexEntries.set({ index }, entries);
        if (bytes !== null) indexBytes.set({ index }, bytes);
      }
      const budget = searchIndex.budgetStats();
      indexBudgetBytes.set({ kind: 'used' }, budget.bytes);
      if (Number.isFinite(budget.maxBytes)) indexBudgetBytes.set({ kind: 'max' }, budget.maxBytes);
      indexEvictions.set(budget.evictions);
      indexLoads.set({ source: 'snapshot' }, budget.snapshotLoads);
      indexLoads.set({ source: 'chunks' }, budget.loads - budget.snapshotLoads);
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.PORT, config.HOST, () => resolve());
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    url = config.PUBLIC_URL ?? `http://${config.HOST}:${port}`;

    // Background repairs: a run never overlaps its own next tick, and stop() drains them before the
    // database client closes (runtime/background-tasks.ts).
    const repairs = new BackgroundTasks(logger);
    const tasks = apiRepairs(config, {
      reconcileQueued: (minAgeMs) => memories.reconcileQueued(minAgeMs),
      reconcileCollectionChanges: (minAgeMs) => memories.reconcileCollectionChanges(minAgeMs),
      sweepDeletions: (minAgeMs) => memories.sweepDeletions(minAgeMs),
      sweepExpiredCollections: () => deviceMemory.sweepExpired(),
      sweepUploads: (expiredForMs) => uploads.sweep(expiredForMs),
      expireAcks: (olderThan) => eventStream.expireAcks(olderThan),
    });
    for (const task of tasks) repairs.every(task.everyMs, task.run, task.done, task.failed);

    stoppers.unshift(async () => {
      await repairs.stop();
      await searchIndex.stop();
      await detachWebSocket();
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    logger.info({ url, role: config.ROLE }, 'API listening');
  }

  return {
    url,
    store,
    logger,
    async stop() {
      for (const stop of stoppers) await stop().catch((error: unknown) => logger.warn({ err: error }, 'stop step failed'));
      // Last: the API and the worker, which hand them work, have stopped. Together: each waits up to
      // its drain bound (core/worker-pool.ts) for a task still running, so the bounds do not add up.
      await Promise.all([cpu, bodies, modelThread, queryModelThread].map((pool) => pool?.close().catch(() => undefined)));
      await connection.close().catch(() => undefined);
      await store.close().catch(() => undefined);
    },
  };
}

/** Entry used by api/main.ts and workers/main.ts: external services from the environment. */
export async function runFromEnvironment(config: Config): Promise<void> {
  if (!config.MONGODB_URI || !config.TEMPORAL_ADDRESS) {
    throw new Error('MONGODB_URI and TEMPORAL_ADDRESS must be set (or use `npm run dev` for the embedded stack)');
  }
  const service = await startService(config, { mongoUri: config.MONGODB_URI, temporalAddress: config.TEMPORAL_ADDRESS });
  const shutdown = (signal: string) => {
    service.logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}
