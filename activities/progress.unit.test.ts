import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { Store } from '../store/index.js';
import { activityInterceptors } from '../runtime/activity-interceptors.js';
import { Context } from '@temporalio/activity';
import { heartbeat, keepAlive, ProgressQueue, reportTerminal, type ProgressTarget } from './progress.js';

/** The two repositories reportTerminal uses, in memory. */
function fakeStore() {
  const marks = new Map<string, string>();
  const appended: { memoryId: string; userStage: string }[] = [];
  const store = {
    memories: {
      terminalReported: async (id: string, scope: string) => marks.get(id) === scope,
      markTerminalReported: async (id: string, scope: string) => void marks.set(id, scope),
    },
    events: {
      appendProgress: async (_tenant: string, _collections: string[], payload: { engram_id: string; user_stage: string }) =>
        void appended.push({ memoryId: payload.engram_id, userStage: payload.user_stage }),
    },
  } as unknown as Store; // only the methods reportTerminal calls
  return { store, appended };
}

const target: ProgressTarget = { memoryId: 'm1', tenantId: 't1', collectionIds: ['c1'] };
const attemptOf = (runId: string, activityId: string, attempt: number) =>
  new MockActivityEnvironment({ activityId, attempt, workflowExecution: { workflowId: 'ingest-m1', runId } });

describe('reportTerminal', () => {
  const cases: { name: string; attempts: [string, string, number][]; events: number }[] = [
    {
      name: 'a retry that finishes after the timed-out attempt it replaced',
      attempts: [
        ['r1', '4', 1],
        ['r1', '4', 2],
      ],
      events: 1,
    },
    {
      name: 'the same attempt reaching the end twice',
      attempts: [
        ['r1', '4', 1],
        ['r1', '4', 1],
      ],
      events: 1,
    },
    {
      name: 'a later run of the workflow (new content appended)',
      attempts: [
        ['r1', '4', 1],
        ['r2', '4', 1],
      ],
      events: 2,
    },
    {
      name: 'another activity call in the same run',
      attempts: [
        ['r1', '4', 1],
        ['r1', '9', 1],
      ],
      events: 2,
    },
  ];
  for (const { name, attempts, events } of cases) {
    it(`reports ${events === 1 ? 'once' : 'each'}: ${name}`, async () => {
      const { store, appended } = fakeStore();
      for (const [runId, activityId, attempt] of attempts)
        await attemptOf(runId, activityId, attempt).run(() => reportTerminal(store, target, 'complete', 3, 3));
      assert.equal(appended.length, events);
      assert.ok(appended.every((event) => event.memoryId === 'm1' && event.userStage === 'complete'));
    });
  }

  it('reports every time outside an activity, where there is no attempt to tell apart', async () => {
    const { store, appended } = fakeStore();
    await reportTerminal(store, target, 'failed', 0, 0, 'bad');
    await reportTerminal(store, target, 'failed', 0, 0, 'bad');
    assert.equal(appended.length, 2);
  });
});

