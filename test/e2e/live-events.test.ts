/**
 * The live event stream over real WebSockets against the running stack: tickets at the upgrade,
 * every frame type and error, progress of a real ingestion, replay across a forced disconnect in
 * a burst of 1,200 events, the retention gap, acks per subscriber, and two API processes.
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
import { TicketRepository } from '../../store/tickets.js';
import { adminWith, Api, createMemory, newTenant, stack, type TenantFixture } from '../support/client.js';
import { RawSocket, wsUrl, type Frame } from '../support/ws.js';
import { verifyEventFrame } from '../support/event-frame-verifier.js';
import { noResultsPayload } from '../fixtures/events.js';

/** An ingestion_progress payload for a memory that does not exist: the stream does not care. */
const progressPayload = () => ({ engram_id: newId(), stage: 'x', user_stage: 'reading', current: 0, total: 1, message: null });
const seqsOf = (frames: Frame[]) => frames.map((frame) => frame.seq as number);
const strictlyIncreasing = (seqs: number[]) => seqs.every((seq, index) => index === 0 || seq > seqs[index - 1]!);

describe('live events over WebSocket', () => {
  let tenant: TenantFixture;
  let database: Database;
  let log: EventLog;
  const sockets: RawSocket[] = [];
  const open = async (query = '') => {
    const socket = await RawSocket.open(tenant.api, query);
    sockets.push(socket);
    return socket;
  };
  /** Appends events the way the workers do: to the durable log (there is no public endpoint). */
  const append = async (count: number, collectionId = tenant.collectionId, type = 'ingestion_progress') => {
    const seqs: number[] = [];
    for (let i = 0; i < count; i += 200) {
      const batch = Array.from({ length: Math.min(200, count - i) }, (_, j) =>
        log.append(type, tenant.tenantId, collectionId, {
          engram_id: newId(),
          stage: 'test',
          user_stage: 'indexing',
          current: i + j,
          total: count,
          message: null,
        }),
      );
      seqs.push(...(await Promise.all(batch)));
    }
    return seqs;
  };

  before(async () => {
    tenant = await newTenant('live');
    const env = stack().serviceEnv;
    database = await connectDatabase(env.MONGODB_URI!, env.MONGODB_DB!);
    log = await EventLog.open(database.db, database.capabilities, 100_000);
  });
  after(async () => {
    for (const socket of sockets) socket.close();
    await database.close();
  });

  it('refuses a used, a racing second, and a bogus ticket at the upgrade with 401', async () => {
    const url = await wsUrl(tenant.api);
    const results = await Promise.allSettled([RawSocket.connect(url), RawSocket.connect(url)]);
    const opened = results.filter((result) => result.status === 'fulfilled');
    assert.equal(opened.length, 1, 'exactly one of two racing connects with one ticket succeeds');
    const refused = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    assert.equal(refused.reason.status, 401);
    assert.match(refused.reason.body, /ticket_used/);
    (opened[0] as PromiseFulfilledResult<RawSocket>).value.close();
    await assert.rejects(RawSocket.connect(url), (error: { status: number }) => error.status === 401);
    const base = new URL(url);
    base.searchParams.set('ticket', 'wst_bogus');
    await assert.rejects(
      RawSocket.connect(base.toString()),
      (error: { status: number; body: string }) => error.status === 401 && /unknown_ticket/.test(error.body),
    );
    base.searchParams.delete('ticket');
    await assert.rejects(RawSocket.connect(base.toString()), (error: { status: number }) => error.status === 401);
  });

  it('refuses an expired ticket at the upgrade', async () => {
    const tickets = new TicketRepository(database.db);
    const expired = await tickets.mint(tenant.tenantId, tenant.keyId, -1);
    const url = new URL(await wsUrl(tenant.api));
    url.searchParams.set('ticket', expired.ticket);
    await assert.rejects(
      RawSocket.connect(url.toString()),
      (error: { status: number; body: string }) => error.status === 401 && /ticket_expired/.test(error.body),
    );
  });

  it('carries memory_unconfident events end to end, filtered by type', async () => {
    const socket = await open();
    socket.send({ action: 'subscribe', collections: [], event_types: ['memory_unconfident'] });
    await socket.next((frame) => frame.action === 'subscribed');
    await append(2); // other types are filtered out
    const payload = noResultsPayload('zebra migration');
    const seq = await log.append('memory_unconfident', tenant.tenantId, tenant.collectionId, payload);
    const frame = await socket.next((candidate) => candidate.action === 'event');
    assert.equal(frame.seq, seq);
    assert.equal(frame.type, 'memory_unconfident');
    assert.deepEqual(frame.payload, payload);
  });

  it('streams the ingestion_progress of a real memory, stage by stage, in seq order', async () => {
    const socket = await open();
    socket.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['ingestion_progress'] });
    const subscribed = await socket.next((frame) => frame.action === 'subscribed');
    assert.deepEqual(subscribed.collections, [tenant.collectionId]);
    assert.deepEqual(subscribed.event_types, ['ingestion_progress']);
    const id = await createMemory(tenant, { raw_text: 'Streaming progress for the lighthouse log.' });
    await socket.next(
      (frame) =>
        frame.action === 'event' &&
        (frame.payload as { engram_id: string; user_stage: string }).engram_id === id &&
        (frame.payload as { user_stage: string }).user_stage === 'complete',
      60_000,
    );
    const mine = socket.events().filter((frame) => (frame.payload as { engram_id: string }).engram_id === id);
    assert.deepEqual(
      [...new Set(mine.map((frame) => (frame.payload as { user_stage: string }).user_stage))],
      ['reading', 'structuring', 'indexing', 'complete'],
    );
    assert.ok(strictlyIncreasing(seqsOf(mine)));
    for (const frame of mine) {
      assert.equal(frame.type, 'ingestion_progress');
      assert.equal(frame.collection_id, tenant.collectionId);
      assert.match(frame.event_id as string, /^[0-9a-f-]{36}$/);
      assert.ok(!Number.isNaN(Date.parse(frame.ts as string)));
    }
  });

  it('signs event frames; an independent verifier accepts them and rejects tampered ones', async () => {
    const jwks = await tenant.api.get('/v1/memory-events/signing-keys');
    assert.equal(jwks.status, 200);
    const keys = jwks.body.keys as { kid: string; kty: string; crv: string; x: string; d?: string }[];
    assert.ok(keys.length >= 1);
    for (const key of keys) {
      assert.equal(key.kty, 'OKP');
      assert.equal(key.crv, 'Ed25519');
      assert.equal(key.d, undefined, 'no private part');
    }
    assert.equal((await new Api(stack().apiUrl, null).get('/v1/memory-events/signing-keys')).status, 401);

    const socket = await open();
    socket.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['signed'] });
    await socket.next((frame) => frame.action === 'subscribed');
    await append(3, tenant.collectionId, 'signed');
    const frames = await socket.waitForEvents(3);

    // Written from the spec alone: node:crypto and a separate canonicaliser, not the server's code.
    const verify = (frame: Frame): boolean => verifyEventFrame(frame, keys);
    for (const frame of frames) {
      const signature = frame.signature as Record<string, unknown>;
      assert.equal(signature.scheme, 'eddsa-detached');
      assert.equal(signature.algorithm, 'Ed25519');
      assert.equal(signature.canonicalization, 'json-sort-keys-v1');
      assert.equal(signature.encoding, 'base64url');
      assert.deepEqual([...(signature.signed_fields as string[])].sort(), [
        'action',
        'collection_id',
        'event_id',
        'payload',
        'seq',
        'ts',
        'type',
      ]);
      assert.ok(verify(frame), `frame ${frame.seq} verifies`);
    }
    const tampered = { ...frames[0]!, payload: { ...(frames[0]!.payload as object), current: 999 } };
    assert.equal(verify(tampered), false);
    assert.equal(verify({ ...frames[0]!, seq: (frames[0]!.seq as number) + 1 }), false);
  });

  it('answers every bad frame with an error frame and keeps the socket usable', async () => {
    const socket = await open();
    const expectError = async (frame: unknown, action: string, reason: string) => {
      const from = socket.frames.length;
      socket.send(frame);
      const reply = await socket.next((candidate) => candidate.action === action, 5000, from);
      assert.equal(reply.reason, reason, JSON.stringify(reply));
      assert.equal(typeof reply.message, 'string');
    };
    await expectError('not json', 'error', 'invalid_json');
    await expectError({ action: 'dance' }, 'error', 'unknown_action');
    await expectError([1, 2], 'error', 'invalid_frame');
    await expectError({ action: 'ack', seq: 1 }, 'error', 'not_subscribed');
    await expectError({ action: 'subscribe', collections: 'all' }, 'subscribe_error', 'invalid_frame');
    await expectError({ action: 'subscribe', collections: [], last_ack_seq: -4 }, 'subscribe_error', 'invalid_frame');
    await expectError({ action: 'subscribe', collections: [newId()] }, 'subscribe_error', 'collection_not_found');
    await expectError({ action: 'heartbeat', padding: 'x'.repeat(70 * 1024) }, 'error', 'frame_too_large');
    const from = socket.frames.length;
    socket.send({ action: 'heartbeat' });
    await socket.next((frame) => frame.action === 'heartbeat_ack', 5000, from);
    socket.send({ action: 'subscribe', collections: [] });
    await socket.next((frame) => frame.action === 'subscribed', 5000, from);
    socket.send({ action: 'unsubscribe' });
    await socket.next((frame) => frame.action === 'unsubscribed', 5000, from);
    assert.equal(socket.closed, null);
  });

  it("refuses another tenant's collection without revealing it exists", async () => {
    const other = await newTenant('live-other');
    const socket = await open();
    socket.send({ action: 'subscribe', collections: [other.collectionId] });
    const refusal = await socket.next((frame) => frame.action === 'subscribe_error');
    assert.equal(refusal.reason, 'collection_not_found');
    // An empty list means "everything I can read": another tenant's events never arrive.
    socket.send({ action: 'subscribe', collections: [] });
    await socket.next((frame) => frame.action === 'subscribed');
    const before = socket.events().length;
    await log.append('ingestion_progress', other.tenantId, other.collectionId, progressPayload());
    const [mine] = await append(1);
    await socket.next((frame) => frame.seq === mine);
    assert.ok(
      socket
        .events()
        .slice(before)
        .every((frame) => frame.collection_id === tenant.collectionId),
    );
  });

  it('replays across a forced disconnect in a burst of 1,200 events with no loss, no duplicate, in order', async () => {
    const start = await log.log.latestSeq();
    const first = await open();
    first.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['burst'], last_ack_seq: start });
    await first.next((frame) => frame.action === 'subscribed');
    const burst = append(1200, tenant.collectionId, 'burst');
    await first.waitForEvents(300);
    first.ws.terminate(); // the network drops mid-burst
    const processed = first.events();
    const high = processed[processed.length - 1]!.seq as number;
    const expected = await burst;

    const second = await open();
    second.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['burst'], last_ack_seq: high });
    const rest = await second.waitForEvents(expected.filter((seq) => seq > high).length, 60_000);
    const received = [...seqsOf(processed), ...seqsOf(rest)];
    assert.deepEqual(
      received,
      [...expected].sort((a, b) => a - b),
      'every event exactly once, in seq order',
    );
    assert.ok(strictlyIncreasing(received));
  });

  it('resumes after the last ack of the same subscriber when last_ack_seq is not given', async () => {
    const start = await log.log.latestSeq();
    const first = await open('&subscriber_id=dashboard-1');
    first.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['acked'], last_ack_seq: start });
    await first.next((frame) => frame.action === 'subscribed');
    const seqs = await append(10, tenant.collectionId, 'acked');
    await first.waitForEvents(10);
    first.send({ action: 'ack', seq: seqs[5] });
    await new Promise((resolve) => setTimeout(resolve, 500)); // acks are written in coalesced bursts
    first.close();

    const again = await open('&subscriber_id=dashboard-1');
    again.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['acked'] });
    const replayed = await again.waitForEvents(4);
    assert.deepEqual(seqsOf(replayed), seqs.slice(6));
  });

  it('reports a retention gap and continues from the oldest retained event', async () => {
    // A stack of its own whose log keeps only 100 events, trimmed by seq as on the stand-in.
    const info = stack();
    const dbName = `${info.serviceEnv.MONGODB_DB}_gap`;
    const port = await freePort();
    const child = spawnService(
      'api/main.js',
      { ...info.serviceEnv, ROLE: 'api', PORT: String(port), MONGODB_DB: dbName, EVENT_LOG_MAX_EVENTS_PER_TENANT: '100' },
      path.join(info.logDir, 'api-gap.log'),
    );
    try {
      await waitForReady(`http://127.0.0.1:${port}`, 120_000, child);
      const gapDb = await connectDatabase(info.serviceEnv.MONGODB_URI!, dbName);
      try {
        const smallLog = await EventLog.open(gapDb.db, gapDb.capabilities, 100);
        const bootstrap = await adminWith({ MONGODB_DB: dbName }, 'bootstrap', '--tenant', 'gap', '--collection', 'main', '--json');
        const gap = JSON.parse(bootstrap) as { tenant_id: string; api_key: string; collection_id: string };
        for (let i = 0; i < 600; i += 100) {
          await Promise.all(
            Array.from({ length: 100 }, () => smallLog.append('ingestion_progress', gap.tenant_id, gap.collection_id, progressPayload())),
          );
        }
        await smallLog.trimTenant(gap.tenant_id);
        const oldest = (await smallLog.oldestRetained(gap.tenant_id, 0))!;
        assert.ok(oldest > 1, `trimmed (oldest ${oldest})`);
        const socket = await RawSocket.open(new Api(`http://127.0.0.1:${port}`, gap.api_key));
        sockets.push(socket);
        socket.send({ action: 'subscribe', collections: [], last_ack_seq: 0 });
        const warning = await socket.next((frame) => frame.action === 'error');
        assert.equal(warning.reason, 'replay_gap');
        assert.equal(warning.oldest_seq, oldest);
        const events = await socket.waitForEvents(600 - oldest + 1);
        assert.equal(events[0]!.seq, oldest);
      } finally {
        await gapDb.close();
      }
    } finally {
      await stopChild(child);
    }
  });
});

