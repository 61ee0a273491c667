/**
 * A sequenced feed of "what search sees changed" notices. Every process that keeps an in-memory
 * search index follows it, so an index in one API process learns about writes made by a worker and
 * deletes made by another API process. It reuses the event log's sequencer.
 *
 * Notices are per memory for single writes, and per collection for bulk ones (an import, an
 * expiry), so one tenant's bulk work costs every follower one entry, not one per memory.
 */
import type { Db } from 'mongodb';
import { newId } from '../core/ids.js';
import type { ServerCapabilities } from './db.js';
import { SequencedLog, type LogEntry } from './sequenced-log.js';

export interface IndexChange extends LogEntry {
  /**
   * `upsert` / `remove`: one memory changed or went.
   * `reload_collection`: a collection's content changed in bulk (an import); followers holding
   * its partitions read them again, lazily, on next use.
   * `drop_collection`: the collection is gone with all its memories (an expired ephemeral
   * collection); followers drop its partitions.
   */
  op: 'upsert' | 'remove' | 'reload_collection' | 'drop_collection';
  /** Empty for the collection ops. */
  memory_id: string;
  /**
   * `upsert` only: the memory's collections when the notice was written. A follower with none of
   * them loaded reads nothing for it; a later move publishes another upsert. Absent on notices
   * written by earlier versions: the follower then reads the memory whatever it has loaded.
   */
  collection_ids?: string[];
  /** Only for the collection ops. */
  collection_id?: string;
  tenant_id: string;
  ts: Date;
}

/** A memory whose indexed content changed, and the collections it is in now. */
export interface ChangedMemory {
  id: string;
  collectionIds: readonly string[];
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

  /** A collection removed for good: followers drop its partitions instead of keeping them until evicted. */
  async publishCollectionDropped(tenantId: string, collectionId: string): Promise<void> {
    await this.publishCollection('drop_collection', tenantId, collectionId);
  }

  /** A collection filled in bulk: one notice for all its memories. */
  async publishCollectionReload(tenantId: string, collectionId: string): Promise<void> {
    await this.publishCollection('reload_collection', tenantId, collectionId);
  }

  publishUpserts(tenantId: string, memories: readonly ChangedMemory[]): Promise<number[]> {
    return this.log.appendMany(
      memories.map((memory) => ({
        _id: newId(),
        op: 'upsert',
        memory_id: memory.id,
        collection_ids: [...memory.collectionIds],
        tenant_id: tenantId,
        ts: new Date(),
      })),
    );
  }

  publishRemoves(tenantId: string, memoryIds: readonly string[]): Promise<number[]> {
    return this.log.appendMany(
      memoryIds.map((memoryId) => ({ _id: newId(), op: 'remove', memory_id: memoryId, tenant_id: tenantId, ts: new Date() })),
    );
  }

  private async publishCollection(op: 'reload_collection' | 'drop_collection', tenantId: string, collectionId: string): Promise<void> {
    await this.log.appendMany([{ _id: newId(), op, memory_id: '', collection_id: collectionId, tenant_id: tenantId, ts: new Date() }]);
  }
}
