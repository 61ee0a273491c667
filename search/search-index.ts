/**
 * Keeps this process's VectorIndex and LexicalIndex consistent with MongoDB (both are filled from
 * the same chunk reads and follow the same feed, so they always hold the same chunks). Partitions are loaded lazily, the
 * first time a collection is searched (search/partition-loader.ts reads them, from the collection's
 * persisted snapshot where search/snapshot-keeper.ts has one, which it writes too), and then kept
 * current by following the sequenced index-change feed (search/feed-follower.ts): in the
 * background, and once more before every search, so a memory whose status is `complete` is always
 * visible to the next search (read-your-writes across processes), and a deleted one never is.
 * This module decides what is loaded and when: the budget, holds and eviction (by the sizes
 * search/partition-sizes.ts estimates).
 */
import type { Logger } from '../core/logger.js';
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import type { FactTimeline } from '../core/fact-timeline.js';
import { FeedFollower, type FeedClient, type FeedSource } from './feed-follower.js';
import { GraphIndex, type GraphMatch } from './graph-index.js';
import { LexicalIndex } from './lexical-index.js';
import type { LexicalHit, LexicalQueryStats, QueryTermMatch } from './lexical-partition.js';
import { TurnFacts } from './turn-facts.js';
import type { TurnSource } from './turn-ranking.js';
import { PartitionBudget } from './partition-budget.js';
import { PartitionLoader, SnapshotUnusable, type PartitionedIndexes, type PartitionSource } from './partition-loader.js';
import { indexSizes, loadedChunkCount, partitionBytes, type IndexSize } from './partition-sizes.js';
import { SnapshotKeeper, type SnapshotPartitions, type SnapshotStore } from './snapshot-keeper.js';
import { VectorIndex, type Partition as VectorPartition, type VectorHit } from './vector-index.js';

/** Collections whose last measured size is remembered, to refuse a reload that cannot fit. */
const KNOWN_SIZES = 10_000;

/** What the index reads from the store: the feed, chunks, graph and snapshots (narrow, so unit tests can stand in for it). */
export type SearchIndexStore = FeedSource & PartitionSource & SnapshotStore;

export interface SearchIndexOptions {
  /**
   * Memory budget of the loaded partitions (SEARCH_INDEX_MAX_BYTES). Past it, whole collections
   * are evicted (the tenant furthest over its fair share first, then least recently searched), and
   * reloaded from MongoDB when next searched. The partitions running searches hold cannot be
   * evicted, so a load that would take them past the budget is refused (IndexBudgetError).
   * Infinity: no eviction.
   */
  maxBytes?: number;
  /**
   * Collections of at least this many chunks get a persisted snapshot of their partitions after a load that
   * tokenised them, and load from it next time (store/index-snapshots.ts). Infinity: never.
   */
  snapshotMinChunks?: number;
  /** false: never load from a snapshot (still write them); the bench's tokenising baseline. */
  snapshotReads?: boolean;
}

/**
 * A search's partitions do not fit the budget. `exceeded`: its own collections alone need more
 * than the whole budget (retrying cannot help). `exhausted`: other running searches pin the
 * rest of it (retry shortly).
 */
export class IndexBudgetError extends Error {
  constructor(
    readonly kind: 'exceeded' | 'exhausted',
    readonly neededBytes: number,
    readonly maxBytes: number,
  ) {
    super(`index budget ${kind}: ${neededBytes} of ${maxBytes} bytes`);
    this.name = 'IndexBudgetError';
  }
}

/** Thrown inside a load that would pin more than the budget; `prepare` classifies it. */
class OverBudget extends Error {
  constructor(readonly pinned: ReadonlyMap<string, number>) {
    super('partition load over the index budget');
  }
}

export interface IndexBudgetStats {
  maxBytes: number;
  bytes: number;
  collections: number;
  /** Entries held beside the partitions under the same budget (prepared device snapshots). */
  residents: number;
  evictions: number;
  loads: number;
  /** Of `loads`, those whose partitions came from a persisted snapshot. */
  snapshotLoads: number;
}

