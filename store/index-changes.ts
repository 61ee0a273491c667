/**
 * A sequenced feed of "this memory's vectors changed" notices. Every process that keeps an
 * in-memory search index follows it, so an index in one API process learns about writes made by
 * a worker and deletes made by another API process. It reuses the event log's sequencer.
 */
import type { Db } from 'mongodb';
import { newId } from '../core/ids.js';
import type { ServerCapabilities } from './db.js';
import { SequencedLog, type LogEntry } from './sequenced-log.js';

export interface IndexChange extends LogEntry {
  /** `drop_collection`: the collection is gone (an expired ephemeral collection); every process drops its partitions. */
  op: 'upsert' | 'remove' | 'drop_collection';
  /** Empty for `drop_collection`. */
  memory_id: string;
  /** Only for `drop_collection`. */
  collection_id?: string;
  tenant_id: string;
  ts: Date;
}

export class IndexChangeFeed {
  private constructor(readonly log: SequencedLog<IndexChange>) {}

  /** Followers that fall further behind than `maxEntries` reload their index from the chunks. */
  static async open(db: Db, capabilities: ServerCapabilities, maxEntries: number): Promise<IndexChangeFeed> {
    // About 200 bytes an entry; the byte cap only matters for a capped collection.
    const log = await SequencedLog.open<IndexChange>(db, 'index_changes', capabilities, {
      maxEntries,
      maxBytes: Math.max(1024 * 1024, maxEntries * 320),
    });
    return new IndexChangeFeed(log);
  }

  /** A collection removed for good: followers drop its (by now empty) partitions instead of keeping them until evicted. */
  async publishCollectionDropped(tenantId: string, collectionId: string): Promise<void> {
    await this.log.appendMany([
      { _id: newId(), op: 'drop_collection', memory_id: '', collection_id: collectionId, tenant_id: tenantId, ts: new Date() },
    ]);
  }

  publish(op: 'upsert' | 'remove', tenantId: string, memoryIds: string[]): Promise<number[]> {
    return this.log.appendMany(
      memoryIds.map((memoryId) => ({ _id: newId(), op, memory_id: memoryId, tenant_id: tenantId, ts: new Date() })),
    );
  }
}
