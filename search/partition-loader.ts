/**
 * Reads from the store into the search index's partitions (search/search-index.ts is its client,
 * and decides when and within which budget): a whole collection when it is first searched, and
 * the chunks and graph provenance of changed memories when the feed follower reports them. A
 * collection with a persisted snapshot (search/partition-snapshot.ts) has its lexical partition and
 * turn facts from it: only the vectors are read, and the memories changed since are read again.
 */
import { binaryToVector, type ChunkRepository, type StoredChunk } from '../store/chunks.js';
import type { GraphMention, GraphRepository } from '../store/graph.js';
import type { ChangedMemories, FeedSource } from './feed-follower.js';
import {
  graphEntityInfo,
  graphFactInfo,
  type GraphEntityInfo,
  type GraphFactInfo,
  type GraphIndex,
  type ProvenanceRow,
} from './graph-index.js';
import type { LexicalIndex } from './lexical-index.js';
import { turnFactsOf, type PartitionSnapshot } from './partition-snapshot.js';
import type { TurnFacts } from './turn-facts.js';
import type { VectorIndex } from './vector-index.js';

/** Concurrent chunk reads of one partition load (disjoint id ranges), see fill. */
const LOAD_READERS = 2;
/** A load calls back (for a budget check) after this many chunks per reader. */
export const LOAD_CHECK_CHUNKS = 256;
/** Index-feed changes read per query while reconciling a snapshot with the store. */
const CHANGES_PER_READ = 1000;
/** Memories re-read per store query while reconciling a snapshot with the store. */
const RECONCILE_BATCH = 500;

/** A snapshot that cannot be brought up to date (the feed lost changes since it): load from the chunks instead. */
export class SnapshotUnusable extends Error {}

/** A decoded snapshot and the index-feed seq its state was at. */
export type SeqSnapshot = PartitionSnapshot & { seq: number };

/** The in-process indexes of one search index, all partitioned by collection. */
export interface PartitionedIndexes {
  vector: VectorIndex;
  lexical: LexicalIndex;
  turns: TurnFacts;
  graph: GraphIndex;
}

/** What the loader reads from the store (narrow, so unit tests can stand in for it). */
export interface PartitionSource extends FeedSource {
  chunks: Pick<ChunkRepository, 'vectorsForCollection' | 'vectorsOnlyForCollection' | 'vectorsForMemories'>;
  graph: Pick<
    GraphRepository,
    'entitiesOfCollection' | 'factsOfCollection' | 'mentionsOfCollection' | 'mentionsOfMemories' | 'entitiesByIds' | 'factsByIds'
  >;
}

export class PartitionLoader {
  constructor(
    private readonly store: PartitionSource,
    private readonly modelId: string,
    private readonly indexes: PartitionedIndexes,
  ) {}

  /**
   * Reads a collection's chunks (in LOAD_READERS disjoint ranges) and graph into the partitions
   * just created for it. The graph's reads and the chunk reads run concurrently: while one waits
   * for its next batch from the database, another's batch is indexed. `onGrowth` runs after every
   * LOAD_CHECK_CHUNKS chunks of each reader, from its first chunk on; when it (or any read) throws,
   * the other readers stop at their next chunk and the load rejects.
   *
   * With `snapshot` (whose lexical state the caller put in `partitions.lexical`), the turn facts
   * come from it too, the texts are neither read nor tokenised, and the partitions are then
   * reconciled with the store (reconcileWithSnapshot). Returns how many memories were read again
   * for that (0 without a snapshot). Throws SnapshotUnusable when the snapshot cannot be used.
   */
  async fill(
    collectionId: string,
    partitions: { vector: ReturnType<VectorIndex['createPartition']>; lexical: ReturnType<LexicalIndex['createPartition']> },
    onGrowth?: () => void,
    snapshot?: SeqSnapshot,
  ): Promise<number> {
    if (snapshot)
      for (const { chunkId, memoryId, fact } of turnFactsOf(snapshot)) this.indexes.turns.put(collectionId, chunkId, memoryId, fact);
    let failed = false;
    const readChunks = async (index: number): Promise<void> => {
      let sinceCheck = LOAD_CHECK_CHUNKS - 1;
      const part = { index, of: LOAD_READERS };
      const chunks: AsyncIterable<
        Pick<StoredChunk, 'id' | 'memory_id' | 'embedding'> & Partial<Pick<StoredChunk, 'text' | 'occurred_at'>>
      > = snapshot
        ? this.store.chunks.vectorsOnlyForCollection(collectionId, this.modelId, part)
        : this.store.chunks.vectorsForCollection(collectionId, this.modelId, part);
      for await (const chunk of chunks) {
        if (failed) return;
        if (!chunk.embedding) continue;
        partitions.vector.upsertBytes(chunk.id, chunk.memory_id, chunk.embedding.buffer);
        if (chunk.text !== undefined) {
          partitions.lexical.upsert(chunk.id, chunk.memory_id, chunk.text);
          this.indexes.turns.upsert(collectionId, chunk.id, chunk.memory_id, chunk.text, chunk.occurred_at);
        }
        if (onGrowth && ++sinceCheck >= LOAD_CHECK_CHUNKS) {
          sinceCheck = 0;
          onGrowth();
        }
      }
    };
    const readers = Array.from({ length: LOAD_READERS }, (_, index) => readChunks(index));
    await Promise.all([...readers, this.loadGraph(collectionId)]).catch((error: unknown) => {
      failed = true;
      throw error;
    });
    return snapshot ? this.reconcileWithSnapshot(collectionId, snapshot.seq) : 0;
  }

