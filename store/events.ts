/** The durable, sequenced event log that the WebSocket stream replays and follows. */
import type { Db } from 'mongodb';
import { newId } from '../core/ids.js';
import type { ServerCapabilities } from './db.js';
import { SequencedLog, type LogEntry } from './sequenced-log.js';

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
  private constructor(readonly log: SequencedLog<EventEntry>) {}

  static async open(db: Db, capabilities: ServerCapabilities, maxEntries: number, maxBytes: number): Promise<EventLog> {
    const log = await SequencedLog.open<EventEntry>(db, 'memory_events', capabilities, { maxEntries, maxBytes });
    await log.collection.createIndex({ tenant_id: 1, seq: 1 });
    return new EventLog(log);
  }

  append(type: string, tenantId: string, collectionId: string, payload: Record<string, unknown>): Promise<number> {
    return this.log.append({ _id: newId(), type, tenant_id: tenantId, collection_id: collectionId, payload, ts: new Date() });
  }

  /** One progress event per collection the memory belongs to, so each subscriber sees it. */
  async appendProgress(tenantId: string, collectionIds: string[], payload: IngestionProgressPayload): Promise<void> {
    await Promise.all(collectionIds.map((collectionId) => this.append('ingestion_progress', tenantId, collectionId, { ...payload })));
  }

  readAfter(tenantId: string, afterSeq: number, limit: number): Promise<EventEntry[]> {
    return this.log.readAfter(afterSeq, limit, { tenant_id: tenantId });
  }
}
