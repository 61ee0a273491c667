/**
 * Device snapshots already opened, kept prepared so the next call on the same snapshot skips the
 * body's parse, its checks and the building of its graph index (docs/device-memory.md, "Prepared
 * snapshots"). A client hands the same snapshot back call after call, so this is the common case.
 *
 * - **Tenant-scoped.** An entry is found only by the tenant it was opened for: the key is the
 *   tenant id with the snapshot's version and digest, and a lookup compares the tenant again. The
 *   caller (snapshot/seal.ts) reaches the cache only after the signature, the tenant binding and
 *   the model are checked, and uses an entry only when the body sent hashes to the signed digest.
 * - **Bounded.** At most `maxEntries` entries, least recently used first out, and every entry is
 *   held under the search index's memory budget (SEARCH_INDEX_MAX_BYTES) as one more evictable
 *   entry of its tenant, so prepared snapshots and collection partitions share one budget, with the
 *   same fair share per tenant (search/partition-budget.ts).
 * - **Read-only.** An entry's body and partition are shared by every call that finds it: nothing
 *   may change them (SnapshotGraph copies what it grows).
 */
import type { TimeSlicer } from '../core/time-slice.js';
import type { GraphPartition } from '../search/graph-index.js';
import type { SnapshotBody, WireBody } from './format.js';

/** A snapshot that passed every check of openSnapshot. */
export interface OpenedSnapshot {
  graphId: string;
  /** Its format version and digest (null for the empty snapshot `{}`): what it is cached under. */
  snapshotId: string | null;
  /** Read-only once cached. */
  body: SnapshotBody;
  /** UTF-8 bytes of the body as digested (0 for the empty snapshot). */
  bodyBytes: number;
  /**
   * The body as sent, parsed, when its JSON text was the bytes that hashed to its digest (its
   * canonical JSON): a body sent again is compared with it value by value, keys in order, which
   * holds exactly when the two have the same JSON text (seal.ts sameJsonText).
   */
  bodySent?: unknown;
  /**
   * The body in this service's wire form (as sent, or as sealed), when it was read strictly in this
   * service's major version: a device create sends the mentions of its untouched episodes again.
   */
  wire?: WireBody;
  /**
   * Its header as signed (every top-level field but body and signature) and the signature: a call
   * that sends the same bytes again is verified against the keyset of the moment from these, with
   * no body work (snapshot/seal.ts openPrepared). Absent only on the empty snapshot.
   */
  signed?: { header: Record<string, unknown>; signature: string };
  /** Its graph index for search: built on its first search, then kept with it. */
  partition?: GraphPartition;
  /**
   * Work still owed before `body` is read (a sealed snapshot kept as it was sealed: its body is
   * worked out on the next call, not in the create). Done in slices, so reading `body` after it
   * is a field read: awaited by whoever takes the entry from the cache.
   */
  ready?: (slicer: TimeSlicer) => Promise<void>;
}

/** Where entries are counted: the search index's budget (search/search-index.ts residents). */
export interface ResidentBudget {
  admitResident(key: string, tenantId: string, bytes: number, drop: () => void): boolean;
  touchResident(key: string, tenantId: string): void;
  resizeResident(key: string, bytes: number): boolean;
  removeResident(key: string): void;
}

/**
 * Estimated heap bytes per byte of body JSON once parsed and expanded (fromWire spells spans out),
 * and per graph entry and provenance row of a built partition. Measured on a 1,000-memory
 * snapshot (heap growth), rounded up so the budget is kept rather than exceeded.
 */
const HEAP_BYTES_PER_BODY_BYTE = 3;
const PARTITION_BYTES_PER_TARGET = 600;
const PARTITION_BYTES_PER_MENTION = 250;

export function preparedBytes(opened: OpenedSnapshot): number {
  const body = opened.bodyBytes;
  // The body is read only with a partition (which was built from it): a snapshot kept as sealed
  // works its body out later, in slices, and reading it here did that in one stretch (~105 ms of
  // the event loop after a 2M-character create, CPU profile).
  const counts = opened.partition ? opened.body : null;
  const partition = counts
    ? (counts.entities.length + counts.facts.length) * PARTITION_BYTES_PER_TARGET + counts.mentions.length * PARTITION_BYTES_PER_MENTION
    : 0;
  // The body parsed, and as sent to compare (read as bytes: bodySent may not be made yet).
  return body * (HEAP_BYTES_PER_BODY_BYTE + 1) + partition;
}

interface Entry {
  tenantId: string;
  opened: OpenedSnapshot;
}

export interface PreparedCacheStats {
  entries: number;
  hits: number;
  misses: number;
}

/** Snapshot bytes remembered per entry: a client may send one snapshot spaced or ordered in a few ways. */
const SPANS_PER_ENTRY = 4;

