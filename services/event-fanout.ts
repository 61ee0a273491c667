/**
 * The pure parts of the per-process event fan-out (services/event-stream.ts), unit-tested beside:
 * the ring of recent, already signed and serialised frames every session reads from, and the
 * session counters that cap sessions per key, per tenant and per process.
 */
import type { EventEntry } from '../store/events.js';

/**
 * One event as every session sends it: signed once, serialised once, when the first session
 * needs it (a tenant nobody listens to costs no signature). `bytes` estimates its memory.
 */
export interface SharedFrame {
  entry: EventEntry;
  bytes: number;
  text: string | null;
  signing?: Promise<string>;
}

/**
 * Recent events of every tenant, in seq order and without holes: it holds every entry with
 * base < seq <= head. A session whose cursor is at or above `base` is served from here, from
 * memory; one below it reads the log itself (replay, or a session that fell behind).
 */
export class EventRing {
  private frames: SharedFrame[] = [];
  private bytes = 0;
  base = 0;
  head = 0;
  ready = false;

  constructor(
    private readonly maxFrames: number,
    private readonly maxBytes: number,
  ) {}

  /** Start (or restart, after a hole) with nothing held: everything up to `seq` is "before". */
  reset(seq: number): void {
    this.frames = [];
    this.bytes = 0;
    this.base = seq;
    this.head = seq;
    this.ready = true;
  }

  /** Appends the next frame; one that does not follow `head` directly restarts the ring at it. */
  push(frame: SharedFrame): void {
    if (frame.entry.seq <= this.head) return;
    if (frame.entry.seq !== this.head + 1) this.reset(frame.entry.seq - 1);
    this.frames.push(frame);
    this.bytes += frame.bytes;
    this.head = frame.entry.seq;
    let drop = 0;
    while (this.frames.length - drop > this.maxFrames || (this.bytes > this.maxBytes && this.frames.length - drop > 1)) {
      this.bytes -= this.frames[drop]!.bytes;
      drop++;
    }
    if (drop > 0) {
      this.base = this.frames[drop - 1]!.entry.seq;
      this.frames = this.frames.slice(drop);
    }
  }

  covers(cursor: number): boolean {
    return this.ready && cursor >= this.base;
  }

  /** The frames after `cursor` (which `covers`), oldest first. */
  after(cursor: number): SharedFrame[] {
    if (cursor >= this.head) return [];
    const start = Math.max(0, cursor - this.base); // seqs are contiguous from base + 1
    return this.frames.slice(start);
  }

  /**
   * Replaces a held frame by a newer version of its entry (a redacted payload): the old text and
   * any signature in flight are dropped with the old frame. False when the ring does not hold it.
   */
  refresh(entry: EventEntry, bytes: number): boolean {
    const held = this.get(entry.seq);
    if (!held) return false;
    this.frames[entry.seq - this.base - 1] = { entry, text: null, bytes };
    this.bytes += bytes - held.bytes;
    return true;
  }

  get(seq: number): SharedFrame | undefined {
    if (!this.ready || seq <= this.base || seq > this.head) return undefined;
    return this.frames[seq - this.base - 1];
  }

  get size(): number {
    return this.frames.length;
  }
}

export type SessionLimitScope = 'key' | 'tenant' | 'process';

export interface SessionLimits {
  perKey: number;
  perTenant: number;
  perProcess: number;
}

/** Open sessions by key and tenant in this process; admits a new one only under every cap. */
export class SessionCounter {
  private readonly byKey = new Map<string, number>();
  private readonly byTenant = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: SessionLimits) {}

  /** Counts the session in and returns null, or returns the first cap it would exceed. */
  admit(tenantId: string, keyId: string): SessionLimitScope | null {
    if ((this.byKey.get(keyId) ?? 0) >= this.limits.perKey) return 'key';
    if ((this.byTenant.get(tenantId) ?? 0) >= this.limits.perTenant) return 'tenant';
    if (this.total >= this.limits.perProcess) return 'process';
    this.byKey.set(keyId, (this.byKey.get(keyId) ?? 0) + 1);
    this.byTenant.set(tenantId, (this.byTenant.get(tenantId) ?? 0) + 1);
    this.total++;
    return null;
  }

  release(tenantId: string, keyId: string): void {
    const decrement = (map: Map<string, number>, id: string) => {
      const left = (map.get(id) ?? 0) - 1;
      if (left > 0) map.set(id, left);
      else map.delete(id);
    };
    decrement(this.byKey, keyId);
    decrement(this.byTenant, tenantId);
    this.total = Math.max(0, this.total - 1);
  }

  limitOf(scope: SessionLimitScope): number {
    return scope === 'key' ? this.limits.perKey : scope === 'tenant' ? this.limits.perTenant : this.limits.perProcess;
  }

  get open(): number {
    return this.total;
  }
}
