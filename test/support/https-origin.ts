/**
 * An HTTPS server on every local address (loopback included) with the self-signed test certificate (test/fixtures/tls, valid for
 * snapshots.test and *.snapshots.test), standing in for customer object storage. It keeps what is
 * PUT, serves it back, and counts every TCP connection, so a suite can prove a refused URL made none.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { projectRoot } from '../../config/index.js';

export const TEST_CA_FILE = path.join(projectRoot(), 'test', 'fixtures', 'tls', 'snapshots-test.crt');

export interface HttpsOrigin {
  port: number;
  /** TCP connections accepted, on any local address. */
  connections: number;
  /** Listening on `::` with IPv4 too (false: IPv4 only, this machine has no IPv6). */
  dualStack: boolean;
  /** Request lines seen, e.g. `GET /objects/a`. */
  requests: string[];
  objects: Map<string, Buffer>;
  /** Custom behaviour for a path (the handler answers the request itself). */
  routes: Map<string, (request: IncomingMessage, response: ServerResponse) => void>;
  close(): Promise<void>;
}

export async function startHttpsOrigin(): Promise<HttpsOrigin> {
  const origin: Omit<HttpsOrigin, 'port' | 'close'> = {
    connections: 0,
    dualStack: false,
    requests: [],
    objects: new Map(),
    routes: new Map(),
  };
  const server = https.createServer(
    {
      key: readFileSync(path.join(projectRoot(), 'test', 'fixtures', 'tls', 'snapshots-test.key')),
      cert: readFileSync(TEST_CA_FILE),
    },
    (request, response) => {
      const url = request.url ?? '/';
      origin.requests.push(`${request.method} ${url}`);
      const custom = origin.routes.get(url);
      if (custom) return custom(request, response);
      if (request.method === 'PUT') {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          origin.objects.set(url, Buffer.concat(chunks));
          response.writeHead(200, { ETag: '"stored"' }).end();
        });
        return;
      }
      const object = origin.objects.get(url);
      if (!object) return void response.writeHead(404).end('no such object');
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': object.length }).end(object);
    },
  );
  server.on('connection', () => {
    origin.connections += 1;
  });
  // Dual-stack on the wildcard address, so every loopback spelling a refused URL could have reached
  // (127.x.y.z, ::1, 0.0.0.0, ::, IPv4-mapped) lands here and is counted. Without IPv6, IPv4's
  // wildcard still takes every 127.x.y.z and 0.0.0.0.
  const listen = (options: { host: string; ipv6Only?: boolean }) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: 0, ...options }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen({ host: '::', ipv6Only: false });
    origin.dualStack = true;
  } catch {
    await listen({ host: '0.0.0.0' });
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return Object.assign(origin, {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