export class PreparedSnapshotCache {
  /** Least recently used first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry>();
  /**
   * By tenant and the SHA-256 of a snapshot's exact bytes as a request carried them: the entry
   * those bytes opened to (core/json-span.ts). Oldest first; at most SPANS_PER_ENTRY per entry.
   */
  private readonly spans = new Map<string, { key: string; opened: OpenedSnapshot }>();
  private hits = 0;
  private misses = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly budget: ResidentBudget | null = null,
    private readonly onLookup: (hit: boolean) => void = () => undefined,
  ) {}

  /** Unambiguous whatever the parts contain; the prefix keeps it apart from collection ids in the budget. */
  private static key(tenantId: string, snapshotId: string): string {
    return `snapshot:${JSON.stringify([tenantId, snapshotId])}`;
  }

  /**
   * The snapshot prepared for this tenant under this id (format version and digest), if held and
   * `matches` accepts it (the caller compares the body it was sent with the one held).
   */
  lookup(tenantId: string, snapshotId: string, matches: (held: OpenedSnapshot) => boolean = () => true): OpenedSnapshot | undefined {
    const key = PreparedSnapshotCache.key(tenantId, snapshotId);
    const entry = this.entries.get(key);
    if (!entry || entry.tenantId !== tenantId || !matches(entry.opened)) {
      this.count(false);
      return undefined;
    }
    return this.hit(key, entry);
  }

  /**
   * The prepared snapshot that these exact bytes opened to for this tenant, while it is held (the
   * caller still verifies its signature against the current keyset: seal.ts openPrepared).
   */
  bySpan(tenantId: string, digest: string): OpenedSnapshot | null {
    const spanKey = PreparedSnapshotCache.spanKey(tenantId, digest);
    const span = this.spans.get(spanKey);
    if (!span) return null;
    const entry = this.entries.get(span.key);
    // The entry may have gone (evicted) or been replaced by another opening of the same body.
    if (!entry || entry.tenantId !== tenantId || entry.opened !== span.opened) {
      this.spans.delete(spanKey);
      return null;
    }
    return this.hit(span.key, entry);
  }

  /** Remembers that these exact bytes opened to `opened`, when it is the entry held for this tenant. */
  rememberSpan(tenantId: string, digest: string, opened: OpenedSnapshot): void {
    if (opened.snapshotId === null) return;
    const key = PreparedSnapshotCache.key(tenantId, opened.snapshotId);
    if (this.entries.get(key)?.opened !== opened) return;
    const spanKey = PreparedSnapshotCache.spanKey(tenantId, digest);
    this.spans.delete(spanKey);
    const others = [...this.spans].filter(([, span]) => span.key === key);
    if (others.length >= SPANS_PER_ENTRY) this.spans.delete(others[0]![0]);
    this.spans.set(spanKey, { key, opened });
  }

  /** Keeps a snapshot that passed every check, prepared, for this tenant only. */
  store(tenantId: string, opened: OpenedSnapshot): void {
    if (this.maxEntries <= 0 || opened.snapshotId === null) return;
    const key = PreparedSnapshotCache.key(tenantId, opened.snapshotId);
    this.remove(key);
    this.entries.set(key, { tenantId, opened });
    if (this.budget && !this.budget.admitResident(key, tenantId, preparedBytes(opened), () => this.forget(key))) {
      this.forget(key);
      return;
    }
    while (this.entries.size > this.maxEntries) this.remove(this.entries.keys().next().value!);
  }

  /**
   * The snapshot's graph index, built once and kept with its entry while it is held (its bytes
   * are counted again, and the budget may evict it for them; this call still answers the index).
   */
  async partitionOf(tenantId: string, opened: OpenedSnapshot, build: () => Promise<GraphPartition>): Promise<GraphPartition> {
    const key = opened.snapshotId === null ? null : PreparedSnapshotCache.key(tenantId, opened.snapshotId);
    const entry = key === null ? undefined : this.entries.get(key);
    // The same prepared snapshot (callers may hold a copy of the entry's fields), of this tenant.
    const held = entry && entry.tenantId === tenantId && entry.opened.body === opened.body ? entry.opened : undefined;
    const known = held?.partition ?? opened.partition;
    if (known) return known;
    const partition = await build();
    opened.partition = partition;
    if (held && key !== null) {
      held.partition = partition;
      if (this.budget && !this.budget.resizeResident(key, preparedBytes(held))) this.forget(key);
    }
    return partition;
  }

  stats(): PreparedCacheStats {
    return { entries: this.entries.size, hits: this.hits, misses: this.misses };
  }

  /** An entry found: last out of the eviction order here and in the budget, and counted. */
  private hit(key: string, entry: Entry): OpenedSnapshot {
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.budget?.touchResident(key, entry.tenantId);
    this.count(true);
    return entry.opened;
  }

  private static spanKey(tenantId: string, digest: string): string {
    return JSON.stringify([tenantId, digest]);
  }

  private remove(key: string): void {
    if (!this.forget(key)) return;
    this.budget?.removeResident(key);
  }

  /** Drops an entry and the bytes known to open to it (they hold its body). */
  private forget(key: string): boolean {
    for (const [spanKey, span] of this.spans) if (span.key === key) this.spans.delete(spanKey);
    return this.entries.delete(key);
  }

  private count(hit: boolean): void {
    if (hit) this.hits += 1;
    else this.misses += 1;
    this.onLookup(hit);
  }
}
