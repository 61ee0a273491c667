import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiRepairs, processPlan, type ProcessPlan } from './roles.js';

describe('what a process runs for its role', () => {
  // [ROLE, WEBHOOK_DELIVERY, WORKER_METRICS_PORT, the plan]
  const cases: ['all' | 'api' | 'worker', boolean, number | undefined, ProcessPlan][] = [
    [
      'api',
      true,
      9464,
      // No webhooks on the request path; /metrics is the API's.
      {
        api: true,
        worker: false,
        cpuPool: true,
        backgroundThreadNiceness: 10,
        queryModelThread: true,
        requestBodyThreads: 1,
        eagerWorkflowStart: false,
        webhookDelivery: false,
        workerMetricsPort: null,
      },
    ],
    [
      'worker',
      true,
      9464,
      // No API, no pool.
      {
        api: false,
        worker: true,
        cpuPool: false,
        backgroundThreadNiceness: 0,
        queryModelThread: false,
        requestBodyThreads: 0,
        eagerWorkflowStart: false,
        webhookDelivery: true,
        workerMetricsPort: 9464,
      },
    ],
    [
      'worker',
      false,
      undefined,
      {
        api: false,
        worker: true,
        cpuPool: false,
        backgroundThreadNiceness: 0,
        queryModelThread: false,
        requestBodyThreads: 0,
        eagerWorkflowStart: false,
        webhookDelivery: false,
        workerMetricsPort: null,
      },
    ],
    [
      'all',
      true,
      9464,
      // A worker beside the API: eager starts, the pool for the API (and ingestion's extraction).
      {
        api: true,
        worker: true,
        cpuPool: true,
        backgroundThreadNiceness: 10,
        queryModelThread: true,
        requestBodyThreads: 1,
        eagerWorkflowStart: true,
        webhookDelivery: true,
        workerMetricsPort: null,
      },
    ],
  ];
  for (const [ROLE, WEBHOOK_DELIVERY, WORKER_METRICS_PORT, plan] of cases) {
    it(`ROLE=${ROLE}, WEBHOOK_DELIVERY=${WEBHOOK_DELIVERY}, WORKER_METRICS_PORT=${WORKER_METRICS_PORT ?? 'unset'}`, () => {
      assert.deepEqual(processPlan({ ROLE, WEBHOOK_DELIVERY, WORKER_METRICS_PORT, EMBEDDING_QUERY_THREAD: true }), plan);
    });
  }

  it('EMBEDDING_QUERY_THREAD=false: no query model thread, in any role', () => {
    for (const ROLE of ['all', 'api', 'worker'] as const) {
      const plan = processPlan({ ROLE, WEBHOOK_DELIVERY: true, WORKER_METRICS_PORT: undefined, EMBEDDING_QUERY_THREAD: false });
      assert.equal(plan.queryModelThread, false, ROLE);
      assert.deepEqual(
        { ...plan, queryModelThread: ROLE !== 'worker' },
        processPlan({ ROLE, WEBHOOK_DELIVERY: true, WORKER_METRICS_PORT: undefined, EMBEDDING_QUERY_THREAD: true }),
        `${ROLE}: nothing else changes`,
      );
    }
  });
});

describe("an API process's repairs", () => {
  const config = {
    RECONCILE_INTERVAL_MS: 30_000,
    DELETE_SWEEP_INTERVAL_MS: 10_000,
    EPHEMERAL_SWEEP_INTERVAL_MS: 20_000,
    WS_ACK_RETENTION_HOURS: 168,
  };
  const now = Date.parse('2026-03-10T12:00:00Z');

  /** Runs every repair once; returns what each was asked to do. */
  async function runAll() {
    const asked: Record<string, unknown> = {};
    const record = (name: string) => async (argument?: unknown) => {
      asked[name] = argument;
      return 0;
    };
    const tasks = apiRepairs(
      config,
      {
        reconcileQueued: record('reconcileQueued'),
        reconcileCollectionChanges: record('reconcileCollectionChanges'),
        sweepDeletions: record('sweepDeletions'),
        sweepExpiredCollections: record('sweepExpiredCollections'),
        sweepUploads: record('sweepUploads'),
        expireAcks: record('expireAcks'),
      },
      () => now,
    );
    for (const task of tasks) await task.run();
    return { tasks, asked };
  }

  it('expires the acks of subscriber ids not moved for WS_ACK_RETENTION_HOURS: the cutoff is that long ago', async () => {
    const { asked } = await runAll();
    assert.deepEqual(asked.expireAcks, new Date('2026-03-03T12:00:00Z'));
  });

  it('leaves a process a full interval (or an hour, for uploads) before it repairs what another may still be doing', async () => {
    const { asked } = await runAll();
    assert.deepEqual(asked, {
      reconcileQueued: 30_000,
      reconcileCollectionChanges: 30_000,
      sweepDeletions: 10_000,
      sweepExpiredCollections: undefined,
      sweepUploads: 3_600_000,
      expireAcks: new Date('2026-03-03T12:00:00Z'),
    });
  });

  it('names every repair for its log lines, each one once', async () => {
    const { tasks } = await runAll();
    const names = tasks.flatMap((task) => [task.done, task.failed]);
    assert.equal(new Set(names).size, names.length);
    assert.ok(tasks.every((task) => task.everyMs > 0));
  });
});
