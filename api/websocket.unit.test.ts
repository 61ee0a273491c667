/**
 * The WebSocket endpoint on a loopback server: what the upgrade refuses before any ticket is looked
 * up (wrong path, a malformed subscriber id, a peer that spent its failed-authentication budget),
 * what each ticket refusal answers and charges, and how client frames reach the session (text,
 * binary, over the protocol's size bound, over ws's hard cap), with the protocol's event stream and
 * a store that holds no events.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { AuthFailures } from '../core/auth-failures.js';
import { CLOSE_CODES, createEventStream } from '../services/event-stream.js';
import type { TicketCheck, TicketService } from '../services/tickets.js';
import { fakeStore, silentLogger, streamOptions } from '../test/support/fakes/index.js';
import { RawSocket } from '../test/support/ws.js';
import { attachEventWebSocket } from './websocket.js';

const silent = silentLogger();
const GOOD = 'wst_good';
const BURST = 5;
const OPTIONS = streamOptions({
  sessionLimits: { perKey: 50, perTenant: 50, perProcess: 50 },
  inbound: { framesPerSecond: 1, burst: BURST, maxQueued: 16 },
});

/** A server with the endpoint attached; `answer` decides each ticket, and every lookup is counted. */
async function serve(answer: (ticket: string) => Promise<TicketCheck>, failures = new AuthFailures(1, 3), options = OPTIONS) {
  const lookups: string[] = [];
  const tickets = {
    use: (ticket: string) => {
      lookups.push(ticket);
      return answer(ticket);
    },
  } as TicketService;
  const server = http.createServer((_request, response) => response.end());
  const events = createEventStream({ store: fakeStore(), logger: silent, signer: null, options });
  const detach = attachEventWebSocket(server, { tickets, events, logger: silent, failures });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    lookups,
    async close() {
      await detach();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Refusal = { status: number; code: string; message: string; retryAfter: string | undefined };

/** The answer to an upgrade request: the refusal, or 'open' (the socket is closed again at once). */
function upgrade(url: string): Promise<Refusal | 'open'> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => {
      ws.close();
      resolve('open');
    });
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (part: Buffer) => (body += String(part)));
      response.on('end', () => {
        const { error } = JSON.parse(body) as { error: { status: number; code: string; message: string } };
        assert.equal(error.status, response.statusCode, 'the body repeats the status');
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode!, code: error.code, message: error.message, retryAfter });
      });
    });
    ws.once('error', reject);
  });
}

const refused = (reason: 'unknown_ticket' | 'ticket_expired' | 'ticket_used' | 'key_revoked') => async (): Promise<TicketCheck> => ({
  ok: false,
  reason,
});
const accepted = async (): Promise<TicketCheck> =>
  ({ ok: true, ticket: { tenant_id: 'tenant-1', key_id: 'key-1' } }) as unknown as TicketCheck;

describe('WebSocket upgrade', () => {
  // [case, path and query, the ticket's answer, status, code, tickets looked up]
  const cases: [string, string, () => Promise<TicketCheck>, number, string, number][] = [
    ['another path', '/v1/ws/other?ticket=wst_good', accepted, 404, 'route_not_found', 0],
    ['no ticket', '/v1/ws/memory-events', accepted, 401, 'ticket_required', 0],
    ['a malformed subscriber id', '/v1/ws/memory-events?ticket=wst_good&subscriber_id=a%20b', accepted, 400, 'validation_failed', 0],
    [
      'a subscriber id too long',
      `/v1/ws/memory-events?ticket=wst_good&subscriber_id=${'s'.repeat(129)}`,
      accepted,
      400,
      'validation_failed',
      0,
    ],
    ['an unknown ticket', '/v1/ws/memory-events?ticket=wst_nope', refused('unknown_ticket'), 401, 'unknown_ticket', 1],
    ['an expired ticket', '/v1/ws/memory-events?ticket=wst_old', refused('ticket_expired'), 401, 'ticket_expired', 1],
    ['a used ticket', '/v1/ws/memory-events?ticket=wst_used', refused('ticket_used'), 401, 'ticket_used', 1],
    ['a revoked key', '/v1/ws/memory-events?ticket=wst_revoked', refused('key_revoked'), 401, 'key_revoked', 1],
    ['a ticket store that fails', '/v1/ws/memory-events?ticket=wst_good', () => Promise.reject(new Error('down')), 503, 'unavailable', 1],
  ];
  for (const [name, path, answer, status, code, lookups] of cases) {
    it(`answers ${name} with ${status} ${code}, no socket`, async () => {
      const server = await serve(answer);
      try {
        const answered = await upgrade(`${server.base}${path}`);
        assert.ok(answered !== 'open');
        assert.equal(answered.status, status);
        assert.equal(answered.code, code);
        assert.equal(server.lookups.length, lookups);
        // The message never repeats the ticket itself.
        assert.ok(!answered.message.includes('wst_'), answered.message);
      } finally {
        await server.close();
      }
    });
  }

  it('opens with a valid ticket', async () => {
    const server = await serve(accepted);
    try {
      assert.equal(await upgrade(`${server.base}/v1/ws/memory-events?ticket=${GOOD}&subscriber_id=tail.1:a-b`), 'open');
    } finally {
      await server.close();
    }
  });

  it('charges each failed ticket to the peer, then answers 429 with Retry-After without looking the ticket up', async () => {
    const failures = new AuthFailures(0.01, 3);
    const server = await serve(refused('unknown_ticket'), failures);
    try {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        const answered = await upgrade(`${server.base}/v1/ws/memory-events?ticket=wst_guess${attempt}`);
        assert.ok(answered !== 'open');
        statuses.push(answered.status);
        if (answered.status === 429) {
          assert.equal(answered.code, 'rate_limited');
          assert.ok(Number(answered.retryAfter) > 0, `Retry-After ${answered.retryAfter}`);
        }
      }
      assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
      assert.equal(server.lookups.length, 3, 'the guesses within the budget were looked up; none after it');
      // A good ticket from the same peer waits too: the budget is the address's, not the ticket's.
      const good = await upgrade(`${server.base}/v1/ws/memory-events?ticket=${GOOD}`);
      assert.ok(good !== 'open');
      assert.equal(good.status, 429);
    } finally {
      await server.close();
    }
  });
});

