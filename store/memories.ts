import type { Collection, Db, Filter } from 'mongodb';
import type { MemoryStatus, MessageInput } from '../core/content-model.js';
import type { MemoryFilter } from '../core/memory-filter.js';
import { isEmptyFilter, NO_FILTER } from '../core/memory-filter.js';
import { appendAbandoned, appendClaimed, isSearchable, type AppendRun, type Memory, type MemorySummary } from '../core/memory-model.js';
import { memoryQuery } from './memory-filter.js';
import type { MemoryDoc } from './memory-rows.js';
import { fromStored, toStored } from './stored.js';

/** What an update may change; only the fields given are written. */
export interface MemoryChange {
  name?: string | null;
  /** Replaces the metadata, or with `mergeMetadata` sets only these keys and keeps the others. */
  metadata?: Record<string, unknown>;
  mergeMetadata?: boolean;
  collectionIds?: string[];
  statusMessage?: string | null;
}

/** The stored fields a change writes: a merge sets each key by its dotted path. */
function fieldsOf(change: MemoryChange): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (change.name !== undefined) fields.name = change.name;
  if (change.metadata !== undefined) {
    if (change.mergeMetadata) for (const [key, value] of Object.entries(change.metadata)) fields[`metadata.${key}`] = value;
    else fields.metadata = change.metadata;
  }
  if (change.collectionIds !== undefined) fields.collection_ids = change.collectionIds;
  if (change.statusMessage !== undefined) fields.status_message = change.statusMessage;
  return fields;
}

const memoryOf = (doc: MemoryDoc | null): Memory | null => (doc ? fromStored<Memory>(doc) : null);
const summaryOf = (doc: MemorySummaryDoc): MemorySummary => fromStored<MemorySummary>(doc);

export type { MemoryContent, MemoryFile, MemoryKind, MemoryStatus, MessageInput } from '../core/content-model.js';

export type { MemoryDoc };
type MemorySummaryDoc = Omit<MemoryDoc, 'content'>;

/** How many access times a memory keeps: enough for the activation sum, bounded in size. */
export const ACCESS_HISTORY = 32;

export interface MemoryListQuery {
  tenantId: string;
  collectionIds: string[];
  filter: MemoryFilter;
  offset: number;
  limit: number;
}

const WITHOUT_CONTENT = { content: 0 } as const;

/**
 * Not expired: only imported memories (of ephemeral collections) carry `expires_at`. Every read a
 * tenant makes goes through this, so an expired import is invisible at once, before the sweep.
 */
const live = (now = new Date()): Filter<MemoryDoc> => ({ $or: [{ expires_at: null }, { expires_at: { $gt: now } }] });
const isLive = (doc: { expires_at?: Date | null }, now = Date.now()): boolean => !doc.expires_at || doc.expires_at.getTime() > now;

/** Every field but the content, named (an inclusion projection), for hot read paths. */
const SUMMARY_FIELDS = Object.fromEntries(
  [
    '_id',
    'tenant_id',
    'collection_ids',
    'kind',
    'name',
    'metadata',
    'occurred_at',
    'status',
    'status_message',
    'chunk_count',
    'embedding_model',
    'workflow_id',
    'created_at',
    'updated_at',
    'completed_at',
    'indexed_chunk_count',
    'accessed_at',
    'expires_at',
  ].map((field) => [field, 1]),
);

export class MemoryRepository {
  readonly collection: Collection<MemoryDoc>;

