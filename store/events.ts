/**
 * The durable, sequenced event log that the WebSocket stream replays and follows.
 *
 * Retention is per tenant: each tenant keeps (at least) its own newest `maxPerTenant` events,
 * whatever other tenants append, so one tenant looping weak searches can only turn over its own
 * window. Trimming a tenant first raises its watermark (`event_retention.trimmed_through`), then
 * deletes; a reader whose cursor is below the watermark knows it may have missed events and says
 * so (replay_gap) instead of skipping them. The log is never a capped collection: a capped
 * collection drops the oldest entries of every tenant alike.
 */
import type { Collection, Db } from 'mongodb';
import { factEventRefs, isFactEventType, redactFactPayload, type RemovedFromGraph } from '../core/fact-event-redaction.js';
import { newId } from '../core/ids.js';
import type { ServerCapabilities } from './db.js';
import { followLog, SequencedLog, type LogEntry } from './sequenced-log.js';

export type UserStage = 'reading' | 'structuring' | 'indexing' | 'complete' | 'failed';

export interface IngestionProgressPayload {
  engram_id: string;
  stage: string;
  user_stage: UserStage;
  current: number;
  total: number;
  message: string | null;
}

/** An event as the layers above the store read it. */
export interface EventEntry {
  id: string;
  seq: number;
  type: string;
  tenant_id: string;
  /** The collection the frame names (the first one, for an event about several). */
  collection_id: string;
  /** Every collection the event is about, when more than one (a search over several). */
  collection_ids?: string[];
  payload: Record<string, unknown>;
  ts: Date;
}

/**
 * An event as the log stores it: the same with `_id`, and for fact events `refs`, the fact and
 * memory ids it names (core/fact-event-redaction.ts), so that removing them finds it by index.
 */
interface EventDoc extends LogEntry, Omit<EventEntry, 'id' | 'seq'> {
  refs?: string[];
}

/** The type of the event that lists the seqs a removal redacted (docs/events.md). */
export const EVENTS_REDACTED = 'events_redacted';

const entryOf = ({ _id, seq, type, tenant_id, collection_id, collection_ids, payload, ts }: EventDoc): EventEntry => ({
  id: _id,
  seq,
  type,
  tenant_id,
  collection_id,
  ...(collection_ids ? { collection_ids } : {}),
  payload,
  ts,
});

/** What a subscriber reads: its tenant, optionally narrowed to collections and types. */
export interface EventFilter {
  tenantId: string;
  collectionIds: string[];
  eventTypes: string[];
}

/** The same rule as readFor's query, for entries already in memory (the per-process fan-out). */
export function entryMatches(entry: EventEntry, filter: EventFilter): boolean {
  if (entry.tenant_id !== filter.tenantId) return false;
  if (filter.eventTypes.length > 0 && !filter.eventTypes.includes(entry.type)) return false;
  if (filter.collectionIds.length === 0) return true;
  if (filter.collectionIds.includes(entry.collection_id)) return true;
  return entry.collection_ids?.some((id) => filter.collectionIds.includes(id)) ?? false;
}

interface RetentionDoc {
  _id: string; // tenant id
  trimmed_through: number;
}

export class EventLog {
  private readonly appendsSinceTrim = new Map<string, number>();
  private readonly trimming = new Set<string>();
  private readonly retention: Collection<RetentionDoc>;

  private constructor(
    readonly log: SequencedLog<EventDoc>,
    private readonly capabilities: ServerCapabilities,
    db: Db,
    /** Events each tenant keeps at least. */
    readonly maxPerTenant: number,
  ) {
    this.retention = db.collection<RetentionDoc>('event_retention');
  }

