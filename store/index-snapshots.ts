/**
 * Persisted search-index partitions (search/partition-snapshot.ts makes the bytes): a collection's
 * lexical index, turn facts, vector rows and graph as they stood at an index-feed seq, so that a
 * cold load reads a few large documents instead of re-tokenising every chunk and decoding every
 * chunk and graph document. Derived data only: losing it costs one slower load.
 *
 * One snapshot is a head document and its parts (the bytes split below MongoDB's 16 MB document
 * limit). Without transactions, a writer writes the parts of a new generation first, then points
 * the head at them, then deletes other generations' parts; a reader reads the head, then its
 * generation's parts, and treats a missing part (a newer writer deleted it) as no snapshot.
 *
 * They hold terms of the chunks' text, their vectors and the graph's descriptions, so a memory
 * delete removes every snapshot of its tenant (store/memory-purge.ts) after the chunks are gone.
 */
import { Binary, type Collection, type Db } from 'mongodb';
import { newId } from '../core/ids.js';

/** Below the 16 MB document limit with room for the fields around the bytes. */
const PART_BYTES = 8 * 1024 * 1024;

interface IndexSnapshotHeadDoc {
  _id: string;
  kind: 'head';
  tenant_id: string;
  collection_id: string;
  model: string;
  format: string;
  /** The index feed's seq the snapshot reflects at least: replay the feed after it. */
  seq: number;
  generation: string;
  parts: number;
  bytes: number;
  chunks: number;
  written_at: Date;
}

interface IndexSnapshotPartDoc {
  _id: string;
  kind: 'part';
  tenant_id: string;
  collection_id: string;
  model: string;
  generation: string;
  part: number;
  data: Binary;
}

export interface IndexSnapshotMeta {
  tenantId: string;
  collectionId: string;
  model: string;
  format: string;
  seq: number;
  chunks: number;
}

export interface StoredIndexSnapshot extends IndexSnapshotMeta {
  generation: string;
  /**
   * The snapshot's bytes in order, a part at a time as each is read: views of the driver's reply
   * buffers (fresh for every reply), neither copied into one buffer nor all held at once, since a
   * 100k-chunk snapshot is hundreds of MB. Iterating throws IndexSnapshotChanged when the parts
   * are not the head's (a newer writer replaced them meanwhile).
   */
  parts: AsyncIterable<Uint8Array>;
  /** Their total length. */
  byteLength: number;
}

const headId = (collectionId: string, model: string): string => `${collectionId}\n${model}`;

/** The parts read are not those of the head read before them: a newer snapshot replaced it meanwhile. */
export class IndexSnapshotChanged extends Error {
  constructor() {
    super('index snapshot replaced while read');
    this.name = 'IndexSnapshotChanged';
  }
}

export class IndexSnapshotRepository {
  /** Heads and parts share one collection: two typed handles on it. */
  private readonly heads: Collection<IndexSnapshotHeadDoc>;
  private readonly parts: Collection<IndexSnapshotPartDoc>;

  constructor(db: Db) {
    this.heads = db.collection<IndexSnapshotHeadDoc>('index_snapshots');
    this.parts = db.collection<IndexSnapshotPartDoc>('index_snapshots');
  }

  async ensureIndexes(): Promise<void> {
    // Parts of one generation in order; every snapshot of a tenant (the delete cascade).
    await this.parts.createIndex({ collection_id: 1, generation: 1, part: 1 });
    await this.parts.createIndex({ tenant_id: 1 });
  }

  /** Writes a new generation and points the collection's head at it; returns the generation. */
  async write(meta: IndexSnapshotMeta, bytes: Uint8Array): Promise<string> {
    const generation = newId();
    const parts = Math.max(1, Math.ceil(bytes.byteLength / PART_BYTES));
    const scope = { tenant_id: meta.tenantId, collection_id: meta.collectionId, model: meta.model, generation };
    for (let part = 0; part < parts; part++) {
      const slice = bytes.subarray(part * PART_BYTES, Math.min(bytes.byteLength, (part + 1) * PART_BYTES));
      // One part per insert: a batch of them would exceed the 48 MB message limit.
      await this.parts.insertOne({
        _id: `${generation}\n${part}`,
        kind: 'part',
        ...scope,
        part,
        data: new Binary(Buffer.from(slice.buffer, slice.byteOffset, slice.byteLength)),
      });
    }
    await this.heads.replaceOne(
      { _id: headId(meta.collectionId, meta.model) },
      {
        kind: 'head',
        ...scope,
        format: meta.format,
        seq: meta.seq,
        parts,
        bytes: bytes.byteLength,
        chunks: meta.chunks,
        written_at: new Date(),
      },
      { upsert: true },
    );
    await this.removeStaleParts(meta.collectionId, meta.model);
    return generation;
  }

