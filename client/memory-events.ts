/**
 * Client for the live memory-events WebSocket (spec: Live events, Authentication 3–4, Events).
 *
 * One MemoryEventsClient keeps one subscription alive:
 *  - each connection starts with a fresh single-use ticket (POST /v1/users/ws-ticket), then
 *    subscribes with `last_ack_seq` = the high-water mark when one is known, so the server
 *    replays what was missed;
 *  - events are handled strictly one at a time in arrival order. An event is dropped (and
 *    reported through onError with a RejectedEventError) when its seq is at or below the
 *    high-water mark (a replay or a reordering), or when verification is on and its signature
 *    is missing, names a kid that is not pinned, or does not verify. Otherwise onEvent runs;
 *    once it resolves the client sends `ack {seq}` and advances the high-water mark. If onEvent
 *    throws, the event is not acked: the client drops the connection and resumes from the
 *    high-water mark, so the event is delivered again (at least once);
 *  - the connection is restarted with exponential backoff and jitter after a close, an error,
 *    or two heartbeat intervals without a heartbeat_ack.
 */
import WebSocket, { type RawData } from 'ws';
import { backoffDelay, DEFAULT_RECONNECT, type ReconnectPolicy } from './backoff.js';
import { ConnectionLostError, HttpError, MemoryEventsError, RejectedEventError, ServerFrameError, UpgradeRejectedError } from './errors.js';
import { type ControlFrame, type ErrorFrame, type EventFrame, type ClientFrame, parseServerFrame } from './frames.js';
import { errorBodyFields, mintTicket } from './http.js';
import type { ClientState, ClientStats, MemoryEventsClientOptions } from './options.js';
import { PinnedKeys } from './pinned-keys.js';

/** Close code of a session whose API key was revoked (docs/events.md). */
const KEY_REVOKED_CLOSE = 4401;

export * from './errors.js';
export * from './frames.js';
export { backoffDelay, DEFAULT_RECONNECT, type ReconnectPolicy } from './backoff.js';
export { defaultWsUrl, fetchSigningKeys, mintTicket, type HttpOptions, type SigningJwk, type TicketInfo } from './http.js';
export type { ClientState, ClientStats, MemoryEventsClientOptions, VerifyOptions } from './options.js';

const DEFAULT_HEARTBEAT_MS = 15_000;
/** What the server accepts as subscriber_id. */
const SUBSCRIBER_ID = /^[\w.:-]{1,128}$/;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Pause reading from the socket when this many events wait for onEvent; resume below the low mark. */
const QUEUE_HIGH_WATER = 1_000;
const QUEUE_LOW_WATER = 100;
const CLOSE_WAIT_MS = 2_000;
const DEFAULT_STOP_HANDLER_TIMEOUT_MS = 10_000;

interface Connection {
  socket: WebSocket;
  /** Events of a connection carry its epoch; a queued event whose epoch is gone is skipped. */
  epoch: number;
  /** Ends the connection once: reports, then reconnects or stops. */
  end: (error: MemoryEventsError, fatal?: boolean) => void;
  closed: Promise<void>;
  heartbeat?: NodeJS.Timeout;
  /** Heartbeats sent since the last heartbeat_ack. */
  unanswered: number;
}

interface Waiter {
  check: () => void;
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

export class MemoryEventsClient {
  readonly #options: MemoryEventsClientOptions;
  readonly #reconnect: ReconnectPolicy | false;
  readonly #heartbeatMs: number;
  /** Undefined: verification is off. */
  readonly #pinned: PinnedKeys | undefined;

  #state: ClientState = 'idle';
  #highWater: number | undefined;
  #epoch = 0;
  #conn: Connection | undefined;
  /** Serial processing: each event is chained after the previous one. */
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  /** Consecutive connection attempts without progress (a subscription, or a processed event). */
  #failures = 0;
  #lastDisconnectByHandler = false;
  #connectAttempts = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #stopping = false;
  #stopPromise: Promise<void> | undefined;
  #startWaiters: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  #waiters = new Set<Waiter>();
  #lastError: MemoryEventsError | undefined;
  readonly #done: Promise<MemoryEventsError | undefined>;
  #resolveDone!: (error: MemoryEventsError | undefined) => void;
  readonly #stats: ClientStats = { received: 0, processed: 0, rejected: 0, reconnects: 0, subscriptions: 0 };

