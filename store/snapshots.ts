/**
 * Reading a collection's searchable state for a snapshot export, and writing an imported snapshot
 * into an ephemeral collection. Domain shapes in and out; MongoDB stays in here.
 */
import { chunkId } from '../core/ids.js';
import { binaryToVector, vectorToBinary, type ChunkDoc, type ChunkRepository, type ChunkSource } from './chunks.js';
import { nameVectorOf, type GraphRepository, type GraphScope, type NewEntity, type NewFact, type NewMention } from './graph.js';
import type { IndexChangeFeed } from './index-changes.js';
import { isSearchable } from '../core/memory-model.js';
import type { MemoryDoc, MemoryKind, MemoryRepository } from './memories.js';

export interface ExportedChunk {
  index: number;
  text: string;
  source: ChunkSource;
  vector: Float32Array | null;
}

export interface ExportedMemory {
  id: string;
  kind: MemoryKind;
  name: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
  chunks: ExportedChunk[];
}

export interface ExportedGraph {
  memories: ExportedMemory[];
  entities: NewEntity[];
  facts: NewFact[];
  /** Provenance of the exported memories' searchable chunks only. */
  mentions: NewMention[];
}

export interface ImportedMemory {
  id: string;
  kind: MemoryKind;
  name: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
  chunks: (ExportedChunk & { vector: Float32Array })[];
}

/** An export stopped as soon as what it read passed the byte budget (SNAPSHOT_MAX_BYTES). */
export class ExportBudgetExceeded extends Error {
  constructor(readonly budgetBytes: number) {
    super(`the collection's snapshot would be larger than ${budgetBytes} bytes`);
    this.name = 'ExportBudgetExceeded';
  }
}

/** Counts of what an export of a collection would hold, read without reading the rows. */
export interface ExportCounts {
  /** Searchable memories: exact. */
  episodes: number;
  /** Graph rows of the collection: an upper bound (rows of chunks still being indexed count too). */
  entities: number;
  facts: number;
  mentions: number;
}

/** Searchable, and not an expired import: the memories an export holds. */
const EXPORTED = (tenantId: string, collectionId: string) => ({
  tenant_id: tenantId,
  collection_ids: collectionId,
  $and: [
    { $or: [{ status: 'complete' as const }, { indexed_chunk_count: { $gt: 0 } }] },
    { $or: [{ expires_at: null }, { expires_at: { $gt: new Date() } }] },
  ],
});

/** Memories per page of an export: their records and chunks are read together. */
export const EXPORT_PAGE = 200;
/** Memories (and their chunks) per insertMany of an import. */
export const IMPORT_BATCH = 500;

/** `items` in consecutive slices of at most `size`, in order: the pages of an import's writes. */
export function batches<T>(items: T[], size: number): T[][] {
  const slices: T[][] = [];
  for (let offset = 0; offset < items.length; offset += size) slices.push(items.slice(offset, offset + size));
  return slices;
}

/**
 * What an export counts against SNAPSHOT_MAX_BYTES for each row it reads: the bytes the row will
 * take in the sealed snapshot, about (a float16 vector is 2 bytes per dimension, base64 adds a third).
 */
export const exportCost = {
  vector: (vector: Float32Array | null): number => (vector ? Math.ceil((vector.length * 2) / 3) * 4 : 4),
  chunk: (text: string, vector: Float32Array | null): number => text.length + exportCost.vector(vector) + 64,
  memory: (metadata: Record<string, unknown>, name: string | null): number => JSON.stringify(metadata).length + (name?.length ?? 0) + 128,
  mention: (targetId: string): number => 48 + targetId.length,
  entity: (name: string, description: string): number => 256 + name.length + description.length,
  fact: (description: string): number => 192 + description.length,
};

/** The byte budget of one export: spending past it throws ExportBudgetExceeded, so the read stops there. */
export function exportBudget(budgetBytes: number): (amount: number) => void {
  let bytes = 0;
  return (amount) => {
    bytes += amount;
    if (bytes > budgetBytes) throw new ExportBudgetExceeded(budgetBytes);
  };
}

/**
 * What of the graph an export holds: only what its searchable chunks back. A chunk or mention at or
 * past its memory's indexed count is not searchable yet; an entity needs a mention; a fact needs a
 * mention and both its entities; a mention needs its target kept.
 */
export const exportedGraph = {
  indexed: (indexedCount: ReadonlyMap<string, number>, memoryId: string, chunkIndex: number): boolean =>
    chunkIndex < (indexedCount.get(memoryId) ?? 0),
  entity: (backed: ReadonlySet<string>, id: string): boolean => backed.has(id),
  fact: (backed: ReadonlySet<string>, entityIds: ReadonlySet<string>, fact: { id: string; subjectId: string; objectId: string }): boolean =>
    backed.has(fact.id) && entityIds.has(fact.subjectId) && entityIds.has(fact.objectId),
  mention: (entityIds: ReadonlySet<string>, factIds: ReadonlySet<string>, mention: Pick<NewMention, 'kind' | 'targetId'>): boolean =>
    (mention.kind === 'entity' ? entityIds : factIds).has(mention.targetId),
};