export class SearchIndex {
  private readonly index: VectorIndex;
  private readonly lexical = new LexicalIndex();
  private readonly turns = new TurnFacts();
  private readonly graph = new GraphIndex();
  /** The four above, as the loader and the size estimates read them. */
  private readonly indexes: PartitionedIndexes;
  private readonly loading = new Map<string, Promise<void>>();
  private readonly loader: PartitionLoader;
  private readonly follower: FeedFollower;
  private readonly snapshots: SnapshotKeeper;
  private readonly budget: PartitionBudget;
  private evictions = 0;
  private loads = 0;
  private snapshotLoads = 0;
  /** Last measured bytes of collections (loaded, evicted or aborted), oldest first. */
  private readonly knownBytes = new Map<string, number>();
  /**
   * What is held beside the collections' partitions under the same budget: prepared device
   * snapshots (snapshot/prepared-cache.ts). The budget evicts them like partitions, by their
   * tenant's share and recency; `drop` tells their holder.
   */
  private readonly residents = new Map<string, { bytes: number; drop: () => void }>();

  constructor(
    store: SearchIndexStore,
    modelId: string,
    dimensions: number,
    private readonly logger: Logger,
    options: SearchIndexOptions = {},
  ) {
    this.index = new VectorIndex(dimensions);
    this.budget = new PartitionBudget(options.maxBytes ?? Infinity);
    this.indexes = { vector: this.index, lexical: this.lexical, turns: this.turns, graph: this.graph };
    this.loader = new PartitionLoader(store, modelId, this.indexes);
    this.follower = new FeedFollower(store, this.feedClient(), logger);
    const client = { catchUp: () => this.catchUp(), appliedSeq: () => this.follower.appliedSeq };
    this.snapshots = new SnapshotKeeper(store, modelId, this.indexes, client, logger, options);
  }

  start(): Promise<void> {
    return this.follower.start();
  }

  /** Stops following the feed; resolves once a pull in flight has finished (before the store closes). */
  async stop(): Promise<void> {
    await this.follower.stop();
    await this.snapshotsWritten();
  }

  /** Applies every change published so far. Concurrent callers share one queued pull. */
  catchUp(): Promise<void> {
    return this.follower.catchUp();
  }

  /** How the feed's changes reach the partitions. */
  private feedClient(): FeedClient {
    return {
      removeMemory: (memoryId) => this.removeMemory(memoryId),
      refreshGraphRecords: (targetIds) => this.loader.refreshGraphRecords(targetIds),
      applyUpserts: (upserts) => this.loader.applyUpserts(upserts),
      // A removed collection's partitions go, even one a search holds or a load is filling: the
      // collection and every memory of it are gone (its expiry publishes this one notice, not
      // one per memory), so nothing of them may stay in this process.
      dropCollections: (collectionIds) => {
        for (const collectionId of collectionIds) {
          if (!this.index.partition(collectionId)) continue;
          this.dropPartition(collectionId);
          this.logger.debug({ collectionId }, 'index partition dropped (collection removed)');
        }
      },
      reloadCollections: (collectionIds) => this.reloadLater(collectionIds.filter((id) => this.index.partition(id))),
      afterBatch: (upserts) => {
        if (upserts > 0) this.enforceBudget();
      },
      reloadAfterGap: async ({ lastSeq, oldest, newest }) => {
        const collections = this.index.loadedCollections();
        this.logger.warn(
          { lastSeq, oldest, newest, collections: collections.length },
          'index feed gap: partitions are read again on their next search',
        );
        await this.reloadLater(collections);
      },
    };
  }

