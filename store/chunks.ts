import { Binary, type AnyBulkWriteOperation, type Collection, type Db } from 'mongodb';
import type { ChunkSource } from '../core/content-model.js';

export type { ChunkSource } from '../core/content-model.js';

export interface ChunkDoc {
  _id: string;
  memory_id: string;
  tenant_id: string;
  collection_ids: string[];
  index: number;
  text: string;
  source: ChunkSource;
  /** The chunk's time (core/memory-time.ts chunkTime); absent on chunks stored before times existed. */
  occurred_at?: Date;
  /** Float32 vector stored as raw little-endian bytes: compact and bit-exact. */
  embedding: Binary | null;
  /** The model that produced `embedding`; vectors of different models are never mixed. */
  embedding_model: string | null;
}

/** A chunk as the layers above the store read it: the row with `id`. */
export type StoredChunk = Omit<ChunkDoc, '_id'> & { id: string };
/** A chunk to write: its vector comes later (setEmbeddings). */
export type NewChunk = Omit<StoredChunk, 'embedding' | 'embedding_model'>;

const withoutId = ({ id: _id, ...rest }: NewChunk): Omit<NewChunk, 'id'> => rest;
const withId = <T extends { _id: string }>({ _id, ...rest }: T): Omit<T, '_id'> & { id: string } => ({ id: _id, ...rest });

export const vectorToBinary = (vector: Float32Array): Binary =>
  new Binary(Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));

