/**
 * GET /v1/ws/memory-events?ticket=… as a WebSocket (the `ws` package on the HTTP server's
 * upgrade event, beside Koa). The ticket is consumed at the upgrade: a missing, unknown,
 * expired or used ticket gets an HTTP 401 with the usual JSON error body and no socket. Each 401
 * is charged to the peer's failed-authentication bucket (AuthFailures, shared with API keys and
 * signed uploads); a peer that spent it gets 429 `rate_limited` before any ticket lookup, and a
 * ticket of the wrong shape is never looked up.
 * Dead peers are found with ping/pong; the protocol itself lives in services/event-stream.ts.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../core/logger.js';
import { CLOSE_CODES, type EventStream } from '../services/event-stream.js';
import type { TicketService } from '../services/tickets.js';
import { tooManyFailures, type AuthFailures } from '../core/auth-failures.js';
import { peerOf } from './middleware/auth.js';

const PATH = '/v1/ws/memory-events';
const PING_INTERVAL_MS = 20_000;
const SUBSCRIBER_ID = /^[\w.:-]{1,128}$/;

const REASONS: Record<number, string> = { 401: 'Unauthorized', 404: 'Not Found', 429: 'Too Many Requests', 503: 'Service Unavailable' };

function refuse(socket: Duplex, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: { status, code, message } });
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}

/** The same body and Retry-After as the REST API's 429 for failed authentications. */
function refuseTooMany(socket: Duplex, retryAfter: number): void {
  const error = tooManyFailures(retryAfter);
  refuse(socket, error.status, error.code, error.message, error.headers);
}

const TICKET_MESSAGES: Record<string, string> = {
  unknown_ticket: 'The ticket is not valid; mint one with POST /v1/users/ws-ticket',
  ticket_expired: 'The ticket has expired; mint a new one with POST /v1/users/ws-ticket',
  ticket_used: 'The ticket was already used; tickets are single-use',
  key_revoked: 'The API key that minted this ticket has been revoked',
};

export function attachEventWebSocket(
  server: Server,
  deps: { tickets: TicketService; events: EventStream; logger: Logger; failures: AuthFailures },
): () => Promise<void> {
  // Frames above the protocol's own limit are answered with an error frame by the session; ws's
  // hard cap only guards memory (it closes the socket, so it sits well above the protocol limit).
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== PATH) return refuse(socket, 404, 'route_not_found', `No WebSocket endpoint at ${url.pathname}`);
    const address = peerOf(request);
    const wait = deps.failures.wait(address);
    if (wait > 0) return refuseTooMany(socket, wait);
    const unauthorized = (code: string, message: string): void => {
      const retryAfter = deps.failures.charge(address);
      if (retryAfter > 0) refuseTooMany(socket, retryAfter);
      else refuse(socket, 401, code, message);
    };
    const ticket = url.searchParams.get('ticket');
    if (!ticket) return unauthorized('ticket_required', 'Pass a ticket from POST /v1/users/ws-ticket as ?ticket=');
    const subscriberId = url.searchParams.get('subscriber_id');
    if (subscriberId !== null && !SUBSCRIBER_ID.test(subscriberId)) {
      return refuse(socket, 400, 'validation_failed', 'subscriber_id must be 1 to 128 letters, digits, or . _ : -');
    }
    deps.tickets.use(ticket).then(
      (use) => {
        if (!use.ok) return unauthorized(use.reason, TICKET_MESSAGES[use.reason] ?? use.reason);
        wss.handleUpgrade(request, socket, head, (ws) => serve(ws, use.ticket.tenant_id, use.ticket.key_id, subscriberId));
      },
      (error: unknown) => {
        deps.logger.error({ err: error }, 'ticket check failed');
        refuse(socket, 503, 'unavailable', 'Could not check the ticket; retry');
      },
    );
  };

  const serve = (ws: WebSocket, tenantId: string, keyId: string, subscriberId: string | null) => {
    const admission = deps.events.open(tenantId, keyId, subscriberId, {
      send: (text) => ws.send(text),
      bufferedAmount: () => ws.bufferedAmount,
      close: (code, reason) => ws.close(code, reason),
    });
    if (!admission.ok) {
      // The socket is up (the ticket is spent): say why in a frame, then close with a clear code.
      ws.send(
        JSON.stringify({
          action: 'error',
          reason: 'too_many_sessions',
          message: `at most ${admission.limit} open sessions per ${admission.scope}; close one and retry with a new ticket`,
          scope: admission.scope,
          limit: admission.limit,
        }),
      );
      ws.close(CLOSE_CODES.tooManySessions, 'too_many_sessions');
      return;
    }
    const session = admission.session;
    // Frames are rate limited, queued (bounded) and handled one at a time, in order, by the session.
    ws.on('message', (data, isBinary) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      session.enqueue(isBinary ? '' : bytes.toString('utf8'), bytes.byteLength, isBinary);
    });
    let alive = true;
    ws.on('pong', () => {
      alive = true;
    });
    const ping = setInterval(() => {
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
    }, PING_INTERVAL_MS);
    ws.on('close', () => {
      clearInterval(ping);
      void session.ended();
    });
    ws.on('error', (error) => deps.logger.debug({ err: error }, 'websocket error'));
  };

  server.on('upgrade', onUpgrade);
  return async () => {
    server.off('upgrade', onUpgrade);
    await deps.events.stop();
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  };
}
