/**
 * Issue 26: Ctrl-C used to log MongoClientClosedError / MongoNotConnectedError warnings from
 * sweeps, index pulls and event deliveries still running when the database client closed. A
 * ROLE=all process (what `npm run dev` runs) that has done real work and sweeps often is sent
 * SIGINT: it exits 0 (runtime/service.ts, runFromEnvironment) well within the grace the test
 * runner and the dev stack give before SIGKILL, and logs nothing at warn or error level, from its
 * start to its exit. A database and a task queue of its own, so no other suite's leftovers give
 * its repairs something to report.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { connectDatabase } from '../../store/db.js';
import { adminWith, Api, stack, until } from '../support/client.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';
import { RawSocket } from '../support/ws.js';

/** How long a clean stop may take: within stopChild's 10 s grace before SIGKILL (dev/stack.ts). */
const STOP_BOUND_MS = 10_000;
/** pino's numeric levels: 40 is warn, 50 error, 60 fatal. */
const WARN_LEVEL = 40;

function exitOf(child: ChildProcess, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    const timer = setTimeout(() => reject(new Error(`still running ${timeoutMs} ms after SIGINT`)), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/**
 * The lines that count against a clean stop: pino's at warn level or above, any line naming the old
 * failures, and any line that is not pino's (a runtime's or a native library's, on stderr).
 */
function complaints(log: string): string[] {
  return log
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => {
      if (/MongoClientClosedError|MongoNotConnectedError|stop step failed/.test(line)) return true;
      try {
        const entry = JSON.parse(line) as { level?: unknown };
        return typeof entry.level !== 'number' || entry.level >= WARN_LEVEL;
      } catch {
        return true;
      }
    });
}

describe('stopping a service with SIGINT (Ctrl-C)', () => {
  const info = stack();
  const suffix = Date.now().toString(36);
  const dbName = `shutdown_${suffix}`;
  const logFile = path.join(info.logDir, 'all-shutdown.log');
  /** Every process a test started: whichever a failure left running is stopped after. */
  const started: ApiProcess[] = [];
  let socket: RawSocket | undefined;

  after(async () => {
    socket?.close();
    for (const child of started) await stopChild(child.child);
    const database = await connectDatabase(info.serviceEnv.MONGODB_URI!, dbName);
    await database.db.dropDatabase();
    await database.close();
  });

  it('a ROLE=all process that ingested, searched and streamed events exits 0 within the bound and logs no warning or error', async (t) => {
    const logStart = existsSync(logFile) ? statSync(logFile).size : 0;
    const proc = await startApiProcess('all-shutdown', {
      ROLE: 'all',
      MONGODB_DB: dbName,
      TEMPORAL_TASK_QUEUE: `${info.serviceEnv.TEMPORAL_TASK_QUEUE}-shutdown-${suffix}`,
      // Warnings must be written to be seen, as JSON lines to be judged by level.
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      // The sweeps tick at their shortest, so they run all through the test and up to the signal
      // (a run still going when the store would close is runtime/background-tasks.unit.test.ts's case).
      RECONCILE_INTERVAL_MS: '1000',
      DELETE_SWEEP_INTERVAL_MS: '200',
      EPHEMERAL_SWEEP_INTERVAL_MS: '200',
      WORKFLOW_MINE_SWEEP_INTERVAL_MS: '200',
      // As in `npm run dev`: the worker delivers webhooks (the stack's shared worker does not).
      WEBHOOK_DELIVERY: 'true',
    });
    started.push(proc);
    const created = JSON.parse(
      await adminWith({ MONGODB_DB: dbName }, 'bootstrap', '--tenant', 'shutdown', '--collection', 'main', '--json'),
    ) as { api_key: string; key_id: string; collection_id: string };
    const api = new Api(proc.baseUrl, created.api_key);

    socket = await RawSocket.open(api, '&subscriber_id=shutdown');
    socket.send({ action: 'subscribe', collections: [created.collection_id], event_types: ['ingestion_progress'] });
    await socket.next((frame) => frame.action === 'subscribed');

    const accepted = await api.post('/v1/memories', {
      collection_id: created.collection_id,
      raw_text: 'Alice Chen manages the Berlin office of Acme Corp and reports to Bob Patel.',
    });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const memoryId = accepted.body.results.id as string;
    const complete = await socket.next(
      (frame) =>
        frame.action === 'event' &&
        (frame.payload as { engram_id: string; user_stage: string }).engram_id === memoryId &&
        (frame.payload as { user_stage: string }).user_stage === 'complete',
      60_000,
    );
    const found = await api.search([created.collection_id], 'Who manages the Berlin office?');
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.equal(found.body.results.hits[0]?.memory_id, memoryId);

    // An ack the server has taken (the heartbeat after it is answered in order) but not yet
    // written: acks are coalesced for 200 ms, so it is still pending when the signal arrives.
    socket.send({ action: 'ack', seq: complete.seq });
    const from = socket.frames.length;
    socket.send({ action: 'heartbeat' });
    await socket.next((frame) => frame.action === 'heartbeat_ack', 5000, from);

    const signalled = Date.now();
    proc.child.kill('SIGINT');
    const exit = await exitOf(proc.child, STOP_BOUND_MS);
    const stopMs = Date.now() - signalled;
    t.diagnostic(`stopped ${stopMs} ms after SIGINT`);

    const log = readFileSync(logFile, 'utf8').slice(logStart);
    assert.match(log, /"msg":"shutting down"/, 'the process logged its SIGINT: this log is its own');
    assert.deepEqual(complaints(log), [], `no line at warn level or above; stop took ${stopMs} ms`);
    assert.deepEqual(exit, { code: 0, signal: null }, `the exit after ${stopMs} ms`);
    // The subscriber was told why (docs/events.md), and its last ack was written before the client closed.
    const open = socket;
    await until(() => open.closed !== null, 'the socket to be closed', 5000);
    assert.deepEqual(open.closed, { code: 1001, reason: 'server_shutdown' });
    const database = await connectDatabase(info.serviceEnv.MONGODB_URI!, dbName);
    try {
      const ack = await database.db.collection<{ _id: string; seq: number }>('ws_acks').findOne({ _id: `${created.key_id}:shutdown` });
      assert.equal(ack?.seq, complete.seq, 'the pending ack was written at stop');
    } finally {
      await database.close();
    }
  });

  it('a ROLE=all process stopped while memories are being ingested exits 0, and another process on its queue completes them', async (t) => {
    const queue = `${info.serviceEnv.TEMPORAL_TASK_QUEUE}-shutdown-busy-${suffix}`;
    const env = { ROLE: 'all', MONGODB_DB: dbName, TEMPORAL_TASK_QUEUE: queue, LOG_LEVEL: 'info', LOG_FORMAT: 'json' };
    const busyLog = path.join(info.logDir, 'all-shutdown-busy.log');
    const logStart = existsSync(busyLog) ? statSync(busyLog).size : 0;
    const busy = await startApiProcess('all-shutdown-busy', env);
    started.push(busy);
    const created = JSON.parse(
      await adminWith({ MONGODB_DB: dbName }, 'bootstrap', '--tenant', 'shutdown-busy', '--collection', 'main', '--json'),
    ) as { api_key: string; collection_id: string };
    const api = new Api(busy.baseUrl, created.api_key);
    const sentence = 'Alice Chen met Bob Patel in Berlin to plan the launch of the Orion project with Acme Corp. ';
    const ids: string[] = [];
    for (let at = 0; at < 4; at++) {
      const accepted = await api.post('/v1/memories', { collection_id: created.collection_id, raw_text: `${at}: ${sentence.repeat(300)}` });
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      ids.push(accepted.body.results.id as string);
    }
    // Signalled while the worker embeds and extracts them: model and CPU threads are mid-task.
    await until(
      async () => ['structuring', 'indexing'].includes((await api.get(`/v1/memories/${ids[0]}`)).body.results?.status as string),
      'the first memory to be structured or indexed',
      60_000,
    );
    busy.child.kill('SIGINT');
    const exit = await exitOf(busy.child, STOP_BOUND_MS);
    const log = readFileSync(busyLog, 'utf8').slice(logStart);
    const foreign = log.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('{'));
    assert.deepEqual(foreign, [], 'no line from the runtime or a native library (an abort prints one)');
    assert.deepEqual(exit, { code: 0, signal: null });

    // Nothing accepted is lost: a process on the same task queue takes the workflows up again.
    const resume = await startApiProcess('all-shutdown-resume', env);
    started.push(resume);
    const resumed = new Api(resume.baseUrl, created.api_key);
    for (const id of ids) {
      await until(
        async () => (await resumed.get(`/v1/memories/${id}`)).body.results?.status === 'complete',
        `memory ${id} to complete`,
        120_000,
      );
    }
    t.diagnostic(`${ids.length} memories completed after the restart`);
  });
});
