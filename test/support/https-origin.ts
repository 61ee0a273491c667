/**
 * An HTTPS server on loopback with the self-signed test certificate (test/fixtures/tls, valid for
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
  connections: number;
  /** Request lines seen, e.g. `GET /objects/a`. */
  requests: string[];
  objects: Map<string, Buffer>;
  /** Custom behaviour for a path (the handler answers the request itself). */
  routes: Map<string, (request: IncomingMessage, response: ServerResponse) => void>;
  close(): Promise<void>;
}

export async function startHttpsOrigin(): Promise<HttpsOrigin> {
  const origin: Omit<HttpsOrigin, 'port' | 'close'> = { connections: 0, requests: [], objects: new Map(), routes: new Map() };
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
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