  /**
   * Brings a partition whose lexical part came from a snapshot (at `seq`) up to the store: every
   * memory the feed names after `seq`, and every memory whose chunks the vector read and the
   * snapshot disagree on, is read again (as the follower applies a change). Returns how many
   * memories were. Throws SnapshotUnusable when the feed no longer holds every change since `seq`.
   */
  private async reconcileWithSnapshot(collectionId: string, seq: number): Promise<number> {
    const log = this.store.indexChanges.log;
    const changed = new Set<string>();
    let after = seq;
    for (;;) {
      const changes = await log.readAfter(after, CHANGES_PER_READ);
      if (after === seq && (changes.length > 0 ? changes[0]!.seq > seq + 1 : (await log.latestSeq()) > seq))
        throw new SnapshotUnusable(`the index feed no longer holds seq ${seq + 1}`);
      for (const change of changes) if (change.memory_id) changed.add(change.memory_id);
      if (changes.length < CHANGES_PER_READ) break;
      after = changes[changes.length - 1]!.seq;
    }
    const vectors = this.indexes.vector.partition(collectionId);
    const lexical = this.indexes.lexical.partition(collectionId);
    if (!vectors || !lexical) return 0;
    for (const [chunkId, memoryId] of vectors.entries()) if (lexical.memoryOfChunk(chunkId) !== memoryId) changed.add(memoryId);
    for (const [chunkId, memoryId] of lexical.entries()) if (!vectors.hasChunk(chunkId)) changed.add(memoryId);
    const memoryIds = [...changed];
    for (let from = 0; from < memoryIds.length; from += RECONCILE_BATCH)
      await this.applyUpserts(new Map(memoryIds.slice(from, from + RECONCILE_BATCH).map((id) => [id, null])));
    if (vectors.size !== lexical.size)
      throw new SnapshotUnusable(`${vectors.size} vectors but ${lexical.size} lexical chunks after reconciling`);
    return memoryIds.length;
  }

  private async loadGraph(collectionId: string): Promise<void> {
    const partition = this.indexes.graph.createPartition(collectionId);
    const entities = new Map<string, GraphEntityInfo>();
    for await (const entity of this.store.graph.entitiesOfCollection(collectionId)) entities.set(entity.id, graphEntityInfo(entity));
    const facts = new Map<string, GraphFactInfo>();
    for await (const fact of this.store.graph.factsOfCollection(collectionId)) facts.set(fact.id, graphFactInfo(fact));
    const rowsByMemory = new Map<string, ProvenanceRow[]>();
    for await (const row of this.store.graph.mentionsOfCollection(collectionId)) {
      let rows = rowsByMemory.get(row.memory_id);
      if (!rows) rowsByMemory.set(row.memory_id, (rows = []));
      rows.push(provenanceRowOf(row));
    }
    for (const [memoryId, rows] of rowsByMemory) partition.setMemory(memoryId, rows, entities, facts);
  }

