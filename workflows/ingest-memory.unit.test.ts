/**
 * The ingestion workflows on a real Temporal server (the project's own dev-server binary, started
 * by TestWorkflowEnvironment offline) with recording fakes in place of the activities: the stage
 * order, what each stage is handed, and how failures end the run.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, TerminatedFailure, type ActivityCancellationDetails } from '@temporalio/common';
import protos from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, Worker, DefaultLogger, type WorkerOptions } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import type { Activities, GraphProjectionInput, IngestInput } from '../activities/index.js';
import { projectRoot } from '../config/index.js';
import { BAD_CONTENT, INGESTION_FAILED, MEMORY_DELETED } from '../core/failure-types.js';
import type { Logger } from '../core/logger.js';
import { COLLECTION_ID, createOrchestrator, MEMORY_ID, TENANT_ID } from '../services/orchestrator.js';
import type { ingestMemory, projectMemoryGraph } from './index.js';

const root = projectRoot();
const temporalBinary = path.join(root, '.tools', 'bin', 'temporal');
const bundlePath = path.join(root, 'dist', 'workflow-bundle.js');

type Call = { stage: string; input: unknown };
type Behaviour = Partial<Record<keyof Activities, (input: never, attempt: number) => unknown>>;

/** Activities that record every call and do what the test's behaviour says (default: succeed). */
function fakeActivities(calls: Call[], behaviour: Behaviour): Activities {
  const attempts = new Map<string, number>();
  const stage =
    (name: keyof Activities, result: (input: never) => unknown) =>
    (input: never): Promise<unknown> => {
      calls.push({ stage: name, input });
      const attempt = (attempts.get(name) ?? 0) + 1;
      attempts.set(name, attempt);
      const override = behaviour[name];
      return Promise.resolve(override ? override(input, attempt) : result(input));
    };
  return {
    readContent: stage('readContent', () => ({ chunkCount: 2, collectionIds: ['col-a', 'col-b'] })),
    extractStructure: stage('extractStructure', () => undefined),
    deriveWorkflows: stage('deriveWorkflows', () => undefined),
    embedAndIndex: stage('embedAndIndex', () => ({ status: 'complete', chunkCount: 2 })),
    ingestContent: stage('ingestContent', () => ({ status: 'complete', chunkCount: 2 })),
    markFailed: stage('markFailed', () => undefined),
    projectGraph: stage('projectGraph', () => undefined),
  } as unknown as Activities; // Only the stages the workflows call; the rest of the activity surface is not reached.
}

