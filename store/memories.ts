import type { Collection, Db, Filter } from 'mongodb';

export type MemoryKind = 'document' | 'conversation';
/** queued → reading → structuring → indexing → complete, or → failed from any of them. */
export type MemoryStatus = 'queued' | 'reading' | 'structuring' | 'indexing' | 'complete' | 'failed';

export interface MessageInput {
  role: string;
  content: string;
}

/** An uploaded file, kept in GridFS; its text is extracted by the read stage. */
export interface MemoryFile {
  file_id: string;
  filename: string;
  /** As declared by the client; the read stage sniffs the real type from the bytes. */
  media_type: string;
  size: number;
  sha256: string;
}

export interface MemoryContent {
  raw_text?: string;
  chunks?: string[];
  messages?: MessageInput[];
  files?: MemoryFile[];
}

export interface MemoryDoc {
  _id: string;
  tenant_id: string;
  collection_ids: string[];
  kind: MemoryKind;
  name: string | null;
  metadata: Record<string, unknown>;
  content: MemoryContent;
  status: MemoryStatus;
  status_message: string | null;
  chunk_count: number;
  embedding_model: string | null;
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export type MemorySummaryDoc = Omit<MemoryDoc, 'content'>;

export interface MemoryListQuery {
  tenantId: string;
  collectionIds: string[];
  /** Already validated and translated (`metadata.<field>` → operator object). */
  metadataFilter: Record<string, unknown>;
  offset: number;
  limit: number;
}

const WITHOUT_CONTENT = { content: 0 } as const;

export class MemoryRepository {
  readonly collection: Collection<MemoryDoc>;

  constructor(db: Db) {
    this.collection = db.collection<MemoryDoc>('memories');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ tenant_id: 1, collection_ids: 1, created_at: -1, _id: 1 });
    await this.collection.createIndex({ tenant_id: 1, created_at: -1, _id: 1 });
    await this.collection.createIndex({ status: 1, created_at: 1 });
  }

  async insert(doc: MemoryDoc): Promise<void> {
    await this.collection.insertOne(doc);
  }

  find(tenantId: string, id: string): Promise<MemoryDoc | null> {
    return this.collection.findOne({ _id: id, tenant_id: tenantId });
  }

  /** Worker-side read: the workflow carries the tenant id, but the memory id is already unique. */
  findForIngestion(id: string): Promise<MemoryDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  exists(id: string): Promise<boolean> {
    return this.collection.countDocuments({ _id: id }, { limit: 1 }).then((count) => count > 0);
  }

  /** Ids among `ids` whose memory exists and is complete: the search-time visibility check. */
  async completeIds(ids: string[]): Promise<Map<string, MemorySummaryDoc>> {
    const docs = await this.collection.find({ _id: { $in: ids }, status: 'complete' }, { projection: WITHOUT_CONTENT }).toArray();
    return new Map(docs.map((doc) => [doc._id, doc as MemorySummaryDoc]));
  }

  async list(query: MemoryListQuery): Promise<{ items: MemorySummaryDoc[]; total: number }> {
    const filter: Filter<MemoryDoc> = { tenant_id: query.tenantId, ...query.metadataFilter };
    if (query.collectionIds.length > 0) filter.collection_ids = { $in: query.collectionIds };
    const [items, total] = await Promise.all([
      this.collection
        .find(filter, { sort: { created_at: -1, _id: 1 }, skip: query.offset, limit: query.limit, projection: WITHOUT_CONTENT })
        .toArray(),
      this.collection.countDocuments(filter),
    ]);
    return { items: items as MemorySummaryDoc[], total };
  }

  /** Moves a memory's status forward; a no-op (false) if the memory has been deleted meanwhile. */
  async setStatus(id: string, status: MemoryStatus, extra: Partial<MemoryDoc> = {}): Promise<boolean> {
    const now = new Date();
    const result = await this.collection.updateOne(
      { _id: id },
      { $set: { ...extra, status, updated_at: now, ...(status === 'complete' ? { completed_at: now } : {}) } },
    );
    return result.matchedCount === 1;
  }

  /** Memories accepted but never handed to Temporal (e.g. the API died between insert and start). */
  findStaleQueued(olderThan: Date, limit: number): Promise<MemorySummaryDoc[]> {
    return this.collection
      .find({ status: 'queued', created_at: { $lt: olderThan } }, { projection: WITHOUT_CONTENT, limit, sort: { created_at: 1 } })
      .toArray() as Promise<MemorySummaryDoc[]>;
  }

  /** Returns the ids that were deleted among those given, scoped to the tenant. */
  async deleteMany(tenantId: string, ids: string[]): Promise<string[]> {
    const found = await this.collection.find({ tenant_id: tenantId, _id: { $in: ids } }, { projection: { _id: 1 } }).toArray();
    const foundIds = found.map((doc) => doc._id);
    if (foundIds.length > 0) await this.collection.deleteMany({ tenant_id: tenantId, _id: { $in: foundIds } });
    return foundIds;
  }
}
