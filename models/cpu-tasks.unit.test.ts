import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { cpuThreadScript, type CpuTasks } from './cpu-tasks.js';
import { extractChunkStructure } from '../extractors/structure/local-extractor.js';
import { WorkerPool, WorkerPoolClosedError } from '../core/worker-pool.js';

const TEXT = 'Alice Smith manages the Berlin office. She hired Bob Jones in 2024.';

describe('worker pool', () => {
  const pool = new WorkerPool<CpuTasks>(cpuThreadScript, 1);
  after(() => pool.close());

  it('runs a task on a thread and answers what the handler returns there', async () => {
    const structure = await pool.run('extractStructure', { text: TEXT, options: {} }, { key: 'a' });
    assert.deepEqual(structure, extractChunkStructure(TEXT));
  });

  it('takes queued tasks round-robin across keys, so one key cannot hold the threads', async () => {
    const order: string[] = [];
    const task = (key: string, n: number) =>
      pool.run('extractStructure', { text: TEXT, options: {} }, { key }).then(() => order.push(`${key}${n}`));
    await Promise.all([task('a', 1), task('a', 2), task('a', 3), task('a', 4), task('b', 1), task('b', 2)]);
    // a1 is running when the rest queue; then the keys alternate while both have work.
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'a3', 'b2', 'a4']);
  });

  it('drops an abandoned task from the queue at once and rejects it with the reason', async () => {
    const controller = new AbortController();
    const running = pool.run('extractStructure', { text: TEXT, options: {} }, { key: 'a' });
    const queued = pool.run('extractStructure', { text: TEXT, options: {} }, { key: 'a', signal: controller.signal });
    assert.equal(pool.queued('a'), 1);
    controller.abort(new Error('deadline'));
    assert.equal(pool.queued('a'), 0, 'the queue gave the task up synchronously');
    await assert.rejects(queued, /deadline/);
    await running;
    await assert.rejects(
      pool.run('extractStructure', { text: TEXT, options: {} }, { key: 'a', signal: controller.signal }),
      /deadline/,
      'an already aborted signal is refused without queueing',
    );
  });

  it('tells its observer each task, how it ended and how long it took from hand-over', async () => {
    const seen: [string, string][] = [];
    const observed = new WorkerPool<CpuTasks>(cpuThreadScript, 1, 1, 0, (task, seconds, outcome) => {
      assert.ok(seconds >= 0 && seconds < 60, String(seconds));
      seen.push([task, outcome]);
    });
    try {
      await observed.run('extractStructure', { text: TEXT, options: {} }, { key: 'a' });
      // A handler that throws on its thread (no input to read).
      await assert.rejects(observed.run('extractStructure', null as never, { key: 'a' }));
      const controller = new AbortController();
      const running = observed.run('extractStructure', { text: TEXT, options: {} }, { key: 'a' });
      const queued = observed.run('extractStructure', { text: TEXT, options: {} }, { key: 'a', signal: controller.signal });
      controller.abort(new Error('deadline'));
      await assert.rejects(queued, /deadline/);
      await running;
      assert.deepEqual(seen, [
        ['extractStructure', 'ok'],
        ['extractStructure', 'failed'],
        ['extractStructure', 'abandoned'],
        ['extractStructure', 'ok'],
      ]);
    } finally {
      await observed.close();
    }
  });

  it('starts every thread at once when asked, and no more than its size', async () => {
    const eager = new WorkerPool<CpuTasks>(cpuThreadScript, 2);
    try {
      assert.equal(eager.started, 0, 'threads start on first use by default');
      eager.start();
      assert.equal(eager.started, 2);
      eager.start();
      assert.equal(eager.started, 2);
      assert.deepEqual(await eager.run('extractStructure', { text: TEXT, options: {} }, { key: 'a' }), extractChunkStructure(TEXT));
      assert.equal(eager.started, 2);
    } finally {
      await eager.close();
    }
    assert.throws(() => eager.start(), WorkerPoolClosedError);
  });

  it('refuses work once closed', async () => {
    const closing = new WorkerPool<CpuTasks>(cpuThreadScript, 1);
    await closing.run('extractStructure', { text: TEXT, options: {} }, { key: 'a' });
    await closing.close();
    await assert.rejects(closing.run('extractStructure', { text: TEXT, options: {} }, { key: 'a' }), WorkerPoolClosedError);
  });

  /** Nice value of each of this process's threads (Linux: field 19 of /proc/self/task/<tid>/stat). */
  const threadNiceness = (): Map<number, number> =>
    new Map(
      readdirSync('/proc/self/task').map((tid) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        // Fields after the command name, which is in parentheses and may hold spaces.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return [Number(tid), Number(fields[16])];
      }),
    );

  it(
    'runs its threads at a lower priority than the event loop when asked',
    { skip: !existsSync('/proc/thread-self') && 'not Linux' },
    async () => {
      const before = threadNiceness();
      const niced = new WorkerPool<CpuTasks>(cpuThreadScript, 1, 1, 10);
      try {
        await niced.run('extractStructure', { text: TEXT, options: {} }, { key: 'a' });
        const started = [...threadNiceness()].filter(([tid]) => !before.has(tid));
        assert.ok(
          started.some(([, nice]) => nice === 10),
          `a new thread at nice 10: ${JSON.stringify(started)}`,
        );
        assert.equal(threadNiceness().get(process.pid), before.get(process.pid), 'the event loop keeps its priority');
      } finally {
        await niced.close();
      }
    },
  );
});
