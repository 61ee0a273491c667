/**
 * The options, states and counters of MemoryEventsClient (client/memory-events.ts), which
 * re-exports them: the client's public surface, apart from its behaviour.
 */
import type { JWK } from 'jose';
import type { MemoryEventsError } from './errors.js';
import type { ControlFrame, EventFrame } from './frames.js';
import type { ReconnectPolicy } from './backoff.js';

export interface VerifyOptions {
  /** Public keys to verify with (e.g. from fetchSigningKeys, fetched once and kept: pinned). */
  jwks: readonly JWK[];
  /** When given, only signatures by these kids are accepted (others: kid_not_pinned). Default: the kids of `jwks`. */
  kids?: readonly string[];
}

export interface MemoryEventsClientOptions {
  /** HTTP base URL of the service, e.g. http://127.0.0.1:8080 (a path prefix is kept). */
  baseUrl: string;
  apiKey: string;
  /** Collection ids to subscribe to; empty or absent = every collection the key can read. */
  collections?: readonly string[];
  /** Event types; empty or absent = all. */
  eventTypes?: readonly string[];
  /**
   * A stable name for this consumer (1–128 of A–Z a–z 0–9 . _ : -). The server keeps acks per (API key, subscriber_id), so a
   * client that starts without a high-water mark resumes after the last event it acked.
   */
  subscriberId?: string;
  /** The seq of the last event already processed (e.g. persisted by the caller): the initial high-water mark. */
  lastProcessedSeq?: number;
  /** Signature verification; off when false or absent. */
  verify?: VerifyOptions | false;
  /** Called once per accepted event, in seq order; the next event waits until it settles. */
  onEvent: (frame: EventFrame) => void | Promise<void>;
  /** Every server frame that is not an event (subscribed, heartbeat_ack, error, subscribe_error, unknown). */
  onControl?: (frame: ControlFrame) => void;
  /** Rejected events, server error frames, lost connections and the final error when the client gives up. */
  onError?: (error: MemoryEventsError) => void;
  /** Reconnect policy (default DEFAULT_RECONNECT: 250 ms doubling to 30 s, unlimited); false: never reconnect. */
  reconnect?: ReconnectPolicy | false;
  /** Heartbeat interval (default 15 s); 0 disables heartbeats and the dead-connection check. */
  heartbeatMs?: number;
  /** Handshake timeout of each WebSocket connection (default 10 s). */
  connectTimeoutMs?: number;
  /** Injected for tests: the randomness of the backoff jitter and the fetch used to mint tickets. */
  random?: () => number;
  fetch?: typeof fetch;
}

export type ClientState =
  /** Constructed, start() not called yet. */
  | 'idle'
  /** Minting a ticket, connecting, or waiting for `subscribed`. */
  | 'connecting'
  /** The server confirmed the subscription. */
  | 'subscribed'
  /** Waiting out a backoff delay before reconnecting. */
  | 'backoff'
  /** stop() was called, or the client gave up. */
  | 'stopped';

export interface ClientStats {
  /** Event frames received (including rejected and duplicate ones). */
  received: number;
  /** Events onEvent completed and that were acked (or would have been, if the socket was gone). */
  processed: number;
  /** Events dropped before onEvent (stale seq, signature problems). */
  rejected: number;
  /** Connections attempted after the first. */
  reconnects: number;
  /** `subscribed` frames received. */
  subscriptions: number;
}
