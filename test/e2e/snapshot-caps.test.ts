/**
 * The SNAPSHOT_MAX_* caps hold on every path that makes a snapshot: an export of a collection over
 * a cap is refused before the collection is read, and a device create that would take a snapshot
 * over a cap is refused instead of answering a snapshot the service would then refuse to open.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { Api, createMemory, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

const MAX_EPISODES = 3;

describe('snapshot caps on export and device create', () => {
  let proc: ApiProcess;
  let tenant: TenantFixture;
  let api: Api;

  before(async () => {
    proc = await startApiProcess('api-snapshot-caps', { SNAPSHOT_MAX_EPISODES: String(MAX_EPISODES) });
    tenant = await newTenant('snapshot-caps');
    api = new Api(proc.baseUrl, tenant.apiKey);
  });

  after(async () => {
    await stopChild(proc?.child);
  });

  it('refuses a device create that would exceed a cap with 413 snapshot_too_large naming the cap', async () => {
    let snapshot: unknown = {};
    for (let i = 0; i < MAX_EPISODES; i++) {
      const response = await api.post('/v1/memories', { snapshot, raw_text: `Person ${i} visits the Berlin office.` });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      snapshot = response.body.results.snapshot;
    }
    const over = await api.post('/v1/memories', { snapshot, raw_text: 'One more visits the Berlin office.' });
    assert.equal(over.status, 413, JSON.stringify(over.body).slice(0, 500));
    assert.equal(over.body.error.code, 'snapshot_too_large');
    assert.match(over.body.error.message, /SNAPSHOT_MAX_EPISODES/);
    assert.match(over.body.error.message, new RegExp(`${MAX_EPISODES + 1}.*${MAX_EPISODES}`));
    const search = await api.post('/v1/memories/search', { query: 'Berlin office', snapshot });
    assert.equal(search.status, 200, 'the snapshot at the cap still opens');
  });

  it('refuses to export a collection over a cap before reading it, naming the cap', async () => {
    for (let i = 0; i <= MAX_EPISODES; i++) {
      await waitForStatus(tenant.api, await createMemory(tenant, { raw_text: `Visitor ${i} signs in at the Hamburg depot.` }), [
        'complete',
      ]);
    }
    const response = await api.post('/v1/device-memory/snapshot/export', { collection_id: tenant.collectionId });
    assert.equal(response.status, 413, JSON.stringify(response.body).slice(0, 500));
    assert.equal(response.body.error.code, 'snapshot_too_large');
    assert.match(response.body.error.message, /SNAPSHOT_MAX_EPISODES/);
    assert.match(response.body.error.message, new RegExp(`${MAX_EPISODES + 1}.*${MAX_EPISODES}`));
  });
});
