/**
 * Errors the memory-events client reports. Every one is a MemoryEventsError with a stable `code`,
 * so a handler can switch on it; the subclasses carry the details of their case.
 */

export type MemoryEventsErrorCode =
  /** An HTTP call (ticket minting, signing keys) failed or answered with a non-2xx status. */
  | 'http_error'
  /** The WebSocket upgrade was refused: 401 (bad, expired or used ticket) is retried, other 4xx are final. */
  | 'upgrade_rejected'
  /** An event with seq at or below the high-water mark: a replay or a reordering; dropped. */
  | 'stale_seq'
  /** Verification is on and the event has no signature; dropped. */
  | 'signature_missing'
  /** The signature names a key id that is not pinned; dropped. */
  | 'kid_not_pinned'
  /** The signature does not verify against the pinned key; dropped. */
  | 'signature_invalid'
  /** A frame that is not JSON or lacks required fields; dropped. */
  | 'invalid_frame'
  /** The server sent an `error` frame (not a replay gap). */
  | 'server_error'
  /** The server refused the subscription (`subscribe_error`); the client stops. */
  | 'subscribe_rejected'
  /** The server could not replay from our cursor: events between it and `oldest_seq` are gone. */
  | 'replay_gap'
  /** onEvent threw or rejected; the event is not acked and is replayed after a reconnect. */
  | 'handler_failed'
  /** No heartbeat_ack within two heartbeat intervals; the connection is treated as dead. */
  | 'heartbeat_timeout'
  /** The connection closed or failed; the client reconnects unless stopped. */
  | 'connection_lost'
  /** reconnect.maxAttempts consecutive attempts failed; the client stops. */
  | 'reconnect_exhausted';

export class MemoryEventsError extends Error {
  override name = 'MemoryEventsError';
  constructor(
    readonly code: MemoryEventsErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A failed HTTP call. `status` is 0 when no response arrived (network error, bad JSON...). */
export class HttpError extends MemoryEventsError {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    /** `error.code` from the server's JSON error body, when there was one. */
    readonly serverCode: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('http_error', message, options);
  }

  /** 401/403: the API key is wrong or lacks access; retrying cannot help. */
  get isAuthFailure(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** The server answered the WebSocket upgrade with an HTTP status instead of switching protocols. */
export class UpgradeRejectedError extends MemoryEventsError {
  override name = 'UpgradeRejectedError';
  constructor(
    readonly status: number,
    readonly serverCode: string | undefined,
    message: string,
  ) {
    super('upgrade_rejected', message);
  }

  /** Whether a new ticket may get through: 401, 408, 429 and 5xx (and no status at all). */
  get retryable(): boolean {
    const status = this.status;
    return status === 0 || status === 401 || status === 408 || status === 429 || status >= 500;
  }
}

/** An event the client refused to hand to onEvent (it is neither processed nor acked). */
export class RejectedEventError extends MemoryEventsError {
  override name = 'RejectedEventError';
  constructor(
    code: 'stale_seq' | 'signature_missing' | 'kid_not_pinned' | 'signature_invalid',
    message: string,
    readonly seq: number,
    readonly eventId: string,
    /** The high-water mark when the event was rejected. */
    readonly highWaterSeq: number | undefined,
    /** For kid_not_pinned and signature_invalid: the key id the signature names, when it names one. */
    readonly kid?: string,
  ) {
    super(code, message);
  }
}

/** An `error` or `subscribe_error` frame from the server. */
export class ServerFrameError extends MemoryEventsError {
  override name = 'ServerFrameError';
  constructor(
    code: 'server_error' | 'subscribe_rejected' | 'replay_gap',
    readonly reason: string,
    message: string,
    /** For replay_gap: the oldest seq the server still has; it continues from there. */
    readonly oldestSeq?: number,
  ) {
    super(code, message);
  }
}

/** The socket closed (or failed) while the client wanted it open. */
export class ConnectionLostError extends MemoryEventsError {
  override name = 'ConnectionLostError';
  constructor(
    /** WebSocket close code (1006 when the connection dropped without a close frame). */
    readonly closeCode: number,
    readonly closeReason: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('connection_lost', message, options);
  }
}
