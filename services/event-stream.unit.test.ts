import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../core/logger.js';
import type { Store } from '../store/index.js';
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

const silent = { warn: () => undefined, debug: () => undefined, info: () => undefined, error: () => undefined } as unknown as Logger;
const OPTIONS: EventStreamOptions = {
  maxFrameBytes: 64 * 1024,
  softBufferBytes: 64 * 1024,
  hardBufferBytes: 256 * 1024,
  maxPauseMs: 60_000,
  sessionLimits: { perKey: 10, perTenant: 10, perProcess: 10 },
  revocationCheckMs: 60_000,
  inbound: { framesPerSecond: 20, burst: 40, maxQueued: 16 },
};

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