describe('WebSocket frames', () => {
  let server: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    server = await serve(accepted);
  });
  after(async () => {
    await server.close();
  });
  const url = () => `${server.base}/v1/ws/memory-events?ticket=${GOOD}`;

  // [case, the frame, the error reason answered, the longest error frame allowed]
  const cases: [string, string | Buffer, string, number][] = [
    [
      'a text frame over the protocol bound (the socket stays open)',
      `{"action":"heartbeat","pad":"${'x'.repeat(70 * 1024)}"}`,
      'frame_too_large',
      200,
    ],
    ['a binary frame', Buffer.from('{"action":"heartbeat"}'), 'invalid_json', 200],
    [
      'an unknown action, not echoed back beyond a short prefix',
      JSON.stringify({ action: `x${'<script>'.repeat(1000)}` }),
      'unknown_action',
      300,
    ],
  ];
  for (const [name, frame, reason, longest] of cases) {
    it(`answers ${name} with ${reason}`, async () => {
      const socket = await RawSocket.connect(url());
      try {
        socket.ws.send(frame);
        const error = await socket.next((answer) => answer.action === 'error');
        assert.equal(error.reason, reason);
        assert.ok(JSON.stringify(error).length <= longest, `${JSON.stringify(error).length} bytes`);
        socket.send({ action: 'heartbeat' });
        await socket.next((answer) => answer.action === 'heartbeat_ack');
      } finally {
        socket.ws.close();
      }
    });
  }

  it('closes the socket (1009) for a frame over the hard cap, without handling it', async () => {
    const socket = await RawSocket.connect(url());
    socket.ws.send(Buffer.alloc(1024 * 1024 + 1, 0x20), { binary: false });
    await new Promise<void>((resolve, reject) => {
      socket.ws.once('close', () => resolve());
      socket.ws.once('message', (data) => reject(new Error(`answered instead of closed: ${String(data).slice(0, 80)}`)));
    });
    assert.equal(socket.closed?.code, 1009);
    assert.deepEqual(socket.frames, []);
  });

  it('rate limits a flood of frames: the burst is answered, the rest dropped with one rate_limited error', async () => {
    const socket = await RawSocket.connect(url());
    try {
      for (let i = 0; i < 50; i++) socket.send({ action: 'heartbeat' });
      await socket.next((frame) => frame.reason === 'rate_limited');
      // The server reads the close after the flood and has answered every frame it kept by then.
      socket.ws.close();
      await new Promise<void>((resolve) => socket.ws.once('close', () => resolve()));
      const acks = socket.frames.filter((frame) => frame.action === 'heartbeat_ack').length;
      assert.ok(acks >= BURST && acks <= BURST + 1, `${acks} heartbeats answered`);
      assert.equal(socket.frames.filter((frame) => frame.reason === 'rate_limited').length, 1);
    } finally {
      socket.ws.close();
    }
  });

  it('refuses a session over the per-key limit with an error frame, then closes 4429', async () => {
    const limited = await serve(accepted, undefined, { ...OPTIONS, sessionLimits: { perKey: 2, perTenant: 10, perProcess: 10 } });
    const url = () => `${limited.base}/v1/ws/memory-events?ticket=${GOOD}`;
    const open = [await RawSocket.connect(url()), await RawSocket.connect(url())];
    try {
      const third = await RawSocket.connect(url());
      const error = await third.next((frame) => frame.action === 'error');
      assert.equal(error.reason, 'too_many_sessions');
      assert.equal(error.limit, 2);
      await new Promise<void>((resolve) => (third.closed ? resolve() : third.ws.once('close', () => resolve())));
      assert.equal(third.closed?.code, CLOSE_CODES.tooManySessions);
    } finally {
      for (const socket of open) socket.ws.close();
      await limited.close();
    }
  });
});
