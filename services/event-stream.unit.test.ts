import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Store } from '../store/index.js';
import { fakeStore as inMemoryStore, silentLogger, streamOptions } from '../test/support/fakes/index.js';
import { CLOSE_CODES, createEventStream, type EventStreamOptions } from './event-stream.js';

/** Counts the queries a session makes; answers like an empty log of a tenant with one collection. */
function fakeStore() {
  const queries = { count: 0 };
  const answer = <T>(value: T) => {
    queries.count++;
    return Promise.resolve(value);
  };
  const store = {
    collections: { existingIds: (_tenant: string, ids: string[]) => answer(new Set(ids)) },
    eventAcks: { lastAck: () => answer(null), record: () => answer(undefined) },
    events: {
      log: { latestSeq: () => answer(0) },
      trimmedThrough: () => answer(0),
      oldestRetained: () => answer(null),
      readAll: () => answer([]),
      readFor: () => answer([]),
      follow: () => () => Promise.resolve(),
    },
    tenants: { inactiveKeyIds: () => answer(new Set<string>()) },
  };
  return { store: store as unknown as Store, queries }; // only what the protocol calls, faked
}

const silent = silentLogger();
const OPTIONS = streamOptions();

/** A session over a fake socket whose unsent bytes the test sets. */
function open(options: EventStreamOptions = OPTIONS) {
  const { store, queries } = fakeStore();
  const stream = createEventStream({ store, logger: silent, signer: null, options });
  const socket = { sent: [] as string[], buffered: 0, closed: null as { code: number; reason: string } | null };
  const admission = stream.open('tenant', 'key', null, {
    send: (text) => {
      socket.sent.push(text);
      socket.buffered += text.length;
    },
    bufferedAmount: () => socket.buffered,
    close: (code, reason) => (socket.closed ??= { code, reason }),
  });
  assert.ok(admission.ok);
  return { stream, session: admission.session, socket, queries };
}

const frames = (socket: { sent: string[] }) => socket.sent.map((text) => JSON.parse(text) as Record<string, unknown>);
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('live event stream: abuse of one session stays bounded', () => {
  const big = 'x'.repeat(60 * 1024);
  // [case, frames the client sends, what must hold afterwards]
  const cases: [string, string[], (result: ReturnType<typeof open>) => void][] = [
    [
      'an unknown action is not echoed back beyond a short prefix',
      [JSON.stringify({ action: big })],
      ({ socket }) => {
        const [error] = frames(socket);
        assert.equal(error?.reason, 'unknown_action');
        assert.ok(socket.sent[0]!.length < 300, `error frame of ${socket.sent[0]!.length} bytes`);
      },
    ],
    [
      'unreadable collection ids are not echoed back in full',
      [JSON.stringify({ action: 'subscribe', collections: Array.from({ length: 500 }, (_, i) => `${big.slice(0, 100)}${i}`) })],
      ({ socket }) => {
        const [error] = frames(socket);
        assert.equal(error?.reason, 'collection_not_found');
        assert.ok(socket.sent[0]!.length < 600, `error frame of ${socket.sent[0]!.length} bytes`);
      },
    ],
    [
      'a flood of frames is rate limited: most are dropped, one error says so',
      Array.from({ length: 500 }, () => JSON.stringify({ action: 'heartbeat' })),
      ({ socket }) => {
        const sent = frames(socket);
        const answered = sent.filter((frame) => frame.action === 'heartbeat_ack').length;
        assert.ok(answered <= 41, `${answered} heartbeats answered`);
        assert.ok(answered >= 1, `${answered} heartbeats answered`);
        const limited = sent.filter((frame) => frame.reason === 'rate_limited').length;
        assert.ok(limited >= 1 && limited <= 2, `${limited} rate_limited frames`);
      },
    ],
    [
      'a flood of subscribes costs a bounded number of queries',
      Array.from({ length: 200 }, () => JSON.stringify({ action: 'subscribe', collections: [] })),
      ({ queries }) => assert.ok(queries.count <= 40, `${queries.count} queries`),
    ],
  ];
  for (const [label, sent, check] of cases) {
    it(label, async () => {
      const result = open();
      for (const text of sent) result.session.enqueue(text, Buffer.byteLength(text), false);
      await settle();
      await settle();
      check(result);
      await result.stream.stop();
    });
  }

  it('control frames respect the socket buffer: a client that never reads is closed, not buffered for', async () => {
    const result = open({ ...OPTIONS, inbound: { framesPerSecond: 10_000, burst: 10_000, maxQueued: 10_000 } });
    result.socket.buffered = OPTIONS.hardBufferBytes + 1;
    for (let i = 0; i < 100; i++) result.session.enqueue('{"action":"heartbeat"}', 22, false);
    await settle();
    assert.equal(result.socket.sent.length, 0, 'nothing more is queued on a full socket');
    assert.equal(result.socket.closed?.code, CLOSE_CODES.slowConsumer);
    await result.stream.stop();
  });

  it('the inbound queue is bounded while a frame is being handled', async () => {
    const { store } = fakeStore();
    let release: () => void = () => undefined;
    const slow = new Promise<Set<string>>((resolve) => (release = () => resolve(new Set())));
    (store.collections as unknown as { existingIds: () => Promise<Set<string>> }).existingIds = () => slow;
    const stream = createEventStream({
      store,
      logger: silent,
      signer: null,
      options: { ...OPTIONS, inbound: { framesPerSecond: 10_000, burst: 10_000, maxQueued: 16 } },
    });
    const sent: string[] = [];
    const admission = stream.open('tenant', 'key', null, {
      send: (text) => sent.push(text),
      bufferedAmount: () => 0,
      close: () => undefined,
    });
    assert.ok(admission.ok);
    admission.session.enqueue(JSON.stringify({ action: 'subscribe', collections: ['a'] }), 40, false);
    for (let i = 0; i < 1000; i++) admission.session.enqueue('{"action":"heartbeat"}', 22, false);
    release();
    await settle();
    const acks = sent.map((text) => JSON.parse(text) as Record<string, unknown>).filter((frame) => frame.action === 'heartbeat_ack');
    assert.ok(acks.length <= 16, `${acks.length} queued frames were handled`);
    await stream.stop();
  });
});

