/**
 * The persisted snapshots of collections' partitions (search/partition-snapshot.ts is their
 * format, store/index-snapshots.ts keeps them), for the search index (search/search-index.ts is
 * its client, and decides when a collection is loaded and within which budget): a load reads the
 * collection's snapshot and builds its partitions from it, and a load that tokenised everything
 * (or re-read much) leaves a fresh one, written in the background.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from '../core/logger.js';
import type { ChunkRepository } from '../store/chunks.js';
import { IndexSnapshotChanged, type IndexSnapshotRepository } from '../store/index-snapshots.js';
import type { FeedSource } from './feed-follower.js';
import { GraphPartition } from './graph-index.js';
import { LexicalPartition } from './lexical-partition.js';
import type { PartitionedIndexes, SeqSnapshot } from './partition-loader.js';
import {
  encodePartitionSnapshot,
  SNAPSHOT_FORMAT,
  streamPartitionSnapshot,
  turnColumns,
  vectorColumns,
  vectorIdsOf,
} from './partition-snapshot.js';
import type { Partition as VectorPartition } from './vector-index.js';

/** Collections smaller than this load fast enough from their chunks: no snapshot is written (SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS). */
const SNAPSHOT_MIN_CHUNKS = 2000;
/** A load from a snapshot that had to re-read more than this share of chunks writes a fresh one. */
const SNAPSHOT_STALE_FRACTION = 0.1;

/** What the keeper reads and writes in the store: the snapshots, the chunk count and owner, and the feed's removes. */
export type SnapshotStore = FeedSource & {
  chunks: Pick<ChunkRepository, 'tenantOfCollection' | 'countForCollection'>;
  indexSnapshots: Pick<IndexSnapshotRepository, 'read' | 'write' | 'removeGeneration'>;
};

/** When snapshots are written and read (SearchIndexOptions). */
export interface SnapshotOptions {
  snapshotMinChunks?: number;
  snapshotReads?: boolean;
}

/** What the keeper asks of the index before writing a snapshot: the feed applied, and up to which seq. */
export interface SnapshotClient {
  catchUp(): Promise<void>;
  appliedSeq(): number;
}

/** A collection's partitions, built whole from its snapshot. */
export interface SnapshotPartitions {
  vector: VectorPartition;
  lexical: LexicalPartition;
  graph: GraphPartition;
}

/**
 * Whether a load of `chunks` chunks leaves a snapshot for the next one: a load that tokenised
 * everything (not from a snapshot), or re-read much, of a collection of at least `minChunks`.
 */
export function snapshotWanted(chunks: number, minChunks: number, fromSnapshot: boolean, reread: number): boolean {
  return chunks >= minChunks && (!fromSnapshot || reread > chunks * SNAPSHOT_STALE_FRACTION);
}

export class SnapshotKeeper {
  private readonly snapshotMinChunks: number;
  private readonly snapshotReads: boolean;
  /** Snapshots being written, by collection. */
  private readonly persisting = new Map<string, Promise<void>>();

  constructor(
    private readonly store: SnapshotStore,
    private readonly modelId: string,
    private readonly indexes: PartitionedIndexes,
    private readonly client: SnapshotClient,
    private readonly logger: Logger,
    options: SnapshotOptions = {},
  ) {
    this.snapshotMinChunks = options.snapshotMinChunks ?? SNAPSHOT_MIN_CHUNKS;
    this.snapshotReads = options.snapshotReads ?? true;
  }

