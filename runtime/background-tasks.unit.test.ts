import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BackgroundTasks } from './background-tasks.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quiet = { warn: () => undefined };

describe('background repair tasks', () => {
  it('never overlap a slow run with the next tick', async () => {
    const tasks = new BackgroundTasks(quiet);
    let running = 0;
    let most = 0;
    let runs = 0;
    tasks.every(
      5,
      async () => {
        running++;
        runs++;
        most = Math.max(most, running);
        await sleep(40); // eight ticks long
        running--;
      },
      'done',
      'failed',
    );
    await sleep(150);
    await tasks.stop();
    assert.ok(runs >= 2, `${runs} runs`);
    assert.equal(most, 1, 'one run at a time');
  });

  it('stop waits for the run in flight, and no run starts after it', async () => {
    const tasks = new BackgroundTasks(quiet);
    let finished = 0;
    let started = 0;
    tasks.every(
      5,
      async () => {
        started++;
        await sleep(50);
        finished++;
      },
      'done',
      'failed',
    );
    await sleep(20);
    assert.equal(started, 1);
    await tasks.stop();
    assert.equal(finished, 1, 'the run in flight finished before stop resolved');
    await sleep(30);
    assert.equal(started, 1, 'nothing ran after stop');
  });

  it('logs a failed run and keeps running', async () => {
    const warnings: string[] = [];
    const tasks = new BackgroundTasks({ warn: (_fields: unknown, message?: string) => void warnings.push(message ?? '') });
    let calls = 0;
    tasks.every(
      5,
      () => {
        calls++;
        return calls === 1 ? Promise.reject(new Error('boom')) : Promise.resolve(2);
      },
      'did some',
      'it failed',
    );
    await sleep(40);
    await tasks.stop();
    assert.ok(warnings.includes('it failed'));
    assert.ok(warnings.includes('did some'));
  });

  // [what a run returns, whether it is logged as done]: a quiet tick repaired nothing and says nothing.
  const counts: [number | void, boolean][] = [
    [undefined, false],
    [0, false],
    [3, true],
  ];
  for (const [count, logged] of counts) {
    it(`logs a run that returns ${String(count)} ${logged ? 'as done' : 'not at all'}`, async () => {
      const warnings: unknown[] = [];
      const tasks = new BackgroundTasks({ warn: (fields: unknown) => void warnings.push(fields) });
      let runs = 0;
      let ran!: () => void;
      const first = new Promise<void>((resolve) => (ran = resolve));
      tasks.every(
        5,
        () => {
          runs += 1;
          ran();
          return Promise.resolve(count);
        },
        'did some',
        'it failed',
      );
      await first;
      await tasks.stop();
      assert.deepEqual(warnings, logged ? Array.from({ length: runs }, () => ({ count })) : []);
    });
  }
});
