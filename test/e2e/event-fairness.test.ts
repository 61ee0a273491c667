/**
 * Fair sharing of the live event stream (issue 20, items 2 to 4), over HTTP and WebSocket like a
 * client: per-tenant event retention, one rate-bounded memory_unconfident per search, replay_gap
 * for a paused subscriber whose events were trimmed, session caps, frames signed once and the log
 * followed once per process, and key revocation reaching tickets and open sessions.
 *
 * Most cases run against an API process of their own (its own database, small limits), so the
 * limits are reached with few requests and nothing else shares them.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../core/ids.js';
import { freePort } from '../../dev/embedded.js';
import { spawnService, stopChild, waitForReady } from '../../dev/stack.js';
import { connectDatabase, type Database } from '../../store/db.js';
import { EventLog } from '../../store/events.js';
import { adminWith, Api, newTenant, sleep, stack, until } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';
import { RawSocket, wsUrl, type Frame } from '../support/ws.js';

const PER_TENANT = 100;
const seqsOf = (frames: Frame[]) => frames.map((frame) => frame.seq as number);
const strictlyIncreasing = (seqs: number[]) => seqs.every((seq, index) => index === 0 || seq > seqs[index - 1]!);

interface FairTenant {
  api: Api;
  tenantId: string;
  keyId: string;
  apiKey: string;
  collectionId: string;
}

describe('event fairness between tenants (own API process, small limits)', () => {
  let child: ChildProcess;
  let baseUrl: string;
  let dbName: string;
  let db: Database;
  let log: EventLog;
  const sockets: RawSocket[] = [];

  const fairTenant = async (label: string): Promise<FairTenant> => {
    const out = await adminWith(
      { MONGODB_DB: dbName },
      'bootstrap',
      '--tenant',
      `${label}-${newId().slice(0, 8)}`,
      '--collection',
      'main',
      '--json',
    );
    const created = JSON.parse(out) as { tenant_id: string; api_key: string; key_id: string; collection_id: string };
    return {
      api: new Api(baseUrl, created.api_key),
      tenantId: created.tenant_id,
      keyId: created.key_id,
      apiKey: created.api_key,
      collectionId: created.collection_id,
    };
  };
  const secondKey = async (tenant: FairTenant): Promise<FairTenant> => {
    const out = await adminWith({ MONGODB_DB: dbName }, 'key', 'create', '--tenant', tenant.tenantId, '--json');
    const created = JSON.parse(out) as { id: string; api_key: string };
    return { ...tenant, api: new Api(baseUrl, created.api_key), keyId: created.id, apiKey: created.api_key };
  };
  const open = async (tenant: FairTenant, query = '') => {
    const socket = await RawSocket.open(tenant.api, query);
    sockets.push(socket);
    return socket;
  };
  const subscribe = async (socket: RawSocket, frame: Record<string, unknown>) => {
    const from = socket.frames.length;
    socket.send({ action: 'subscribe', collections: [], ...frame });
    await socket.next((candidate) => candidate.action === 'subscribed', 10_000, from);
  };
  const closeAll = async () => {
    for (const socket of sockets.splice(0)) socket.close();
    await sleep(300); // the server counts a session out when its close arrives
  };
  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : 0;
  };

  before(async () => {
    const info = stack();
    dbName = `${info.serviceEnv.MONGODB_DB}_fair`;
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    child = spawnService(
      'api/main.js',
      {
        ...info.serviceEnv,
        ROLE: 'api',
        PORT: String(port),
        MONGODB_DB: dbName,
        EVENT_LOG_MAX_EVENTS_PER_TENANT: String(PER_TENANT),
        // What the same window was called when it was shared by all tenants.
        EVENT_LOG_MAX_EVENTS: String(PER_TENANT),
        UNCONFIDENT_EVENTS_PER_KEY_PER_MINUTE: '600000',
        UNCONFIDENT_EVENTS_PER_KEY_BURST: '10000',
        WS_MAX_BUFFERED_BYTES: String(256 * 1024 * 1024),
        EVENT_FANOUT_MAX_EVENTS: '50',
        WS_MAX_SESSIONS_PER_KEY: '3',
        WS_MAX_SESSIONS_PER_TENANT: '4',
        WS_MAX_SESSIONS_PER_PROCESS: '8',
        WS_REVOCATION_CHECK_MS: '300',
        WS_SLOW_CONSUMER_MAX_PAUSE_MS: '20000',
        SEARCH_MAX_CONCURRENT_PER_TENANT: '1',
        SEARCH_MAX_QUEUED_PER_TENANT: '16',
      },
      path.join(info.logDir, 'api-fair.log'),
    );
    await waitForReady(baseUrl, 120_000, child);
    db = await connectDatabase(info.serviceEnv.MONGODB_URI!, dbName);
    log = await EventLog.open(db.db, db.capabilities, PER_TENANT);
  });
  after(async () => {
    for (const socket of sockets) socket.close();
    await db?.close();
    await stopChild(child);
  });

  it("keeps a tenant's events while another tenant floods weak searches over many collections", async () => {
    const quiet = await fairTenant('quiet');
    const noisy = await fairTenant('noisy');
    const noisyCollections = [noisy.collectionId];
    for (let i = 0; i < 4; i++) {
      const created = await noisy.api.post('/v1/collections', { name: `extra-${i}` });
      assert.equal(created.status, 201);
      noisyCollections.push(created.body.results.id as string);
    }
    const start = await log.log.latestSeq();
    const quietSeqs: number[] = [];
    for (let i = 0; i < 30; i++) quietSeqs.push(await log.append('quiet_event', quiet.tenantId, quiet.collectionId, { n: i }));

    // 200 weak searches over 5 collections: 200 events now, 1,000 before (one per collection).
    const searches = 200;
    for (let i = 0; i < searches; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, j) => noisy.api.search(noisyCollections, `qwzx plorth ${i + j} vibbleglunk`)),
      );
      for (const response of batch) assert.equal(response.body.results.confidence.unconfident, true);
    }
    const noisyEvents = await db.db.collection('memory_events').countDocuments({ tenant_id: noisy.tenantId });
    assert.ok(noisyEvents <= PER_TENANT + 40, `the noisy tenant's own window is trimmed (${noisyEvents} kept)`);

    const socket = await open(quiet);
    await subscribe(socket, { event_types: ['quiet_event'], last_ack_seq: start });
    const events = await socket.waitForEvents(30);
    assert.deepEqual(seqsOf(events), quietSeqs, "every one of the quiet tenant's events is still replayable");
    await sleep(200);
    assert.equal(socket.frames.filter((frame) => frame.reason === 'replay_gap').length, 0, 'no replay_gap for the quiet tenant');

    // The noisy tenant's own old events are gone, and it is told so.
    const noisySocket = await open(noisy);
    await subscribe(noisySocket, { last_ack_seq: start });
    const gap = await noisySocket.next((frame) => frame.reason === 'replay_gap');
    assert.ok((gap.oldest_seq as number) > start + 1);
    await closeAll();
  });

  it("bounds one tenant's concurrent searches (429 beyond its queue) without holding up another tenant's", async () => {
    const busy = await fairTenant('busy');
    const calm = await fairTenant('calm');
    const burst = Promise.all(Array.from({ length: 40 }, (_, i) => busy.api.search([busy.collectionId], `qwzx burst ${i}`)));
    await sleep(20);
    const calmResponse = await calm.api.search([calm.collectionId], 'qwzx calm');
    assert.equal(calmResponse.status, 200, 'another tenant is not queued behind the burst');
    const responses = await burst;
    const refused = responses.filter((response) => response.status === 429);
    // How many pass depends on how fast the first ones finish; never more than 40 - (1 + 16) are refused.
    assert.ok(refused.length >= 1 && refused.length <= 40 - 17, `${refused.length} of 40 refused beyond 1 running + 16 waiting`);
    assert.ok(refused.every((response) => response.body.error.code === 'rate_limited' && response.headers.get('retry-after') === '1'));
    assert.ok(responses.filter((response) => response.status === 200).length >= 17);
  });

  it('tells a paused subscriber whose events were trimmed meanwhile (replay_gap) instead of skipping them', async () => {
    const tenant = await fairTenant('paused');
    const socket = await open(tenant);
    await subscribe(socket, { event_types: ['bulk'] });
    socket.ws.pause(); // the client stops reading: the kernel buffers fill, then the server's
    const pad = 'x'.repeat(16 * 1024);
    const appended: number[] = [];
    for (let i = 0; i < 1500; i += 100) {
      appended.push(
        ...(await Promise.all(
          Array.from({ length: 100 }, (_, j) => log.append('bulk', tenant.tenantId, tenant.collectionId, { n: i + j, pad })),
        )),
      );
    }
    await log.trimTenant(tenant.tenantId);
    const retained = await db.db.collection('memory_events').countDocuments({ tenant_id: tenant.tenantId });
    assert.ok(retained <= PER_TENANT, `trimmed to ${retained}`);
    await sleep(500);
    socket.ws.resume();
    const last = appended[appended.length - 1]!;
    await socket.next((frame) => frame.seq === last, 60_000);

    // Every jump over appended events is announced: between the two events, replay_gap frames
    // whose first starts after the earlier event and whose last names the later one. (While
    // the socket drains slowly and trimming goes on, one jump may be reported in several steps.)
    assert.ok(
      socket.frames.some((frame) => frame.reason === 'replay_gap'),
      'a replay_gap frame tells the subscriber what it missed',
    );
    let previous: number | null = null;
    let gaps: Frame[] = [];
    let jumps = 0;
    for (const frame of socket.frames) {
      if (frame.reason === 'replay_gap') gaps.push(frame);
      if (frame.action !== 'event') continue;
      const expected: number | undefined = previous === null ? appended[0] : appended[appended.indexOf(previous) + 1];
      if (frame.seq !== expected) {
        jumps++;
        assert.ok(gaps.length > 0, `the jump from ${previous} to ${frame.seq} is announced`);
        const gapStart = gaps[0]!.requested_after as number;
        assert.deepEqual(
          appended.filter((seq) => seq > (previous ?? 0) && seq <= gapStart),
          [],
          'the gap starts after the last event delivered, with none of ours in between',
        );
        assert.equal(gaps[gaps.length - 1]!.oldest_seq, frame.seq, 'and delivery continues from the oldest retained event');
      }
      previous = frame.seq as number;
      gaps = [];
    }
    assert.ok(jumps >= 1, 'the trimmed events were really skipped over');
    assert.ok(strictlyIncreasing(seqsOf(socket.events())));
    assert.equal(socket.closed, null, 'paused, not closed as a slow consumer');
    await closeAll();
  });

  it('closes a subscriber that stops reading for longer than the pause bound with 1013 slow_consumer', async () => {
    const tenant = await fairTenant('stalled');
    const socket = await open(tenant);
    await subscribe(socket, { event_types: ['stall'] });
    const closedBefore = await metric('engram_websocket_slow_consumers_total');
    const pausedBefore = await metric('engram_websocket_paused_sessions');
    socket.ws.pause();
    const stoppedReadingAt = Date.now();
    const pad = 'x'.repeat(16 * 1024);
    // Loopback's kernel buffers take several MB before the server's own buffer grows, and with 100
    // events retained per tenant a lagging follower sends only the newest: append rounds until the
    // server reports the session paused (its socket full), then nothing more.
    let appended = 0;
    await until(
      async () => {
        if ((await metric('engram_websocket_paused_sessions')) > pausedBefore) return true;
        await Promise.all(
          Array.from({ length: 100 }, () => log.append('stall', tenant.tenantId, tenant.collectionId, { n: appended++, pad })),
        );
        return false;
      },
      'the server to pause the stalled session',
      60_000,
    );
    // The bound counts from the pause, not from the appends: wait for the server's verdict.
    await until(
      async () => (await metric('engram_websocket_slow_consumers_total')) > closedBefore,
      'the server to give up on the stalled session',
      60_000,
    );
    assert.equal(await metric('engram_websocket_paused_sessions'), pausedBefore, 'a closed session is no longer counted as paused');
    assert.ok(Date.now() - stoppedReadingAt >= 20_000, 'not before the pause bound');
    socket.ws.resume(); // reading again only after the verdict: the close frame waits behind the buffered frames
    await until(() => socket.closed !== null, 'the stalled session to close', 30_000);
    assert.equal(socket.closed!.code, 1013);
    assert.equal(socket.closed!.reason, 'slow_consumer');
    await closeAll();
  });

  it('signs each event once and follows the log once, however many sessions listen', async () => {
    const tenant = await fairTenant('fanout');
    const other = await secondKey(tenant);
    const listeners = [await open(tenant), await open(tenant), await open(tenant), await open(other)];
    for (const socket of listeners) await subscribe(socket, { event_types: ['shared'] });
    await sleep(300);
    const signedBefore = await metric('engram_event_frames_signed_total');
    const catchUpBefore = await metric('engram_event_log_reads_total{reader="catch_up"}');
    const seqs: number[] = [];
    for (let i = 0; i < 40; i++) seqs.push(await log.append('shared', tenant.tenantId, tenant.collectionId, { n: i }));
    for (const socket of listeners) assert.deepEqual(seqsOf(await socket.waitForEvents(40)), seqs);
    const signed = (await metric('engram_event_frames_signed_total')) - signedBefore;
    const catchUps = (await metric('engram_event_log_reads_total{reader="catch_up"}')) - catchUpBefore;
    assert.equal(signed, 40, '40 events, 4 sessions: 40 signatures');
    assert.equal(catchUps, 0, 'live sessions are served from memory, not by queries of their own');
    const texts = listeners.map((socket) => JSON.stringify(socket.events()));
    assert.ok(
      texts.every((text) => text === texts[0]),
      'every session got the same signed frames',
    );
    await closeAll();
  });

  it('caps sessions per key, per tenant and per process, closing with 4429 too_many_sessions', async () => {
    const refusedWith = async (tenant: FairTenant, scope: string) => {
      const socket = await RawSocket.open(tenant.api);
      await until(() => socket.closed !== null, 'the refused session to close');
      assert.equal(socket.closed!.code, 4429);
      assert.equal(socket.closed!.reason, 'too_many_sessions');
      const frame = socket.frames.find((candidate) => candidate.reason === 'too_many_sessions');
      assert.equal(frame?.scope, scope, JSON.stringify(socket.frames));
    };
    const first = await fairTenant('caps-a');
    const firstOther = await secondKey(first);
    const held = [await open(first), await open(first), await open(first)];
    await refusedWith(first, 'key');
    await open(firstOther);
    await refusedWith(firstOther, 'tenant');
    const second = await fairTenant('caps-b');
    for (let i = 0; i < 3; i++) await open(second);
    const third = await fairTenant('caps-c');
    await open(third);
    await refusedWith(third, 'process');

    held[0]!.close();
    await sleep(300);
    const again = await open(first);
    again.send({ action: 'heartbeat' });
    await again.next((frame) => frame.action === 'heartbeat_ack');
    assert.equal(again.closed, null, 'a closed session frees its slot');
    await closeAll();
  });

  it("refuses tickets minted before a key's revocation and closes its open sessions", async () => {
    const tenant = await fairTenant('revoked');
    const survivor = await secondKey(tenant);
    const doomed = await open(tenant);
    await subscribe(doomed, {});
    const kept = await open(survivor);
    await subscribe(kept, {});
    const unused = await wsUrl(tenant.api);

    await adminWith({ MONGODB_DB: dbName }, 'key', 'revoke', tenant.keyId);
    await until(() => doomed.closed !== null, 'the revoked key’s session to close', 10_000);
    assert.equal(doomed.closed!.code, 4401);
    assert.equal(doomed.closed!.reason, 'key_revoked');
    assert.ok(doomed.frames.some((frame) => frame.reason === 'key_revoked'));
    await assert.rejects(
      RawSocket.connect(unused),
      (error: { status: number; body: string }) => error.status === 401 && /key_revoked/.test(error.body),
    );
    kept.send({ action: 'heartbeat' });
    await kept.next((frame) => frame.action === 'heartbeat_ack');
    assert.equal(kept.closed, null, "another key's session is untouched");
    await closeAll();
  });
});

describe('memory_unconfident, one per search and rate-bounded per key (the stack defaults)', () => {
  after(closeDatabase);
  it('names every searched collection in one event, reaches a subscriber of any of them, and stops at the key rate', async () => {
    const tenant = await newTenant('unconfident');
    const collections = [tenant.collectionId];
    for (const name of ['second', 'third']) {
      const created = await tenant.api.post('/v1/collections', { name });
      assert.equal(created.status, 201);
      collections.push(created.body.results.id as string);
    }
    const socket = await RawSocket.open(tenant.api);
    try {
      socket.send({ action: 'subscribe', collections: [collections[1]], event_types: ['memory_unconfident'] });
      await socket.next((frame) => frame.action === 'subscribed');
      const query = 'qwzx plorth vibbleglunk zzyzx';
      assert.equal((await tenant.api.search(collections, query)).body.results.confidence.unconfident, true);
      const stored = await (
        await database()
      )
        .collection('memory_events')
        .find({ tenant_id: tenant.tenantId, type: 'memory_unconfident' })
        .toArray();
      assert.equal(stored.length, 1, 'one event for a search over three collections');
      const frame = await socket.next((candidate) => candidate.action === 'event');
      assert.equal(frame.collection_id, collections[0]);
      assert.deepEqual((frame.payload as { collection_ids: string[] }).collection_ids, collections);

      // A loop of weak searches: each still answers unconfident, the events stop at the key's rate.
      const started = Date.now();
      for (let i = 0; i < 30; i++) {
        const response = await tenant.api.search(collections, `${query} ${i}`);
        assert.equal(response.body.results.confidence.unconfident, true);
      }
      const seconds = (Date.now() - started) / 1000;
      const total = await (
        await database()
      )
        .collection('memory_events')
        .countDocuments({ tenant_id: tenant.tenantId, type: 'memory_unconfident' });
      // Default rate: burst 10, then 60 a minute.
      assert.ok(total <= 10 + Math.ceil(seconds) + 1, `${total} events for 31 weak searches in ${seconds.toFixed(1)} s`);
      assert.ok(total >= 10, `the burst is emitted (${total})`);
    } finally {
      socket.close();
    }
  });
});
