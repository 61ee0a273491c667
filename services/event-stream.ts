/**
 * The live event stream, independent of the WebSocket library: one EventSession per connection
 * speaks the protocol (subscribe / ack / heartbeat / unsubscribe).
 *
 * The durable log is followed ONCE per process: one tail reads every tenant's new entries in seq
 * order, signs and serialises each one once, and keeps the recent ones in a bounded ring
 * (services/event-fanout.ts); the frame texts are shaped, signed and cached in
 * services/event-frames.ts. Sessions read the ring from their own cursor, in memory, so an idle
 * session costs no query and a frame is never signed twice. A session whose cursor is older than
 * the ring (a replay with last_ack_seq, or one that paused on a full socket while the ring moved
 * on) reads the log itself, for its tenant, until it reaches the ring. Both paths go in seq order
 * from the cursor, so replay and live delivery are one loop: no gap, no duplicate at the seam.
 *
 * Bounds: sessions per key, tenant and process (close 4429 too_many_sessions); no per-session
 * queue (a session sends only while its socket has less than softBufferBytes unsent, and is
 * closed with 1013 slow_consumer above hardBufferBytes); sessions of revoked keys are closed with
 * 4401 key_revoked within revocationCheckMs.
 */
import {
  eventLogReads,
  eventsDelivered,
  websocketKeyRevocations,
  websocketSessionsRefused,
  websocketPausedSessions,
  websocketSlowConsumers,
} from '../core/metrics.js';
import type { Logger } from '../core/logger.js';
import { isUuid } from '../core/ids.js';
import type { CollectionRepository } from '../store/collections.js';
import type { EventAckRepository } from '../store/event-acks.js';
import { entryMatches, EVENTS_REDACTED, type EventEntry, type EventFilter, type EventLog } from '../store/events.js';
import type { TenantRepository } from '../store/tenants.js';
import { EventRing, SessionCounter, type SessionLimits, type SessionLimitScope, type SharedFrame } from './event-fanout.js';
import { createFrameTexts, frameBytes, type FrameSigner } from './event-frames.js';

export interface Transport {
  send(text: string): void;
  bufferedAmount(): number;
  close(code: number, reason: string): void;
}

export interface EventStreamOptions {
  /** Largest client frame accepted, in bytes (larger: an error frame; the socket stays open). */
  maxFrameBytes: number;
  /** Above this many unsent bytes a session stops sending (its cursor waits)... */
  softBufferBytes: number;
  /** ...and above this it is closed (1013 slow_consumer): the client resumes by replay. */
  hardBufferBytes: number;
  /** A session that cannot send (its socket stays above softBufferBytes) this long is closed the same way. */
  maxPauseMs: number;
  sessionLimits: SessionLimits;
  /** How often open sessions' keys are checked for revocation. */
  revocationCheckMs: number;
  /** Recent events kept in memory for the sessions (count and serialised bytes). */
  ringFrames?: number;
  ringBytes?: number;
  /** Client frames a session may send: a token bucket (sustained rate, burst) and the frames waiting to be handled. */
  inbound?: InboundLimits;
}

export interface InboundLimits {
  framesPerSecond: number;
  burst: number;
  /** Frames accepted but not yet handled (they are handled one at a time, in order). */
  maxQueued: number;
}

const DEFAULT_INBOUND: InboundLimits = { framesPerSecond: 20, burst: 40, maxQueued: 16 };
/** A subscribe costs several queries (collections, retention, acks): it takes this many tokens. */
const SUBSCRIBE_COST = 5;
/** Client input echoed in an error frame is cut to this many characters. */
const ECHO_CHARS = 40;
/** Ids named in a collection_not_found error, at most. */
const ECHO_IDS = 5;
/** At most one rate_limited error frame per this long: dropping frames must not answer each one. */
const RATE_LIMITED_NOTICE_MS = 1000;

/** A short, printable prefix of client input for an error message. */
export const echo = (value: unknown): string => {
  const text = typeof value === 'string' ? value : (JSON.stringify(value ?? null) ?? String(value));
  return text.length <= ECHO_CHARS ? text : `${text.slice(0, ECHO_CHARS)}…`;
};

