import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { Api, createMemory, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { startApiProcess } from '../support/processes.js';

describe('a second API process', () => {
  let second: ChildProcess;
  let secondApi: Api;
  let tenant: TenantFixture;

  before(async () => {
    const started = await startApiProcess('api-2', { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '40' });
    second = started.child;
    tenant = await newTenant('multi');
    secondApi = new Api(started.baseUrl, tenant.apiKey);
  });
  after(() => stopChild(second));

  it('sees memories written through the first and drops those deleted through it', async () => {
    const id = await createMemory(tenant, { raw_text: 'The observatory telescope has a 2.4 metre primary mirror.' });
    await waitForStatus(tenant.api, id, ['complete']);
    const found = await secondApi.post('/v1/memories/search', { query: 'telescope mirror size', collection_ids: [tenant.collectionId] });
    assert.equal(found.status, 200);
    assert.equal(found.body.results.hits[0]?.memory_id, id);

    assert.equal((await tenant.api.delete(`/v1/memories/${id}`)).status, 200);
    const gone = await secondApi.post('/v1/memories/search', { query: 'telescope mirror size', collection_ids: [tenant.collectionId] });
    assert.ok(gone.body.results.hits.every((hit: { memory_id: string }) => hit.memory_id !== id));
  });

  it('answers 429 with Retry-After once a key exceeds its rate', async () => {
    let limited = null;
    for (let i = 0; i < 80 && !limited; i++) {
      const response = await secondApi.get('/v1/collections');
      if (response.status === 429) limited = response;
    }
    assert.ok(limited, 'a 429 arrived');
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });
});