describe('live event stream: what a session sees', () => {
  /** A stream over the fake store: the tenant has collections `mine` and `other`, tenant-b has `theirs`. */
  function live(options: EventStreamOptions = OPTIONS) {
    const store = inMemoryStore();
    const [mine, other, theirs] = [randomUUID(), randomUUID(), randomUUID()];
    store.collections.seed('tenant', mine);
    store.collections.seed('tenant', other);
    store.collections.seed('tenant-b', theirs);
    const stream = createEventStream({ store, logger: silent, signer: null, options });
    const connect = (keyId = 'key', tenantId = 'tenant') => {
      const socket = { sent: [] as string[], closed: null as { code: number; reason: string } | null };
      const admission = stream.open(tenantId, keyId, null, {
        send: (text) => void socket.sent.push(text),
        bufferedAmount: () => 0,
        close: (code, reason) => (socket.closed ??= { code, reason }),
      });
      assert.ok(admission.ok);
      const send = async (frame: Record<string, unknown>) => {
        const text = JSON.stringify(frame);
        await admission.session.receive(text, text.length);
        await settle();
      };
      return { session: admission.session, socket, send };
    };
    return { store, stream, mine, other, theirs, connect };
  }
  const events = (socket: { sent: string[] }) => frames(socket).filter((frame) => frame.action === 'event');

  it("another tenant's collection and a malformed id get the same answer: collection_not_found", async () => {
    const { stream, theirs, connect } = live();
    const { socket, send } = connect();
    await send({ action: 'subscribe', collections: [theirs] });
    await send({ action: 'subscribe', collections: ['not-a-uuid'] });
    const [first, second] = frames(socket);
    assert.equal(first?.action, 'subscribe_error');
    assert.equal(first?.reason, 'collection_not_found');
    assert.equal(second?.reason, 'collection_not_found');
    await stream.stop();
  });

  it("a replay from last_ack_seq sends, in seq order, only the tenant's events of the subscribed collections and types", async () => {
    const { store, stream, mine, other, theirs, connect } = live();
    await store.events.append('memory_completed', 'tenant', mine, {}); // 1
    await store.events.append('memory_completed', 'tenant-b', theirs, {}); // 2
    await store.events.append('memory_completed', 'tenant', other, {}); // 3
    await store.events.append('memory_failed', 'tenant', mine, {}); // 4
    await store.events.append('memory_unconfident', 'tenant', [other, mine], {}); // 5: about both
    const all = connect();
    await all.send({ action: 'subscribe', collections: [mine], last_ack_seq: 0 });
    assert.deepEqual(
      events(all.socket).map((frame) => frame.seq),
      [1, 4, 5],
    );
    const typed = connect('key-2');
    await typed.send({ action: 'subscribe', collections: [mine], event_types: ['memory_failed'], last_ack_seq: 0 });
    assert.deepEqual(
      events(typed.socket).map((frame) => frame.seq),
      [4],
    );
    const resumed = connect('key-3');
    await resumed.send({ action: 'subscribe', collections: [], last_ack_seq: 3 });
    assert.deepEqual(
      events(resumed.socket).map((frame) => frame.seq),
      [4, 5],
    );
    await stream.stop();
  });

  it('a replay from before the retention watermark says replay_gap and continues from the oldest retained event', async () => {
    const { store, stream, mine, connect } = live();
    for (let i = 0; i < 4; i++) await store.events.append('memory_completed', 'tenant', mine, {});
    store.events.trim('tenant', 2);
    const { socket, send } = connect();
    await send({ action: 'subscribe', collections: [mine], last_ack_seq: 0 });
    const sent = frames(socket);
    const gap = sent.find((frame) => frame.reason === 'replay_gap');
    assert.equal(gap?.requested_after, 0);
    assert.equal(gap?.oldest_seq, 3);
    assert.deepEqual(
      events(socket).map((frame) => frame.seq),
      [3, 4],
    );
    await stream.stop();
  });

  it('without last_ack_seq a new subscriber starts at the head, then receives what is appended', async () => {
    const { store, stream, mine, connect } = live();
    await store.events.append('memory_completed', 'tenant', mine, {});
    const { socket, send } = connect();
    await send({ action: 'subscribe', collections: [mine] });
    assert.deepEqual(events(socket), []);
    await store.events.append('memory_failed', 'tenant', mine, {});
    store.events.notify();
    await settle();
    assert.deepEqual(
      events(socket).map((frame) => [frame.seq, frame.type]),
      [[2, 'memory_failed']],
    );
    await stream.stop();
  });

  it('acks before subscribing are refused; acks are coalesced into one write of the highest seq', async () => {
    const { store, stream, mine, connect } = live();
    const { session, socket, send } = connect();
    await send({ action: 'ack', seq: 1 });
    assert.equal(frames(socket)[0]?.reason, 'not_subscribed');
    await send({ action: 'subscribe', collections: [mine] });
    for (const seq of [3, 7, 5]) await send({ action: 'ack', seq });
    await session.ended();
    assert.deepEqual(store.journal.argsOf('eventAcks.record'), [['key:default', 7]]);
    // The next session of that subscriber resumes after what it acknowledged.
    assert.equal(await store.eventAcks.lastAck('key:default'), 7);
    await stream.stop();
  });

  it('ack expiry keeps the acks of subscribers connected here, however long since they moved, and removes the others', async () => {
    const { store, stream, mine, connect } = live();
    const hour = 3_600_000;
    const now = new Date();
    const longAgo = new Date(now.getTime() - 200 * hour);
    // Two subscribers acknowledged long ago; one of them (key-b) is connected now with nothing new to acknowledge.
    for (const identity of ['key-a:default', 'key-b:default']) {
      await store.eventAcks.record(identity, 5);
      store.eventAcks.rows.get(identity)!.usedAt = longAgo;
    }
    const { session, send } = connect('key-b');
    await send({ action: 'subscribe', collections: [mine] });
    const olderThan = new Date(now.getTime() - 168 * hour);
    assert.equal(await stream.expireAcks(olderThan, now), 1);
    assert.equal(await store.eventAcks.lastAck('key-a:default'), null, 'gone: neither moved nor connected');
    assert.equal(await store.eventAcks.lastAck('key-b:default'), 5, 'kept: connected');
    assert.deepEqual(store.journal.argsOf('eventAcks.touch'), [[['key-b:default'], now]]);
    // Once it has left, its ack has the whole retention from the last sweep that saw it connected.
    await session.close(1000, 'bye');
    await session.ended();
    assert.equal(await stream.expireAcks(olderThan, new Date(now.getTime() + 167 * hour)), 0);
    assert.equal(await stream.expireAcks(new Date(now.getTime() + hour), new Date(now.getTime() + 169 * hour)), 1);
    assert.equal(await store.eventAcks.lastAck('key-b:default'), null);
    await stream.stop();
  });

  const limits: [scope: string, limits: EventStreamOptions['sessionLimits'], second: [keyId: string, tenantId: string]][] = [
    ['key', { perKey: 1, perTenant: 10, perProcess: 10 }, ['key', 'tenant']],
    ['tenant', { perKey: 10, perTenant: 1, perProcess: 10 }, ['key-2', 'tenant']],
    ['process', { perKey: 10, perTenant: 10, perProcess: 1 }, ['key-b', 'tenant-b']],
  ];
  for (const [scope, sessionLimits, [keyId, tenantId]] of limits) {
    it(`a session beyond the ${scope} limit is refused, naming the scope; one ending makes room`, async () => {
      const { stream, connect } = live({ ...OPTIONS, sessionLimits });
      const first = connect();
      const refused = stream.open(tenantId, keyId, null, { send: () => undefined, bufferedAmount: () => 0, close: () => undefined });
      assert.deepEqual(refused, { ok: false, scope, limit: 1 });
      await first.session.ended();
      assert.ok(stream.open(tenantId, keyId, null, { send: () => undefined, bufferedAmount: () => 0, close: () => undefined }).ok);
      await stream.stop();
    });
  }

  it('a session whose key is revoked is told why and closed with 4401', async () => {
    const { store, stream, connect } = live({ ...OPTIONS, revocationCheckMs: 10 });
    const revoked = connect('revoked-key');
    const kept = connect('kept-key');
    store.tenants.revoked.add('revoked-key');
    await settle();
    await settle();
    assert.equal(revoked.socket.closed?.code, CLOSE_CODES.keyRevoked);
    assert.equal(frames(revoked.socket).at(-1)?.reason, 'key_revoked');
    assert.equal(kept.socket.closed, null);
    await stream.stop();
  });
});
