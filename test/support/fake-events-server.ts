/**
 * Test helper (not used by the client itself): a small in-process stand-in for the service's
 * live-events surface, enough to drive MemoryEventsClient in unit tests. One node:http server
 * answers POST /v1/users/ws-ticket and GET /v1/memory-events/signing-keys, and upgrades
 * /v1/ws/memory-events?ticket=… with single-use tickets (a bad ticket gets HTTP 401 with a JSON
 * error body). It keeps an event log with seqs, replays after last_ack_seq (or after the last ack
 * of the subscriber_id), records every client frame, and answers heartbeats.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, type Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { type SigningKey, withSignature } from '../../core/event-signature.js';
import { type EventFrame, type SubscribeFrame } from '../../client/frames.js';

export interface FakeServerOptions {
  apiKey?: string;
  /** Served at GET /v1/memory-events/signing-keys. */
  jwks?: unknown[];
  /** When set, published events are signed with it. */
  signingKey?: SigningKey;
}

export type ClientFrameRecord = Record<string, unknown> & { action?: unknown };

export class FakeConnection {
  readonly frames: ClientFrameRecord[] = [];
  subscription: SubscribeFrame | undefined;
  closedWith: { code: number; reason: string } | undefined;

  constructor(
    readonly ws: WebSocket,
    readonly subscriberId: string | undefined,
  ) {}

  send(frame: object): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  framesOf(action: string): ClientFrameRecord[] {
    return this.frames.filter((frame) => frame.action === action);
  }

  get acks(): number[] {
    return this.framesOf('ack').map((frame) => Number(frame.seq));
  }
}

const COLLECTION = '00000000-0000-4000-8000-000000000001';

export class FakeEventsServer {
  readonly apiKey: string;
  readonly log: EventFrame[] = [];
  readonly connections: FakeConnection[] = [];
  /** Last ack per subscriber_id (subscriptions with one). */
  readonly acksBySubscriber = new Map<string, number>();
  baseUrl = '';
  mints = 0;
  upgrades = 0;
  answerHeartbeats = true;
  /** Refuse this many upcoming upgrades with `refuseStatus` even though their tickets are good. */
  refuseUpgrades = 0;
  refuseStatus: { status: number; code: string } = { status: 401, code: 'ticket_used' };
  /** Events with a lower seq are no longer retained: a replay from before them gets replay_gap. */
  oldestRetained = 1;
  /** When set, every subscribe is answered with this subscribe_error. */
  subscribeError: { reason: string; message?: string } | undefined;
  jwks: unknown[];

  readonly #http: Server;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #tickets = new Map<string, { used: boolean }>();
  readonly #sockets = new Set<Socket>();
  readonly #signingKey: SigningKey | undefined;

  private constructor(options: FakeServerOptions) {
    this.apiKey = options.apiKey ?? 'mk_test_key';
    this.jwks = options.jwks ?? [];
    this.#signingKey = options.signingKey;
    this.#http = createServer((request, response) => this.#onRequest(request, response));
    this.#http.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    this.#http.on('upgrade', (request, socket: Socket, head) => this.#onUpgrade(request, socket, head));
  }

