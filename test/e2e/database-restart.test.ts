/**
 * Fault injection: the database goes away in the middle of ingestion and comes back. A stack of
 * its own (the stand-in with its journal backend, the one `npm run dev` uses, an API process and a worker, sharing only the
 * suite's Temporal) accepts memories, loses its database for a few seconds while they are being
 * processed, and must then complete every accepted memory exactly once.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Connection, WorkflowClient } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { ingestWorkflowId } from '../../core/ids.js';
import { freePort, startMongoStandin, type EmbeddedMongo } from '../../dev/embedded.js';
import { spawnService, stopChild, waitForReady } from '../../dev/stack.js';
import { adminWith, Api, eventually, sleep, stack } from '../support/client.js';

const MEMORIES = 16;

/** A few paragraphs with names in them: several chunks each, so ingestion takes a while. */
const textOf = (n: number) =>
  Array.from(
    { length: 6 },
    (_, p) =>
      `Report ${n}.${p}: Astrid Nyberg${n} inspected the Bodø harbour crane number ${p} on behalf of the port authority. ` +
      'The crane passed its load test after the hydraulic seals were replaced, and the operators signed the log book. '.repeat(4),
  ).join('\n\n');

describe('the database restarting during ingestion', () => {
  let dataDir: string;
  let mongoPort: number;
  let mongo: EmbeddedMongo | null = null;
  let api: ChildProcess;
  let worker: ChildProcess;
  let client: Api;
  let collectionId: string;
  let env: Record<string, string>;

  before(async () => {
    const info = stack();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-db-restart-'));
    mongoPort = await freePort();
    mongo = await startMongoStandin({ dataDir, port: mongoPort, backend: 'journal' });
    const suffix = Date.now().toString(36);
    env = {
      ...info.serviceEnv,
      MONGODB_URI: mongo.uri,
      MONGODB_DB: `restart_${suffix}`,
      TEMPORAL_TASK_QUEUE: `restart-${suffix}`,
      DATA_DIR: dataDir,
    };
    const port = await freePort();
    api = spawnService('api/main.js', { ...env, ROLE: 'api', PORT: String(port) }, path.join(info.logDir, 'api-db-restart.log'));
    worker = spawnService('workers/main.js', { ...env, ROLE: 'worker' }, path.join(info.logDir, 'worker-db-restart.log'));
    await waitForReady(`http://127.0.0.1:${port}`, 120_000, api);
    const created = JSON.parse(await adminWith(env, 'bootstrap', '--tenant', 'restart', '--collection', 'main', '--json')) as {
      api_key: string;
      collection_id: string;
    };
    client = new Api(`http://127.0.0.1:${port}`, created.api_key);
    collectionId = created.collection_id;
  });

  after(async () => {
    await stopChild(api);
    await stopChild(worker);
    await mongo?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** How long ago a Temporal timestamp was, in seconds (`-` when unset). */
  const secondsAgo = (time: { seconds?: { toNumber(): number } | number | null } | null | undefined): string => {
    const seconds = time?.seconds;
    if (seconds === undefined || seconds === null) return '-';
    return `${(Date.now() / 1000 - (typeof seconds === 'number' ? seconds : seconds.toNumber())).toFixed(1)} s ago`;
  };

  /** Each unfinished memory's workflow: status, and its pending activity's attempt, last failure and heartbeat. */
  async function workflowStates(ids: string[]): Promise<string[]> {
    const lines: string[] = [];
    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS! });
    try {
      const workflows = new WorkflowClient({ connection, namespace: env.TEMPORAL_NAMESPACE ?? 'default' });
      for (const id of ids) {
        const status = (await client.get(`/v1/memories/${id}`)).body?.results?.status as string | undefined;
        if (status === 'complete') continue;
        const described = await workflows.getHandle(ingestWorkflowId(id)).describe();
        const pending = (described.raw.pendingActivities ?? []).map((activity) => ({
          type: activity.activityType?.name,
          state: activity.state,
          attempt: activity.attempt,
          lastFailure: activity.lastFailure?.message,
          heartbeat: activity.heartbeatDetails?.payloads?.map((payload) => payload.data?.toString()).join(' '),
          started: secondsAgo(activity.lastStartedTime),
          heartbeatSent: secondsAgo(activity.lastHeartbeatTime),
        }));
        lines.push(`${id}: memory ${status}, workflow ${described.status.name}, pending ${JSON.stringify(pending)}`);
      }
    } finally {
      await connection.close();
    }
    return lines;
  }

  /**
   * When memories do not leave the pipeline, what their workflows are doing (status, the pending
   * activity's attempt, last failure and heartbeat) and the worker's warnings: a failure in CI is
   * then explained by its own output.
   */
  async function withDiagnostics<T>(ids: string[], work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const lines: string[] = [];
      // What cannot be gathered is said in its place: the test's own failure is thrown either way.
      try {
        lines.push(...(await workflowStates(ids)));
      } catch (gathering) {
        lines.push(`(workflow states unavailable: ${String(gathering)})`);
      }
      const log = readFileSync(path.join(stack().logDir, 'worker-db-restart.log'), 'utf8').split('\n');
      lines.push(
        ...log
          .filter((line) => /"level":(40|50|60)/.test(line) || line.includes('Warning:'))
          .slice(-20)
          .map((line) => line.slice(0, 600)),
      );
      throw new Error(`${(error as Error).message}\n${lines.join('\n')}`, { cause: error });
    }
  }

  it('completes every accepted memory exactly once', async () => {
    const ids: string[] = [];
    for (let n = 0; n < MEMORIES; n++) {
      const response = await client.post('/v1/memories', { collection_id: collectionId, raw_text: textOf(n) });
      assert.equal(response.status, 202, JSON.stringify(response.body));
      ids.push(response.body.results.id as string);
    }
    const listed = await client.get(`/v1/memories?collection_ids=${collectionId}&limit=100`);
    const unfinished = (listed.body.results as { status: string }[]).filter((memory) => memory.status !== 'complete').length;
    assert.ok(unfinished > 0, 'some memories are still being processed when the database goes');

    await mongo!.stop();
    mongo = null;
    await sleep(3000);
    mongo = await startMongoStandin({ dataDir, port: mongoPort, backend: 'journal' });

    const statuses = await withDiagnostics(ids, () =>
      eventually(
        async () => {
          const current = await Promise.all(
            ids.map(async (id) => {
              const response = await client.get(`/v1/memories/${id}`);
              return response.status === 200 ? (response.body.results.status as string) : `http ${response.status}`;
            }),
          );
          assert.ok(
            current.every((status) => status === 'complete' || status === 'failed'),
            `every memory leaves the pipeline: ${current.join(', ')}`,
          );
          return current;
        },
        120_000,
        500,
      ),
    );
    assert.deepEqual(
      statuses,
      ids.map(() => 'complete'),
      'every accepted memory completed',
    );

    // Exactly once: one chunk per index, one complete event, and the chunk counts agree.
    const db = new MongoClient(mongo.uri, { retryWrites: false });
    await db.connect();
    try {
      const database = db.db(env.MONGODB_DB);
      for (const id of ids) {
        const record = await database.collection<{ _id: string; chunk_count: number }>('memories').findOne({ _id: id });
        const chunks = await database
          .collection('chunks')
          .find({ memory_id: id }, { projection: { index: 1 } })
          .toArray();
        const indexes = chunks.map((chunk) => chunk.index as number).sort((a, b) => a - b);
        assert.deepEqual(
          indexes,
          Array.from({ length: record!.chunk_count }, (_, i) => i),
          `chunks of ${id}`,
        );
        const completes = await database
          .collection('memory_events')
          .countDocuments({ 'payload.engram_id': id, 'payload.user_stage': 'complete' });
        assert.equal(completes, 1, `one complete event for ${id}`);
      }
    } finally {
      await db.close();
    }
    const search = await client.search([collectionId], 'Astrid Nyberg3 harbour crane');
    assert.equal(search.status, 200);
    assert.ok(search.body.results.hits.some((hit: { memory_id: string }) => hit.memory_id === ids[3]));
  });
});