  /**
   * Partitions that may no longer match the store (after a feed gap, or a bulk change of their
   * collection) are dropped, and read again by their next search, which loads them within the
   * index budget like any first load; their last size is remembered for its pre-check. Those a
   * search holds or a load is filling right now are read again at once instead: that search is
   * waiting for this catch-up, and they were admitted within the budget already.
   */
  private async reloadLater(collectionIds: string[]): Promise<void> {
    const inUse: string[] = [];
    for (const collectionId of collectionIds) {
      if (this.budget.isHeld(collectionId) || this.loading.has(collectionId)) inUse.push(collectionId);
      else this.rememberBytes(collectionId, this.partitionBytes(collectionId));
      this.dropPartition(collectionId);
    }
    // Must not wait for a catch-up: this runs inside one (waiting for it here hung every later search).
    await Promise.all(inUse.map((collectionId) => this.trackLoad(collectionId, this.fillPartition(collectionId, false))));
  }

  /**
   * Loads the collections' partitions if needed and applies every published change: call before
   * searching. The partitions are held (never evicted) from this call until `release` with the
   * same ids, which the caller must make once its searches are done, whether this resolved or not.
   * Rejects with IndexBudgetError when loading them would pin more than the budget: before any
   * read when their last known sizes already tell, else as soon as a load crosses it. Missing
   * collections are loaded one after the other, so a refused search has loaded little.
   */
  async prepare(collectionIds: string[], tenantId?: string): Promise<void> {
    const unique = [...new Set(collectionIds)];
    for (const collectionId of unique) this.budget.hold(collectionId, tenantId);
    if (Number.isFinite(this.budget.maxBytes)) {
      const missing = unique.filter((id) => !this.index.partition(id) && !this.loading.has(id));
      const expected = missing.reduce((sum, id) => sum + (this.knownBytes.get(id) ?? 0), 0);
      if (expected > 0) {
        const sizes = this.loadedSizes();
        const pinned = this.budget.pinnedBytes(sizes, (id) => this.loading.has(id));
        if (pinned + expected > this.budget.maxBytes) throw this.refusal(unique, sizes, missing);
      }
    }
    try {
      for (const collectionId of unique) await this.ensureLoaded(collectionId);
    } catch (error) {
      if (error instanceof OverBudget) throw this.refusal(unique, error.pinned, []);
      throw error;
    }
    await this.catchUp();
  }

  /** Classifies a refused search: does it need more than the whole budget by itself? */
  private refusal(collectionIds: string[], sizes: ReadonlyMap<string, number>, missing: string[]): IndexBudgetError {
    let own = 0;
    for (const id of collectionIds) own += sizes.get(id) ?? 0;
    for (const id of missing) own += this.knownBytes.get(id) ?? 0;
    const max = this.budget.maxBytes;
    return new IndexBudgetError(own > max ? 'exceeded' : 'exhausted', own, max);
  }

  private loadedSizes(): Map<string, number> {
    const sizes = new Map(this.index.loadedCollections().map((id) => [id, this.partitionBytes(id)]));
    for (const [key, resident] of this.residents) sizes.set(key, resident.bytes);
    return sizes;
  }

  /**
   * Holds `bytes` of `tenantId`'s under the budget as one more evictable entry, keyed apart from
   * collection ids (which are UUIDs). Evicting it calls `drop`. False when it does not fit: it was
   * evicted at once (`drop` was called) and is not held.
   */
  admitResident(key: string, tenantId: string, bytes: number, drop: () => void): boolean {
    this.residents.set(key, { bytes, drop });
    this.budget.touch(key, tenantId);
    this.enforceBudget();
    return this.residents.has(key);
  }

  /** A resident was just used: it becomes the last of its tenant's to go. */
  touchResident(key: string, tenantId: string): void {
    if (this.residents.has(key)) this.budget.touch(key, tenantId);
  }

  /** A resident's size changed (it prepared more); evicts for room as an admission does. False when it was evicted. */
  resizeResident(key: string, bytes: number): boolean {
    const resident = this.residents.get(key);
    if (!resident) return false;
    resident.bytes = bytes;
    this.enforceBudget();
    return this.residents.has(key);
  }

  /** Its holder let it go (without `drop` being called). */
  removeResident(key: string): void {
    if (this.residents.delete(key)) this.budget.forget(key);
  }

