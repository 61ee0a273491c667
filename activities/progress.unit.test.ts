import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Store } from '../store/index.js';
import { reportTerminal, type ProgressTarget } from './progress.js';

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