  constructor(db: Db) {
    this.collection = db.collection<MemoryDoc>('memories');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ tenant_id: 1, collection_ids: 1, created_at: -1, _id: 1 });
    await this.collection.createIndex({ tenant_id: 1, created_at: -1, _id: 1 });
    await this.collection.createIndex({ status: 1, created_at: 1 });
    await this.collection.createIndex({ 'collections_sync.since': 1 });
  }

  async insert(memory: Memory): Promise<void> {
    await this.collection.insertOne(toStored(memory));
  }

  async find(tenantId: string, id: string): Promise<Memory | null> {
    const doc = await this.collection.findOne({ _id: id, tenant_id: tenantId });
    return doc && isLive(doc) ? memoryOf(doc) : null;
  }

  /** Worker-side read: the workflow carries the tenant id, but the memory id is already unique. */
  async findForIngestion(id: string): Promise<Memory | null> {
    return memoryOf(await this.collection.findOne({ _id: id }));
  }

  exists(id: string): Promise<boolean> {
    return this.collection.countDocuments({ _id: id }, { limit: 1 }).then((count) => count > 0);
  }

  /**
   * The search-time visibility check: memories among `ids` that exist and have searchable chunks
   * (complete, or complete before an append now in progress), narrowed by the search's filters.
   */
  async searchable(tenantId: string, ids: string[], filter: MemoryFilter = NO_FILTER): Promise<Map<string, MemorySummary>> {
    // The stand-in uses the _id index only when _id is the whole filter (adding tenant_id turned a
    // 10 ms lookup into a 260 ms scan at 1,000 memories), and an exclusion projection still reads
    // the content. So: look up by _id with the summary fields named, test tenant and visibility
    // here, and apply the search's own filters in a second query only when there are some.
    if (ids.length === 0) return new Map();
    const docs = (await this.collection.find({ _id: { $in: ids } }, { projection: SUMMARY_FIELDS }).toArray()) as MemorySummaryDoc[];
    const now = Date.now();
    let visible = docs.filter((doc) => doc.tenant_id === tenantId && isSearchable(doc) && isLive(doc, now));
    if (!isEmptyFilter(filter) && visible.length > 0) {
      const matching = await this.collection
        .find({ ...memoryQuery(filter), _id: { $in: visible.map((doc) => doc._id) } }, { projection: { _id: 1 } })
        .toArray();
      const keep = new Set(matching.map((doc) => doc._id));
      visible = visible.filter((doc) => keep.has(doc._id));
    }
    return new Map(visible.map((doc) => [doc._id, summaryOf(doc)]));
  }

  /** Records a use of each memory (keeps the last ACCESS_HISTORY); a lost concurrent push only loses one sample. */
  async recordAccess(ids: string[], at = new Date()): Promise<void> {
    if (ids.length === 0) return;
    await this.collection.updateMany({ _id: { $in: ids } }, { $push: { accessed_at: { $each: [at], $slice: -ACCESS_HISTORY } } });
  }

  /**
   * Applies a change that keeps the memory's collections; null when the memory is gone, or when
   * `unlessMetadataChanged` is given and the stored metadata is no longer that (a merge checked
   * against what it read is only written onto that).
   */
  async update(
    tenantId: string,
    id: string,
    change: MemoryChange,
    unlessMetadataChanged?: Record<string, unknown>,
  ): Promise<Memory | null> {
    const update = { $set: { ...fieldsOf(change), updated_at: new Date() } };
    // Whole-subdocument equality (field order included, as read): one conditional write, atomic on
    // MongoDB. The stand-in does not promise atomic conditional updates (shared/notes), so there
    // two merges racing within the same instant may still both pass.
    const filter = { _id: id, tenant_id: tenantId, ...(unlessMetadataChanged ? { metadata: unlessMetadataChanged } : {}) };
    return memoryOf(await this.collection.findOneAndUpdate(filter, update, { returnDocument: 'after' }));
  }

  /**
   * Starts an append run: adds the messages and requeues the memory, only if it is still in the
   * state the caller read (complete, with that many chunks). A concurrent append or a running
   * pipeline makes this a no-op (null), so two runs never interleave their chunk numbers.
   */
  async claimAppend(
    tenantId: string,
    id: string,
    expected: { chunkCount: number; messageCount: number },
    messages: MessageInput[],
    workflowId: string,
  ): Promise<Memory | null> {
    const doc = await this.collection.findOneAndUpdate(
      {
        _id: id,
        tenant_id: tenantId,
        status: 'complete',
        chunk_count: expected.chunkCount,
        'content.messages': { $size: expected.messageCount },
      },
      {
        $push: { 'content.messages': { $each: messages } },
        $set: appendClaimed({ from_message: expected.messageCount, from_chunk: expected.chunkCount }, workflowId, new Date()),
      },
      { returnDocument: 'after' },
    );
    return memoryOf(doc);
  }

  /** A failed append: its messages are dropped and the memory is back to what it was. */
  async abandonAppend(id: string, run: AppendRun, message: string): Promise<boolean> {
    const memory = await this.collection.findOne({ _id: id }, { projection: { 'content.messages': 1 } });
    if (!memory) return false;
    const result = await this.collection.updateOne(
      { _id: id },
      {
        $set: {
          'content.messages': (memory.content.messages ?? []).slice(0, run.from_message),
          ...appendAbandoned(run, message, new Date()),
        },
      },
    );
    return result.matchedCount === 1;
  }

  async list(query: MemoryListQuery): Promise<{ items: MemorySummary[]; total: number }> {
    const filter: Filter<MemoryDoc> = { tenant_id: query.tenantId, ...memoryQuery(query.filter), $and: [live()] };
    if (query.collectionIds.length > 0) filter.collection_ids = { $in: query.collectionIds };
    const [items, total] = await Promise.all([
      this.collection
        .find(filter, { sort: { created_at: -1, _id: 1 }, skip: query.offset, limit: query.limit, projection: WITHOUT_CONTENT })
        .toArray(),
      this.collection.countDocuments(filter),
    ]);
    return { items: (items as MemorySummaryDoc[]).map(summaryOf), total };
  }

  /** Moves a memory's status forward; a no-op (false) if the memory has been deleted meanwhile. */
  async setStatus(id: string, status: MemoryStatus, extra: Partial<Omit<Memory, 'id'>> = {}): Promise<boolean> {
    const now = new Date();
    const result = await this.collection.updateOne(
      { _id: id },
      { $set: { ...extra, status, updated_at: now, ...(status === 'complete' ? { completed_at: now } : {}) } },
    );
    return result.matchedCount === 1;
  }

  /** Whether the activity call `scope` already reported its terminal event for this memory. */
  async terminalReported(id: string, scope: string): Promise<boolean> {
    return (await this.collection.countDocuments({ _id: id, terminal_reported: scope }, { limit: 1 })) > 0;
  }

  async markTerminalReported(id: string, scope: string): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { terminal_reported: scope } });
  }

  /**
   * Changes the collections (and whatever else is in `set`) and records what is left to carry
   * through, merged with anything an earlier change left unfinished.
   */
  async changeCollections(
    tenantId: string,
    id: string,
    change: MemoryChange,
    moved: { added: string[]; removed: string[] },
    unlessMetadataChanged?: Record<string, unknown>,
  ): Promise<Memory | null> {
    const now = new Date();
    const doc = await this.collection.findOneAndUpdate(
      { _id: id, tenant_id: tenantId, ...(unlessMetadataChanged ? { metadata: unlessMetadataChanged } : {}) },
      {
        $set: { ...fieldsOf(change), updated_at: now, 'collections_sync.since': now },
        $addToSet: { 'collections_sync.added': { $each: moved.added }, 'collections_sync.removed': { $each: moved.removed } },
      },
      { returnDocument: 'after' },
    );
    return memoryOf(doc);
  }

  /** Clears a carried-through change, unless another change arrived meanwhile. */
  async clearCollectionSync(id: string, since: Date): Promise<void> {
    await this.collection.updateOne({ _id: id, 'collections_sync.since': since }, { $unset: { collections_sync: '' } });
  }

  async findStaleCollectionSyncs(olderThan: Date, limit: number): Promise<MemorySummary[]> {
    const docs = await this.collection
      // The lower bound changes nothing on MongoDB (a $lt on a date matches only dates), but the
      // stand-in's index range would otherwise start at the null entries of every memory without
      // a pending sync: the reconciler read the whole collection each round.
      .find({ 'collections_sync.since': { $gte: new Date(0), $lt: olderThan } }, { projection: WITHOUT_CONTENT, limit })
      .toArray();
    return (docs as MemorySummaryDoc[]).map(summaryOf);
  }

  async findStaleQueued(olderThan: Date, limit: number): Promise<MemorySummary[]> {
    const docs = await this.collection
      .find({ status: 'queued', created_at: { $lt: olderThan } }, { projection: WITHOUT_CONTENT, limit, sort: { created_at: 1 } })
      .toArray();
    return (docs as MemorySummaryDoc[]).map(summaryOf);
  }

  /** Those of `ids` that belong to the tenant, with the workflow each had running. */
  async ownedBy(tenantId: string, ids: string[]): Promise<{ id: string; workflow_id: string; collection_ids: string[] }[]> {
    if (ids.length === 0) return [];
    const docs = await this.collection
      .find({ tenant_id: tenantId, _id: { $in: ids } }, { projection: { _id: 1, workflow_id: 1, collection_ids: 1 } })
      .toArray();
    return docs.map((doc) => ({ id: doc._id, workflow_id: doc.workflow_id, collection_ids: doc.collection_ids }));
  }

  /** Deletes the records only: a memory's delete is MemoryPurge's (store/memory-purge.ts). */
  /** The collections of each of `ids` the tenant can see (missing and expired ones left out). */
  async membershipsOf(tenantId: string, ids: string[]): Promise<{ id: string; collection_ids: string[] }[]> {
    const docs = await this.collection
      .find({ tenant_id: tenantId, _id: { $in: ids } }, { projection: { _id: 1, collection_ids: 1, expires_at: 1 } })
      .toArray();
    const now = Date.now();
    return docs.filter((doc) => isLive(doc, now)).map((doc) => ({ id: doc._id, collection_ids: doc.collection_ids }));
  }

  async deleteMany(tenantId: string, ids: string[]): Promise<void> {
    if (ids.length > 0) await this.collection.deleteMany({ tenant_id: tenantId, _id: { $in: ids } });
  }
}