  private rememberBytes(collectionId: string, bytes: number): void {
    this.knownBytes.delete(collectionId);
    this.knownBytes.set(collectionId, bytes);
    if (this.knownBytes.size > KNOWN_SIZES) this.knownBytes.delete(this.knownBytes.keys().next().value!);
  }

  /**
   * Called as a load grows: evicts what may be evicted to make room, and throws OverBudget when
   * the partitions are past the budget anyway: pinned ones (held or loading, this one included),
   * or those of other tenants within their fair share that are in use (see PartitionBudget).
   */
  private checkLoad(collectionId: string, expectedBytes = 0): void {
    if (!Number.isFinite(this.budget.maxBytes)) return;
    const sizes = this.loadedSizes();
    // A load about to build its partitions at once (from a snapshot) counts what they will hold.
    if (expectedBytes > (sizes.get(collectionId) ?? 0)) sizes.set(collectionId, expectedBytes);
    const busy = (id: string): boolean => id === collectionId || this.loading.has(id);
    if (this.budget.pinnedBytes(sizes, busy) > this.budget.maxBytes) throw new OverBudget(sizes);
    if (this.enforceBudget(sizes, busy) > this.budget.maxBytes) throw new OverBudget(sizes);
  }

  /** Ends the hold `prepare` took; partitions over the budget may be evicted now. */
  release(collectionIds: string[]): void {
    for (const collectionId of new Set(collectionIds)) this.budget.release(collectionId);
    this.enforceBudget();
  }

  /** Estimated bytes of one collection's partitions (search/partition-sizes.ts). */
  partitionBytes(collectionId: string): number {
    return partitionBytes(this.indexes, collectionId);
  }

  /** Bytes held by every loaded partition and resident (the figure the budget bounds). */
  totalBytes(): number {
    let total = 0;
    for (const bytes of this.loadedSizes().values()) total += bytes;
    return total;
  }

  budgetStats(): IndexBudgetStats {
    return {
      maxBytes: this.budget.maxBytes,
      bytes: this.totalBytes(),
      collections: this.index.loadedCollections().length,
      residents: this.residents.size,
      evictions: this.evictions,
      loads: this.loads,
      snapshotLoads: this.snapshotLoads,
    };
  }

  /**
   * Evicts whole collections (in PartitionBudget's order) until the loaded partitions fit the
   * budget, and returns the bytes that remain. Pinned partitions and other tenants' in-use ones
   * within their share stay; the caller of a load refuses it when they do not fit (checkLoad).
   */
  private enforceBudget(
    sizes: ReadonlyMap<string, number> = this.loadedSizes(),
    busy: (collectionId: string) => boolean = (id) => this.loading.has(id),
  ): number {
    let total = 0;
    for (const bytes of sizes.values()) total += bytes;
    if (!Number.isFinite(this.budget.maxBytes)) return total;
    for (const collectionId of this.budget.victims(sizes, busy)) {
      total -= sizes.get(collectionId) ?? 0;
      if (!this.residents.has(collectionId)) this.rememberBytes(collectionId, sizes.get(collectionId) ?? 0);
      this.dropPartition(collectionId);
      this.evictions++;
      this.logger.debug(
        { collectionId, bytes: sizes.get(collectionId), maxBytes: this.budget.maxBytes },
        'index partition evicted (memory budget)',
      );
    }
    return total;
  }

  /** Nearest chunks by cosine, from what `prepare` loaded. */
  vectorSearch(query: Float32Array, collectionIds: string[], k: number): VectorHit[] {
    return this.index.search(query, collectionIds, k);
  }

  /** Best chunks by BM25, from what `prepare` loaded. */
  lexicalSearch(query: string, collectionIds: string[], k: number): { hits: LexicalHit[]; stats: LexicalQueryStats } {
    return this.lexical.search(query, collectionIds, k);
  }

  /** Which of the query's terms each of these chunks holds (LexicalIndex.queryTermMatches), from what `prepare` loaded. */
  queryTermMatches(query: string, collectionIds: string[], chunkIds: readonly string[]): Map<string, QueryTermMatch> {
    return this.lexical.queryTermMatches(query, collectionIds, chunkIds);
  }

