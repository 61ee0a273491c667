import type { Db, Collection as MongoCollection } from 'mongodb';
import type { Collection } from '../core/memory-model.js';
import { isDuplicateKeyError } from './db.js';
import { fromStored, toStored, type Stored } from './stored.js';

export type CollectionDoc = Stored<Collection>;

/** Expiry is checked here rather than in the query: the stand-in has no TTL indexes, and a row past its time must never be read. */
const isLive = (doc: Pick<CollectionDoc, 'expires_at'>, now = Date.now()): boolean => !doc.expires_at || doc.expires_at.getTime() > now;
const live = (doc: CollectionDoc | null): Collection | null => (doc && isLive(doc) ? fromStored<Collection>(doc) : null);

export class CollectionNameTakenError extends Error {}

export class CollectionRepository {
  readonly collection: MongoCollection<CollectionDoc>;

  constructor(db: Db) {
    this.collection = db.collection<CollectionDoc>('collections');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ tenant_id: 1, name: 1 }, { unique: true });
    await this.collection.createIndex({ tenant_id: 1, created_at: 1, _id: 1 });
    await this.collection.createIndex({ expires_at: 1 }, { sparse: true });
  }

  async create(collection: Collection): Promise<Collection> {
    try {
      await this.collection.insertOne(toStored(collection));
      return collection;
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new CollectionNameTakenError(collection.name);
      throw error;
    }
  }

  async findById(tenantId: string, id: string): Promise<Collection | null> {
    return live(await this.collection.findOne({ _id: id, tenant_id: tenantId }));
  }

  async findByName(tenantId: string, name: string): Promise<Collection | null> {
    return live(await this.collection.findOne({ tenant_id: tenantId, name }));
  }

  /** The subset of `ids` that belong to the tenant (and have not expired), each with whether it is ephemeral. */
  async existing(tenantId: string, ids: string[]): Promise<Map<string, { ephemeral: boolean }>> {
    const docs = await this.collection
      .find({ tenant_id: tenantId, _id: { $in: ids } }, { projection: { _id: 1, expires_at: 1 } })
      .toArray();
    const now = Date.now();
    return new Map(docs.filter((doc) => isLive(doc, now)).map((doc) => [doc._id, { ephemeral: !!doc.expires_at }]));
  }

  countForTenant(tenantId: string): Promise<number> {
    return this.collection.countDocuments({ tenant_id: tenantId });
  }

  async existingIds(tenantId: string, ids: string[]): Promise<Set<string>> {
    return new Set((await this.existing(tenantId, ids)).keys());
  }

  /** Ephemeral collections past their time, oldest first: what the sweeper removes. */
  async expired(now: Date, limit: number): Promise<Pick<Collection, 'id' | 'tenant_id'>[]> {
    const docs = await this.collection
      .find({ expires_at: { $lte: now } }, { projection: { _id: 1, tenant_id: 1 }, sort: { expires_at: 1 }, limit })
      .toArray();
    return docs.map((doc) => ({ id: doc._id, tenant_id: doc.tenant_id }));
  }

  async remove(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id });
  }

  async list(tenantId: string, offset: number, limit: number): Promise<{ items: Collection[]; total: number }> {
    const filter = { tenant_id: tenantId, $or: [{ expires_at: null }, { expires_at: { $gt: new Date() } }] };
    const [items, total] = await Promise.all([
      this.collection.find(filter, { sort: { created_at: 1, _id: 1 }, skip: offset, limit }).toArray(),
      this.collection.countDocuments(filter),
    ]);
    return { items: items.map(fromStored<Collection>), total };
  }
}
