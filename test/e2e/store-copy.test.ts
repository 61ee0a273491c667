/**
 * Moving data out of the embedded store (README, "Moving your data to MongoDB"): a service runs on
 * a stand-in of its own and ingests; it is stopped, `npm run admin -- store copy --to <uri>` copies
 * the still-running stand-in's database into a second stand-in instance, and an API process
 * started on the copy serves the same memories, finds them by search, and replays their events.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { projectRoot } from '../../config/index.js';
import { freePort, startMongoStandin, type EmbeddedMongo } from '../../dev/embedded.js';
import { spawnService, stopChild, waitForReady } from '../../dev/stack.js';
import { adminWith, Api, stack, waitForStatus } from '../support/client.js';
import { RawSocket } from '../support/ws.js';

const execFileAsync = promisify(execFile);

const TEXTS = [
  'The lighthouse on Muckle Flugga was first lit in 1858 and its keeper was Thomas Stevenson.',
  'Our Reykjavik office moves to Borgartún 26 in March; Sigrún Jónsdóttir leads the move.',
  'The ferry from Lerwick to Aberdeen leaves at 17:30 and takes about twelve hours.',
];

describe('store copy: the embedded store to another MongoDB', () => {
  let dataDir: string;
  let source: EmbeddedMongo | null = null;
  let target: EmbeddedMongo | null = null;
  let service: ChildProcess | undefined;
  let copyApi: ChildProcess | undefined;
  let env: Record<string, string>;
  let apiKey: string;
  let collectionId: string;
  const ids: string[] = [];

  before(async () => {
    const info = stack();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-store-copy-'));
    // Two instances of the embedded store, each with its own files.
    source = await startMongoStandin({ dataDir: path.join(dataDir, 'source'), port: await freePort(), backend: 'journal' });
    target = await startMongoStandin({ dataDir: path.join(dataDir, 'target'), port: await freePort(), backend: 'journal' });
    const suffix = Date.now().toString(36);
    env = {
      ...info.serviceEnv,
      MONGODB_URI: source.uri,
      MONGODB_DB: `copy_${suffix}`,
      TEMPORAL_TASK_QUEUE: `copy-${suffix}`,
      DATA_DIR: dataDir,
    };
    const port = await freePort();
    service = spawnService('api/main.js', { ...env, ROLE: 'all', PORT: String(port) }, path.join(info.logDir, 'store-copy-source.log'));
    await waitForReady(`http://127.0.0.1:${port}`, 120_000, service);
    const created = JSON.parse(await adminWith(env, 'bootstrap', '--tenant', 'copy', '--collection', 'main', '--json')) as {
      api_key: string;
      collection_id: string;
    };
    apiKey = created.api_key;
    collectionId = created.collection_id;
    const client = new Api(`http://127.0.0.1:${port}`, apiKey);
    for (const text of TEXTS) {
      const response = await client.post('/v1/memories', { collection_id: collectionId, raw_text: text });
      assert.equal(response.status, 202, JSON.stringify(response.body));
      ids.push(response.body.results.id as string);
    }
    for (const id of ids) await waitForStatus(client, id, ['complete'], 120_000);
    // The documented path: the service is stopped, the stand-in keeps running.
    await stopChild(service);
    service = undefined;
  });

  after(async () => {
    await stopChild(service);
    await stopChild(copyApi);
    await source?.stop();
    await target?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const copy = (...extra: string[]) =>
    execFileAsync(process.execPath, [path.join(projectRoot(), 'dist', 'bin', 'admin.js'), 'store', 'copy', '--to', target!.uri, ...extra], {
      env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    });

  it('copies every collection with its documents and indexes, then refuses a non-empty target unless --replace', async () => {
    const { stdout } = await copy('--json');
    const result = JSON.parse(stdout) as {
      collections: { name: string; documents: number; indexes: string[] }[];
      documents: number;
      source_changed: string[];
    };
    assert.deepEqual(result.source_changed, []);
    const byName = new Map(result.collections.map((c) => [c.name, c]));
    for (const name of ['memories', 'chunks', 'memory_events', 'index_changes', 'graph_mentions', 'tenants', 'api_keys', 'collections'])
      assert.ok(byName.has(name), `${name} copied: ${stdout}`);
    assert.equal(byName.get('memories')!.documents, TEXTS.length);
    assert.ok(byName.get('chunks')!.documents >= TEXTS.length);
    assert.ok(byName.get('memory_events')!.indexes.includes('seq_unique'), JSON.stringify(byName.get('memory_events')));

    await assert.rejects(copy(), (error: { code?: number; stderr?: string }) => {
      assert.equal(error.code, 2);
      assert.match(error.stderr ?? '', /not empty .*--replace/);
      return true;
    });
    const again = JSON.parse((await copy('--replace', '--json')).stdout) as { documents: number; replaced: boolean };
    assert.equal(again.replaced, true);
    assert.equal(again.documents, result.documents);
  });

  it('serves the memories, search and the event log from the copy', async () => {
    const info = stack();
    const port = await freePort();
    copyApi = spawnService(
      'api/main.js',
      { ...env, MONGODB_URI: target!.uri, ROLE: 'api', PORT: String(port) },
      path.join(info.logDir, 'store-copy-target.log'),
    );
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForReady(baseUrl, 120_000, copyApi);
    const client = new Api(baseUrl, apiKey);

    for (const id of ids) {
      const memory = await client.get(`/v1/memories/${id}`);
      assert.equal(memory.status, 200, JSON.stringify(memory.body));
      assert.equal(memory.body.results.status, 'complete');
    }
    const found = await client.search([collectionId], 'Who leads the move of the Reykjavik office?');
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.equal(found.body.results.hits[0]?.memory_id, ids[1], JSON.stringify(found.body.results));

    const socket = await RawSocket.open(client);
    try {
      socket.send({ action: 'subscribe', collections: [collectionId], event_types: ['ingestion_progress'], last_ack_seq: 0 });
      await socket.next((frame) => frame.action === 'subscribed');
      for (const id of ids) {
        const done = await socket.next((frame) => {
          const payload = frame.payload as { engram_id?: string; user_stage?: string } | undefined;
          return frame.action === 'event' && payload?.engram_id === id && payload.user_stage === 'complete';
        });
        assert.ok(done.seq! > 0);
      }
    } finally {
      socket.close();
    }
  });
});