  /**
   * The collection's persisted partitions, if one of this code's format exists and decodes.
   * `check`: called with a snapshot's size before its parts are read; it refuses (throws) one too
   * large for the budget.
   */
  async read(collectionId: string, check?: (bytes: number) => void): Promise<SeqSnapshot | null> {
    if (this.snapshotMinChunks === Infinity || !this.snapshotReads) return null;
    let storedChunks: Promise<number> | undefined;
    const stored = await this.store.indexSnapshots.read(collectionId, this.modelId, (head) => {
      if (head.format !== SNAPSHOT_FORMAT) return false;
      // Its size is known from the head: a load that cannot fit is refused before its parts are read.
      check?.(head.bytes);
      // The count the reconciliation needs, taken in the store while the parts are read and built
      // (at 100k chunks it cost 0.2-1 s of waiting after the build on the embedded store).
      storedChunks = this.store.chunks.countForCollection(collectionId, this.modelId);
      // Unused when the snapshot then fails to decode: its failure must not go unhandled.
      storedChunks.catch(() => undefined);
      return true;
    });
    // `wanted` above turned away any other format before a part was read.
    if (!stored) return null;
    try {
      // The vector partition is built as the parts are read: each part of rows is copied in and let go.
      const { rows, ...snapshot } = await streamPartitionSnapshot(stored.parts, stored.byteLength, (lead) => {
        if (lead.vectors.dimensions !== this.indexes.vector.dimensions)
          throw new Error(`index snapshot: ${lead.vectors.dimensions} dimensions, index has ${this.indexes.vector.dimensions}`);
        const { chunkIds, memoryIds } = vectorIdsOf(lead);
        return this.indexes.vector.partitionReceivingRows(chunkIds, memoryIds);
      });
      return {
        ...snapshot,
        vector: rows.partition,
        seq: stored.seq,
        bytes: stored.byteLength,
        ...(storedChunks ? { storedChunks } : {}),
      };
    } catch (error) {
      // Replaced while read: the newer one is read by the next load.
      if (error instanceof IndexSnapshotChanged) return null;
      this.logger.warn({ collectionId, err: error }, 'index snapshot unreadable: loading from the chunks');
      return null;
    }
  }

  /** The lexical and graph partitions of a snapshot `read` returned, and its vector partition (none set in the indexes yet). */
  async partitionsOf(snapshot: SeqSnapshot): Promise<SnapshotPartitions> {
    // Each built whole from the snapshot's bytes (no chunk or graph document is read), one per
    // event-loop turn so that no single step holds the loop for the whole load.
    await nextTurn();
    const lexical = LexicalPartition.fromState(snapshot.lexical);
    await nextTurn();
    return { vector: snapshot.vector, lexical, graph: GraphPartition.fromState(snapshot.graph, snapshot.lexical) };
  }

  /** A collection of `chunks` chunks was loaded: a load that tokenised everything (or re-read much) leaves a snapshot for the next one. */
  loaded(collectionId: string, chunks: number, fromSnapshot: boolean, reread: number): void {
    if (snapshotWanted(chunks, this.snapshotMinChunks, fromSnapshot, reread)) this.persistSoon(collectionId);
  }

  /** Writes the collection's snapshot in the background, one writer per collection at a time. */
  private persistSoon(collectionId: string): void {
    if (this.persisting.has(collectionId)) return;
    const write = this.persist(collectionId)
      .catch((error: unknown) => this.logger.warn({ collectionId, err: error }, 'index snapshot not written'))
      .finally(() => this.persisting.delete(collectionId));
    this.persisting.set(collectionId, write);
  }

  /** Resolves once the snapshots being written are (for tests and the bench). */
  async written(): Promise<void> {
    await Promise.all(this.persisting.values());
  }

  private async persist(collectionId: string): Promise<void> {
    const tenantId = await this.store.chunks.tenantOfCollection(collectionId);
    if (!tenantId) return;
    await this.client.catchUp();
    // From here to the encoding nothing awaits: the state is the feed applied up to `seq`.
    const seq = this.client.appliedSeq();
    const lexical = this.indexes.lexical.partition(collectionId);
    const vectors = this.indexes.vector.partition(collectionId);
    const graph = this.indexes.graph.partition(collectionId);
    if (!lexical || !vectors || !graph) return;
    const state = lexical.exportState();
    const turns = turnColumns(state.chunkIds, (chunkId) => this.indexes.turns.factOf(collectionId, chunkId));
    const bytes = encodePartitionSnapshot({
      lexical: state,
      turns,
      vectors: vectorColumns(this.indexes.vector.dimensions, state.chunkIds, vectors.exportRows()),
      graph: graph.exportState(),
    });
    const generation = await this.store.indexSnapshots.write(
      { tenantId, collectionId, model: this.modelId, format: SNAPSHOT_FORMAT, seq, chunks: state.chunkIds.length },
      bytes,
    );
    // A memory of the tenant deleted since `seq` may be in it, and its delete may have swept the
    // tenant's snapshots before this one existed: drop it then (store/memory-purge.ts).
    const removes = await this.store.indexChanges.log.readAfter(seq, 1, { op: 'remove', tenant_id: tenantId });
    if (removes.length > 0) await this.store.indexSnapshots.removeGeneration(collectionId, this.modelId, generation);
    else this.logger.debug({ collectionId, seq, bytes: bytes.byteLength }, 'index snapshot written');
  }
}
