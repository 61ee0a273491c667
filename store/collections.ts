import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from './db.js';

export interface CollectionDoc {
  _id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  /**
   * Set on ephemeral collections (imported device snapshots): read-only, and gone after this time.
   * Expired ones are invisible at once; the sweeper (ephemeral-collections in services) removes them.
   */
  expires_at?: Date | null;
}

/** Expiry is checked here rather than in the query: the stand-in has no TTL indexes, and a row past its time must never be read. */
const live = (doc: CollectionDoc | null, now = Date.now()): CollectionDoc | null =>
  doc && (!doc.expires_at || doc.expires_at.getTime() > now) ? doc : null;

export class CollectionNameTakenError extends Error {}

export class CollectionRepository {
  readonly collection: Collection<CollectionDoc>;

  constructor(db: Db) {
    this.collection = db.collection<CollectionDoc>('collections');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ tenant_id: 1, name: 1 }, { unique: true });
    await this.collection.createIndex({ tenant_id: 1, created_at: 1, _id: 1 });
    await this.collection.createIndex({ expires_at: 1 }, { sparse: true });
  }

  async create(doc: CollectionDoc): Promise<CollectionDoc> {
    try {
      await this.collection.insertOne(doc);
      return doc;
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new CollectionNameTakenError(doc.name);
      throw error;
    }
  }

  async findById(tenantId: string, id: string): Promise<CollectionDoc | null> {
    return live(await this.collection.findOne({ _id: id, tenant_id: tenantId }));
  }

  async findByName(tenantId: string, name: string): Promise<CollectionDoc | null> {
    return live(await this.collection.findOne({ tenant_id: tenantId, name }));
  }

  /** The subset of `ids` that belong to the tenant (and have not expired), each with whether it is ephemeral. */
  async existing(tenantId: string, ids: string[]): Promise<Map<string, { ephemeral: boolean }>> {
    const docs = await this.collection
      .find({ tenant_id: tenantId, _id: { $in: ids } }, { projection: { _id: 1, expires_at: 1 } })
      .toArray();
    const now = Date.now();
    return new Map(docs.filter((doc) => live(doc, now)).map((doc) => [doc._id, { ephemeral: !!doc.expires_at }]));
  }

  countForTenant(tenantId: string): Promise<number> {
    return this.collection.countDocuments({ tenant_id: tenantId });
  }

  async existingIds(tenantId: string, ids: string[]): Promise<Set<string>> {
    return new Set((await this.existing(tenantId, ids)).keys());
  }

  /** Ephemeral collections past their time, oldest first: what the sweeper removes. */
  expired(now: Date, limit: number): Promise<Pick<CollectionDoc, '_id' | 'tenant_id'>[]> {
    return this.collection
      .find({ expires_at: { $lte: now } }, { projection: { _id: 1, tenant_id: 1 }, sort: { expires_at: 1 }, limit })
      .toArray();
  }

  async remove(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id });
  }

  async list(tenantId: string, offset: number, limit: number): Promise<{ items: CollectionDoc[]; total: number }> {
    const filter = { tenant_id: tenantId, $or: [{ expires_at: null }, { expires_at: { $gt: new Date() } }] };
    const [items, total] = await Promise.all([
      this.collection.find(filter, { sort: { created_at: 1, _id: 1 }, skip: offset, limit }).toArray(),
      this.collection.countDocuments(filter),
    ]);
    return { items, total };
  }
}
