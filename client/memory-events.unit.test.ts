import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { withSignature } from '../core/event-signature.js';
import { generateKeysetEntry, publicJwks } from '../core/signing-keyset.js';
import { FakeEventsServer } from '../test/support/fake-events-server.js';
import {
  backoffDelay,
  ConnectionLostError,
  type ControlFrame,
  type EventFrame,
  fetchSigningKeys,
  HttpError,
  MemoryEventsClient,
  type MemoryEventsClientOptions,
  type MemoryEventsError,
  mintTicket,
  RejectedEventError,
  ServerFrameError,
  UpgradeRejectedError,
} from './memory-events.js';

const FAST_RECONNECT = { minDelayMs: 5, maxDelayMs: 20 };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer(...args: Parameters<typeof FakeEventsServer.start>): Promise<FakeEventsServer> {
  const server = await FakeEventsServer.start(...args);
  cleanups.push(() => server.close());
  return server;
}

interface Harness {
  client: MemoryEventsClient;
  events: EventFrame[];
  errors: MemoryEventsError[];
  controls: ControlFrame[];
}

function makeClient(server: FakeEventsServer, options: Partial<MemoryEventsClientOptions> = {}): Harness {
  const events: EventFrame[] = [];
  const errors: MemoryEventsError[] = [];
  const controls: ControlFrame[] = [];
  const client = new MemoryEventsClient({
    baseUrl: server.baseUrl,
    apiKey: server.apiKey,
    reconnect: FAST_RECONNECT,
    onEvent: (frame) => {
      events.push(frame);
    },
    onError: (error) => errors.push(error),
    onControl: (frame) => controls.push(frame),
    ...options,
  });
  cleanups.push(() => client.stop());
  return { client, events, errors, controls };
}

const seqs = (events: EventFrame[]) => events.map((event) => event.seq);
const codes = (errors: MemoryEventsError[]) => errors.map((error) => error.code);

describe('HTTP helpers', () => {
  it('mintTicket posts with the bearer key and returns ticket, expiry and ws_url', async () => {
    const server = await startServer();
    const ticket = await mintTicket(`${server.baseUrl}/`, server.apiKey);
    assert.match(ticket.ticket, /^tk_/);
    assert.ok(ticket.wsUrl.startsWith(`${server.baseUrl.replace('http', 'ws')}/v1/ws/memory-events?ticket=`));
    assert.ok(!Number.isNaN(Date.parse(ticket.expiresAt)));
    assert.equal(server.mints, 1);
  });

  it('mintTicket turns a 401 JSON error body into an HttpError', async () => {
    const server = await startServer();
    const error = await mintTicket(server.baseUrl, 'mk_wrong').then(
      () => assert.fail('expected a rejection'),
      (failure: unknown) => failure,
    );
    assert.ok(error instanceof HttpError);
    assert.equal(error.status, 401);
    assert.equal(error.serverCode, 'unauthenticated');
    assert.ok(error.isAuthFailure);
  });

  it('mintTicket reports an unreachable server as status 0', async () => {
    const server = await startServer();
    const url = server.baseUrl;
    await server.close();
    cleanups.length = 0;
    await assert.rejects(mintTicket(url, 'k'), (error: unknown) => error instanceof HttpError && error.status === 0);
  });

  it('fetchSigningKeys returns the JWKS keys that have a kid', async () => {
    const entry = await generateKeysetEntry('Ed25519');
    const { keys } = publicJwks({ keys: [entry] });
    const server = await startServer({ jwks: [...keys, { kty: 'OKP', crv: 'Ed25519', x: 'AAAA' }] });
    const fetched = await fetchSigningKeys(server.baseUrl, server.apiKey);
    assert.deepEqual(fetched, keys);
  });
});

describe('backoffDelay', () => {
  it('doubles from minDelayMs up to maxDelayMs, jittered into [50 %, 100 %]', () => {
    const policy = { minDelayMs: 100, maxDelayMs: 1_000 };
    assert.deepEqual(
      [0, 1, 2, 3, 4, 10].map((attempt) => backoffDelay(policy, attempt, () => 1)),
      [100, 200, 400, 800, 1_000, 1_000],
    );
    assert.equal(
      backoffDelay(policy, 2, () => 0),
      200,
    );
    for (let i = 0; i < 50; i += 1) {
      const delay = backoffDelay(policy, 3);
      assert.ok(delay >= 400 && delay <= 800, String(delay));
    }
  });
});