/** WebSocket close codes of the stream (docs/events.md). */
export const CLOSE_CODES = {
  slowConsumer: 1013,
  serverShutdown: 1001,
  keyRevoked: 4401,
  tooManySessions: 4429,
} as const;

const BATCH = 200;
const TAIL_BATCH = 500;
const ACK_FLUSH_MS = 200;
/** A paused session looks at its socket again this often (ws has no public drain event). */
const PAUSED_RECHECK_MS = 50;

/** The seqs an `events_redacted` entry names (its payload was written by store/events.ts). */
const redactedSeqs = (entry: EventEntry): number[] => {
  const seqs = entry.payload.seqs;
  return Array.isArray(seqs) ? seqs.filter((seq): seq is number => Number.isSafeInteger(seq)) : [];
};

export type Admission = { ok: true; session: EventSession } | { ok: false; scope: SessionLimitScope; limit: number };

export interface EventSession {
  /** A client frame as it arrives: rate limited, queued (bounded) and handled in order. */
  enqueue(text: string, byteLength: number, isBinary: boolean): void;
  receive(text: string, byteLength: number): Promise<void>;
  close(code: number, reason: string): void;
  ended(): Promise<void>;
}

/** What the stream asks of storage (unit tests hand in-memory ones: test/support/fakes). */
export interface EventStreamStore {
  collections: Pick<CollectionRepository, 'existingIds'>;
  eventAcks: Pick<EventAckRepository, 'lastAck' | 'record' | 'touch' | 'expire'>;
  events: Pick<EventLog, 'readAll' | 'readFor' | 'readSeqs' | 'trimmedThrough' | 'oldestRetained' | 'follow'> & {
    log: Pick<EventLog['log'], 'latestSeq'>;
  };
  tenants: Pick<TenantRepository, 'inactiveKeyIds'>;
}

