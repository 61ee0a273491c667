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
   * `refresh_graph`: graph records (`target_ids`) that a memory's delete or departure rewrote
   * (description, names); followers holding them read them again. Published after the rewrite, so
   * a follower reads them after any batch of its own that read them before.
   */
  op: 'upsert' | 'remove' | 'reload_collection' | 'drop_collection' | 'refresh_graph';
  /**
   * Empty for the collection ops. On `refresh_graph` the memory that caused it: a follower of an
   * earlier version reads it as an upsert of a memory that is gone, which reads nothing.
   */
  memory_id: string;
  /** `refresh_graph` only: entity and fact ids, at most REFRESH_TARGETS_PER_NOTICE. */
  target_ids?: string[];
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

/** Graph record ids per `refresh_graph` notice: about 20 KB of ids at most. */
export const REFRESH_TARGETS_PER_NOTICE = 500;

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

  /**
   * Graph records a memory's removal rewrote (GraphRepository.removeMemories): followers read the
   * ones they hold again. In notices of at most REFRESH_TARGETS_PER_NOTICE ids, so a notice stays
   * small whatever the memory named.
   */
  async publishGraphRefresh(tenantId: string, memoryId: string, targetIds: readonly string[]): Promise<void> {
    if (targetIds.length === 0) return;
    const notices: Omit<IndexChange, 'seq'>[] = [];
    for (let offset = 0; offset < targetIds.length; offset += REFRESH_TARGETS_PER_NOTICE) {
      notices.push({
        _id: newId(),
        op: 'refresh_graph',
        memory_id: memoryId,
        target_ids: targetIds.slice(offset, offset + REFRESH_TARGETS_PER_NOTICE),
        tenant_id: tenantId,
        ts: new Date(),
      });
    }
    await this.log.appendMany(notices);
  }

  private async publishCollection(op: 'reload_collection' | 'drop_collection', tenantId: string, collectionId: string): Promise<void> {
    await this.log.appendMany([{ _id: newId(), op, memory_id: '', collection_id: collectionId, tenant_id: tenantId, ts: new Date() }]);
  }
}