  /** What the turn ranking reads about chunks beyond the pools (search/turn-ranking.ts), from what `prepare` loaded. */
  turnSource(query: Float32Array | null, collectionIds: string[]): TurnSource {
    return {
      cosineOf: (chunkIds) => (query ? this.index.similarities(query, collectionIds, chunkIds) : new Map()),
      isQuestion: (chunkId) => this.turns.isQuestion(collectionIds, chunkId),
      answersOf: (chunkId) => this.turns.answersOf(collectionIds, chunkId),
      datesOf: (chunkId) => this.turns.datesOf(collectionIds, chunkId),
      speakerOf: (chunkId) => this.turns.speakerOf(collectionIds, chunkId),
      chunks: () => this.index.entries(collectionIds),
    };
  }

  /** The speakers of these collections' turns (search/turn-speakers.ts), from what `prepare` loaded. */
  speakers(collectionIds: string[]): Set<string> {
    return this.turns.speakers(collectionIds);
  }

  /** Validity timelines of facts of these collections, from what `prepare` loaded. */
  graphTimelines(collectionIds: string[], factIds: readonly string[], classifier: PredicateClassifier): Map<string, FactTimeline> {
    return this.graph.timelines(collectionIds, factIds, classifier);
  }

  /** The graph signal over the entities the query's keys name, from what `prepare` loaded. */
  graphMatch(collectionIds: string[], keys: string[]): GraphMatch {
    return this.graph.match(collectionIds, keys);
  }

  /**
   * The entities and facts the hits mention (search/graph-index.ts hitGraph). Read after the
   * search released its partitions: a partition evicted meanwhile contributes nothing.
   */
  hitGraph(collectionIds: string[], hits: readonly { chunkId: string; memoryId: string }[]): GraphMatch {
    return this.graph.hits(collectionIds, hits);
  }

  /**
   * The deleting process drops the memory at once instead of waiting for its own notice. The
   * entities and facts it named that other memories still back are read again at the delete's
   * `refresh_graph` notice, which every process follows before its next search (store/memory-purge.ts).
   */
  forget(memoryIds: string[]): void {
    for (const memoryId of memoryIds) this.removeMemory(memoryId);
  }

  /** Returns the entities the memory named (FeedClient.removeMemory). */
  private removeMemory(memoryId: string): string[] {
    const named = this.graph.entityIdsOf(memoryId);
    this.removeMemoryChunks(memoryId);
    this.graph.removeMemory(memoryId);
    return named;
  }

  private removeMemoryChunks(memoryId: string): void {
    this.loader.removeMemoryChunks(memoryId);
  }

  private dropPartition(collectionId: string): void {
    const resident = this.residents.get(collectionId);
    if (resident) {
      this.residents.delete(collectionId);
      this.budget.forget(collectionId);
      resident.drop();
      return;
    }
    this.index.dropPartition(collectionId);
    this.lexical.dropPartition(collectionId);
    this.turns.dropPartition(collectionId);
    this.graph.dropPartition(collectionId);
    this.budget.forget(collectionId);
  }

  /** Entries and bytes per in-process index, for the metrics endpoint (search/partition-sizes.ts). */
  sizes(): IndexSize[] {
    return indexSizes(this.indexes);
  }

  loadedChunkCount(): number {
    return loadedChunkCount(this.index);
  }

  /** Resolves once the collection's partitions are complete (a partition being filled is not). */
  ensureLoaded(collectionId: string): Promise<void> {
    const loading = this.loading.get(collectionId);
    if (loading) return loading;
    if (this.index.partition(collectionId)) return Promise.resolve();
    return this.trackLoad(
      collectionId,
      this.catchUp().then(() => this.fillPartition(collectionId, true)),
    );
  }

  private trackLoad(collectionId: string, load: Promise<void>): Promise<void> {
    const tracked = load.finally(() => {
      if (this.loading.get(collectionId) === tracked) this.loading.delete(collectionId);
    });
    this.loading.set(collectionId, tracked);
    return tracked;
  }