  constructor(options: MemoryEventsClientOptions) {
    if (!options.baseUrl) throw new TypeError('MemoryEventsClient: baseUrl is required');
    if (!options.apiKey) throw new TypeError('MemoryEventsClient: apiKey is required');
    if (options.subscriberId !== undefined && !SUBSCRIBER_ID.test(options.subscriberId)) {
      throw new TypeError('MemoryEventsClient: subscriberId must be 1 to 128 letters, digits, or . _ : -');
    }
    if (options.lastProcessedSeq !== undefined && (!Number.isSafeInteger(options.lastProcessedSeq) || options.lastProcessedSeq < 0)) {
      throw new TypeError('MemoryEventsClient: lastProcessedSeq must be a non-negative integer');
    }
    this.#options = options;
    this.#reconnect = options.reconnect === false ? false : { ...DEFAULT_RECONNECT, ...options.reconnect };
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.#highWater = options.lastProcessedSeq;
    this.#done = new Promise((resolve) => (this.#resolveDone = resolve));
    this.#pinned = options.verify ? new PinnedKeys(options.verify) : undefined;
  }

  /** The seq of the last event processed and acked (or given as lastProcessedSeq); undefined before any. */
  get highWaterSeq(): number | undefined {
    return this.#highWater;
  }

  get state(): ClientState {
    return this.#state;
  }

  get stats(): Readonly<ClientStats> {
    return { ...this.#stats };
  }

  /**
   * Settles when the client has stopped for good: undefined after stop(), the error when it gave
   * up (API key refused, subscription refused, reconnect attempts exhausted). Never rejects.
   */
  get done(): Promise<MemoryEventsError | undefined> {
    return this.#done;
  }

  /** The last error reported (also passed to onError). */
  get lastError(): MemoryEventsError | undefined {
    return this.#lastError;
  }

  /**
   * Connects and subscribes. Resolves when the server confirms the first subscription (or when
   * stop() is called first); rejects when the client gives up before that: an API key the server
   * refuses (401/403 while minting), a subscribe_error, or reconnect attempts exhausted.
   */
  start(): Promise<void> {
    if (this.#state !== 'idle') return Promise.reject(new Error(`MemoryEventsClient.start(): already ${this.#state}`));
    const started = new Promise<void>((resolve, reject) => {
      this.#startWaiters = { resolve, reject };
    });
    this.#connectSafely();
    return started;
  }

  /**
   * Stops for good: events not yet handed to onEvent are discarded (they are replayed to the
   * next client resuming from the high-water mark), the event in onEvent gets up to
   * `handlerTimeoutMs` (default 10 s) to finish and be acked, then the socket is closed with 1000.
   * Resolves when the socket is closed. Calling it again returns the same promise.
   */
  stop(options: { handlerTimeoutMs?: number } = {}): Promise<void> {
    this.#stopPromise ??= this.#stop(options.handlerTimeoutMs ?? DEFAULT_STOP_HANDLER_TIMEOUT_MS);
    return this.#stopPromise;
  }

  async #stop(handlerTimeoutMs: number): Promise<void> {
    const gaveUp = this.#stopping;
    this.#stopping = true;
    clearTimeout(this.#retryTimer);
    this.#epoch += 1;
    if (gaveUp) return;
    const conn = this.#conn;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#chain, new Promise<void>((resolve) => (timer = setTimeout(resolve, handlerTimeoutMs)))]);
    clearTimeout(timer);
    if (conn) {
      this.#stopHeartbeat(conn);
      const { socket } = conn;
      if (socket.readyState === WebSocket.OPEN) {
        this.#send(conn, { action: 'unsubscribe' });
        socket.close(1000, 'client stop');
      } else if (socket.readyState === WebSocket.CONNECTING) {
        socket.terminate();
      }
      const timer = setTimeout(() => socket.terminate(), CLOSE_WAIT_MS);
      await conn.closed;
      clearTimeout(timer);
    }
    this.#setState('stopped');
    this.#startWaiters?.resolve();
    this.#startWaiters = undefined;
    this.#resolveDone(undefined);
  }

  /**
   * Resolves once `predicate(this)` is true, checking after every event, frame, error and state
   * change; rejects after timeoutMs.
   */
  waitFor(predicate: (client: MemoryEventsClient) => boolean, timeoutMs = 5_000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        check: () => {
          let done: boolean;
          try {
            done = predicate(this);
          } catch (error) {
            finish();
            reject(error);
            return;
          }
          if (done) {
            finish();
            resolve();
          }
        },
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`waitFor: condition not met within ${timeoutMs} ms (state ${this.#state}, high-water ${this.#highWater})`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
      };
      this.#waiters.add(waiter);
      waiter.check();
    });
  }

