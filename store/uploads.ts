/**
 * Presigned uploads: a pending record per issued URL, and single-use claims. Single use is
 * enforced by inserting a claim with a fixed `_id` (the unique `_id` index holds under concurrency
 * on the stand-in too), not by a conditional update, which the stand-in does not make atomic.
 */
import type { Collection, Db } from 'mongodb';
import type { Upload } from '../core/content-model.js';
import { isDuplicateKeyError } from './db.js';
import { fromStored, toStored, type Stored } from './stored.js';

type UploadDoc = Stored<Upload>;

export class UploadRepository {
  readonly uploads: Collection<UploadDoc>;
  private readonly claims: Collection<{ _id: string; at: Date }>;

  constructor(db: Db) {
    this.uploads = db.collection<UploadDoc>('uploads');
    this.claims = db.collection('upload_claims');
  }

  async ensureIndexes(): Promise<void> {
    // The expiry sweep's shape (memory_id: null, then a range on expires_at) and the delete
    // cascade's (memory_id $in): expires_at alone made the sweep read every attached upload too.
    await this.uploads.createIndex({ memory_id: 1, expires_at: 1 });
    await this.claims.createIndex({ at: 1 });
  }

  async create(upload: Upload): Promise<void> {
    await this.uploads.insertOne(toStored(upload));
  }

  async find(id: string): Promise<Upload | null> {
    const doc = await this.uploads.findOne({ _id: id });
    return doc ? fromStored<Upload>(doc) : null;
  }

  /** True for the first caller only, for a given upload and purpose (`put`, `attach`). */
  async claim(id: string, purpose: 'put' | 'attach'): Promise<boolean> {
    try {
      await this.claims.insertOne({ _id: `${id}:${purpose}`, at: new Date() });
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async release(id: string, purpose: 'put' | 'attach'): Promise<void> {
    await this.claims.deleteOne({ _id: `${id}:${purpose}` });
  }

  async markStored(id: string, fileId: string, sha256: string): Promise<void> {
    await this.uploads.updateOne({ _id: id }, { $set: { file_id: fileId, sha256 } });
  }

  async markAttached(id: string, memoryId: string): Promise<void> {
    await this.uploads.updateOne({ _id: id }, { $set: { memory_id: memoryId } });
  }

  /** Uploads whose URL expired without a memory taking them: their bytes are to be removed. */
  async findAbandoned(before: Date, limit: number): Promise<Upload[]> {
    const docs = await this.uploads.find({ expires_at: { $lt: before }, memory_id: null }, { limit }).toArray();
    return docs.map(fromStored<Upload>);
  }

  /** The upload records (filenames included) of deleted memories. */
  async forgetMemories(memoryIds: string[]): Promise<void> {
    if (memoryIds.length === 0) return;
    const attached = await this.uploads.find({ memory_id: { $in: memoryIds } }, { projection: { _id: 1 } }).toArray();
    await this.remove(attached.map((upload) => upload._id));
  }

  async remove(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.uploads.deleteMany({ _id: { $in: ids } });
    await this.claims.deleteMany({ _id: { $in: ids.flatMap((id) => [`${id}:put`, `${id}:attach`]) } });
  }
}