describe('MemoryEventsClient', { timeout: 20_000 }, () => {
  it('subscribes, then processes events one at a time in order and acks each after onEvent resolves', async () => {
    const server = await startServer();
    let active = 0;
    let maxActive = 0;
    const order: string[] = [];
    const { client, events } = makeClient(server, {
      collections: ['00000000-0000-4000-8000-000000000001'],
      eventTypes: ['ingestion_progress'],
      onEvent: async (frame) => {
        active += 1;
        maxActive = Math.max(maxActive, active);
        order.push(`start ${frame.seq}`);
        // Later events finish faster: out-of-order completion would show up here.
        await new Promise((resolve) => setTimeout(resolve, 30 - frame.seq * 5));
        // The ack must not have been sent before the handler finished.
        assert.ok(!server.lastConnection?.acks.includes(frame.seq));
        order.push(`end ${frame.seq}`);
        events.push(frame);
        active -= 1;
      },
    });
    await client.start();
    assert.equal(client.state, 'subscribed');
    assert.deepEqual(server.lastConnection?.framesOf('subscribe'), [
      { action: 'subscribe', collections: ['00000000-0000-4000-8000-000000000001'], event_types: ['ingestion_progress'] },
    ]);
    for (let i = 0; i < 4; i += 1) await server.publish();
    await server.publish({ type: 'memory_unconfident', payload: { query: 'q', reason: 'no_results' } }); // filtered out by type
    await client.waitFor((c) => c.highWaterSeq === 4);
    await server.waitFor(() => server.lastConnection?.acks.length === 4, 1_000, 'acks');
    assert.deepEqual(seqs(events), [1, 2, 3, 4]);
    assert.equal(maxActive, 1);
    assert.deepEqual(order, ['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3', 'start 4', 'end 4']);
    assert.deepEqual(server.lastConnection?.acks, [1, 2, 3, 4]);
    assert.equal(client.stats.processed, 4);
  });

  it('drops events at or below the high-water mark (duplicates, replays, reordering) and reports them', async () => {
    const server = await startServer();
    const { client, events, errors } = makeClient(server);
    await client.start();
    const [e1, e2, e3] = [await server.publish(), await server.publish(), await server.publish()];
    await client.waitFor((c) => c.highWaterSeq === 3);
    const connection = server.lastConnection!;
    connection.send(e2!); // duplicate
    connection.send(e1!); // old
    connection.send(e3!); // equal to the high-water mark
    await server.publish(); // seq 4
    await client.waitFor((c) => c.highWaterSeq === 4);
    assert.deepEqual(seqs(events), [1, 2, 3, 4]);
    assert.deepEqual(codes(errors), ['stale_seq', 'stale_seq', 'stale_seq']);
    const rejected = errors[0];
    assert.ok(rejected instanceof RejectedEventError);
    assert.equal(rejected.seq, 2);
    assert.equal(rejected.highWaterSeq, 3);
    assert.equal(rejected.eventId, e2!.event_id);
    await server.waitFor(() => connection.acks.length === 4, 1_000, 'acks');
    assert.deepEqual(connection.acks, [1, 2, 3, 4], 'dropped events are not acked');
    assert.equal(client.stats.rejected, 3);
  });

  it('reconnects with a new ticket after the server drops the socket and resumes with last_ack_seq = high-water', async () => {
    const server = await startServer();
    const { client, events, errors } = makeClient(server);
    await client.start();
    await server.publish();
    await server.publish();
    await client.waitFor((c) => c.highWaterSeq === 2);
    server.dropAll('terminate');
    await client.waitFor((c) => c.state !== 'subscribed');
    // Published while the client is away: only a replay delivers these.
    await server.publish();
    await server.publish();
    await client.waitFor((c) => c.highWaterSeq === 4);
    assert.deepEqual(seqs(events), [1, 2, 3, 4]);
    assert.equal(server.mints, 2, 'a fresh ticket per connection');
    assert.equal(server.connections.length, 2);
    assert.deepEqual(server.connections[1]?.framesOf('subscribe'), [
      { action: 'subscribe', collections: [], event_types: [], last_ack_seq: 2 },
    ]);
    await server.waitFor(() => server.connections[1]?.acks.length === 2, 1_000, 'acks');
    assert.deepEqual(server.connections[1]?.acks, [3, 4]);
    assert.ok(codes(errors).includes('connection_lost'));
    assert.equal(client.stats.reconnects, 1);
  });

  it('resumes by replay after a 1013 slow_consumer close', async () => {
    const server = await startServer();
    const { client, events, errors } = makeClient(server);
    await client.start();
    await server.publish();
    await client.waitFor((c) => c.highWaterSeq === 1);
    server.dropAll({ code: 1013, reason: 'slow_consumer' });
    await server.publish();
    await client.waitFor((c) => c.highWaterSeq === 2 && c.state === 'subscribed');
    assert.deepEqual(seqs(events), [1, 2]);
    const lost = errors.find((error) => error.code === 'connection_lost');
    assert.ok(lost instanceof ConnectionLostError);
    assert.equal(lost.closeCode, 1013);
    assert.equal(lost.closeReason, 'slow_consumer');
  });

  it('gives up after a 4401 key_revoked close instead of reconnecting', async () => {
    const server = await startServer();
    const { client } = makeClient(server);
    await client.start();
    await server.publish();
    await client.waitFor((c) => c.highWaterSeq === 1);
    server.dropAll({ code: 4401, reason: 'key_revoked' });
    const ended = await client.done;
    assert.ok(ended instanceof ConnectionLostError);
    assert.equal(ended.closeCode, 4401);
    assert.equal(client.state, 'stopped');
    assert.equal(server.mints, 1, 'no new ticket was minted');
  });

  it('starts from lastProcessedSeq and passes subscriber_id on the URL', async () => {
    const server = await startServer();
    for (let i = 0; i < 5; i += 1) await server.publish();
    const { client, events } = makeClient(server, { lastProcessedSeq: 3, subscriberId: 'tail-1' });
    await client.start();
    await client.waitFor((c) => c.highWaterSeq === 5);
    assert.deepEqual(seqs(events), [4, 5]);
    assert.equal(server.lastConnection?.subscriberId, 'tail-1');
    assert.equal(server.lastConnection?.framesOf('subscribe')[0]?.last_ack_seq, 3);
  });

  it('without a high-water mark, a subscriber_id resumes after its last ack on the server', async () => {
    const server = await startServer();
    const first = makeClient(server, { subscriberId: 'worker-a' });
    await first.client.start();
    await server.publish();
    await server.publish();
    await first.client.waitFor((c) => c.highWaterSeq === 2);
    await server.waitFor(() => server.acksBySubscriber.get('worker-a') === 2, 1_000, 'ack of seq 2');
    await first.client.stop();
    await server.publish();
    const second = makeClient(server, { subscriberId: 'worker-a' });
    await second.client.start();
    await second.client.waitFor((c) => c.highWaterSeq === 3);
    assert.deepEqual(seqs(second.events), [3]);
    assert.equal(server.lastConnection?.framesOf('subscribe')[0]?.last_ack_seq, undefined);
  });

  it('reports a refused upgrade (401 with a JSON body) and retries with a new ticket', async () => {
    const server = await startServer();
    server.refuseUpgrades = 1;
    const { client, errors } = makeClient(server);
    await client.start();
    const refused = errors[0];
    assert.ok(refused instanceof UpgradeRejectedError, String(refused));
    assert.equal(refused.status, 401);
    assert.equal(refused.serverCode, 'ticket_used');
    assert.equal(server.mints, 2);
  });

  it('gives up when the upgrade is refused with a 4xx other than 401', async () => {
    const server = await startServer();
    server.refuseUpgrades = 1;
    server.refuseStatus = { status: 400, code: 'validation_failed' };
    const { client } = makeClient(server);
    await assert.rejects(client.start(), (error: unknown) => error instanceof UpgradeRejectedError && error.status === 400);
    assert.equal(server.mints, 1, 'no retry');
    assert.equal(client.state, 'stopped');
  });

  it('refuses a subscriberId the server would refuse', () => {
    assert.throws(
      () => new MemoryEventsClient({ baseUrl: 'http://x', apiKey: 'k', subscriberId: 'has space', onEvent: () => {} }),
      TypeError,
    );
  });

  it('does not retry when the API key is refused: start() rejects and done settles with the error', async () => {
    const server = await startServer();
    const { client } = makeClient(server, { apiKey: 'mk_wrong' });
    await assert.rejects(client.start(), (error: unknown) => error instanceof HttpError && error.status === 401);
    assert.equal(client.state, 'stopped');
    const done = await client.done;
    assert.ok(done instanceof HttpError);
    assert.equal(server.mints, 0);
  });

  it('stops on subscribe_error: start() rejects with subscribe_rejected', async () => {
    const server = await startServer();
    server.subscribeError = { reason: 'collection_not_found', message: 'No collection with id x' };
    const { client, controls } = makeClient(server, { collections: ['00000000-0000-4000-8000-00000000000f'] });
    await assert.rejects(client.start(), (error: unknown) => {
      assert.ok(error instanceof ServerFrameError);
      assert.equal(error.code, 'subscribe_rejected');
      assert.equal(error.reason, 'collection_not_found');
      return true;
    });
    assert.equal(client.state, 'stopped');
    assert.equal(controls[0]?.action, 'subscribe_error');
    assert.equal(server.connections.length, 1, 'no reconnect after a refused subscription');
  });

  it('reports replay_gap with oldest_seq and continues from the oldest retained event', async () => {
    const server = await startServer();
    for (let i = 0; i < 6; i += 1) await server.publish();
    server.oldestRetained = 4;
    const { client, events, errors } = makeClient(server, { lastProcessedSeq: 1 });
    await client.start();
    await client.waitFor((c) => c.highWaterSeq === 6);
    assert.deepEqual(seqs(events), [4, 5, 6]);
    const gap = errors.find((error) => error.code === 'replay_gap');
    assert.ok(gap instanceof ServerFrameError);
    assert.equal(gap.oldestSeq, 4);
  });

  it('does not ack an event whose onEvent throws; reconnects and gets it again', async () => {
    const server = await startServer();
    let failures = 1;
    const processed: number[] = [];
    const { client, errors } = makeClient(server, {
      onEvent: (frame) => {
        if (frame.seq === 2 && failures > 0) {
          failures -= 1;
          throw new Error('disk full');
        }
        processed.push(frame.seq);
      },
    });
    await client.start();
    await server.publish();
    await server.publish();
    await server.publish();
    await client.waitFor((c) => c.highWaterSeq === 3);
    assert.deepEqual(processed, [1, 2, 3]);
    await server.waitFor(() => server.connections[1]?.acks.length === 2, 1_000, 'acks');
    assert.deepEqual(server.connections[0]?.acks, [1]);
    assert.equal(server.connections[1]?.framesOf('subscribe')[0]?.last_ack_seq, 1);
    assert.ok(codes(errors).includes('handler_failed'));
  });

  it('sends heartbeats and treats two intervals without heartbeat_ack as a dead connection', async () => {
    const server = await startServer();
    const { client, errors } = makeClient(server, { heartbeatMs: 40 });
    await client.start();
    await server.waitFor(() => server.framesOf('heartbeat').length >= 2, 1_000, 'heartbeats');
    assert.equal(server.connections.length, 1, 'answered heartbeats keep the connection');
    server.answerHeartbeats = false;
    await client.waitFor(() => codes(errors).includes('heartbeat_timeout'), 2_000);
    server.answerHeartbeats = true;
    await client.waitFor((c) => c.state === 'subscribed' && server.connections.length === 2, 2_000);
  });

  it('gives up after reconnect.maxAttempts attempts without progress', async () => {
    const server = await startServer();
    const { client, errors } = makeClient(server, { reconnect: { minDelayMs: 1, maxDelayMs: 5, maxAttempts: 2 } });
    await client.start();
    server.refuseUpgrades = 100;
    server.dropAll('terminate');
    const done = await client.done;
    assert.equal(done?.code, 'reconnect_exhausted');
    assert.equal(client.state, 'stopped');
    assert.equal(server.mints, 3, 'the first connection and two retries');
    assert.equal(codes(errors).at(-1), 'reconnect_exhausted');
  });

  it('stop() waits for the event in onEvent, acks it, and closes with 1000', async () => {
    const server = await startServer();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered = false;
    const { client } = makeClient(server, {
      onEvent: async () => {
        entered = true;
        await gate;
      },
    });
    await client.start();
    await server.publish();
    await server.publish();
    await server.waitFor(() => entered, 1_000, 'onEvent');
    const stopped = client.stop();
    setTimeout(release, 20);
    await stopped;
    assert.equal(client.state, 'stopped');
    assert.equal(client.highWaterSeq, 1, 'the queued event is left for the next resume');
    const connection = server.lastConnection!;
    await server.waitFor(() => connection.closedWith !== undefined, 1_000, 'close');
    assert.equal(connection.closedWith?.code, 1000);
    assert.deepEqual(connection.acks, [1]);
    assert.equal(await client.done, undefined);
  });

  describe('signature verification', () => {
    async function signedSetup() {
      const entry = await generateKeysetEntry('Ed25519');
      const other = await generateKeysetEntry('Ed25519');
      const { keys } = publicJwks({ keys: [entry] });
      const server = await startServer({ jwks: keys, signingKey: entry });
      return { entry, other, keys, server };
    }

    it('accepts a correctly signed event and rejects a tampered one', async () => {
      const { keys, server } = await signedSetup();
      const { client, events, errors } = makeClient(server, { verify: { jwks: keys } });
      await client.start();
      const good = await server.publish();
      await client.waitFor((c) => c.highWaterSeq === 1);
      const tampered = { ...good, seq: 2, payload: { ...good.payload, current: 3 } };
      server.lastConnection!.send(tampered);
      await client.waitFor(() => errors.length === 1);
      assert.deepEqual(seqs(events), [1]);
      const error = errors[0];
      assert.ok(error instanceof RejectedEventError);
      assert.equal(error.code, 'signature_invalid');
      assert.equal(error.seq, 2);
      assert.equal(error.kid, good.signature?.key_id);
      assert.equal(client.highWaterSeq, 1, 'a rejected event does not move the high-water mark');
      // The genuine seq 2 is still accepted afterwards.
      await server.publish();
      await client.waitFor((c) => c.highWaterSeq === 2);
      await server.waitFor(() => server.lastConnection?.acks.length === 2, 1_000, 'acks');
      assert.deepEqual(server.lastConnection?.acks, [1, 2]);
    });

    it('rejects a missing signature and a kid that is not pinned', async () => {
      const { entry, other, server } = await signedSetup();
      const allKeys = publicJwks({ keys: [entry, { ...other, status: 'retired' }] }).keys;
      // Both keys are known, only the first is pinned.
      const { client, events, errors } = makeClient(server, { verify: { jwks: allKeys, kids: [entry.kid] } });
      await client.start();
      const good = await server.publish();
      await client.waitFor((c) => c.highWaterSeq === 1);
      const { signature: _signature, ...unsigned } = good;
      server.lastConnection!.send({ ...unsigned, seq: 2 });
      const { signature: _ignored, ...base } = { ...good, seq: 3 };
      server.lastConnection!.send(await withSignature(base, other));
      await client.waitFor(() => errors.length === 2);
      assert.deepEqual(codes(errors), ['signature_missing', 'kid_not_pinned']);
      assert.equal((errors[1] as RejectedEventError).kid, other.kid);
      assert.deepEqual(seqs(events), [1]);
    });

    it('passes unsigned events through when verification is off', async () => {
      const server = await startServer();
      const { client, events } = makeClient(server, { verify: false });
      await client.start();
      await server.publish();
      await client.waitFor((c) => c.highWaterSeq === 1);
      assert.equal(events[0]?.signature, undefined);
    });
  });

  it('reports frames it cannot parse and keeps going', async () => {
    const server = await startServer();
    const { client, events, errors } = makeClient(server);
    await client.start();
    server.lastConnection!.ws.send('not json');
    server.lastConnection!.send({ action: 'event', seq: 'x' });
    server.lastConnection!.send({ action: 'error', reason: 'frame_too_large' });
    server.lastConnection!.send({ action: 'something_new', detail: 1 });
    await server.publish();
    await client.waitFor((c) => c.highWaterSeq === 1);
    assert.deepEqual(codes(errors), ['invalid_frame', 'invalid_frame', 'server_error']);
    assert.equal((errors[2] as ServerFrameError).reason, 'frame_too_large');
    assert.deepEqual(seqs(events), [1]);
  });
});