export function createEventStream(deps: {
  store: EventStreamStore;
  logger: Logger;
  signer: FrameSigner | null;
  options: EventStreamOptions;
}) {
  const { store, logger, options } = deps;
  const sessions = new Set<Session>();
  const counter = new SessionCounter(options.sessionLimits);
  const ring = new EventRing(options.ringFrames ?? 5000, options.ringBytes ?? 16 * 1024 * 1024);
  const { cachedText, textOf, shared, forget } = createFrameTexts(ring, deps.signer);
  let stopFollowing: (() => Promise<void>) | null = null;
  let revocationTimer: NodeJS.Timeout | null = null;
  let revocationRun: Promise<void> | null = null;

  // ---- the one tail of the log per process ----------------------------------------------------
  let pulling = false;
  let pullAgain = false;
  const pull = (): void => {
    if (pulling) {
      pullAgain = true;
      return;
    }
    pulling = true;
    void tail()
      .catch((error: unknown) => logger.warn({ err: error }, 'event log follow failed'))
      .finally(() => {
        pulling = false;
        if (pullAgain && stopFollowing) {
          pullAgain = false;
          pull();
        }
      });
  };

  async function tail(): Promise<void> {
    if (!ring.ready) ring.reset(await store.events.log.latestSeq());
    const touched = new Set<string>();
    const redacted: number[] = [];
    for (;;) {
      const entries = await store.events.readAll(ring.head, TAIL_BATCH);
      eventLogReads.inc({ reader: 'follower' });
      for (const entry of entries) {
        // A hole (trimmed before this process read it) restarts the ring after it: sessions
        // behind it read the log, where the tenant's watermark tells them about the loss.
        ring.push({ entry, text: cachedText(entry), bytes: frameBytes(entry) } satisfies SharedFrame);
        touched.add(entry.tenant_id);
        if (entry.type === EVENTS_REDACTED) redacted.push(...redactedSeqs(entry));
      }
      if (entries.length < TAIL_BATCH) break;
    }
    // Entries rewritten in the log (a delete's redaction, docs/events.md): the copies held here go.
    if (redacted.length > 0) {
      for (const seq of redacted) forget(seq);
      for (const entry of await store.events.readSeqs(redacted)) ring.refresh(entry, frameBytes(entry));
    }
    for (const session of sessions) if (session.wantsWake(touched)) session.wake();
  }

  const ensureFollowing = () => {
    stopFollowing ??= store.events.follow(pull, (error) => logger.warn({ err: error }, 'event change stream unavailable: polling'));
  };
  const ensureRevocationChecks = () => {
    if (revocationTimer) return;
    revocationTimer = setInterval(() => {
      revocationRun ??= closeRevoked().finally(() => (revocationRun = null));
    }, options.revocationCheckMs);
    revocationTimer.unref();
  };

  /** Sessions whose API key was revoked since they connected are closed (4401 key_revoked). */
  async function closeRevoked(): Promise<void> {
    const keyIds = [...new Set([...sessions].map((session) => session.keyId))];
    if (keyIds.length === 0) return;
    try {
      const revoked = await store.tenants.inactiveKeyIds(keyIds);
      for (const session of sessions) {
        if (!revoked.has(session.keyId)) continue;
        websocketKeyRevocations.inc();
        session.refuse('key_revoked', 'the API key of this session was revoked', CLOSE_CODES.keyRevoked);
      }
    } catch (error) {
      logger.warn({ err: error }, 'revocation check failed; retrying at the next interval');
    }
  }

  class Session implements EventSession {
    private subscription: EventFilter | null = null;
    private cursor = 0;
    private pumping = false;
    private wakeAgain = false;
    private closed = false;
    private paused = false;
    private pausedSince = 0;
    private catchingUp = false;
    private pendingAck: number | null = null;
    private ackTimer: NodeJS.Timeout | null = null;
    private pauseTimer: NodeJS.Timeout | null = null;
    private readonly inbound = options.inbound ?? DEFAULT_INBOUND;
    private tokens = this.inbound.burst;
    private refilledAt = Date.now();
    private queued = 0;
    private queue: Promise<void> = Promise.resolve();
    private limitedNoticeAt = 0;
    private pumpRun: Promise<void> = Promise.resolve();

    constructor(
      private readonly tenantId: string,
      readonly keyId: string,
      readonly identity: string,
      private readonly transport: Transport,
    ) {}

    /**
     * A control frame (answer or error). It goes through the same buffer bound as events: a client
     * that sends but never reads is closed (1013) instead of having answers buffered for it.
     */
    private send(frame: Record<string, unknown>): void {
      if (this.closed) return;
      if (this.transport.bufferedAmount() > options.hardBufferBytes) {
        websocketSlowConsumers.inc();
        this.close(CLOSE_CODES.slowConsumer, 'slow_consumer');
        return;
      }
      this.transport.send(JSON.stringify(frame));
    }

    /** Takes `cost` tokens from the session's bucket, if it has them. */
    private take(cost: number): boolean {
      const now = Date.now();
      this.tokens = Math.min(this.inbound.burst, this.tokens + ((now - this.refilledAt) / 1000) * this.inbound.framesPerSecond);
      this.refilledAt = now;
      if (this.tokens < cost) return false;
      this.tokens -= cost;
      return true;
    }

    /** A dropped frame: one rate_limited error per RATE_LIMITED_NOTICE_MS, not one per frame. */
    private dropped(): void {
      const now = Date.now();
      if (now - this.limitedNoticeAt < RATE_LIMITED_NOTICE_MS) return;
      this.limitedNoticeAt = now;
      this.fail(
        'rate_limited',
        `at most ${this.inbound.framesPerSecond} frames a second (burst ${this.inbound.burst}) and ${this.inbound.maxQueued} waiting; frames beyond were dropped`,
      );
    }

    enqueue(text: string, byteLength: number, isBinary: boolean): void {
      if (this.closed) return;
      if (this.queued >= this.inbound.maxQueued || !this.take(1)) return this.dropped();
      this.queued++;
      this.queue = this.queue
        .then(() => (isBinary ? this.receive('\u0000', byteLength) : this.receive(text, byteLength))) // binary: answered as invalid_json
        .catch((error: unknown) => logger.warn({ err: error }, 'event stream frame failed'))
        .finally(() => this.queued--);
    }

    private fail(reason: string, message: string, extra: Record<string, unknown> = {}): void {
      this.send({ action: 'error', reason, message, ...extra });
    }

    /** An error frame, then the close: the client learns why in both. */
    refuse(reason: string, message: string, code: number): void {
      this.fail(reason, message);
      this.close(code, reason);
    }

    async receive(text: string, byteLength: number): Promise<void> {
      if (byteLength > options.maxFrameBytes) return this.fail('frame_too_large', `frames are limited to ${options.maxFrameBytes} bytes`);
      let frame: unknown;
      try {
        frame = JSON.parse(text);
      } catch {
        return this.fail('invalid_json', 'the frame is not valid JSON');
      }
      if (frame === null || typeof frame !== 'object' || Array.isArray(frame))
        return this.fail('invalid_frame', 'a frame is a JSON object with an "action"');
      const fields = frame as Record<string, unknown>;
      switch (fields.action) {
        case 'subscribe':
          // A subscribe costs queries: it takes more of the bucket than other frames.
          if (!this.take(SUBSCRIBE_COST - 1)) return this.dropped();
          return this.subscribe(fields);
        case 'ack':
          return this.ack(fields.seq);
        case 'heartbeat':
          return this.send({ action: 'heartbeat_ack' });
        case 'unsubscribe':
          this.subscription = null;
          return this.send({ action: 'unsubscribed' });
        default:
          return this.fail('unknown_action', `unknown action ${echo(fields.action)}; use subscribe, ack, heartbeat or unsubscribe`);
      }
    }

    private async subscribe(fields: Record<string, unknown>): Promise<void> {
      const refuse = (reason: string, message: string) => this.send({ action: 'subscribe_error', reason, message });
      const collections = fields.collections ?? [];
      const eventTypes = fields.event_types ?? [];
      const lastAck = fields.last_ack_seq;
      if (!Array.isArray(collections) || !collections.every((id) => typeof id === 'string'))
        return refuse('invalid_frame', 'collections must be an array of collection ids');
      if (!Array.isArray(eventTypes) || !eventTypes.every((type) => typeof type === 'string'))
        return refuse('invalid_frame', 'event_types must be an array of strings');
      if (lastAck !== undefined && lastAck !== null && !(Number.isSafeInteger(lastAck) && (lastAck as number) >= 0)) {
        return refuse('invalid_frame', 'last_ack_seq must be a non-negative integer');
      }
      const ids = [...new Set(collections as string[])];
      // Not a UUID, or not this tenant's: the same answer, so existence never leaks.
      const readable = await store.collections.existingIds(this.tenantId, ids.filter(isUuid));
      const unreadable = ids.filter((id) => !readable.has(id));
      if (unreadable.length > 0) {
        const named = unreadable.slice(0, ECHO_IDS).map(echo).join(', ');
        const more = unreadable.length > ECHO_IDS ? ` and ${unreadable.length - ECHO_IDS} more` : '';
        return refuse('collection_not_found', `no readable collection with id ${named}${more}`);
      }

      let start: number;
      if (typeof lastAck === 'number') start = lastAck;
      else if (this.subscription)
        start = this.cursor; // re-subscribe: carry on from here
      else start = (await store.eventAcks.lastAck(this.identity)) ?? (await store.events.log.latestSeq());
      start = await this.checkRetention(start);
      this.subscription = { tenantId: this.tenantId, collectionIds: ids, eventTypes: [...new Set(eventTypes as string[])] };
      this.cursor = start;
      this.send({ action: 'subscribed', collections: ids, event_types: this.subscription.eventTypes });
      ensureFollowing();
      this.wake();
    }

    /**
     * A cursor below the tenant's trim watermark may have missed events: say so (replay_gap) and
     * continue from the oldest retained one. Returns the cursor to continue from.
     */
    private async checkRetention(cursor: number): Promise<number> {
      const trimmed = await store.events.trimmedThrough(this.tenantId);
      if (cursor >= trimmed) return cursor;
      const oldest = (await store.events.oldestRetained(this.tenantId, trimmed)) ?? trimmed + 1;
      this.fail('replay_gap', `events after ${cursor} are no longer retained; continuing from the oldest retained event, ${oldest}`, {
        requested_after: cursor,
        oldest_seq: oldest,
      });
      return oldest - 1;
    }

    private ack(seq: unknown): void {
      if (!this.subscription) return this.fail('not_subscribed', 'subscribe before acknowledging');
      if (!Number.isSafeInteger(seq) || (seq as number) < 0) return this.fail('invalid_frame', 'ack needs an integer seq');
      this.pendingAck = Math.max(this.pendingAck ?? 0, seq as number);
      // Acks are coalesced: one write per burst, not one per event.
      this.ackTimer ??= setTimeout(() => void this.flushAck(), ACK_FLUSH_MS);
    }

    private async flushAck(): Promise<void> {
      this.ackTimer = null;
      const seq = this.pendingAck;
      this.pendingAck = null;
      if (seq !== null)
        await store.eventAcks.record(this.identity, seq).catch((error: unknown) => logger.warn({ err: error }, 'ack not recorded'));
    }

    /** After the tail read new entries: whether this session may have something to send. */
    wantsWake(touched: ReadonlySet<string>): boolean {
      return this.subscription !== null && !this.closed && (touched.has(this.tenantId) || this.catchingUp || this.paused);
    }

    /** Sends what the subscription has not seen yet; one pump at a time per session. */
    wake(): void {
      if (this.pumping) {
        this.wakeAgain = true;
        return;
      }
      this.pumping = true;
      this.pumpRun = this.pump()
        .catch((error: unknown) => logger.warn({ err: error }, 'event delivery failed'))
        .finally(() => {
          this.pumping = false;
          if (this.wakeAgain && !this.closed) {
            this.wakeAgain = false;
            this.wake();
          }
        });
    }

    /** Whether the socket can take more now; pauses (and re-checks soon) or closes when not. */
    private hasRoom(): boolean {
      const buffered = this.transport.bufferedAmount();
      if (buffered <= options.softBufferBytes) {
        this.setPaused(false);
        return true;
      }
      const now = Date.now();
      if (!this.paused) this.pausedSince = now;
      // Past the hard limit, or not reading for too long: closed, and the client resumes by replay.
      if (buffered > options.hardBufferBytes || now - this.pausedSince > options.maxPauseMs) {
        websocketSlowConsumers.inc();
        this.close(CLOSE_CODES.slowConsumer, 'slow_consumer');
        return false;
      }
      this.setPaused(true);
      this.pauseTimer ??= setTimeout(() => {
        this.pauseTimer = null;
        this.wake();
      }, PAUSED_RECHECK_MS);
      return false;
    }

    private setPaused(paused: boolean): void {
      if (paused !== this.paused) websocketPausedSessions.inc(paused ? 1 : -1);
      this.paused = paused;
    }

    private deliver(text: string, seq: number): void {
      this.transport.send(text);
      eventsDelivered.inc();
      this.cursor = seq;
    }

    private async pump(): Promise<void> {
      for (;;) {
        const subscription = this.subscription;
        if (!subscription || this.closed) return;
        if (!this.hasRoom()) return;
        if (ring.covers(this.cursor)) {
          // Live: from memory, no query, frames already signed.
          this.catchingUp = false;
          for (let seq = this.cursor + 1; seq <= ring.head; seq++) {
            const frame = ring.get(seq);
            if (!frame) break; // the ring restarted meanwhile: the next round reads the log
            if (entryMatches(frame.entry, subscription)) {
              if (!this.hasRoom()) return;
              const text = await textOf(frame);
              if (this.subscription !== subscription || this.closed) break;
              this.deliver(text, seq);
            } else this.cursor = seq;
          }
          if (ring.covers(this.cursor)) return;
          continue;
        }
        // Behind the ring: read this tenant's part of the log from the cursor.
        this.catchingUp = true;
        const headBefore = ring.ready ? ring.head : 0;
        const from = this.cursor;
        let entries = await store.events.readFor(subscription, from, BATCH);
        eventLogReads.inc({ reader: 'catch_up' });
        if (this.subscription !== subscription) continue; // re-subscribed meanwhile
        // Checked after the read: a trim raises the watermark before it deletes, so whatever
        // this read may have missed shows up here as a watermark above the cursor.
        const resumed = await this.checkRetention(from);
        if (resumed !== from) {
          this.cursor = resumed;
          entries = entries.filter((entry) => entry.seq > resumed);
        }
        for (const entry of entries) {
          if (this.subscription !== subscription || this.closed) break;
          if (!this.hasRoom()) return;
          this.deliver(await shared(entry), entry.seq);
        }
        if (this.subscription !== subscription) continue;
        // Everything of this subscription up to what the tail had read is sent: jump to it.
        if (entries.length < BATCH) {
          this.cursor = Math.max(this.cursor, headBefore);
          if (!ring.covers(this.cursor)) return; // the tail has not started yet: next wake
        }
      }
    }

    get position(): number | null {
      return this.subscription && !this.closed ? this.cursor : null;
    }

    close(code: number, reason: string): void {
      if (this.closed) return;
      this.transport.close(code, reason);
      this.closed = true;
      this.setPaused(false);
    }

    /** Resolves once the frames and the delivery in flight are done (stop waits for it before the store closes). */
    async settled(): Promise<void> {
      await Promise.all([this.queue, this.pumpRun]);
    }

    async ended(): Promise<void> {
      if (!sessions.delete(this)) return;
      this.closed = true;
      this.setPaused(false);
      counter.release(this.tenantId, this.keyId);
      if (this.ackTimer) clearTimeout(this.ackTimer);
      if (this.pauseTimer) clearTimeout(this.pauseTimer);
      await this.flushAck();
    }
  }

  return {
    /**
     * A new session for an authenticated connection, unless a session cap is reached (the caller
     * then closes the socket with 4429). `subscriberId` names the ack identity.
     */
    open(tenantId: string, keyId: string, subscriberId: string | null, transport: Transport): Admission {
      const refused = counter.admit(tenantId, keyId);
      if (refused) {
        websocketSessionsRefused.inc({ scope: refused });
        return { ok: false, scope: refused, limit: counter.limitOf(refused) };
      }
      const session = new Session(tenantId, keyId, `${keyId}:${subscriberId ?? 'default'}`, transport);
      sessions.add(session);
      ensureRevocationChecks();
      return { ok: true, session };
    },
    sessionCount: () => sessions.size,
    /**
     * Removes the acks neither moved nor held by a subscriber connected here since `olderThan`.
     * The acks of this process's connected subscribers are marked in use first: a subscriber
     * connected for longer than the retention with nothing to acknowledge keeps its place, and one
     * that leaves has the whole retention from about when it left (this runs every few minutes,
     * far more often than the retention, in every API process).
     */
    async expireAcks(olderThan: Date, now: Date = new Date()): Promise<number> {
      await store.eventAcks.touch([...new Set([...sessions].map((session) => session.identity))], now);
      return store.eventAcks.expire(olderThan);
    },
    /** The lowest delivery cursor among subscribed sessions (null when none): follower lag is head minus this. */
    slowestCursor: (): number | null => {
      const cursors = [...sessions].map((session) => session.position).filter((position): position is number => position !== null);
      return cursors.length > 0 ? Math.min(...cursors) : null;
    },
    async stop(): Promise<void> {
      await stopFollowing?.();
      stopFollowing = null;
      if (revocationTimer) clearInterval(revocationTimer);
      revocationTimer = null;
      for (const session of [...sessions]) {
        session.close(CLOSE_CODES.serverShutdown, 'server_shutdown');
        await session.settled();
        await session.ended();
      }
      await revocationRun;
    },
  };
}

export type EventStream = ReturnType<typeof createEventStream>;
