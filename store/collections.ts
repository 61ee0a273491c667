import type { Db, Filter, Collection as MongoCollection } from 'mongodb';
import type { Collection } from '../core/memory-model.js';
import { isDuplicateKeyError } from './db.js';
import { fromStored, toStored, type Stored } from './stored.js';

export type CollectionDoc = Stored<Collection>;

/**
 * The one liveness rule, part of every read: a collection without `expires_at` lives forever, an
 * ephemeral one until its time. Checked in the query rather than left to a TTL index (the stand-in
 * has none): a row past its time is never read, found or counted, though the sweeper
 * (`expired`, `remove`) deletes it later.
 */
const liveAt = (now: Date = new Date()): Filter<CollectionDoc> => ({ $or: [{ expires_at: null }, { expires_at: { $gt: now } }] });
const recordOf = (doc: CollectionDoc | null): Collection | null => (doc ? fromStored<Collection>(doc) : null);

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
    return recordOf(await this.collection.findOne({ _id: id, tenant_id: tenantId, ...liveAt() }));
  }

  async findByName(tenantId: string, name: string): Promise<Collection | null> {
    return recordOf(await this.collection.findOne({ tenant_id: tenantId, name, ...liveAt() }));
  }

  /** The subset of `ids` that belong to the tenant (and have not expired), each with whether it is ephemeral. */
  async existing(tenantId: string, ids: string[]): Promise<Map<string, { ephemeral: boolean }>> {
    const docs = await this.collection
      .find({ tenant_id: tenantId, _id: { $in: ids }, ...liveAt() }, { projection: { _id: 1, expires_at: 1 } })
      .toArray();
    return new Map(docs.map((doc) => [doc._id, { ephemeral: !!doc.expires_at }]));
  }

  /** Live collections of the tenant: what MAX_COLLECTIONS_PER_TENANT bounds (an expired one no longer counts). */
  countForTenant(tenantId: string): Promise<number> {
    return this.collection.countDocuments({ tenant_id: tenantId, ...liveAt() });
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
    const filter = { tenant_id: tenantId, ...liveAt() };
    const [items, total] = await Promise.all([
      this.collection.find(filter, { sort: { created_at: 1, _id: 1 }, skip: offset, limit }).toArray(),
      this.collection.countDocuments(filter),
    ]);
    return { items: items.map(fromStored<Collection>), total };
  }
}
