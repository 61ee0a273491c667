/**
 * Fault injection: an API process killed (SIGKILL, from inside, right after a named step) in the
 * middle of a memory delete. Whatever step it dies at, the delete is finished by another API
 * process's sweeper, and afterwards nothing in any MongoDB collection refers to the memory.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ObjectId } from 'mongodb';
import { PURGE_STEPS } from '../../core/purge-steps.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { freePort, startTemporal } from '../../dev/embedded.js';
import { stopChild } from '../../dev/stack.js';
import { Api, createMemory, eventually, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';
import { startApiProcess } from '../support/processes.js';

after(closeDatabase);

/** Logs of what happened: they name memory ids, never their content (checked separately). */
const LOGS = new Set(['memory_events', 'index_changes']);

/** Every document, in every collection but the logs, that refers to the memory (or its files). */
async function leftoversOf(memoryId: string, fileIds: string[]): Promise<string[]> {
  const db = await database();
  const found: string[] = [];
  for (const { name } of await db.listCollections().toArray()) {
    if (LOGS.has(name)) continue;
    for await (const doc of db.collection(name).find({})) {
      const text = JSON.stringify(doc);
      if (text.includes(memoryId) || fileIds.some((id) => text.includes(id))) found.push(`${name}: ${text.slice(0, 200)}`);
    }
  }
  return found;
}

const page = (marker: string) =>
  Buffer.from(`<html><body><h1>Report</h1><p>Ingrid Holm audits the ${marker} ledger in Tromsø every spring.</p></body></html>`);

describe('a delete interrupted by a crash', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('fault');
  });

  // The last step removes the intent row: after it there is nothing left to finish.
  for (const step of PURGE_STEPS.filter((name) => name !== 'done')) {
    it(`is finished after the process dies right after "${step}", leaving no orphan anywhere`, async () => {
      const marker = `Kvarm${step.replace(/_/g, '')}`;
      const created = await tenant.api.post(
        '/v1/memories',
        {
          collection_id: tenant.collectionId,
          content_parts: [{ type: 'document', data: page(marker).toString('base64'), media_type: 'text/html', filename: `${marker}.html` }],
        },
        { 'Idempotency-Key': `fault-${step}-${Date.now()}` },
      );
      assert.equal(created.status, 202, JSON.stringify(created.body));
      const memoryId = created.body.results.id as string;
      await waitForStatus(tenant.api, memoryId, ['complete']);
      const db = await database();
      const record = await db
        .collection<{ _id: string; content: { files?: { file_id: string }[] } }>('memories')
        .findOne({ _id: memoryId });
      const fileIds = (record?.content.files ?? []).map((file) => file.file_id);
      assert.equal(fileIds.length, 1);
      assert.ok((await leftoversOf(memoryId, fileIds)).length > 0, 'the memory has data to delete');

      const { child: doomed, baseUrl } = await startApiProcess(`api-crash-${step}`, {
        ALLOW_FAULT_INJECTION: 'true',
        FAULT_INJECT_CRASH_AT: step,
      });
      try {
        const exited = new Promise<NodeJS.Signals | null>((resolve) => doomed.once('exit', (_code, signal) => resolve(signal)));
        const answer = await new Api(baseUrl, tenant.apiKey).delete(`/v1/memories/${memoryId}`).catch((error: Error) => error);
        assert.ok(answer instanceof Error, `the process died before answering (got ${JSON.stringify(answer)})`);
        assert.equal(await exited, 'SIGKILL');
      } finally {
        await stopChild(doomed);
      }

      // The stack's API process sweeps interrupted deletes (DELETE_SWEEP_INTERVAL_MS=1000 in tests).
      await eventually(async () => assert.deepEqual(await leftoversOf(memoryId, fileIds), [], 'no orphan in any collection'));
      assert.equal(await db.collection('files.chunks').countDocuments({ files_id: new ObjectId(fileIds[0]) }), 0, 'no stored bytes');
      assert.equal((await tenant.api.get(`/v1/memories/${memoryId}`)).status, 404);
      const search = await tenant.api.search([tenant.collectionId], `Ingrid Holm ledger ${marker}`);
      assert.ok(
        search.body.results.hits.every((hit: { memory_id: string }) => hit.memory_id !== memoryId),
        'not searchable',
      );
      // The logs keep ids and stages only: none of the memory's words.
      for (const log of LOGS) {
        const hits = await db.collection(log).countDocuments({ 'payload.message': { $regex: marker } });
        assert.equal(hits, 0, `${log} holds none of its text`);
      }
    });
  }
});

describe('a PATCH that adds a collection while Temporal is unreachable', () => {
  it('keeps the change and projects the graph once the reconciler can', async () => {
    const tenant = await newTenant('patch-down');
    const memoryId = await createMemory(tenant, { raw_text: 'Halvard Brekke runs a boat charter in Lofoten.' });
    await waitForStatus(tenant.api, memoryId, ['complete']);
    const joined = (await tenant.api.post('/v1/collections', { name: 'joined' })).body.results.id as string;

    // An API process whose Temporal goes away: the projection workflow cannot be started.
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-temporal-down-'));
    const temporal = await startTemporal({ dataDir, port: await freePort(), uiPort: null });
    const api = await startApiProcess('api-temporal-down', { TEMPORAL_ADDRESS: temporal.address });
    try {
      await temporal.stop();
      const patched = await new Api(api.baseUrl, tenant.apiKey).patch(`/v1/memories/${memoryId}`, {
        collection_ids: [tenant.collectionId, joined],
      });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual(patched.body.results.collection_ids, [tenant.collectionId, joined]);
    } finally {
      await stopChild(api.child);
      await temporal.stop().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    }

    // The stack's own API process (its Temporal is up) reconciles within RECONCILE_INTERVAL_MS.
    assert.ok(
      (await tenant.api.search([joined], 'boat charter Lofoten')).body.results.hits.some(
        (hit: { memory_id: string }) => hit.memory_id === memoryId,
      ),
      'searchable in the joined collection at once',
    );
    await eventually(async () => {
      const search = await tenant.api.search([joined], 'Halvard Brekke');
      const names: string[] = search.body.results.entities.map((entity: { name: string }) => entity.name.toLowerCase());
      assert.ok(names.includes('halvard brekke'), `the graph reached the joined collection: ${names.join(', ')}`);
    });
    const db = await database();
    const record = await db.collection('memories').findOne({ _id: memoryId as unknown as ObjectId });
    assert.equal(record?.collections_sync, undefined, 'nothing left to reconcile');
  });
});
