/**
 * The shipped client (client/memory-events.ts) against the real stack: it verifies signatures
 * with pinned keys, and when its API process is killed mid-burst it reconnects to the restarted
 * process and replays from its high-water mark: every event once, in order.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fetchSigningKeys, MemoryEventsClient, type EventFrame } from '../../client/memory-events.js';
import { newId } from '../../core/ids.js';
import { freePort } from '../../dev/embedded.js';
import { spawnService, stopChild, waitForReady } from '../../dev/stack.js';
import { connectDatabase, type Database } from '../../store/db.js';
import { EventLog } from '../../store/events.js';
import { newTenant, stack, type TenantFixture } from '../support/client.js';
import { checkFrame } from '../support/events-schema.js';

describe('events client against the stack', () => {
  let tenant: TenantFixture;
  let database: Database;
  let log: EventLog;
  let api: ChildProcess | undefined;
  let port: number;
  const startApi = async () => {
    const info = stack();
    api = spawnService('api/main.js', { ...info.serviceEnv, ROLE: 'api', PORT: String(port) }, path.join(info.logDir, 'api-client.log'));
    await waitForReady(`http://127.0.0.1:${port}`, 120_000, api);
  };

  before(async () => {
    tenant = await newTenant('events-client');
    const env = stack().serviceEnv;
    database = await connectDatabase(env.MONGODB_URI!, env.MONGODB_DB!);
    log = await EventLog.open(database.db, database.capabilities, 100_000);
    port = await freePort();
    await startApi();
  });
  after(async () => {
    await stopChild(api);
    await database.close();
  });

  it('survives its API process being killed mid-burst: verified, every event once, in order', async () => {
    const baseUrl = `http://127.0.0.1:${port}`;
    const jwks = await fetchSigningKeys(baseUrl, tenant.apiKey);
    const received: EventFrame[] = [];
    const errors: string[] = [];
    const client = new MemoryEventsClient({
      baseUrl,
      apiKey: tenant.apiKey,
      collections: [tenant.collectionId],
      eventTypes: ['burst'],
      lastProcessedSeq: await log.log.latestSeq(),
      verify: { jwks },
      reconnect: { minDelayMs: 100, maxDelayMs: 1000 },
      onEvent: (frame) => {
        const mismatch = checkFrame(frame);
        if (mismatch) errors.push(mismatch);
        received.push(frame);
      },
      onError: (error) => errors.push(error.code ?? error.message),
    });
    await client.start();
    await client.waitFor((c) => c.stats.subscriptions >= 1, 10_000);

    const total = 1500;
    const appended: number[] = [];
    const append = async (count: number) => {
      for (let i = 0; i < count; i += 250) {
        appended.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(250, count - i) }, () =>
              log.append('burst', tenant.tenantId, tenant.collectionId, { engram_id: newId(), n: appended.length }),
            ),
          )),
        );
      }
    };
    await append(total / 2);
    await client.waitFor(() => received.length >= 100, 20_000);
    api!.kill('SIGKILL'); // the API process dies mid-stream
    await append(total / 2);
    await startApi();
    await client.waitFor(() => received.length >= total, 60_000);
    await client.stop();

    const seqs = received.map((frame) => frame.seq);
    assert.deepEqual(
      seqs,
      [...appended].sort((a, b) => a - b),
      'every event exactly once, in seq order',
    );
    assert.ok(client.stats.reconnects >= 1, 'it reconnected');
    assert.ok(
      received.every((frame) => frame.signature),
      'all signed',
    );
    assert.equal(client.stats.rejected, 0, `no rejected events (errors: ${errors.join(', ')})`);
    assert.deepEqual(
      errors.filter((error) => error.includes('events.schema.json')),
      [],
    );
  });
});