  static async start(options: FakeServerOptions = {}): Promise<FakeEventsServer> {
    const server = new FakeEventsServer(options);
    await new Promise<void>((resolve) => server.#http.listen(0, '127.0.0.1', resolve));
    const { port } = server.#http.address() as AddressInfo;
    server.baseUrl = `http://127.0.0.1:${port}`;
    return server;
  }

  get lastConnection(): FakeConnection | undefined {
    return this.connections.at(-1);
  }

  /** Every frame the client sent, over all connections. */
  framesOf(action: string): ClientFrameRecord[] {
    return this.connections.flatMap((connection) => connection.framesOf(action));
  }

  /** Appends an event to the log and sends it to every matching subscribed connection. */
  async publish(event: { type?: string; collection_id?: string; payload?: Record<string, unknown> } = {}): Promise<EventFrame> {
    const unsigned = {
      action: 'event' as const,
      seq: this.log.length + 1,
      event_id: randomUUID(),
      type: event.type ?? 'ingestion_progress',
      collection_id: event.collection_id ?? COLLECTION,
      payload: event.payload ?? { engram_id: randomUUID(), stage: 'extract', user_stage: 'reading', current: 1, total: 3, message: null },
      ts: new Date().toISOString(),
    };
    const frame: EventFrame = this.#signingKey ? await withSignature(unsigned, this.#signingKey) : unsigned;
    this.log.push(frame);
    for (const connection of this.connections) {
      if (connection.subscription && this.#matches(connection.subscription, frame)) connection.send(frame);
    }
    return frame;
  }

  /** Closes every client connection from the server side (terminate: no close frame; else close with code/reason). */
  dropAll(how: 'terminate' | { code: number; reason: string } = 'terminate'): void {
    for (const connection of this.connections) {
      if (how === 'terminate') connection.ws.terminate();
      else connection.ws.close(how.code, how.reason);
    }
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  /** Polls until predicate() is true. */
  async waitFor(predicate: () => boolean, timeoutMs = 3_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`fake server: timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  #matches(subscription: SubscribeFrame, frame: EventFrame): boolean {
    const collectionOk = subscription.collections.length === 0 || subscription.collections.includes(frame.collection_id);
    const typeOk = subscription.event_types.length === 0 || subscription.event_types.includes(frame.type);
    return collectionOk && typeOk;
  }

  #json(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  #onRequest(request: IncomingMessage, response: ServerResponse): void {
    if (request.headers.authorization !== `Bearer ${this.apiKey}`) {
      this.#json(response, 401, { error: { code: 'unauthenticated', message: 'A valid API key is required' } });
      return;
    }
    if (request.method === 'POST' && request.url === '/v1/users/ws-ticket') {
      this.mints += 1;
      const ticket = `tk_${randomUUID()}`;
      this.#tickets.set(ticket, { used: false });
      this.#json(response, 201, {
        results: {
          ticket,
          expires_at: new Date(Date.now() + 60_000).toISOString(),
          ws_url: `${this.baseUrl.replace('http', 'ws')}/v1/ws/memory-events?ticket=${encodeURIComponent(ticket)}`,
        },
      });
      return;
    }
    if (request.method === 'GET' && request.url === '/v1/memory-events/signing-keys') {
      this.#json(response, 200, { keys: this.jwks });
      return;
    }
    this.#json(response, 404, { error: { code: 'route_not_found', message: `No route for ${request.method} ${request.url}` } });
  }

  #onUpgrade(request: IncomingMessage, socket: Socket, head: Buffer): void {
    const url = new URL(request.url ?? '/', this.baseUrl);
    const ticket = url.searchParams.get('ticket') ?? '';
    const record = this.#tickets.get(ticket);
    const refuse = this.refuseUpgrades > 0;
    if (refuse) this.refuseUpgrades -= 1;
    if (url.pathname !== '/v1/ws/memory-events' || !record || record.used || refuse) {
      const { status, code } = refuse ? this.refuseStatus : { status: 401, code: 'unknown_ticket' };
      const body = JSON.stringify({ error: { code, message: `refused (${code})` } });
      socket.end(
        `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    record.used = true;
    this.upgrades += 1;
    this.#wss.handleUpgrade(request, socket, head, (ws) => {
      const connection = new FakeConnection(ws, url.searchParams.get('subscriber_id') ?? undefined);
      this.connections.push(connection);
      ws.on('close', (code, reason) => (connection.closedWith = { code, reason: reason.toString() }));
      ws.on('message', (data) => this.#onFrame(connection, String(data)));
    });
  }

  #onFrame(connection: FakeConnection, text: string): void {
    let frame: ClientFrameRecord;
    try {
      frame = JSON.parse(text) as ClientFrameRecord;
    } catch {
      connection.send({ action: 'error', reason: 'invalid_json' });
      return;
    }
    connection.frames.push(frame);
    switch (frame.action) {
      case 'heartbeat':
        if (this.answerHeartbeats) connection.send({ action: 'heartbeat_ack' });
        return;
      case 'ack':
        if (connection.subscriberId) this.acksBySubscriber.set(connection.subscriberId, Number(frame.seq));
        return;
      case 'unsubscribe':
        connection.subscription = undefined;
        return;
      case 'subscribe':
        this.#subscribe(connection, frame as unknown as SubscribeFrame);
        return;
      default:
        connection.send({ action: 'error', reason: 'unknown_action' });
    }
  }

  #subscribe(connection: FakeConnection, frame: SubscribeFrame): void {
    if (this.subscribeError) {
      connection.send({ action: 'subscribe_error', ...this.subscribeError });
      return;
    }
    connection.subscription = { action: 'subscribe', collections: frame.collections, event_types: frame.event_types };
    connection.send({ action: 'subscribed', collections: frame.collections, event_types: frame.event_types });
    let cursor =
      frame.last_ack_seq ?? (connection.subscriberId ? this.acksBySubscriber.get(connection.subscriberId) : undefined) ?? this.log.length;
    if (cursor < this.oldestRetained - 1) {
      connection.send({ action: 'error', reason: 'replay_gap', oldest_seq: this.oldestRetained });
      cursor = this.oldestRetained - 1;
    }
    for (const event of this.log) {
      if (event.seq > cursor && this.#matches(connection.subscription, event)) connection.send(event);
    }
  }
}
