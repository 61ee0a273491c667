/**
 * Deleting a memory: one operation, written once, that always runs to completion.
 *
 * There are no multi-document transactions (the stand-in has none, and a memory's data spans many
 * collections anyway), so a delete is a durable intent followed by idempotent steps:
 *
 *   1. `intent`   a row in `memory_purges` naming the memory, its tenant and its workflow;
 *   2. `record`   the memory record is deleted: from here on nothing reads the memory (get, list
 *                 and search all start from the record);
 *   3. the derived data, in order: chunks (vectors, text), graph provenance (re-describing or
 *      removing what it backed), procedure traces (re-chaining the procedure instances and
 *      re-mining the patterns they fed), stored files, upload records, idempotency keys, and a `remove`
 *      notice on the index-change feed for every API process's in-memory indexes;
 *   4. the intent row goes last.
 *
 * A crash anywhere after step 1 leaves the intent row, and `pending()` hands it to a sweeper
 * (services/memories.ts, every API process) that runs the same steps again: each is idempotent,
 * so running one twice, or two processes running one at once, is harmless. Stopping the memory's
 * workflow is the service's part (it knows Temporal); it happens between steps 2 and 3.
 */
import type { Collection, Db } from 'mongodb';
import type { PurgeStep } from '../core/purge-steps.js';
import type { ChunkRepository } from './chunks.js';
import type { IndexSnapshotRepository } from './index-snapshots.js';
import type { FileRepository } from './files.js';
import type { FactEvents } from './fact-events.js';
import type { IdempotencyRepository } from './idempotency.js';
import type { IndexChangeFeed } from './index-changes.js';
import type { MemoryRepository } from './memories.js';
import type { UploadRepository } from './uploads.js';
import type { ProcedureDerivation } from '../core/procedures/derivation.js';

export interface PurgeDoc {
  _id: string;
  tenant_id: string;
  workflow_id: string;
  /** Absent on intents written by earlier versions. */
  collection_ids?: string[];
  requested_at: Date;
}

/** A memory being deleted, as the steps need it. */
export interface Purge {
  memoryId: string;
  tenantId: string;
  workflowId: string;
  /** The memory's collections when its delete began (absent on intents of earlier versions): a resumed delete reloads them. */
  collectionIds?: string[];
}

/** What the cascade calls on each repository, and nothing more (a unit test hands in-memory ones). */
export interface PurgeRepositories {
  memories: Pick<MemoryRepository, 'ownedBy' | 'deleteMany'>;
  chunks: Pick<ChunkRepository, 'deleteForMemories'>;
  factEvents: Pick<FactEvents, 'removeMemories'>;
  /** Removing traces re-chains and re-mines: the procedure rules (core/procedures/derivation.ts). */
  procedures: Pick<ProcedureDerivation, 'removeMemories'>;
  files: Pick<FileRepository, 'deleteForMemories'>;
  uploads: Pick<UploadRepository, 'forgetMemories'>;
  idempotency: Pick<IdempotencyRepository, 'forgetMemories'>;
  indexChanges: Pick<IndexChangeFeed, 'publishRemoves' | 'publishCollectionReload'>;
  indexSnapshots: Pick<IndexSnapshotRepository, 'removeForTenant'>;
}

/** The durable intents of step 1: one row per memory being deleted, kept until step 4. */
export interface PurgeIntents {
  ensureIndexes(): Promise<void>;
  /** Records the intents; an intent already recorded keeps its first request time. */
  record(purges: Purge[], requestedAt: Date): Promise<void>;
  remove(memoryIds: string[]): Promise<void>;
  /** Intents requested before `olderThan`, oldest first. */
  olderThan(olderThan: Date, limit: number): Promise<Purge[]>;
}

export interface PurgeOptions {
  /**
   * `by_caller`: no `remove` notice per memory; the caller publishes one for their whole
   * collection (the expiry of an ephemeral collection drops it). A delete resumed by the sweeper
   * after a crash publishes its notices as usual.
   */
  indexNotices?: 'per_memory' | 'by_caller';
}

const toPurge = (doc: PurgeDoc): Purge => ({
  memoryId: doc._id,
  tenantId: doc.tenant_id,
  workflowId: doc.workflow_id,
  ...(doc.collection_ids ? { collectionIds: doc.collection_ids } : {}),
});

/** The intents as rows of `memory_purges`. */
export class PurgeIntentRows implements PurgeIntents {
  private readonly rows: Collection<PurgeDoc>;

  constructor(db: Db) {
    this.rows = db.collection<PurgeDoc>('memory_purges');
  }

  async ensureIndexes(): Promise<void> {
    await this.rows.createIndex({ requested_at: 1 });
  }