  // ---- internals ----------------------------------------------------------------------------

  #notify(): void {
    for (const waiter of [...this.#waiters]) waiter.check();
  }

  #setState(state: ClientState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#notify();
  }

  #report(error: MemoryEventsError): void {
    this.#lastError = error;
    try {
      this.#options.onError?.(error);
    } catch {
      // A throwing onError must not break the client.
    }
    this.#notify();
  }

  #send(conn: Connection, frame: ClientFrame): void {
    if (conn.socket.readyState !== WebSocket.OPEN) return;
    conn.socket.send(JSON.stringify(frame), (error) => {
      // A failed send means the socket is going away; its close event does the rest.
      if (error) conn.end(new ConnectionLostError(1006, '', `sending ${frame.action} failed: ${error.message}`, { cause: error }));
    });
  }

  #connectSafely(): void {
    this.#connect().catch((error: unknown) => {
      // Not expected (every known failure is handled inside); keep the client alive anyway.
      if (this.#stopping) return;
      const failure =
        error instanceof MemoryEventsError
          ? error
          : new ConnectionLostError(1006, '', `connecting failed: ${String(error)}`, { cause: error });
      if (this.#conn) this.#conn.end(failure);
      else {
        this.#report(failure);
        this.#scheduleReconnect(failure);
      }
    });
  }

  async #connect(): Promise<void> {
    if (this.#stopping) return;
    if (this.#connectAttempts > 0) this.#stats.reconnects += 1;
    this.#connectAttempts += 1;
    const epoch = ++this.#epoch;
    this.#setState('connecting');

    let wsUrl: string;
    try {
      const ticket = await mintTicket(
        this.#options.baseUrl,
        this.#options.apiKey,
        this.#options.fetch ? { fetch: this.#options.fetch } : {},
      );
      wsUrl = ticket.wsUrl;
    } catch (error) {
      if (this.#stopping) return;
      const failure = error instanceof MemoryEventsError ? error : new HttpError(0, undefined, String(error), { cause: error });
      this.#report(failure);
      if (failure instanceof HttpError && failure.isAuthFailure) this.#giveUp(failure);
      else this.#scheduleReconnect(failure);
      return;
    }
    if (this.#stopping) return;

    // Throws for an unusable ws_url; #connectSafely reports it and retries.
    const url = new URL(wsUrl);
    if (this.#options.subscriberId) url.searchParams.set('subscriber_id', this.#options.subscriberId);
    const socket = new WebSocket(url, { handshakeTimeout: this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS });
    let resolveClosed!: () => void;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    let ended = false;
    const conn: Connection = {
      socket,
      epoch,
      closed,
      unanswered: 0,
      end: (error, fatal = false) => {
        if (ended) return;
        ended = true;
        this.#onDisconnect(conn, error, fatal);
      },
    };
    this.#conn = conn;

    socket.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        const { code, message } = errorBodyFields(body);
        const status = response.statusCode ?? 0;
        const error = new UpgradeRejectedError(
          status,
          code,
          `WebSocket upgrade refused: HTTP ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`,
        );
        // 401 (a ticket that expired or was used on the way) and 408/429/5xx can pass with a new
        // ticket; any other 4xx (a bad subscriber_id, a wrong path) will not, so it is final.
        conn.end(error, !error.retryable);
        socket.terminate();
      };
      const timer = setTimeout(finish, 2_000);
      response.on('data', (chunk: Buffer) => {
        if (size < 8_192) chunks.push(chunk);
        size += chunk.length;
      });
      response.on('end', finish);
      response.on('error', finish);
    });
    socket.on('open', () => void this.#onOpen(conn));
    socket.on('message', (data, isBinary) => this.#onMessage(conn, data, isBinary));
    socket.on('error', (error) => conn.end(new ConnectionLostError(1006, '', `connection error: ${error.message}`, { cause: error })));
    socket.on('close', (code, reason) => {
      const text = reason.toString('utf8');
      // 4401 key_revoked: the key will not mint another ticket; reconnecting cannot help.
      conn.end(new ConnectionLostError(code, text, `connection closed (${code}${text ? ` ${text}` : ''})`), code === KEY_REVOKED_CLOSE);
      resolveClosed();
    });
  }

  async #onOpen(conn: Connection): Promise<void> {
    if (conn.epoch !== this.#epoch || this.#stopping) return;
    this.#startHeartbeat(conn);
    // The previous connection's event may still be in onEvent: wait, so last_ack_seq includes it.
    await this.#chain;
    if (conn.epoch !== this.#epoch || this.#stopping) return;
    const frame: ClientFrame = {
      action: 'subscribe',
      collections: [...(this.#options.collections ?? [])],
      event_types: [...(this.#options.eventTypes ?? [])],
      ...(this.#highWater !== undefined ? { last_ack_seq: this.#highWater } : {}),
    };
    this.#send(conn, frame);
  }

  #startHeartbeat(conn: Connection): void {
    if (this.#heartbeatMs <= 0) return;
    conn.heartbeat = setInterval(() => {
      if (conn.unanswered >= 2) {
        conn.end(new MemoryEventsError('heartbeat_timeout', `no heartbeat_ack within ${2 * this.#heartbeatMs} ms; reconnecting`));
        conn.socket.terminate();
        return;
      }
      conn.unanswered += 1;
      this.#send(conn, { action: 'heartbeat' });
    }, this.#heartbeatMs);
  }

  #stopHeartbeat(conn: Connection): void {
    clearInterval(conn.heartbeat);
    conn.heartbeat = undefined;
  }

  #onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    if (conn.epoch !== this.#epoch) return;
    if (isBinary) {
      this.#report(new MemoryEventsError('invalid_frame', 'binary frame from the server; expected JSON text'));
      return;
    }
    const parsed = parseServerFrame(rawText(data));
    if (!parsed.ok) {
      this.#report(new MemoryEventsError('invalid_frame', `dropped a server frame: ${parsed.problem}`));
      return;
    }
    const frame = parsed.frame;
    if (frame.action === 'event') {
      this.#stats.received += 1;
      this.#enqueue(conn, frame as EventFrame);
      return;
    }
    this.#onControl(conn, frame);
  }

  #onControl(conn: Connection, frame: ControlFrame): void {
    switch (frame.action) {
      case 'heartbeat_ack':
        conn.unanswered = 0;
        break;
      case 'subscribed':
        this.#stats.subscriptions += 1;
        if (!this.#lastDisconnectByHandler) this.#failures = 0;
        this.#setState('subscribed');
        this.#startWaiters?.resolve();
        this.#startWaiters = undefined;
        break;
      case 'subscribe_error': {
        const { reason, message } = frame as ErrorFrame;
        const error = new ServerFrameError('subscribe_rejected', reason, `subscription refused: ${reason}${message ? `: ${message}` : ''}`);
        this.#emitControl(frame);
        conn.end(error, true);
        conn.socket.terminate();
        return;
      }
      case 'error': {
        const { reason, message, oldest_seq: oldestSeq } = frame as ErrorFrame;
        if (reason === 'replay_gap') {
          const oldest = typeof oldestSeq === 'number' ? oldestSeq : undefined;
          this.#report(
            new ServerFrameError(
              'replay_gap',
              reason,
              `events after seq ${this.#highWater ?? '?'} before seq ${oldest ?? '?'} are no longer retained; continuing from ${oldest ?? 'the oldest retained event'}`,
              oldest,
            ),
          );
        } else {
          this.#report(new ServerFrameError('server_error', reason, `server error frame: ${reason}${message ? `: ${message}` : ''}`));
        }
        break;
      }
    }
    this.#emitControl(frame);
  }

  #emitControl(frame: ControlFrame): void {
    try {
      this.#options.onControl?.(frame);
    } catch {
      // A throwing onControl must not break the client.
    }
    this.#notify();
  }

  #enqueue(conn: Connection, frame: EventFrame): void {
    this.#pending += 1;
    if (this.#pending >= QUEUE_HIGH_WATER && !conn.socket.isPaused) conn.socket.pause();
    this.#chain = this.#chain.then(async () => {
      try {
        await this.#process(conn, frame);
      } finally {
        this.#pending -= 1;
        if (this.#pending <= QUEUE_LOW_WATER && conn.socket.isPaused) conn.socket.resume();
      }
    });
  }

  #reject(
    code: 'stale_seq' | 'signature_missing' | 'kid_not_pinned' | 'signature_invalid',
    frame: EventFrame,
    message: string,
    kid?: string,
  ) {
    this.#stats.rejected += 1;
    this.#report(
      new RejectedEventError(code, `event seq ${frame.seq} dropped: ${message}`, frame.seq, frame.event_id, this.#highWater, kid),
    );
  }

  /** True when the event may be processed; otherwise it has been reported as rejected. */
  async #verify(frame: EventFrame): Promise<boolean> {
    const rejection = await this.#pinned?.check(frame);
    if (!rejection) return true;
    this.#reject(rejection.code, frame, rejection.message, rejection.kid);
    return false;
  }

  async #process(conn: Connection, frame: EventFrame): Promise<void> {
    if (conn.epoch !== this.#epoch || this.#stopping) return;
    if (this.#highWater !== undefined && frame.seq <= this.#highWater) {
      this.#reject('stale_seq', frame, `seq is not above the high-water mark ${this.#highWater} (replay or reordering)`);
      return;
    }
    if (!(await this.#verify(frame))) return;
    if (conn.epoch !== this.#epoch || this.#stopping) return;
    try {
      await this.#options.onEvent(frame);
    } catch (error) {
      const failure = new MemoryEventsError(
        'handler_failed',
        `onEvent failed for seq ${frame.seq}: ${(error as Error)?.message ?? String(error)}`,
        {
          cause: error,
        },
      );
      this.#lastDisconnectByHandler = true;
      // Unacked: drop the connection and resume from the high-water mark so the event comes again.
      conn.end(failure);
      conn.socket.terminate();
      return;
    }
    this.#highWater = frame.seq;
    this.#stats.processed += 1;
    this.#failures = 0;
    this.#lastDisconnectByHandler = false;
    this.#send(conn, { action: 'ack', seq: frame.seq });
    this.#notify();
  }

  #onDisconnect(conn: Connection, error: MemoryEventsError, fatal: boolean): void {
    this.#stopHeartbeat(conn);
    if (this.#conn === conn) this.#conn = undefined;
    // Events of this connection still queued are skipped: they are replayed after the high-water mark.
    if (conn.epoch === this.#epoch) this.#epoch += 1;
    if (this.#stopping) return;
    this.#report(error);
    if (fatal) this.#giveUp(error);
    else this.#scheduleReconnect(error);
  }

  #scheduleReconnect(cause: MemoryEventsError): void {
    if (this.#stopping) return;
    const policy = this.#reconnect;
    if (policy === false) {
      this.#giveUp(cause);
      return;
    }
    if (policy.maxAttempts !== undefined && this.#failures >= policy.maxAttempts) {
      const error = new MemoryEventsError(
        'reconnect_exhausted',
        `gave up after ${this.#failures} reconnect attempts without progress; last error: ${cause.message}`,
        { cause },
      );
      this.#report(error);
      this.#giveUp(error);
      return;
    }
    const delay = backoffDelay(policy, this.#failures, this.#options.random);
    this.#failures += 1;
    this.#setState('backoff');
    this.#retryTimer = setTimeout(() => this.#connectSafely(), delay);
  }

  #giveUp(error: MemoryEventsError): void {
    this.#stopping = true;
    clearTimeout(this.#retryTimer);
    this.#epoch += 1;
    const conn = this.#conn;
    if (conn) {
      this.#stopHeartbeat(conn);
      conn.socket.terminate();
    }
    this.#setState('stopped');
    this.#startWaiters?.reject(error);
    this.#startWaiters = undefined;
    this.#resolveDone(error);
  }
}
