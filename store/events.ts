/** The durable, sequenced event log that the WebSocket stream replays and follows. */
import type { Db } from 'mongodb';
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

export interface EventEntry extends LogEntry {
  type: string;
  tenant_id: string;
  collection_id: string;
  payload: Record<string, unknown>;
  ts: Date;
}

export class EventLog {
  private constructor(
    readonly log: SequencedLog<EventEntry>,
    private readonly capabilities: ServerCapabilities,
  ) {}

  static async open(db: Db, capabilities: ServerCapabilities, maxEntries: number, maxBytes: number): Promise<EventLog> {
    const log = await SequencedLog.open<EventEntry>(db, 'memory_events', capabilities, { maxEntries, maxBytes });
    await log.collection.createIndex({ tenant_id: 1, seq: 1 });
    return new EventLog(log, capabilities);
  }

  append(type: string, tenantId: string, collectionId: string, payload: Record<string, unknown>): Promise<number> {
    return this.log.append({ _id: newId(), type, tenant_id: tenantId, collection_id: collectionId, payload, ts: new Date() });
  }

  /** One progress event per collection the memory belongs to, so each subscriber sees it. */
  async appendProgress(tenantId: string, collectionIds: string[], payload: IngestionProgressPayload): Promise<void> {
    await Promise.all(collectionIds.map((collectionId) => this.append('ingestion_progress', tenantId, collectionId, { ...payload })));
  }

  /** A subscriber's next events: its tenant, optionally narrowed to collections and types. */
  readFor(
    filter: { tenantId: string; collectionIds: string[]; eventTypes: string[] },
    afterSeq: number,
    limit: number,
  ): Promise<EventEntry[]> {
    const query: Record<string, unknown> = { tenant_id: filter.tenantId };
    if (filter.collectionIds.length > 0) query.collection_id = { $in: filter.collectionIds };
    if (filter.eventTypes.length > 0) query.type = { $in: filter.eventTypes };
    return this.log.readAfter(afterSeq, limit, query);
  }

  /** Calls `onAppend` soon after anything is appended, from any process. */
  follow(onAppend: () => void, onFallback: (error: unknown) => void): () => Promise<void> {
    return followLog(this.log, this.capabilities.awaitingChangeStreams, onAppend, onFallback);
  }
}