  /** Removes a memory's chunks from every chunk index (its graph provenance stays). */
  removeMemoryChunks(memoryId: string): void {
    this.indexes.vector.removeMemory(memoryId);
    this.indexes.lexical.removeMemory(memoryId);
    this.indexes.turns.removeMemory(memoryId);
  }

  /**
   * Re-reads changed memories' graph provenance and chunks into the loaded partitions: only those
   * in a loaded partition (by their notices) are read from the store; the others just leave
   * whatever partition held them before.
   */
  async applyUpserts(upserts: ChangedMemories): Promise<void> {
    const { vector, lexical, turns } = this.indexes;
    const loaded = new Set(vector.loadedCollections());
    if (upserts.size === 0 || loaded.size === 0) return;
    const memoryIds: string[] = [];
    for (const [memoryId, collections] of upserts) {
      if (collections === null || [...collections].some((id) => loaded.has(id))) memoryIds.push(memoryId);
      else {
        this.removeMemoryChunks(memoryId);
        this.indexes.graph.removeMemory(memoryId);
      }
    }
    if (memoryIds.length === 0) return;
    await this.applyGraphUpserts(memoryIds, loaded);
    const chunks = await this.store.chunks.vectorsForMemories(memoryIds, this.modelId);
    // Replace, not merge: the memory's chunk set or collections may have changed. Only the chunk
    // indexes: the graph partitions were just replaced by applyGraphUpserts, and removing the
    // memory there too would drop the provenance it just read (every memory completed after a
    // collection's first search then lost its graph signal in this process).
    for (const memoryId of memoryIds) this.removeMemoryChunks(memoryId);
    for (const chunk of chunks) {
      if (!chunk.embedding) continue;
      const embedding = binaryToVector(chunk.embedding);
      for (const collectionId of chunk.collection_ids) {
        vector.partition(collectionId)?.upsert(chunk.id, chunk.memory_id, embedding);
        lexical.partition(collectionId)?.upsert(chunk.id, chunk.memory_id, chunk.text);
        turns.upsert(collectionId, chunk.id, chunk.memory_id, chunk.text, chunk.occurred_at);
      }
    }
  }

  /** Re-reads the graph provenance of changed memories (and what it names) into the loaded partitions. */
  private async applyGraphUpserts(memoryIds: string[], loaded: ReadonlySet<string>): Promise<void> {
    const rows = (await this.store.graph.mentionsOfMemories(memoryIds)).filter((row) => loaded.has(row.collection_id));
    const entityIds = [...new Set(rows.filter((row) => row.target_kind === 'entity').map((row) => row.target_id))];
    const factIds = [...new Set(rows.filter((row) => row.target_kind === 'fact').map((row) => row.target_id))];
    const [entities, facts] = await Promise.all([this.store.graph.entitiesByIds(entityIds), this.store.graph.factsByIds(factIds)]);
    const entityInfos = new Map(entities.map((entity) => [entity.id, graphEntityInfo(entity)]));
    const factInfos = new Map(facts.map((fact) => [fact.id, graphFactInfo(fact)]));
    const grouped = new Map<string, ProvenanceRow[]>();
    for (const row of rows) {
      const key = `${row.collection_id}\n${row.memory_id}`;
      let own = grouped.get(key);
      if (!own) grouped.set(key, (own = []));
      own.push(provenanceRowOf(row));
    }
    // Every loaded partition is told, so one the memory left (or that lost its graph) drops it.
    for (const memoryId of memoryIds) {
      for (const collectionId of loaded) {
        this.indexes.graph
          .partition(collectionId)
          ?.setMemory(memoryId, grouped.get(`${collectionId}\n${memoryId}`) ?? [], entityInfos, factInfos);
      }
    }
  }
}

/** A stored provenance row as the partition keeps it; facts carry their validity (absent on old rows). */
const provenanceRowOf = (
  row: Pick<GraphMention, 'target_id' | 'chunk_index' | 'count' | 'description' | 'valid_from' | 'valid_to'>,
): ProvenanceRow => ({
  targetId: row.target_id,
  chunkIndex: row.chunk_index,
  count: row.count,
  description: row.description ?? '',
  ...(row.valid_from !== undefined || row.valid_to !== undefined
    ? { validFrom: row.valid_from ?? null, validTo: row.valid_to ?? null }
    : {}),
});