export function binaryToVector(binary: Binary): Float32Array {
  const bytes = binary.buffer;
  // Copy into an aligned buffer: the BSON bytes may start at any offset.
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

/** The `_id` condition of one of `of` disjoint ranges of chunk ids (ids start with a UUID's hex digit). */
function idRangeOf(part: { index: number; of: number }): { _id?: { $gte?: string; $lt?: string } } {
  const bounds = (i: number): string | undefined => (i <= 0 || i >= part.of ? undefined : Math.floor((16 * i) / part.of).toString(16));
  const lower = bounds(part.index);
  const upper = bounds(part.index + 1);
  if (lower === undefined && upper === undefined) return {};
  return { _id: { ...(lower !== undefined ? { $gte: lower } : {}), ...(upper !== undefined ? { $lt: upper } : {}) } };
}

export class ChunkRepository {
  readonly collection: Collection<ChunkDoc>;

  constructor(db: Db) {
    this.collection = db.collection<ChunkDoc>('chunks');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ memory_id: 1, index: 1 });
    // _id last: a partition load reads one collection's chunks in disjoint _id ranges
    // (vectorsForCollection), each of which this index bounds instead of filtering.
    await this.collection.createIndex({ collection_ids: 1, embedding_model: 1, _id: 1 });
  }

  /** Idempotent: chunk ids are derived from memory id + index, so a retried stage overwrites. */
  async upsertMany(chunks: NewChunk[]): Promise<void> {
    if (chunks.length === 0) return;
    const operations: AnyBulkWriteOperation<ChunkDoc>[] = chunks.map((chunk) => ({
      replaceOne: {
        filter: { _id: chunk.id },
        replacement: { ...withoutId(chunk), _id: chunk.id, embedding: null, embedding_model: null },
        upsert: true,
      },
    }));
    await this.collection.bulkWrite(operations, { ordered: false });
  }

  async setEmbeddings(model: string, items: { id: string; vector: Float32Array }[]): Promise<void> {
    if (items.length === 0) return;
    const operations: AnyBulkWriteOperation<ChunkDoc>[] = items.map((item) => ({
      updateOne: { filter: { _id: item.id }, update: { $set: { embedding: vectorToBinary(item.vector), embedding_model: model } } },
    }));
    await this.collection.bulkWrite(operations, { ordered: false });
  }

  /** A memory's collections changed: its chunks follow (they carry them for the per-collection index). */
  async setCollections(memoryId: string, collectionIds: string[]): Promise<void> {
    await this.collection.updateMany({ memory_id: memoryId }, { $set: { collection_ids: collectionIds } });
  }

  /** Removes chunks past `keepCount` (a retried read stage that produced fewer chunks). */
  async deleteFromIndex(memoryId: string, keepCount: number): Promise<void> {
    await this.collection.deleteMany({ memory_id: memoryId, index: { $gte: keepCount } });
  }

  async forMemory(memoryId: string, options: { withEmbeddings?: boolean } = {}): Promise<StoredChunk[]> {
    const rows = await this.collection
      .find({ memory_id: memoryId }, { sort: { index: 1 }, projection: options.withEmbeddings ? {} : { embedding: 0 } })
      .toArray();
    return rows.map(withId);
  }

  /**
   * What a search hit shows of its chunk, and nothing more (no vector, collections or tenant: the
   * search already knows them). Named fields, not `{ embedding: 0 }`: the stand-in reads whole
   * documents for an exclusion projection.
   */
  async hitTexts(ids: string[]): Promise<Pick<StoredChunk, 'id' | 'index' | 'text' | 'source' | 'occurred_at'>[]> {
    if (ids.length === 0) return [];
    const rows = await this.collection
      .find<Pick<ChunkDoc, '_id' | 'index' | 'text' | 'source' | 'occurred_at'>>(
        { _id: { $in: ids } },
        { projection: { _id: 1, index: 1, text: 1, source: 1, occurred_at: 1 } },
      )
      .toArray();
    return rows.map(withId);
  }

  /**
   * Streams the vectors (and texts) of one collection for one model: used to build the in-memory
   * indexes. Only the fields the indexes need (not collection_ids: the caller knows the collection),
   * in large batches. `part` splits the read by chunk id into `of` disjoint ranges (ids start with
   * the memory's UUID, so the first hex digit spreads them evenly), for reading them concurrently.
   */
  vectorsForCollection(
    collectionId: string,
    model: string,
    part: { index: number; of: number } = { index: 0, of: 1 },
  ): AsyncIterable<Pick<StoredChunk, 'id' | 'memory_id' | 'embedding' | 'text' | 'occurred_at'>> {
    return this.collection
      .find(
        { collection_ids: collectionId, embedding_model: model, ...idRangeOf(part) },
        { projection: { _id: 1, memory_id: 1, embedding: 1, text: 1, occurred_at: 1 }, batchSize: 2000 },
      )
      .map(withId);
  }

  /** How many chunks of the collection have a vector of the model: what a load from a snapshot must agree with. */
  async countForCollection(collectionId: string, model: string): Promise<number> {
    return this.collection.countDocuments({ collection_ids: collectionId, embedding_model: model });
  }

  /** The tenant whose chunks the collection holds (a collection belongs to one tenant), or null when it holds none. */
  async tenantOfCollection(collectionId: string): Promise<string | null> {
    const chunk = await this.collection.findOne({ collection_ids: collectionId }, { projection: { tenant_id: 1 } });
    return chunk?.tenant_id ?? null;
  }

  /** Current-model vectors of the given memories: what an index follower applies. */
  async vectorsForMemories(
    memoryIds: string[],
    model: string,
  ): Promise<Pick<StoredChunk, 'id' | 'memory_id' | 'embedding' | 'collection_ids' | 'text' | 'occurred_at'>[]> {
    const rows = await this.collection
      .find(
        { memory_id: { $in: memoryIds }, embedding_model: model },
        { projection: { _id: 1, memory_id: 1, embedding: 1, collection_ids: 1, text: 1, occurred_at: 1 } },
      )
      .toArray();
    return rows.map(withId);
  }

  async deleteForMemories(memoryIds: string[]): Promise<number> {
    if (memoryIds.length === 0) return 0;
    const result = await this.collection.deleteMany({ memory_id: { $in: memoryIds } });
    return result.deletedCount;
  }
}