  static async open(db: Db, capabilities: ServerCapabilities, maxPerTenant: number): Promise<EventLog> {
    const log = await SequencedLog.open<EventDoc>(db, 'memory_events', capabilities, {
      maxEntries: maxPerTenant,
      maxBytes: 0,
      retention: 'owner',
    });
    if (log.isCapped) {
      // A log created capped by an older release: its global FIFO overrides the per-tenant window.
      process.emitWarning('memory_events is a capped collection: per-tenant event retention needs it converted (docs/events.md)');
    }
    await log.collection.createIndex({ tenant_id: 1, seq: 1 });
    await log.collection.createIndex({ tenant_id: 1, refs: 1 }, { sparse: true });
    return new EventLog(log, capabilities, db, maxPerTenant);
  }

  /** How many of a tenant's appends (in this process) between two trims of that tenant. */
  private get trimEvery(): number {
    return Math.max(10, Math.min(500, Math.floor(this.maxPerTenant / 10)));
  }

  async append(type: string, tenantId: string, collectionId: string | string[], payload: Record<string, unknown>): Promise<number> {
    const ids = Array.isArray(collectionId) ? collectionId : [collectionId];
    const refs = isFactEventType(type) ? factEventRefs(payload) : [];
    const seq = await this.log.append({
      _id: newId(),
      type,
      tenant_id: tenantId,
      collection_id: ids[0]!,
      ...(ids.length > 1 ? { collection_ids: ids } : {}),
      payload,
      ts: new Date(),
      ...(refs.length > 0 ? { refs } : {}),
    });
    this.noteAppend(tenantId);
    return seq;
  }

  private noteAppend(tenantId: string): void {
    const count = (this.appendsSinceTrim.get(tenantId) ?? 0) + 1;
    if (count < this.trimEvery || this.trimming.has(tenantId)) {
      this.appendsSinceTrim.set(tenantId, count);
      return;
    }
    this.appendsSinceTrim.set(tenantId, 0);
    this.trimming.add(tenantId);
    // A failed trim only postpones retention: the next burst of this tenant's appends retries it.
    void this.trimTenant(tenantId)
      .catch(() => undefined)
      .finally(() => this.trimming.delete(tenantId));
  }

  /** One progress event per collection the memory belongs to, so each subscriber sees it. */
  async appendProgress(tenantId: string, collectionIds: string[], payload: IngestionProgressPayload): Promise<void> {
    await Promise.all(collectionIds.map((collectionId) => this.append('ingestion_progress', tenantId, collectionId, { ...payload })));
  }

  /**
   * Rewrites, in place, the fact events of a tenant that describe what removing rows took out of
   * each collection's graph (`removed`, by collection id): their payload keeps only what describes
   * facts still there (core/fact-event-redaction.ts). Then one `events_redacted` per collection
   * lists the rewritten seqs, which tells every API process to drop its copies (the fan-out ring,
   * signed frames) and subscribers that the earlier frames are void. Idempotent: events already
   * redacted are left alone and announced no more. Returns the seqs rewritten.
   */
  async redactFactEvents(tenantId: string, removed: ReadonlyMap<string, RemovedFromGraph>): Promise<number[]> {
    const refs = [...removed.values()].flatMap((entry) => [...entry.facts, ...entry.memories]);
    if (refs.length === 0) return [];
    const found = await this.log.collection
      .find({ tenant_id: tenantId, refs: { $in: [...new Set(refs)] }, collection_id: { $in: [...removed.keys()] } })
      .toArray();
    const bySeq = new Map<string, number[]>();
    for (const doc of found) {
      const scope = removed.get(doc.collection_id);
      if (!scope || !isFactEventType(doc.type)) continue;
      const payload = redactFactPayload(doc.type, doc.payload, scope);
      if (payload === null) continue;
      await this.log.collection.updateOne({ _id: doc._id }, { $set: { payload, refs: factEventRefs(payload) } });
      bySeq.set(doc.collection_id, [...(bySeq.get(doc.collection_id) ?? []), doc.seq]);
    }
    for (const [collectionId, seqs] of bySeq) {
      await this.append(EVENTS_REDACTED, tenantId, collectionId, { seqs: seqs.sort((a, b) => a - b) });
    }
    return [...bySeq.values()].flat();
  }

