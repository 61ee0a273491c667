/**
 * Fault injection: an API process that falls behind the index-change feed further than the feed
 * keeps (here: paused with SIGSTOP while the feed moves on and is trimmed) must reload what it
 * holds and keep answering, with what changed meanwhile. And no request waits forever: every one
 * has a server-side deadline.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../core/ids.js';
import { stopChild } from '../../dev/stack.js';
import { connectDatabase } from '../../store/db.js';
import { IndexChangeFeed } from '../../store/index-changes.js';
import { Api, createMemory, newTenant, stack, waitForStatus, type TenantFixture } from '../support/client.js';
import { startApiProcess } from '../support/processes.js';

const FEED_RETENTION = 10;

/** A search that gives up on the client side, so a hung server fails the test instead of stalling it. */
async function searchWithin(api: Api, collectionId: string, query: string, ms: number) {
  const response = await Promise.race([
    api.search([collectionId], query),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), ms).unref()),
  ]);
  assert.ok(response, `the search answered within ${ms} ms`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.results as { hits: { memory_id: string }[]; entities: { name: string }[] };
}

describe('an API process behind the index-change feed', () => {
  let lagging: ChildProcess;
  let laggingApi: Api;
  let tenant: TenantFixture;

  before(async () => {
    const started = await startApiProcess('api-lagging', { INDEX_FEED_MAX_ENTRIES: String(FEED_RETENTION) });
    lagging = started.child;
    tenant = await newTenant('feed-gap');
    laggingApi = new Api(started.baseUrl, tenant.apiKey);
  });
  after(async () => {
    lagging.kill('SIGCONT');
    await stopChild(lagging);
  });

  it('reloads its partitions after a gap and keeps answering with what changed meanwhile', async () => {
    const deleted = await createMemory(tenant, { raw_text: 'Nora Quinn restores violins in Cremona.' });
    await waitForStatus(tenant.api, deleted, ['complete']);
    const before = await searchWithin(laggingApi, tenant.collectionId, 'Nora Quinn violins', 20_000);
    assert.ok(
      before.hits.some((hit) => hit.memory_id === deleted),
      'loaded, with the first memory',
    );

    // Paused: it follows nothing while the feed moves on past its retention.
    lagging.kill('SIGSTOP');
    let added: string;
    try {
      assert.equal((await tenant.api.delete(`/v1/memories/${deleted}`)).status, 200);
      added = await createMemory(tenant, { raw_text: 'Oscar Reyes tunes pianos in Seville.' });
      await waitForStatus(tenant.api, added, ['complete']);
      // More changes than the feed keeps (notices for memories that do not exist change nothing),
      // then the trim any process with this retention would make.
      const info = stack();
      const database = await connectDatabase(info.serviceEnv.MONGODB_URI!, info.serviceEnv.MONGODB_DB!);
      try {
        const feed = await IndexChangeFeed.open(database.db, database.capabilities, FEED_RETENTION);
        await feed.publishUpserts(
          tenant.tenantId,
          Array.from({ length: FEED_RETENTION * 3 }, () => ({ id: newId(), collectionIds: [tenant.collectionId] })),
        );
        await feed.log.trim();
      } finally {
        await database.close();
      }
    } finally {
      lagging.kill('SIGCONT');
    }

    const afterGap = await searchWithin(laggingApi, tenant.collectionId, 'Oscar Reyes pianos', 20_000);
    assert.ok(
      afterGap.hits.some((hit) => hit.memory_id === added),
      'the memory written during the gap is found',
    );
    assert.ok(
      afterGap.entities.some((entity) => entity.name.toLowerCase() === 'oscar reyes'),
      `with its graph: ${JSON.stringify(afterGap.entities)}`,
    );
    const gone = await searchWithin(laggingApi, tenant.collectionId, 'Nora Quinn violins', 20_000);
    assert.ok(!gone.hits.some((hit) => hit.memory_id === deleted), 'the memory deleted during the gap is not');
    assert.ok(!gone.entities.some((entity) => entity.name.toLowerCase() === 'nora quinn'));
    // And later searches do not wait on a stuck catch-up either.
    for (let i = 0; i < 3; i++) await searchWithin(laggingApi, tenant.collectionId, 'pianos', 20_000);
  });
});

describe('the request deadline', () => {
  it('answers 503 request_timeout instead of waiting past REQUEST_TIMEOUT_MS', async () => {
    const { child, baseUrl } = await startApiProcess('api-deadline', { REQUEST_TIMEOUT_MS: '1' });
    try {
      const tenant = await newTenant('deadline');
      const api = new Api(baseUrl, tenant.apiKey);
      const response = await api.search([tenant.collectionId], 'anything at all about pianos');
      assert.equal(response.status, 503, JSON.stringify(response.body));
      assert.equal(response.body.error.code, 'request_timeout');
      assert.equal(response.headers.get('retry-after'), '1');
      assert.match(response.body.error.message, /1 ms/);
      // Health stays outside the deadline: operators can still see the process.
      assert.equal((await fetch(`${baseUrl}/v1/ready`)).status, 200);
    } finally {
      await stopChild(child);
    }
  });
});