describe('two API processes', () => {
  let second: ChildProcess;
  let tenant: TenantFixture;
  before(async () => {
    const info = stack();
    const port = await freePort();
    second = spawnService('api/main.js', { ...info.serviceEnv, ROLE: 'api', PORT: String(port) }, path.join(info.logDir, 'api-ws-2.log'));
    await waitForReady(`http://127.0.0.1:${port}`, 120_000, second);
    tenant = await newTenant('live-two');
    (tenant as TenantFixture & { secondUrl: string }).secondUrl = `http://127.0.0.1:${port}`;
  });
  after(() => stopChild(second));

  it('both deliver the same events in the same order', async () => {
    const secondApi = new Api((tenant as TenantFixture & { secondUrl: string }).secondUrl, tenant.apiKey);
    const a = await RawSocket.open(tenant.api);
    const b = await RawSocket.open(secondApi);
    try {
      for (const socket of [a, b]) {
        socket.send({ action: 'subscribe', collections: [tenant.collectionId] });
        await socket.next((frame) => frame.action === 'subscribed');
      }
      const id = await createMemory(tenant, { raw_text: 'Two processes, one durable log.' });
      const done = (frame: Frame) =>
        frame.action === 'event' &&
        (frame.payload as { engram_id: string; user_stage: string }).engram_id === id &&
        (frame.payload as { user_stage: string }).user_stage === 'complete';
      await Promise.all([a.next(done, 60_000), b.next(done, 60_000)]);
      assert.deepEqual(seqsOf(a.events()), seqsOf(b.events()));
      assert.ok(a.events().length >= 4);
    } finally {
      a.close();
      b.close();
    }
  });
});
