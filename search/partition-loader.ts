/**
 * Reads from the store into the search index's partitions (search/search-index.ts is its client,
 * and decides when and within which budget): a whole collection when it is first searched, and
 * the chunks and graph provenance of changed memories when the feed follower reports them. A
 * collection with a persisted snapshot (search/partition-snapshot.ts) has all its partitions from
 * it: nothing of its chunks or graph is read but the memories the feed names since, and a count of
 * its chunks that must agree.
 */
import { binaryToVector, type ChunkRepository } from '../store/chunks.js';
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
import { turnFactsOf, type PartitionSnapshot, type SnapshotLead } from './partition-snapshot.js';
import type { TurnFacts } from './turn-facts.js';
import type { Partition as VectorPartition, VectorIndex } from './vector-index.js';

/** Concurrent chunk reads of one partition load (disjoint id ranges), see fill. */
const LOAD_READERS = 2;
/** A load calls back (for a budget check) after this many chunks per reader. */
export const LOAD_CHECK_CHUNKS = 256;
/** Index-feed changes read per query while reconciling a snapshot with the store. */
const CHANGES_PER_READ = 1000;
/** Memories re-read per store query while reconciling a snapshot with the store. */
const RECONCILE_BATCH = 500;
/** Rounds of (count the chunks, apply the feed) before a snapshot that still disagrees is given up. */
const RECONCILE_ROUNDS = 3;

/** A snapshot that cannot be brought up to date (the feed lost changes since it): load from the chunks instead. */
export class SnapshotUnusable extends Error {}

/** A decoded snapshot, the index-feed seq its state was at, and its size in bytes (about what its partitions hold). */
export type SeqSnapshot = SnapshotLead &
  Pick<PartitionSnapshot, 'graph'> & {
    /** Its vector partition, built as its parts were read. */
    vector: VectorPartition;
    seq: number;
    bytes: number;
    /** The collection's chunks counted in the store, started before the feed after `seq` is read (the first reconciliation round's count). */
    storedChunks?: Promise<number>;
  };

/** The in-process indexes of one search index, all partitioned by collection. */
export interface PartitionedIndexes {
  vector: VectorIndex;
  lexical: LexicalIndex;
  turns: TurnFacts;
  graph: GraphIndex;
}