  async record(purges: Purge[], requestedAt: Date): Promise<void> {
    await this.rows.bulkWrite(
      purges.map((purge) => ({
        updateOne: {
          filter: { _id: purge.memoryId },
          update: {
            $setOnInsert: {
              tenant_id: purge.tenantId,
              workflow_id: purge.workflowId,
              ...(purge.collectionIds ? { collection_ids: purge.collectionIds } : {}),
              requested_at: requestedAt,
            },
          },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }

  async remove(memoryIds: string[]): Promise<void> {
    await this.rows.deleteMany({ _id: { $in: memoryIds } });
  }

  async olderThan(olderThan: Date, limit: number): Promise<Purge[]> {
    const docs = await this.rows.find({ requested_at: { $lt: olderThan } }, { sort: { requested_at: 1 }, limit }).toArray();
    return docs.map(toPurge);
  }
}

export class MemoryPurge {
  /** Called after each step; the fault-injection tests crash the process there. */
  onStep: (step: PurgeStep) => void = () => undefined;

  constructor(
    private readonly intents: PurgeIntents,
    private readonly repos: PurgeRepositories,
  ) {}

  async ensureIndexes(): Promise<void> {
    await this.intents.ensureIndexes();
  }

  /**
   * Steps 1 and 2 for those of `ids` that are the tenant's: the delete is durable once this
   * returns, and the memories are invisible. Returns them (the others did not exist).
   */
  async begin(tenantId: string, ids: string[]): Promise<Purge[]> {
    const found = await this.repos.memories.ownedBy(tenantId, ids);
    if (found.length === 0) return [];
    const purges = found.map((memory) => ({
      memoryId: memory.id,
      tenantId,
      workflowId: memory.workflow_id,
      collectionIds: memory.collection_ids,
    }));
    await this.intents.record(purges, new Date());
    this.onStep('intent');
    await this.repos.memories.deleteMany(
      tenantId,
      found.map((memory) => memory.id),
    );
    this.onStep('record');
    return purges;
  }

  /** Steps 3 and 4, once the records are gone. */
  async finish(purges: Purge[], options: PurgeOptions = {}): Promise<void> {
    if (purges.length === 0) return;
    await this.removeDerived(purges, options);
    await this.intents.remove(purges.map((purge) => purge.memoryId));
    this.onStep('done');
  }

  /** A delete interrupted at any step: the records go (if step 2 did not run), then the rest. */
  async resume(purges: Purge[]): Promise<void> {
    for (const tenantId of new Set(purges.map((purge) => purge.tenantId))) {
      const own = purges.filter((purge) => purge.tenantId === tenantId).map((purge) => purge.memoryId);
      await this.repos.memories.deleteMany(tenantId, own);
    }
    await this.finish(purges);
    // The interrupted run may have rewritten shared entities and facts and died before announcing
    // them (refresh_graph), and this run finds their rows gone: every process reads the memory's
    // collections again on their next search instead.
    const reloads = new Map<string, string>();
    for (const purge of purges) for (const collectionId of purge.collectionIds ?? []) reloads.set(collectionId, purge.tenantId);
    for (const [collectionId, tenantId] of reloads) await this.repos.indexChanges.publishCollectionReload(tenantId, collectionId);
  }

  /**
   * Step 3: everything derived from deleted memories. Idempotent; an activity that finds its
   * memory deleted under it calls this too, for what it wrote after the delete's own pass.
   */
  async removeDerived(purges: Pick<Purge, 'memoryId' | 'tenantId'>[], options: PurgeOptions = {}): Promise<void> {
    if (purges.length === 0) return;
    const ids = purges.map((purge) => purge.memoryId);
    const tenants = [...new Set(purges.map((purge) => purge.tenantId))];
    const idsOf = (tenantId: string): string[] => purges.filter((purge) => purge.tenantId === tenantId).map((purge) => purge.memoryId);
    await this.repos.chunks.deleteForMemories(ids);
    this.onStep('chunks');
    // Announces the supersessions the delete undoes (fact_restored), then drops the rows; per
    // tenant, so the graph records it rewrites are announced to that tenant's followers (with
    // whatever they read before the delete, those are read again).
    for (const tenantId of tenants) await this.repos.factEvents.removeMemories(tenantId, idsOf(tenantId));
    this.onStep('graph');
    await this.repos.procedures.removeMemories(ids);
    this.onStep('workflows');
    await this.repos.files.deleteForMemories(ids);
    this.onStep('files');
    await this.repos.uploads.forgetMemories(ids);
    this.onStep('uploads');
    await this.repos.idempotency.forgetMemories(ids);
    this.onStep('idempotency');
    if (options.indexNotices !== 'by_caller') {
      for (const tenantId of tenants) {
        const own = idsOf(tenantId);
        await this.repos.indexChanges.publishRemoves(tenantId, own);
      }
    }
    this.onStep('index_feed');
    // Last: a snapshot written before the chunks went may hold their terms; one written after
    // cannot, and its writer sees the removes above and drops it (search/snapshot-keeper.ts).
    for (const tenantId of tenants) await this.repos.indexSnapshots.removeForTenant(tenantId);
    this.onStep('index_snapshots');
  }

  /** Deletes left unfinished (a crash after `begin`) and requested before `olderThan`. */
  async pending(olderThan: Date, limit: number): Promise<Purge[]> {
    return this.intents.olderThan(olderThan, limit);
  }
}