  /**
   * Snapshots the collection's chunks and graph into fresh partitions. The caller has applied the
   * feed up to some seq first (a catch-up, or the gap path setting lastSeq to the newest seq):
   * anything published after it is applied again by later pulls, and applying a change twice is
   * harmless. It never waits for a catch-up itself, since the gap path runs inside one.
   * `bounded`: checks the budget as it grows (see checkLoad); the gap path's reloads do not, as
   * they only restore what was loaded within the budget before.
   */
  private async fillPartition(collectionId: string, bounded: boolean, useSnapshot = true): Promise<void> {
    const started = Date.now();
    // A snapshot too large for the budget is refused (OverBudget) before its parts are read.
    const check = bounded ? (bytes: number) => this.checkSnapshotLoad(collectionId, bytes) : undefined;
    const snapshot = useSnapshot ? await this.snapshots.read(collectionId, check) : null;
    let built: SnapshotPartitions | null = null;
    if (snapshot) {
      // Checked again with what was read: other loads may have grown meanwhile.
      if (bounded) this.checkSnapshotLoad(collectionId, snapshot.bytes);
      built = await this.snapshots.partitionsOf(snapshot);
    }
    // From here to the loader nothing awaits: the partitions appear together, as a follower sees them.
    if (built) {
      this.index.setPartition(collectionId, built.vector);
      this.lexical.setPartition(collectionId, built.lexical);
      this.graph.setPartition(collectionId, built.graph);
    } else {
      this.index.createPartition(collectionId);
      this.lexical.createPartition(collectionId);
    }
    const partition: VectorPartition = this.index.partition(collectionId)!;
    const lexicalPartition = this.lexical.partition(collectionId)!;
    this.turns.createPartition(collectionId);
    this.budget.touch(collectionId);
    let reread: number;
    try {
      // The new partitions' first allocation counts at once (before anything can observe it), and
      // the growth as the loader reads (search/partition-loader.ts), from each reader's first chunk on.
      if (bounded) this.checkLoad(collectionId);
      reread = await this.loader.fill(
        collectionId,
        { vector: partition, lexical: lexicalPartition },
        bounded ? () => this.checkLoad(collectionId) : undefined,
        snapshot ?? undefined,
      );
      // The last (partial) batches and the graph, measured once complete.
      if (bounded) this.checkLoad(collectionId);
    } catch (error) {
      if (error instanceof OverBudget) this.rememberBytes(collectionId, error.pinned.get(collectionId) ?? 0);
      // Only if still ours: a gap or a collection reload may have replaced it with a fresh fill meanwhile.
      if (this.index.partition(collectionId) === partition) this.dropPartition(collectionId);
      if (error instanceof SnapshotUnusable) {
        this.logger.warn({ collectionId, reason: error.message }, 'index snapshot not usable: loading from the chunks');
        return this.fillPartition(collectionId, bounded, false);
      }
      throw error;
    }
    this.rememberBytes(collectionId, this.partitionBytes(collectionId));
    this.loads++;
    if (snapshot) this.snapshotLoads++;
    this.logger.debug(
      { collectionId, chunks: partition.size, ms: Date.now() - started, fromSnapshot: snapshot !== null, reread },
      'index partition loaded',
    );
    // A load that tokenised everything (or re-read much) leaves a snapshot for the next one.
    this.snapshots.loaded(collectionId, partition.size, snapshot !== null, reread);
    // This partition still counts as loading here, so its own load never evicts it.
    this.enforceBudget();
  }

  /** A load from a snapshot of `bytes` fits the budget, or it is refused (OverBudget) with that size remembered. */
  private checkSnapshotLoad(collectionId: string, bytes: number): void {
    try {
      this.checkLoad(collectionId, bytes);
    } catch (error) {
      if (error instanceof OverBudget) this.rememberBytes(collectionId, bytes);
      throw error;
    }
  }

  /** Resolves once the snapshots being written are (for tests and the bench). */
  snapshotsWritten(): Promise<void> {
    return this.snapshots.written();
  }
}
