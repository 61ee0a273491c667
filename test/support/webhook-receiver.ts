/**
 * A loopback HTTPS webhook receiver for the webhooks suite (the self-signed test certificate of
 * test/fixtures/tls, valid for *.snapshots.test). It records every request it is sent (path,
 * headers, raw body bytes, arrival time, the status it answered) and answers per path: 204 by
 * default, or whatever a suite sets for that path (a status, headers, a delay).
 */
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { projectRoot } from '../../config/index.js';

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer after this many ms (a slow receiver). */
  delayMs?: number;
}

export interface ReceivedRequest {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
  /** The status this receiver answered with. */
  status: number;
}

export interface WebhookReceiver {
  port: number;
  /** TCP connections accepted. */
  connections: number;
  requests: ReceivedRequest[];
  /** How to answer requests to a path (default 204). */
  replies: Map<string, (request: ReceivedRequest) => Reply>;
  /** The requests sent to a path, in arrival order. */
  at(path: string): ReceivedRequest[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const tls = path.join(projectRoot(), 'test', 'fixtures', 'tls');
  const requests: ReceivedRequest[] = [];
  const replies = new Map<string, (request: ReceivedRequest) => Reply>();
  let connections = 0;
  const server = https.createServer(
    { key: readFileSync(path.join(tls, 'snapshots-test.key')), cert: readFileSync(path.join(tls, 'snapshots-test.crt')) },
    (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const url = request.url ?? '/';
        const received: ReceivedRequest = {
          path: url,
          method: request.method ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks),
          at: Date.now(),
          status: 0,
        };
        const reply = replies.get(url)?.(received) ?? { status: 204 };
        received.status = reply.status;
        requests.push(received);
        const send = () => response.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? '');
        if (reply.delayMs) setTimeout(send, reply.delayMs);
        else send();
      });
    },
  );
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const receiver: WebhookReceiver = {
    port,
    get connections() {
      return connections;
    },
    requests,
    replies,
    at: (wanted) => requests.filter((request) => request.path === wanted),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