// Concurrent: each case has a task queue and a worker of its own, and most of their time is spent
// waiting on the server (timers, retries, task round trips), so together they take about the longest one.
describe('ingestion workflows on the dev server', { concurrency: true }, () => {
  let env: TestWorkflowEnvironment;
  before(async () => {
    assert.ok(existsSync(temporalBinary), `the Temporal CLI is installed by scripts/setup.sh at ${temporalBinary}`);
    assert.ok(existsSync(bundlePath), `npm run build writes the workflow bundle at ${bundlePath}`);
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: temporalBinary },
        ip: '127.0.0.1',
        extraArgs: ['--headless'],
        // The service's own starts (services/orchestrator.ts) set these.
        searchAttributes: [MEMORY_ID, COLLECTION_ID, TENANT_ID],
      },
    });
  });
  after(async () => {
    await env?.teardown();
  });

  /** A worker on a task queue of its own, running the workflow bundle with recording fake activities. */
  async function fakeWorker(calls: Call[], behaviour: Behaviour, options: Partial<WorkerOptions> = {}) {
    const taskQueue = `test-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: bundlePath },
      activities: fakeActivities(calls, behaviour),
      ...options,
    });
    return { worker, taskQueue };
  }

  async function run<W extends typeof ingestMemory | typeof projectMemoryGraph>(
    workflow: 'ingestMemory' | 'projectMemoryGraph',
    input: Parameters<W>[0],
    behaviour: Behaviour = {},
  ): Promise<{ calls: Call[]; result: Promise<Awaited<ReturnType<W>>> }> {
    const calls: Call[] = [];
    const { worker, taskQueue } = await fakeWorker(calls, behaviour);
    const result = worker.runUntil(
      env.client.workflow.execute<W>(workflow, { taskQueue, workflowId: `wf-${randomUUID()}`, args: [input] as Parameters<W> }),
    ) as Promise<Awaited<ReturnType<W>>>;
    return { calls, result };
  }

  const input: IngestInput = { memoryId: 'mem-1', tenantId: 'tenant-1' };

  it('runs every stage in one single-pass activity, handed the workflow input', async () => {
    const { calls, result } = await run<typeof ingestMemory>('ingestMemory', input);
    assert.deepEqual(await result, { memoryId: 'mem-1', status: 'complete', chunkCount: 2 });
    assert.deepEqual(calls, [{ stage: 'ingestContent', input }]);
  });

  it('retries the single pass after a passing failure, and goes on', async () => {
    const { calls, result } = await run<typeof ingestMemory>('ingestMemory', input, {
      ingestContent: (_input, attempt) => {
        if (attempt === 1) throw new Error('store briefly unreachable');
        return { status: 'complete', chunkCount: 2 };
      },
    });
    assert.equal((await result).status, 'complete');
    assert.equal(calls.filter((call) => call.stage === 'ingestContent').length, 2);
    assert.equal(calls.filter((call) => call.stage === 'markFailed').length, 0);
  });

  it('fails bad content once, without retries, records the reason, and ends non-retryable', async () => {
    const { calls, result } = await run<typeof ingestMemory>('ingestMemory', input, {
      ingestContent: () => {
        throw ApplicationFailure.nonRetryable('not a PDF', BAD_CONTENT);
      },
    });
    await assert.rejects(result, (error: unknown) => {
      assert.ok(error instanceof WorkflowFailedError);
      assert.ok(error.cause instanceof ApplicationFailure);
      assert.equal(error.cause.type, INGESTION_FAILED);
      assert.equal(error.cause.nonRetryable, true);
      return true;
    });
    assert.deepEqual(
      calls.map((call) => call.stage),
      ['ingestContent', 'markFailed'],
    );
    assert.deepEqual(calls[1]!.input, { ...input, message: 'not a PDF' });
  });

  it('ends as deleted, recording no failure, when the memory was deleted mid-way', async () => {
    const { calls, result } = await run<typeof ingestMemory>('ingestMemory', input, {
      ingestContent: () => {
        throw ApplicationFailure.nonRetryable('memory is gone', MEMORY_DELETED);
      },
    });
    assert.deepEqual(await result, { memoryId: 'mem-1', status: 'deleted', chunkCount: 0 });
    assert.deepEqual(
      calls.map((call) => call.stage),
      ['ingestContent'],
    );
  });

  // A type listed in the workflow's nonRetryableErrorTypes ends the run at once, however the activity raised it.
  const outcomes: [string, string[], (result: Promise<unknown>) => Promise<void>][] = [
    [
      BAD_CONTENT,
      ['ingestContent', 'markFailed'],
      (result) =>
        assert.rejects(
          result,
          (error) => error instanceof WorkflowFailedError && (error.cause as ApplicationFailure).type === INGESTION_FAILED,
        ),
    ],
    [MEMORY_DELETED, ['ingestContent'], async (result) => assert.equal(((await result) as { status: string }).status, 'deleted')],
  ];
  for (const [type, stages, ends] of outcomes) {
    it(`does not retry a ${type} failure even when the activity raised it as retryable`, async () => {
      const { calls, result } = await run<typeof ingestMemory>('ingestMemory', input, {
        ingestContent: () => {
          throw ApplicationFailure.retryable('raised as retryable', type);
        },
      });
      await ends(result);
      assert.deepEqual(
        calls.map((call) => call.stage),
        stages,
      );
    });
  }

  // The timeout only guards the suite against a hang if the stop never reaches the activity.
  it(
    'stops a running ingestion when its memory is deleted: the activity learns it at its next heartbeat, and no failure is recorded',
    { timeout: 30_000 },
    async () => {
      const calls: Call[] = [];
      const workflowId = `wf-${randomUUID()}`;
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      let seen!: (details: ActivityCancellationDetails | undefined) => void;
      const cancellation = new Promise<ActivityCancellationDetails | undefined>((resolve) => (seen = resolve));
      const { worker, taskQueue } = await fakeWorker(
        calls,
        {
          ingestContent: async () => {
            const context = Context.current();
            const beat = setInterval(() => context.heartbeat({ stage: 'embed' }), 50);
            started();
            try {
              await context.cancelled;
            } finally {
              clearInterval(beat);
              seen(context.cancellationDetails);
            }
          },
        },
        // Heartbeats reach the server at once, so the cancellation comes back within the test's time.
        { maxHeartbeatThrottleInterval: '100 milliseconds' },
      );
      const working = worker.run();
      try {
        const handle = await env.client.workflow.start<typeof ingestMemory>('ingestMemory', { taskQueue, workflowId, args: [input] });
        await running;
        const warnings: unknown[] = [];
        const logger = { warn: (fields: unknown) => void warnings.push(fields) } as unknown as Logger;
        const orchestrator = createOrchestrator({ connection: env.connection, namespace: 'default', taskQueue, eagerStart: false, logger });
        await orchestrator.stopIngestion(workflowId, 'memory deleted');
        assert.equal((await cancellation)?.notFound, true, 'cancelled because the run is gone, not by a worker shutdown');
        await assert.rejects(handle.result(), (error) => error instanceof WorkflowFailedError && error.cause instanceof TerminatedFailure);
        // A delete retried by the sweep, or of a memory whose run never started, stops nothing, quietly.
        await orchestrator.stopIngestion(workflowId, 'memory deleted');
        await orchestrator.stopIngestion(`wf-${randomUUID()}`, 'memory deleted');
        assert.deepEqual(warnings, []);
      } finally {
        worker.shutdown();
        await working;
      }
      assert.deepEqual(
        calls.map((call) => call.stage),
        ['ingestContent'],
      );
    },
  );

  it('starts a memory’s ingestion again only if its run did not complete: a reconciler that read it as queued just before changes nothing', async () => {
    const calls: Call[] = [];
    const { worker, taskQueue } = await fakeWorker(calls, {});
    const logger = { warn: () => undefined } as unknown as Logger;
    const orchestrator = createOrchestrator({ connection: env.connection, namespace: 'default', taskQueue, eagerStart: false, logger });
    const request = { memoryId: `mem-${randomUUID()}`, tenantId: 'tenant-1', collectionIds: ['col-a'] };
    await worker.runUntil(async () => {
      const first = await orchestrator.startIngestion(request);
      assert.equal(first.alreadyStarted, false);
      await env.client.workflow.getHandle(first.workflowId).result();
      // What the reconciler (or an idempotent replay) does with a memory it read as queued.
      assert.deepEqual(await orchestrator.startIngestion(request), { workflowId: first.workflowId, alreadyStarted: true });
    });
    assert.equal(calls.length, 1, 'ingested once');

    // A run an operator terminated (or that timed out) left its memory queued: that one is started again.
    const stopped = { ...request, memoryId: `mem-${randomUUID()}` };
    const run = await orchestrator.startIngestion(stopped);
    await env.client.workflow.getHandle(run.workflowId).terminate('operator');
    assert.equal((await orchestrator.startIngestion(stopped)).alreadyStarted, false);
    await env.client.workflow.getHandle(run.workflowId).terminate('test done');
  });

  it('replays a history recorded before the single pass (one activity per stage) without nondeterminism', async () => {
    // Recorded (binary protobuf) from the workflow as it was before the `single-pass-ingest` patch: four
    // stage activities. Binary, because this install's historyFromJSON fails on JSON histories.
    const bytes = readFileSync(path.join(root, 'test', 'fixtures', 'ingest-history-four-stages.binpb'));
    const history = protos.temporal.api.history.v1.History.decode(bytes);
    assert.deepEqual(
      history.events.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name).filter((name) => name !== undefined),
      ['readContent', 'extractStructure', 'deriveWorkflows', 'embedAndIndex'],
    );
    await Worker.runReplayHistory({ workflowBundle: { codePath: bundlePath } }, history);
  });

  it('projects a graph, and treats a deleted memory as done', async () => {
    const projection: GraphProjectionInput = { memoryId: 'mem-2', tenantId: 'tenant-1', collectionIds: ['col-c'] };
    const ok = await run<typeof projectMemoryGraph>('projectMemoryGraph', projection);
    await ok.result;
    assert.deepEqual(ok.calls, [{ stage: 'projectGraph', input: projection }]);
    const gone = await run<typeof projectMemoryGraph>('projectMemoryGraph', projection, {
      projectGraph: () => {
        throw ApplicationFailure.nonRetryable('memory is gone', MEMORY_DELETED);
      },
    });
    await gone.result;
    assert.equal(gone.calls.length, 1);
  });
});