/** What the loader reads from the store (narrow, so unit tests can stand in for it). */
export interface PartitionSource extends FeedSource {
  chunks: Pick<ChunkRepository, 'vectorsForCollection' | 'vectorsForMemories' | 'countForCollection'>;
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
   * With `snapshot` (whose vector, lexical and graph state the caller put in the partitions), the
   * turn facts come from it too, nothing of the collection is read, and the partitions are then
   * reconciled with the store (reconcileWithSnapshot). Returns how many memories were read again
   * for that (0 without a snapshot). Throws SnapshotUnusable when the snapshot cannot be used.
   */
  async fill(
    collectionId: string,
    partitions: { vector: ReturnType<VectorIndex['createPartition']>; lexical: ReturnType<LexicalIndex['createPartition']> },
    onGrowth?: () => void,
    snapshot?: SeqSnapshot,
  ): Promise<number> {
    if (snapshot) {
      for (const { chunkId, memoryId, fact } of turnFactsOf(snapshot)) this.indexes.turns.put(collectionId, chunkId, memoryId, fact);
      return this.reconcileWithSnapshot(collectionId, snapshot.seq, snapshot.storedChunks);
    }
    let failed = false;
    const readChunks = async (index: number): Promise<void> => {
      let sinceCheck = LOAD_CHECK_CHUNKS - 1;
      const part = { index, of: LOAD_READERS };
      for await (const chunk of this.store.chunks.vectorsForCollection(collectionId, this.modelId, part)) {
        if (failed) return;
        if (!chunk.embedding) continue;
        partitions.vector.upsertBytes(chunk.id, chunk.memory_id, chunk.embedding.buffer);
        partitions.lexical.upsert(chunk.id, chunk.memory_id, chunk.text);
        this.indexes.turns.upsert(collectionId, chunk.id, chunk.memory_id, chunk.text, chunk.occurred_at);
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
    return 0;
  }

  /**
   * Brings partitions that came from a snapshot (at `seq`) up to the store: every memory the feed
   * names after `seq` is read again (as the follower applies a change), and the collection's chunks
   * are counted in the store, which the partitions must then agree with. Returns how many memories
   * were read. Throws SnapshotUnusable when the feed no longer holds every change since `seq`, when
   * it names a bulk change of the collection since (an import, a drop: only a full read can follow
   * those), or when the count still disagrees after RECONCILE_ROUNDS rounds.
   */
  private async reconcileWithSnapshot(collectionId: string, seq: number, firstCount?: Promise<number>): Promise<number> {
    const log = this.store.indexChanges.log;
    const [first] = await log.readAfter(seq, 1);
    if (first ? first.seq > seq + 1 : (await log.latestSeq()) > seq)
      throw new SnapshotUnusable(`the index feed no longer holds seq ${seq + 1}`);
    let after = seq;
    let reread = 0;
    for (let round = 0; round < RECONCILE_ROUNDS; round++) {
      // Counted before the feed is read: a memory written meanwhile makes the two disagree for a
      // round (its notice not read yet, or read but its chunks not counted), and the next agrees.
      // A count started earlier (while the snapshot was read) is still one taken before this read.
      const stored = await (round === 0 && firstCount ? firstCount : this.store.chunks.countForCollection(collectionId, this.modelId));
      const changed = new Set<string>();
      for (;;) {
        const changes = await log.readAfter(after, CHANGES_PER_READ);
        for (const change of changes) {
          if (change.memory_id) changed.add(change.memory_id);
          else if (change.collection_id === collectionId) throw new SnapshotUnusable(`the collection had a ${change.op} since seq ${seq}`);
        }
        if (changes.length > 0) after = changes[changes.length - 1]!.seq;
        if (changes.length < CHANGES_PER_READ) break;
      }
      const memoryIds = [...changed];
      for (let from = 0; from < memoryIds.length; from += RECONCILE_BATCH)
        await this.applyUpserts(new Map(memoryIds.slice(from, from + RECONCILE_BATCH).map((id) => [id, null])));
      reread += memoryIds.length;
      const vectors = this.indexes.vector.partition(collectionId);
      const lexical = this.indexes.lexical.partition(collectionId);
      // Dropped meanwhile (its collection went): nothing left to reconcile.
      if (!vectors || !lexical) return reread;
      if (vectors.size === lexical.size && vectors.size === stored) return reread;
      if (round === RECONCILE_ROUNDS - 1)
        throw new SnapshotUnusable(`${vectors.size} vectors and ${lexical.size} lexical chunks, but ${stored} chunks stored`);
    }
    return reread;
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

  /**
   * Re-reads entities' and facts' records into the graph partitions that hold them (a delete may
   * have renamed or redescribed them); those no partition holds any more are not read.
   */
  async refreshGraphRecords(targetIds: Iterable<string>): Promise<void> {
    const ids = [...targetIds];
    const entityIds = ids.filter((id) => this.indexes.graph.holdsEntity(id));
    const factIds = ids.filter((id) => this.indexes.graph.holdsFact(id));
    if (entityIds.length === 0 && factIds.length === 0) return;
    const [entities, facts] = await Promise.all([
      entityIds.length > 0 ? this.store.graph.entitiesByIds(entityIds) : [],
      factIds.length > 0 ? this.store.graph.factsByIds(factIds) : [],
    ]);
    this.indexes.graph.refreshRecords(entities.map(graphEntityInfo), facts.map(graphFactInfo));
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
    // Entities a memory named before and no longer does (it was deleted, or rewritten): a delete may
    // have taken names from them, so the ones still held are read again below.
    const formerly = new Set(
      memoryIds.flatMap((memoryId) => this.indexes.graph.entityIdsOf(memoryId)).filter((id) => !entityInfos.has(id)),
    );
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
    await this.refreshGraphRecords(formerly);
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