export class SnapshotRepository {
  constructor(
    private readonly repos: { memories: MemoryRepository; chunks: ChunkRepository; graph: GraphRepository; indexChanges: IndexChangeFeed },
  ) {}

  /** What an export of the collection would hold, counted by the database: checked against the caps before any row is read. */
  async countCollection(tenantId: string, collectionId: string): Promise<ExportCounts> {
    const { memories, graph } = this.repos;
    const scope = { tenant_id: tenantId, collection_id: collectionId };
    const [episodes, entities, facts, mentions] = await Promise.all([
      memories.collection.countDocuments(EXPORTED(tenantId, collectionId)),
      graph.entities.countDocuments(scope),
      graph.facts.countDocuments(scope),
      graph.mentions.countDocuments(scope),
    ]);
    return { episodes, entities, facts, mentions };
  }

  /**
   * Everything search can see in the collection: searchable memories, their indexed chunks (with
   * vectors of `model`) and the graph they back. Read a page of memories at a time; the bytes read
   * are counted as they arrive and the read stops with ExportBudgetExceeded once they pass
   * `budgetBytes`, so what is held never grows with the collection beyond the snapshot cap. The
   * caller checks the counts (countCollection) first.
   */
  async readCollection(tenantId: string, collectionId: string, model: string, budgetBytes: number): Promise<ExportedGraph> {
    const { memories, chunks, graph } = this.repos;
    const spend = exportBudget(budgetBytes);
    const exported: ExportedMemory[] = [];
    const indexedCount = new Map<string, number>();
    const records = memories.collection.find(EXPORTED(tenantId, collectionId), {
      projection: { content: 0 },
      sort: { created_at: 1, _id: 1 },
      batchSize: EXPORT_PAGE,
    });
    let page: Omit<MemoryDoc, 'content'>[] = [];
    const readPage = async (): Promise<void> => {
      const visible = page.filter(isSearchable);
      page = [];
      if (visible.length === 0) return;
      for (const memory of visible) indexedCount.set(memory._id, memory.indexed_chunk_count ?? memory.chunk_count);
      const chunksOf = new Map<string, ExportedChunk[]>();
      const docs = chunks.collection.find(
        { memory_id: { $in: visible.map((memory) => memory._id) } },
        { projection: { memory_id: 1, index: 1, text: 1, source: 1, embedding: 1, embedding_model: 1 } },
      );
      for await (const doc of docs as AsyncIterable<ChunkDoc>) {
        if (!exportedGraph.indexed(indexedCount, doc.memory_id, doc.index)) continue;
        let list = chunksOf.get(doc.memory_id);
        if (!list) chunksOf.set(doc.memory_id, (list = []));
        const vector = doc.embedding && doc.embedding_model === model ? binaryToVector(doc.embedding) : null;
        spend(exportCost.chunk(doc.text, vector));
        list.push({ index: doc.index, text: doc.text, source: doc.source, vector });
      }
      for (const memory of visible) {
        spend(exportCost.memory(memory.metadata, memory.name));
        exported.push({
          id: memory._id,
          kind: memory.kind,
          name: memory.name,
          metadata: memory.metadata,
          createdAt: memory.created_at,
          chunks: (chunksOf.get(memory._id) ?? []).sort((a, b) => a.index - b.index),
        });
      }
    };
    for await (const record of records as AsyncIterable<Omit<MemoryDoc, 'content'>>) {
      page.push(record);
      if (page.length >= EXPORT_PAGE) await readPage();
    }
    await readPage();

    const mentions: NewMention[] = [];
    for await (const row of graph.mentions.find({ tenant_id: tenantId, collection_id: collectionId })) {
      if (!exportedGraph.indexed(indexedCount, row.memory_id, row.chunk_index)) continue;
      spend(exportCost.mention(row.target_id));
      mentions.push({
        memoryId: row.memory_id,
        chunkIndex: row.chunk_index,
        kind: row.target_kind,
        targetId: row.target_id,
        count: row.count,
        confidence: row.confidence,
        description: row.description ?? '',
        // Rows stored before validity existed have neither field: the snapshot then records none.
        ...(row.valid_from !== undefined ? { validFrom: row.valid_from } : {}),
        ...(row.valid_to !== undefined ? { validTo: row.valid_to } : {}),
      });
    }
    const backed = new Set(mentions.map((mention) => mention.targetId));
    const entities: NewEntity[] = [];
    for await (const doc of graph.entities.find({ tenant_id: tenantId, collection_id: collectionId })) {
      if (!exportedGraph.entity(backed, doc._id)) continue;
      spend(exportCost.entity(doc.name, doc.description));
      entities.push({
        id: doc._id,
        key: doc.key,
        name: doc.name,
        category: doc.category,
        aliases: doc.aliases,
        aliasKeys: doc.alias_keys,
        description: doc.description,
        nameVector: nameVectorOf(doc),
      });
    }
    const entityIds = new Set(entities.map((entity) => entity.id));
    const facts: NewFact[] = [];
    for await (const doc of graph.facts.find({ tenant_id: tenantId, collection_id: collectionId })) {
      if (!exportedGraph.fact(backed, entityIds, { id: doc._id, subjectId: doc.subject_id, objectId: doc.object_id })) continue;
      spend(exportCost.fact(doc.description));
      facts.push({
        id: doc._id,
        subjectId: doc.subject_id,
        objectId: doc.object_id,
        predicate: doc.predicate,
        description: doc.description,
        confidence: doc.confidence,
      });
    }
    const factIds = new Set(facts.map((fact) => fact.id));
    const kept = mentions.filter((mention) => exportedGraph.mention(entityIds, factIds, mention));
    return { memories: exported, entities, facts, mentions: kept };
  }

