import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from './db.js';

export interface CollectionDoc {
  _id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
}

export class CollectionNameTakenError extends Error {}

export class CollectionRepository {
  readonly collection: Collection<CollectionDoc>;

  constructor(db: Db) {
    this.collection = db.collection<CollectionDoc>('collections');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ tenant_id: 1, name: 1 }, { unique: true });
    await this.collection.createIndex({ tenant_id: 1, created_at: 1, _id: 1 });
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

  findById(tenantId: string, id: string): Promise<CollectionDoc | null> {
    return this.collection.findOne({ _id: id, tenant_id: tenantId });
  }

  findByName(tenantId: string, name: string): Promise<CollectionDoc | null> {
    return this.collection.findOne({ tenant_id: tenantId, name });
  }

  countForTenant(tenantId: string): Promise<number> {
    return this.collection.countDocuments({ tenant_id: tenantId });
  }

  /** The subset of `ids` that belong to the tenant. */
  async existingIds(tenantId: string, ids: string[]): Promise<Set<string>> {
    const docs = await this.collection.find({ tenant_id: tenantId, _id: { $in: ids } }, { projection: { _id: 1 } }).toArray();
    return new Set(docs.map((doc) => doc._id));
  }

  async list(tenantId: string, offset: number, limit: number): Promise<{ items: CollectionDoc[]; total: number }> {
    const filter = { tenant_id: tenantId };
    const [items, total] = await Promise.all([
      this.collection.find(filter, { sort: { created_at: 1, _id: 1 }, skip: offset, limit }).toArray(),
      this.collection.countDocuments(filter),
    ]);
    return { items, total };
  }
}
