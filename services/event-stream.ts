/**
 * The live event stream, independent of the WebSocket library: one EventSession per connection
 * speaks the protocol (subscribe / ack / heartbeat / unsubscribe), and one follower per process
 * wakes the sessions when the durable log grows. Every session reads the log itself from its
 * own cursor, in seq order, so replay and live delivery are one loop: no gap and no duplicate
 * at the seam, and several API processes each deliver independently.
 */
import { eventsDelivered, websocketSlowConsumers } from '../core/metrics.js';
import type { EventFrameWithoutSignature, SignatureObject } from '../core/event-signature.js';
import type { Logger } from '../core/logger.js';
import { isUuid } from '../core/ids.js';
import type { EventEntry } from '../store/events.js';
import type { Store } from '../store/index.js';

export interface Transport {
  send(text: string): void;
  bufferedAmount(): number;
  close(code: number, reason: string): void;
}

export type { EventFrameWithoutSignature as EventFrame } from '../core/event-signature.js';

/** Signs a frame when signing is configured. */
export type FrameSigner = (frame: EventFrameWithoutSignature) => Promise<SignatureObject>;

export interface EventStreamOptions {
  /** Largest client frame accepted, in bytes (larger: an error frame; the socket stays open). */
  maxFrameBytes: number;
  /** Above this many unsent bytes a session pauses reading the log... */
  softBufferBytes: number;
  /** ...and above this it is closed (1013 slow_consumer): the client resumes by replay. */
  hardBufferBytes: number;
}

const BATCH = 200;
const ACK_FLUSH_MS = 200;

interface Subscription {
  collectionIds: string[];
  eventTypes: string[];
}

export const frameOf = (entry: EventEntry): EventFrameWithoutSignature => ({
  action: 'event',
  seq: entry.seq,
  event_id: entry._id,
  type: entry.type,
  collection_id: entry.collection_id,
  payload: entry.payload,
  ts: entry.ts.toISOString(),
});

export function createEventStream(deps: { store: Store; logger: Logger; signer: FrameSigner | null; options: EventStreamOptions }) {
  const { store, logger, options } = deps;
  const sessions = new Set<EventSession>();
  let stopFollowing: (() => Promise<void>) | null = null;

  const wakeAll = () => {
    for (const session of sessions) session.wake();
  };
  const ensureFollowing = () => {
    stopFollowing ??= store.events.follow(wakeAll, (error) => logger.warn({ err: error }, 'event change stream unavailable: polling'));
  };

  class EventSession {
    private subscription: Subscription | null = null;
    private cursor = 0;
    private pumping = false;
    private wakeAgain = false;
    private closed = false;
    private pendingAck: number | null = null;
    private ackTimer: NodeJS.Timeout | null = null;

    constructor(
      private readonly tenantId: string,
      private readonly identity: string,
      private readonly transport: Transport,
    ) {}

    private send(frame: Record<string, unknown>): void {
      if (!this.closed) this.transport.send(JSON.stringify(frame));
    }

    private fail(reason: string, message: string, extra: Record<string, unknown> = {}): void {
      this.send({ action: 'error', reason, message, ...extra });
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
          return this.subscribe(fields);
        case 'ack':
          return this.ack(fields.seq);
        case 'heartbeat':
          return this.send({ action: 'heartbeat_ack' });
        case 'unsubscribe':
          this.subscription = null;
          return this.send({ action: 'unsubscribed' });
        default:
          return this.fail(
            'unknown_action',
            `unknown action ${JSON.stringify(fields.action ?? null)}; use subscribe, ack, heartbeat or unsubscribe`,
          );
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
      if (unreadable.length > 0) return refuse('collection_not_found', `no readable collection with id ${unreadable.join(', ')}`);

      let start: number;
      if (typeof lastAck === 'number') start = lastAck;
      else if (this.subscription)
        start = this.cursor; // re-subscribe: carry on from here
      else start = (await store.eventAcks.lastAck(this.identity)) ?? (await store.events.log.latestSeq());
      const oldest = await store.events.log.oldestSeq();
      if (oldest > 0 && start < oldest - 1) {
        this.fail('replay_gap', `events after ${start} are no longer retained; continuing from the oldest retained event, ${oldest}`, {
          requested_after: start,
          oldest_seq: oldest,
        });
        start = oldest - 1;
      }
      this.subscription = { collectionIds: ids, eventTypes: [...new Set(eventTypes as string[])] };
      this.cursor = start;
      this.send({ action: 'subscribed', collections: ids, event_types: this.subscription.eventTypes });
      ensureFollowing();
      this.wake();
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

    /** Reads and sends what the subscription has not seen yet; one pump at a time per session. */
    wake(): void {
      if (this.pumping) {
        this.wakeAgain = true;
        return;
      }
      this.pumping = true;
      void this.pump()
        .catch((error: unknown) => logger.warn({ err: error }, 'event delivery failed'))
        .finally(() => {
          this.pumping = false;
          if (this.wakeAgain && !this.closed) {
            this.wakeAgain = false;
            this.wake();
          }
        });
    }

    private async pump(): Promise<void> {
      for (;;) {
        const subscription = this.subscription;
        if (!subscription || this.closed) return;
        if (this.transport.bufferedAmount() > options.softBufferBytes) {
          // Let the socket drain; the next wake (or the safety poll) resumes from the cursor.
          if (this.transport.bufferedAmount() > options.hardBufferBytes) {
            websocketSlowConsumers.inc();
            this.close(1013, 'slow_consumer');
          }
          return;
        }
        const entries = await store.events.readFor({ tenantId: this.tenantId, ...subscription }, this.cursor, BATCH);
        if (this.subscription !== subscription) continue; // re-subscribed meanwhile
        for (const entry of entries) {
          const frame = frameOf(entry);
          this.send(deps.signer ? { ...frame, signature: await deps.signer(frame) } : frame);
          eventsDelivered.inc();
          this.cursor = entry.seq;
        }
        if (entries.length < BATCH) return;
      }
    }

    get position(): number | null {
      return this.subscription && !this.closed ? this.cursor : null;
    }

    close(code: number, reason: string): void {
      if (this.closed) return;
      this.transport.close(code, reason);
      this.closed = true;
    }

    async ended(): Promise<void> {
      this.closed = true;
      sessions.delete(this);
      if (this.ackTimer) clearTimeout(this.ackTimer);
      await this.flushAck();
    }
  }

  return {
    /** A new session for an authenticated connection. `subscriberId` names the ack identity. */
    open(tenantId: string, keyId: string, subscriberId: string | null, transport: Transport): EventSession {
      const session = new EventSession(tenantId, `${keyId}:${subscriberId ?? 'default'}`, transport);
      sessions.add(session);
      return session;
    },
    sessionCount: () => sessions.size,
    /** The lowest delivery cursor among subscribed sessions (null when none): follower lag is head minus this. */
    slowestCursor: (): number | null => {
      const cursors = [...sessions].map((session) => session.position).filter((position): position is number => position !== null);
      return cursors.length > 0 ? Math.min(...cursors) : null;
    },
    async stop(): Promise<void> {
      await stopFollowing?.();
      stopFollowing = null;
      for (const session of [...sessions]) {
        session.close(1001, 'server_shutdown');
        await session.ended();
      }
    },
  };
}

export type EventStream = ReturnType<typeof createEventStream>;
