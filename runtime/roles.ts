/**
 * What a process runs for its ROLE (api, worker, or all of it), decided in one place: the
 * composition root (service.ts) follows this plan, and the unit test beside it holds the reasons.
 * Periodic repairs of an API process are listed here too, with the age each one acts on.
 */
import type { Config } from '../config/index.js';

export interface ProcessPlan {
  /** Serves the HTTP API and the WebSocket. */
  api: boolean;
  /** Runs the Temporal worker: the ingestion workflows and activities. */
  worker: boolean;
  /** A worker-thread pool for CPU-heavy work of a process that serves the API; ingestion's extraction uses it too then. */
  cpuPool: boolean;
  /**
   * The niceness of the process's CPU-pool threads: above 0 where requests are served, so the
   * event loop (a search, a ping, a deadline) takes the CPU before a device create's extraction
   * does. Not the model threads': the query thread is a search's own, and a niced bulk thread,
   * which embeds ingestion's passages in ROLE=all, gained nothing measurable (docs/decisions.md).
   */
  backgroundThreadNiceness: number;
  /**
   * A model thread of its own for query embeddings where searches are answered: a model call runs
   * to its end once started, so on the shared thread a search waited for a device create's passage
   * or the worker's batch (models/model-thread-client.ts). EMBEDDING_QUERY_THREAD=false saves its
   * copy of the model.
   */
  queryModelThread: boolean;
  /**
   * Threads, at the process's own priority, that parse and locate large request bodies
   * (api/middleware/pooled-json-body.ts): part of a request's answer, so neither niced nor queued
   * behind the CPU pool's extraction. A prepared device search's body check waited 50-80 ms for the
   * niced pool thread while V8's collector threads held the two cores (docs/device-memory.md).
   */
  requestBodyThreads: number;
  /** Workflow starts get their first task back in the start response: only with a worker on the same connection. */
  eagerWorkflowStart: boolean;
  /** Webhooks are delivered by worker processes, never on an API's request path. */
  webhookDelivery: boolean;
  /** A worker-only process serves its metrics on this port (an API process has GET /metrics). */
  workerMetricsPort: number | null;
}

/** Enough that the scheduler favours the event loop clearly, not so much that the threads starve. */
export const BACKGROUND_THREAD_NICENESS = 10;

export function processPlan(
  config: Pick<Config, 'ROLE' | 'WEBHOOK_DELIVERY' | 'WORKER_METRICS_PORT' | 'EMBEDDING_QUERY_THREAD'>,
): ProcessPlan {
  const api = config.ROLE !== 'worker';
  const worker = config.ROLE !== 'api';
  return {
    api,
    worker,
    cpuPool: api,
    backgroundThreadNiceness: api ? BACKGROUND_THREAD_NICENESS : 0,
    queryModelThread: api && config.EMBEDDING_QUERY_THREAD,
    requestBodyThreads: api ? 1 : 0,
    eagerWorkflowStart: api && worker,
    webhookDelivery: worker && config.WEBHOOK_DELIVERY,
    workerMetricsPort: !api && config.WORKER_METRICS_PORT ? config.WORKER_METRICS_PORT : null,
  };
}

/** A periodic repair: `run` returns how many things it repaired (logged as `done` when above 0). */
export interface RepairTask {
  everyMs: number;
  run: () => Promise<number | void>;
  done: string;
  failed: string;
}

const HOUR_MS = 3_600_000;

/** The background repairs every API process runs (runtime/background-tasks.ts schedules them). */
export function apiRepairs(
  config: Pick<Config, 'RECONCILE_INTERVAL_MS' | 'DELETE_SWEEP_INTERVAL_MS' | 'EPHEMERAL_SWEEP_INTERVAL_MS' | 'WS_ACK_RETENTION_HOURS'>,
  deps: {
    reconcileQueued(minAgeMs: number): Promise<number>;
    reconcileCollectionChanges(minAgeMs: number): Promise<number>;
    sweepDeletions(minAgeMs: number): Promise<number>;
    sweepExpiredCollections(): Promise<number>;
    sweepUploads(expiredForMs: number): Promise<number>;
    expireAcks(olderThan: Date): Promise<number>;
  },
  now: () => number = Date.now,
): RepairTask[] {
  return [
    {
      everyMs: config.RECONCILE_INTERVAL_MS,
      run: () => deps.reconcileQueued(config.RECONCILE_INTERVAL_MS),
      done: 'started workflows for accepted memories that had none',
      failed: 'reconcile failed',
    },
    {
      everyMs: config.RECONCILE_INTERVAL_MS,
      run: () => deps.reconcileCollectionChanges(config.RECONCILE_INTERVAL_MS),
      done: 'carried through unfinished collection changes',
      failed: 'reconcile of collection changes failed',
    },
    // Deletes a crashed process left unfinished are finished by whichever API process sees them.
    {
      everyMs: config.DELETE_SWEEP_INTERVAL_MS,
      run: () => deps.sweepDeletions(config.DELETE_SWEEP_INTERVAL_MS),
      done: 'finished interrupted deletes',
      failed: 'delete sweep failed',
    },
    // Imported snapshots past their TTL: every record, chunk, graph row and index entry goes.
    {
      everyMs: config.EPHEMERAL_SWEEP_INTERVAL_MS,
      run: () => deps.sweepExpiredCollections(),
      done: 'removed expired ephemeral collections',
      failed: 'ephemeral sweep failed',
    },
    // Bytes of uploads whose URL expired an hour ago without a memory taking them are removed.
    { everyMs: 300_000, run: () => deps.sweepUploads(HOUR_MS), done: 'removed abandoned uploads', failed: 'upload sweep failed' },
    // Acks not moved for WS_ACK_RETENTION_HOURS: the subscriber ids are client-chosen (docs/events.md).
    {
      everyMs: 600_000,
      run: () => deps.expireAcks(new Date(now() - config.WS_ACK_RETENTION_HOURS * HOUR_MS)),
      done: 'removed expired WebSocket acks',
      failed: 'ack expiry failed',
    },
  ];
}