  /** Parts of the collection's snapshots that its head does not point at (older or lost writers'). */
  private async removeStaleParts(collectionId: string, model: string): Promise<void> {
    const head = await this.heads.findOne({ _id: headId(collectionId, model), kind: 'head' }, { projection: { generation: 1 } });
    await this.parts.deleteMany({
      collection_id: collectionId,
      model,
      kind: 'part',
      ...(head ? { generation: { $ne: head.generation } } : {}),
    });
  }

  /** Whether the collection has a snapshot for the model, and of which format (nothing of its bytes is read). */
  async headOf(collectionId: string, model: string): Promise<{ format: string; seq: number; chunks: number } | null> {
    const head = await this.heads.findOne(
      { _id: headId(collectionId, model), kind: 'head' },
      { projection: { format: 1, seq: 1, chunks: 1 } },
    );
    return head ? { format: head.format, seq: head.seq, chunks: head.chunks } : null;
  }

  /**
   * The collection's snapshot for the model, or null when there is none. `wanted` sees the head
   * before any part is read: false skips the parts (a snapshot of another format), and a caller may
   * start other reads meanwhile. The parts are read as the caller iterates them.
   */
  async read(
    collectionId: string,
    model: string,
    wanted?: (head: Pick<IndexSnapshotMeta, 'format' | 'seq' | 'chunks'> & { bytes: number }) => boolean,
  ): Promise<StoredIndexSnapshot | null> {
    const head = await this.heads.findOne({ _id: headId(collectionId, model), kind: 'head' });
    if (!head) return null;
    if (wanted && !wanted({ format: head.format, seq: head.seq, chunks: head.chunks, bytes: head.bytes })) return null;
    return {
      tenantId: head.tenant_id,
      collectionId,
      model,
      format: head.format,
      seq: head.seq,
      chunks: head.chunks,
      generation: head.generation,
      parts: this.partsOf(collectionId, head),
      byteLength: head.bytes,
    };
  }

  /** The head's parts in order, checked against it as they come (IndexSnapshotChanged). */
  private async *partsOf(collectionId: string, head: IndexSnapshotHeadDoc): AsyncGenerator<Uint8Array> {
    let offset = 0;
    let count = 0;
    const parts = this.parts.find<Pick<IndexSnapshotPartDoc, 'part' | 'data'>>(
      { collection_id: collectionId, generation: head.generation, kind: 'part' },
      {
        sort: { collection_id: 1, generation: 1, part: 1 },
        projection: { _id: 0, part: 1, data: 1 },
        // One 8 MB part per reply. MongoDB caps a reply near 16 MB itself, but mongo-java-server (the
        // embedded stand-in) answers the first batch with every part at once: a 100k-chunk snapshot
        // came as one 237 MB reply, nothing of it usable until the last byte (about 1-2 s of waiting,
        // against 0.4-0.8 s part by part, measured 2026-11-27), nor any of it let go before then.
        batchSize: 1,
      },
    );
    // Leaving the loop early (the caller stopped, or a check threw) closes the cursor.
    for await (const doc of parts) {
      const data = doc.data.buffer;
      if (doc.part !== count || offset + data.byteLength > head.bytes) throw new IndexSnapshotChanged();
      offset += data.byteLength;
      count++;
      yield data;
    }
    if (count !== head.parts || offset !== head.bytes) throw new IndexSnapshotChanged();
  }

  /** Removes one generation if the head still points at it (a writer that learned it may hold deleted data). */
  async removeGeneration(collectionId: string, model: string, generation: string): Promise<void> {
    await this.heads.deleteOne({ _id: headId(collectionId, model), generation });
    await this.parts.deleteMany({ collection_id: collectionId, model, generation });
  }

  /** Every snapshot of the tenant: they may hold terms of memories being deleted. */
  async removeForTenant(tenantId: string): Promise<void> {
    await this.parts.deleteMany({ tenant_id: tenantId });
  }
}