  /** Entries by seq (what a process holding copies re-reads after a redaction). */
  async readSeqs(seqs: number[]): Promise<EventEntry[]> {
    if (seqs.length === 0) return [];
    return (await this.log.collection.find({ seq: { $in: seqs } }, { sort: { seq: 1 } }).toArray()).map(entryOf);
  }

  /** A subscriber's next events: its tenant, optionally narrowed to collections and types. */
  async readFor(filter: EventFilter, afterSeq: number, limit: number): Promise<EventEntry[]> {
    const query: Record<string, unknown> = { tenant_id: filter.tenantId };
    if (filter.collectionIds.length > 0) {
      query.$or = [{ collection_id: { $in: filter.collectionIds } }, { collection_ids: { $in: filter.collectionIds } }];
    }
    if (filter.eventTypes.length > 0) query.type = { $in: filter.eventTypes };
    return (await this.log.readAfter(afterSeq, limit, query)).map(entryOf);
  }

  /**
   * Drops a tenant's events older than its newest `maxPerTenant`; other tenants' events are not
   * touched. The watermark is raised before the delete, so no reader can see the hole without
   * also seeing the watermark that explains it. Returns the number deleted.
   */
  async trimTenant(tenantId: string): Promise<number> {
    const boundary = await this.log.collection
      .find({ tenant_id: tenantId }, { sort: { seq: -1 }, skip: this.maxPerTenant, limit: 1, projection: { seq: 1 } })
      .next();
    if (!boundary) return 0;
    const current = await this.trimmedThrough(tenantId);
    if (boundary.seq > current) {
      // Watermarks only rise; the stand-in has no reliable $max under concurrency, so a
      // conditional update, then an insert for a tenant's first trim (a duplicate means another
      // process created it: retry the conditional update once).
      const moved = await this.retention.updateOne(
        { _id: tenantId, trimmed_through: { $lt: boundary.seq } },
        { $set: { trimmed_through: boundary.seq } },
      );
      if (moved.matchedCount === 0 && current === 0) {
        await this.retention
          .insertOne({ _id: tenantId, trimmed_through: boundary.seq })
          .catch(() =>
            this.retention.updateOne(
              { _id: tenantId, trimmed_through: { $lt: boundary.seq } },
              { $set: { trimmed_through: boundary.seq } },
            ),
          );
      }
    }
    const result = await this.log.collection.deleteMany({ tenant_id: tenantId, seq: { $lte: boundary.seq } });
    return result.deletedCount;
  }

  /** The highest seq up to which this tenant's events may have been trimmed (0: never trimmed). */
  async trimmedThrough(tenantId: string): Promise<number> {
    return (await this.retention.findOne({ _id: tenantId }))?.trimmed_through ?? 0;
  }

  /** The oldest retained seq of a tenant after `afterSeq` (null: none retained). */
  async oldestRetained(tenantId: string, afterSeq: number): Promise<number | null> {
    const [first] = await this.log.readAfter(afterSeq, 1, { tenant_id: tenantId });
    return first?.seq ?? null;
  }

  /**
   * The cursor that replays a tenant's events from `time` on: the seq just before its first
   * retained event at or after `time` (the log head when there is none).
   */
  async cursorBefore(tenantId: string, time: Date): Promise<number> {
    const first = await this.log.collection.find({ tenant_id: tenantId, ts: { $gte: time } }, { sort: { seq: 1 }, limit: 1 }).next();
    return first ? first.seq - 1 : this.log.latestSeq();
  }

  /** Every tenant's entries after `afterSeq`, in seq order: what the per-process follower reads. */
  async readAll(afterSeq: number, limit: number): Promise<EventEntry[]> {
    return (await this.log.readAfter(afterSeq, limit)).map(entryOf);
  }

  /** Calls `onAppend` soon after anything is appended, from any process. */
  follow(onAppend: () => void, onFallback: (error: unknown) => void): () => Promise<void> {
    return followLog(this.log, this.capabilities.awaitingChangeStreams, onAppend, onFallback);
  }
}