  /**
   * Writes an imported snapshot into a new (ephemeral) collection: chunks and graph first, the
   * memory records (complete) last, then the index feed, so nothing is listed or searchable before
   * all of it is there. Plain inserts: every id is new in this scope. A failure part-way leaves rows
   * that `removeLeftoversOf` finds by collection (the caller's cleanup and the expiry sweeper use it).
   */
  async writeImport(
    scope: GraphScope,
    expiresAt: Date,
    model: string,
    memories: ImportedMemory[],
    graph: { entities: NewEntity[]; facts: NewFact[]; mentions: NewMention[] },
  ): Promise<void> {
    const now = new Date();
    for (const batch of batches(memories, IMPORT_BATCH)) {
      const chunkDocs: ChunkDoc[] = batch.flatMap((memory) =>
        memory.chunks.map((chunk) => ({
          _id: chunkId(memory.id, chunk.index),
          memory_id: memory.id,
          tenant_id: scope.tenantId,
          collection_ids: [scope.collectionId],
          index: chunk.index,
          text: chunk.text,
          source: chunk.source,
          embedding: vectorToBinary(chunk.vector),
          embedding_model: model,
        })),
      );
      if (chunkDocs.length > 0) await this.repos.chunks.collection.insertMany(chunkDocs, { ordered: false });
    }
    await this.repos.graph.insertNew(scope, graph.entities, graph.facts, graph.mentions);
    for (const batch of batches(memories, IMPORT_BATCH)) {
      await this.repos.memories.collection.insertMany(
        batch.map((memory): MemoryDoc => ({
          _id: memory.id,
          tenant_id: scope.tenantId,
          collection_ids: [scope.collectionId],
          kind: memory.kind,
          name: memory.name,
          metadata: memory.metadata,
          content: { chunks: memory.chunks.map((chunk) => chunk.text) },
          status: 'complete',
          status_message: null,
          chunk_count: memory.chunks.length,
          indexed_chunk_count: memory.chunks.length,
          embedding_model: model,
          workflow_id: `snapshot-import-${memory.id}`,
          created_at: memory.createdAt,
          updated_at: now,
          completed_at: now,
          // The collection's expiry: reads hide the memory from then on, before the sweep removes it.
          expires_at: expiresAt,
        })),
        { ordered: false },
      );
    }
    // One notice for the whole import: followers holding the collection read it again on next use.
    await this.repos.indexChanges.publishCollectionReload(scope.tenantId, scope.collectionId);
  }

  /** Memory ids of a collection, a page at a time: what the ephemeral sweeper deletes. */
  async memoryIdsOf(tenantId: string, collectionId: string, limit: number): Promise<string[]> {
    const docs = await this.repos.memories.collection
      .find({ tenant_id: tenantId, collection_ids: collectionId }, { projection: { _id: 1 }, limit })
      .toArray();
    return docs.map((doc) => doc._id);
  }

  /** Chunks and graph rows of a collection that no memory record owns (only a failed or crashed import leaves them). */
  async removeLeftoversOf(tenantId: string, collectionId: string): Promise<void> {
    await this.repos.chunks.collection.deleteMany({ tenant_id: tenantId, collection_ids: collectionId });
    const filter = { tenant_id: tenantId, collection_id: collectionId };
    await this.repos.graph.mentions.deleteMany(filter);
    await this.repos.graph.facts.deleteMany(filter);
    await this.repos.graph.entities.deleteMany(filter);
  }
}