describe('ProgressQueue', () => {
  /** A store whose appends finish only when released, in any order, and fail for the stages named. */
  function slowStore(failing: string[] = []) {
    const started: string[] = [];
    const appended: string[] = [];
    const releases: (() => void)[] = [];
    const store = {
      events: {
        appendProgress: async (_tenant: string, _collections: string[], payload: { stage: string }) => {
          started.push(payload.stage);
          await new Promise<void>((resolve) => releases.push(resolve));
          if (failing.includes(payload.stage)) throw new Error(`append of ${payload.stage} failed`);
          appended.push(payload.stage);
        },
      },
    } as unknown as Store; // only the method the queue calls
    const releaseAll = async () => {
      for (let round = 0; round < 10; round++) {
        releases.splice(0).forEach((release) => release());
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    return { store, started, appended, releaseAll };
  }

  it('returns at once, appends one event at a time in the order reported, and settles when all are in', async () => {
    const { store, started, appended, releaseAll } = slowStore();
    const queue = new ProgressQueue(store);
    queue.report(target, 'read', 'reading', 0, 1);
    queue.report(target, 'chunk', 'reading', 1, 1);
    queue.report(target, 'structure', 'structuring', 1, 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, ['read'], 'the second waits for the first: a later event never gets an earlier seq');
    let settled = false;
    const settling = queue.settle().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'settle waits for the appends still queued');
    await releaseAll();
    await settling;
    assert.deepEqual(appended, ['read', 'chunk', 'structure']);
  });

  it('rethrows the first failure on settle and drops what was queued after it', async () => {
    const { store, started, appended, releaseAll } = slowStore(['chunk']);
    const queue = new ProgressQueue(store);
    for (const stage of ['read', 'chunk', 'structure']) queue.report(target, stage, 'reading', 0, 1);
    const settling = assert.rejects(queue.settle(), /append of chunk failed/);
    await releaseAll();
    await settling;
    assert.deepEqual(started, ['read', 'chunk']);
    assert.deepEqual(appended, ['read']);
    queue.report(target, 'embed', 'indexing', 0, 1);
    await releaseAll();
    await assert.rejects(queue.settle(), /append of chunk failed/, 'a queue that failed appends nothing more');
    assert.deepEqual(started, ['read', 'chunk']);
  });
});

describe('the heartbeat keep-alive every activity runs under', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** One attempt with the worker's interceptors, its heartbeats recorded in order. */
  const attempt = (info: { heartbeatTimeoutMs?: number; heartbeatDetails?: unknown }) => {
    const env = new MockActivityEnvironment(info, { interceptors: activityInterceptors, logger: new DefaultLogger('ERROR') });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => void beats.push(details));
    return { env, beats };
  };

  it('repeats the last details while a stage waits longer than the heartbeat timeout', async () => {
    const { env, beats } = attempt({ heartbeatTimeoutMs: 60 });
    await env.run(async () => {
      heartbeat({ stage: 'structure', current: 1, total: 1 });
      await sleep(200); // a long stretch with no progress point, as a collection's graph writes on a loaded machine
    });
    assert.ok(beats.length >= 4, `${beats.length} heartbeats in 200 ms with a 60 ms timeout`);
    for (const beat of beats) assert.deepEqual(beat, { stage: 'structure', current: 1, total: 1 });
  });

  it("repeats the previous attempt's details until this attempt sends its own, so the resume point survives", async () => {
    const { env, beats } = attempt({ heartbeatTimeoutMs: 60, heartbeatDetails: { stage: 'chunk', current: 1, total: 1 } });
    await env.run(async () => {
      await sleep(100);
      heartbeat({ stage: 'structure', current: 0, total: 1 });
      await sleep(100);
    });
    const first = beats.findIndex((beat) => (beat as { stage: string }).stage === 'structure');
    assert.ok(first >= 1, 'beats before the first progress point');
    for (const beat of beats.slice(0, first)) assert.deepEqual(beat, { stage: 'chunk', current: 1, total: 1 });
    assert.ok(beats.length - first >= 2, 'the new details are repeated');
  });

  it('stops when the attempt ends, and does nothing for an activity without a heartbeat timeout', async () => {
    const timed = attempt({ heartbeatTimeoutMs: 60 });
    await timed.env.run(async () => sleep(100));
    const atEnd = timed.beats.length;
    assert.ok(atEnd >= 1);
    await sleep(150);
    assert.equal(timed.beats.length, atEnd, 'no heartbeat after the attempt returned');

    const untimed = attempt({});
    await untimed.env.run(async () => sleep(100));
    assert.equal(untimed.beats.length, 0);
  });

  it('stops repeating after stallMs without a progress point (so the attempt times out), and repeats again from the next one', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 30 }, { logger: new DefaultLogger('ERROR') });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => void beats.push(details));
    await env.run(() =>
      keepAlive(
        Context.current(),
        async () => {
          heartbeat({ stage: 'structure', current: 0, total: 1 });
          await sleep(200); // repeats for 100 ms, then none
          const stalled = beats.length;
          assert.ok(stalled >= 4, `${stalled} heartbeats before the stall`);
          await sleep(100);
          assert.equal(beats.length, stalled, 'no heartbeat while no progress point comes');
          heartbeat({ stage: 'structure', current: 1, total: 1 });
          await sleep(80);
          assert.ok(beats.length >= stalled + 3, `${beats.length - stalled} heartbeats after the progress point`);
        },
        100,
      ),
    );
  });

  it('stops when the attempt fails, and the failure passes through unchanged', async () => {
    const { env, beats } = attempt({ heartbeatTimeoutMs: 60 });
    await assert.rejects(
      env.run(async () => {
        await sleep(80);
        throw new Error('store unreachable');
      }),
      /store unreachable/,
    );
    const atEnd = beats.length;
    await sleep(150);
    assert.equal(beats.length, atEnd);
  });
});
