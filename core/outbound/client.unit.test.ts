/**
 * The outbound client's timeouts, against local servers that misbehave: a TCP listener that
 * accepts and never starts TLS, and a resolver that never answers. The origin is admitted through
 * the policy's test-only origin (as the e2e suite does), so only the timeouts are under test.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OutboundClient, OutboundError } from './client.js';
import type { OutboundPolicy } from './policy.js';

let server: net.Server;
let port = 0;
let accepted = 0;
const sockets = new Set<net.Socket>();

before(async () => {
  // Accepts the TCP connection, reads the ClientHello and never answers it.
  server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as net.AddressInfo).port;
});

after(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const policy = (): OutboundPolicy => ({ allowedPorts: new Set([port]), allowedHosts: [], unsafeTestOrigin: `tls-hang.test:${port}` });
const loopbackResolver = {
  resolve4: async (): Promise<string[]> => ['127.0.0.1'],
  resolve6: async (): Promise<string[]> => [],
};

/** The error a call ends with, and how long it took. */
async function failure(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await call();
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  assert.fail('the call succeeded');
}

describe('outbound client timeouts', () => {
  it('gives up on a server that accepts TCP but never completes TLS, after the connect timeout', async () => {
    const client = new OutboundClient({
      policy: policy(),
      dnsServers: [],
      connectTimeoutMs: 300,
      totalTimeoutMs: 5000,
      resolver: loopbackResolver,
    });
    const before = accepted;
    for (const call of [
      () => client.get(`https://tls-hang.test:${port}/object`, {}, 1024),
      () => client.put(`https://tls-hang.test:${port}/object`, {}, [Buffer.from('{}')], 'application/json'),
    ]) {
      const { error, ms } = await failure(call);
      assert.ok(error instanceof OutboundError, String(error));
      assert.equal(error.kind, 'timeout');
      assert.match(error.message, /could not connect \(TCP and TLS handshake\) within 300 ms/);
      assert.ok(ms >= 250 && ms < 2500, `gave up after ${Math.round(ms)} ms`);
    }
    assert.equal(accepted - before, 2, 'the TCP connections were made: it is the TLS handshake that hung');
  });

  it('bounds the whole call by the total timeout when the connect timeout is longer', async () => {
    const client = new OutboundClient({
      policy: policy(),
      dnsServers: [],
      connectTimeoutMs: 10_000,
      totalTimeoutMs: 400,
      resolver: loopbackResolver,
    });
    const { error, ms } = await failure(() => client.get(`https://tls-hang.test:${port}/object`, {}, 1024));
    assert.ok(error instanceof OutboundError, String(error));
    assert.equal(error.kind, 'timeout');
    assert.match(error.message, /no complete answer within 400 ms/);
    assert.ok(ms >= 350 && ms < 2500, `gave up after ${Math.round(ms)} ms`);
  });

  it('counts DNS resolution against the total timeout: a resolver that never answers is a timeout', async () => {
    const never = new Promise<string[]>(() => undefined);
    const client = new OutboundClient({
      policy: policy(),
      dnsServers: [],
      connectTimeoutMs: 10_000,
      totalTimeoutMs: 400,
      resolver: { resolve4: () => never, resolve6: () => never },
    });
    const before = accepted;
    const { error, ms } = await failure(() => client.get(`https://tls-hang.test:${port}/object`, {}, 1024));
    assert.ok(error instanceof OutboundError, String(error));
    assert.equal(error.kind, 'timeout');
    assert.match(error.message, /DNS lookup of tls-hang\.test/);
    assert.ok(ms >= 350 && ms < 2500, `gave up after ${Math.round(ms)} ms`);
    assert.equal(accepted, before, 'no connection without an address');
  });

  it('shares one deadline between a slow lookup and the request that follows it', async () => {
    const slow = (addresses: string[]) => () => new Promise<string[]>((resolve) => setTimeout(() => resolve(addresses), 300));
    const client = new OutboundClient({
      policy: policy(),
      dnsServers: [],
      connectTimeoutMs: 10_000,
      totalTimeoutMs: 500,
      resolver: { resolve4: slow(['127.0.0.1']), resolve6: slow([]) },
    });
    const { error, ms } = await failure(() => client.get(`https://tls-hang.test:${port}/object`, {}, 1024));
    assert.ok(error instanceof OutboundError && error.kind === 'timeout', String(error));
    assert.ok(ms >= 450 && ms < 750, `the lookup's 300 ms came out of the 500 ms total (gave up after ${Math.round(ms)} ms)`);
  });
});
