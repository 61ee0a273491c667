/**
 * Keeps this process's VectorIndex and LexicalIndex consistent with MongoDB (both are filled from
 * the same chunk reads and follow the same feed, so they always hold the same chunks). Partitions are loaded lazily, the
 * first time a collection is searched, and then kept current by following the sequenced
 * index-change feed: in the background (cheap polling of an indexed seq), and once more before
 * every search, so a memory whose status is `complete` is always visible to the next search
 * (read-your-writes across processes), and a deleted one never is.
 */
import type { Logger } from '../core/logger.js';
import { binaryToVector, type ChunkDoc } from '../store/chunks.js';
import type { Store } from '../store/index.js';
import type { EntityDoc, FactDoc, MentionDoc } from '../store/graph.js';
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import type { FactTimeline } from '../core/fact-timeline.js';
import { GraphIndex, type GraphEntityInfo, type GraphFactInfo, type GraphMatch, type ProvenanceRow } from './graph-index.js';
import { LexicalIndex, LexicalPartition, type LexicalHit, type LexicalQueryStats } from './lexical-index.js';
import {
  decodePartitionSnapshot,
  encodePartitionSnapshot,
  SNAPSHOT_FORMAT,
  turnColumns,
  type PartitionSnapshot,
} from './partition-snapshot.js';
import { TurnFacts } from './turn-facts.js';
import type { TurnSource } from './turn-ranking.js';
import { PartitionBudget } from './partition-budget.js';
import { VectorIndex, type VectorHit } from './vector-index.js';

const FOLLOW_INTERVAL_MS = 500;
const CHANGES_PER_PULL = 1000;
/** Concurrent chunk reads of one partition load (disjoint id ranges), see fillPartition. */
const LOAD_READERS = 2;
/** A load re-checks the budget after this many chunks per reader (the most it overshoots by). */
const BUDGET_CHECK_CHUNKS = 256;
/** Collections whose last measured size is remembered, to refuse a reload that cannot fit. */
const KNOWN_SIZES = 10_000;
/** Collections smaller than this load fast enough from their chunks: no snapshot is written (SEARCH_INDEX_SNAPSHOT_MIN_CHUNKS). */
const SNAPSHOT_MIN_CHUNKS = 2000;
/** A load from a snapshot that had to re-read more than this share of chunks writes a fresh one. */
const SNAPSHOT_STALE_FRACTION = 0.1;
/** Memories re-read per store query while reconciling a snapshot with the store. */
const RECONCILE_BATCH = 500;

/**
 * Estimated bytes of what the typed arrays leave out, per entry: a chunk's id strings, array
 * slots and map entries in the vector and the lexical partition; a term's string and map entry;
 * a graph entity's or fact's object and map entries. Rough, on purpose on the high side, so the
 * budget is kept rather than exceeded (the bench compares RSS with it).
 */
const BYTES_PER_CHUNK_IDS = 2 * 240;
const BYTES_PER_TERM = 120;
const BYTES_PER_GRAPH_ENTRY = 600;

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
   * Collections of at least this many chunks get a persisted lexical snapshot after a load that
   * tokenised them, and load from it next time (store/index-snapshots.ts). Infinity: never.
   */
  snapshotMinChunks?: number;
  /** false: never load from a snapshot (still write them); the bench's tokenising baseline. */
  snapshotReads?: boolean;
}

/** A snapshot that cannot be brought up to date (the feed lost changes since it): load from the chunks instead. */
class SnapshotUnusable extends Error {}

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
  evictions: number;
  loads: number;
  /** Of `loads`, those whose lexical partition came from a persisted snapshot. */
  snapshotLoads: number;
}

export class SearchIndex {
  private readonly index: VectorIndex;
  private readonly lexical = new LexicalIndex();
  private readonly turns = new TurnFacts();
  private readonly graph = new GraphIndex();
  private lastSeq = 0;
  private readonly loading = new Map<string, Promise<void>>();
  private pull: Promise<void> = Promise.resolve();
  private queuedPull: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly budget: PartitionBudget;
  private evictions = 0;
  private loads = 0;
  private snapshotLoads = 0;
  /** Last measured bytes of collections (loaded, evicted or aborted), oldest first. */
  private readonly knownBytes = new Map<string, number>();
  private readonly snapshotMinChunks: number;
  private readonly snapshotReads: boolean;
  /** Snapshots being written, by collection. */
  private readonly persisting = new Map<string, Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly modelId: string,
    dimensions: number,
    private readonly logger: Logger,
    options: SearchIndexOptions = {},
  ) {
    this.index = new VectorIndex(dimensions);
    this.budget = new PartitionBudget(options.maxBytes ?? Infinity);
    this.snapshotMinChunks = options.snapshotMinChunks ?? SNAPSHOT_MIN_CHUNKS;
    this.snapshotReads = options.snapshotReads ?? true;
  }

  async start(): Promise<void> {
    this.lastSeq = await this.store.indexChanges.log.latestSeq();
    this.timer = setInterval(() => {
      this.catchUp().catch((error: unknown) => this.logger.warn({ err: error }, 'index follow failed'));
    }, FOLLOW_INTERVAL_MS);
    this.timer.unref();
  }

  /** Stops following the feed; resolves once a pull in flight has finished (before the store closes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pull;
    await this.snapshotsWritten();
  }

  /** Applies every change published so far. Concurrent callers share one queued pull. */
  catchUp(): Promise<void> {
    if (this.queuedPull) return this.queuedPull;
    const next = this.pull.then(async () => {
      this.queuedPull = null;
      await this.applyPendingChanges();
    });
    this.queuedPull = next;
    this.pull = next.catch(() => undefined);
    return next;
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
    return new Map(this.index.loadedCollections().map((id) => [id, this.partitionBytes(id)]));
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
  private checkLoad(collectionId: string): void {
    if (!Number.isFinite(this.budget.maxBytes)) return;
    const sizes = this.loadedSizes();
    const busy = (id: string): boolean => id === collectionId || this.loading.has(id);
    if (this.budget.pinnedBytes(sizes, busy) > this.budget.maxBytes) throw new OverBudget(sizes);
    if (this.enforceBudget(sizes, busy) > this.budget.maxBytes) throw new OverBudget(sizes);
  }

  /** Ends the hold `prepare` took; partitions over the budget may be evicted now. */
  release(collectionIds: string[]): void {
    for (const collectionId of new Set(collectionIds)) this.budget.release(collectionId);
    this.enforceBudget();
  }

  /** Estimated bytes of one collection's partitions (vector, lexical and graph). */
  partitionBytes(collectionId: string): number {
    const vector = this.index.partition(collectionId);
    const lexical = this.lexical.partition(collectionId)?.storageStats();
    const graph = this.graph.partition(collectionId);
    return (
      (vector ? vector.bytes + vector.size * BYTES_PER_CHUNK_IDS : 0) +
      (lexical ? lexical.typedArrayBytes + (lexical.terms + lexical.cachedPieces) * BYTES_PER_TERM : 0) +
      (graph ? (graph.entityCount + graph.factCount) * BYTES_PER_GRAPH_ENTRY : 0)
    );
  }

  /** Bytes held by every loaded partition (the figure the budget bounds). */
  totalBytes(): number {
    return this.index.loadedCollections().reduce((sum, id) => sum + this.partitionBytes(id), 0);
  }

  budgetStats(): IndexBudgetStats {
    return {
      maxBytes: this.budget.maxBytes,
      bytes: this.totalBytes(),
      collections: this.index.loadedCollections().length,
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
      this.rememberBytes(collectionId, sizes.get(collectionId) ?? 0);
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

  /** What the turn ranking reads about chunks beyond the pools (search/turn-ranking.ts), from what `prepare` loaded. */
  turnSource(query: Float32Array | null, collectionIds: string[]): TurnSource {
    return {
      cosineOf: (chunkIds) => (query ? this.index.similarities(query, collectionIds, chunkIds) : new Map()),
      isQuestion: (chunkId) => this.turns.isQuestion(collectionIds, chunkId),
      datesOf: (chunkId) => this.turns.datesOf(collectionIds, chunkId),
      chunks: () => this.index.entries(collectionIds),
    };
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

  /** The deleting process drops the memory at once instead of waiting for its own notice. */
  forget(memoryIds: string[]): void {
    for (const memoryId of memoryIds) this.removeMemory(memoryId);
  }

  private removeMemory(memoryId: string): void {
    this.removeMemoryChunks(memoryId);
    this.graph.removeMemory(memoryId);
  }

  private removeMemoryChunks(memoryId: string): void {
    this.index.removeMemory(memoryId);
    this.lexical.removeMemory(memoryId);
    this.turns.removeMemory(memoryId);
  }

  private dropPartition(collectionId: string): void {
    this.index.dropPartition(collectionId);
    this.lexical.dropPartition(collectionId);
    this.turns.dropPartition(collectionId);
    this.graph.dropPartition(collectionId);
    this.budget.forget(collectionId);
  }

  /** Entries and bytes per in-process index, for the metrics endpoint. */
  sizes(): { index: 'vector' | 'lexical' | 'graph'; entries: number; bytes: number | null }[] {
    let vectorEntries = 0;
    let vectorBytes = 0;
    for (const id of this.index.loadedCollections()) {
      const partition = this.index.partition(id);
      vectorEntries += partition?.size ?? 0;
      vectorBytes += partition?.bytes ?? 0;
    }
    let postings = 0;
    let lexicalBytes = 0;
    for (const id of this.lexical.loadedCollections()) {
      const stats = this.lexical.partition(id)?.storageStats();
      postings += stats?.postings ?? 0;
      lexicalBytes += stats?.typedArrayBytes ?? 0;
    }
    let graphEntries = 0;
    for (const id of this.graph.loadedCollections()) {
      const partition = this.graph.partition(id);
      graphEntries += (partition?.entityCount ?? 0) + (partition?.factCount ?? 0);
    }
    return [
      { index: 'vector', entries: vectorEntries, bytes: vectorBytes },
      { index: 'lexical', entries: postings, bytes: lexicalBytes },
      { index: 'graph', entries: graphEntries, bytes: null },
    ];
  }

  loadedChunkCount(): number {
    return this.index.loadedCollections().reduce((sum, id) => sum + (this.index.partition(id)?.size ?? 0), 0);
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
    const snapshot = useSnapshot ? await this.readSnapshot(collectionId) : null;
    const partition = this.index.createPartition(collectionId);
    if (snapshot) this.lexical.setPartition(collectionId, LexicalPartition.fromState(snapshot.lexical));
    else this.lexical.createPartition(collectionId);
    const lexicalPartition = this.lexical.partition(collectionId)!;
    this.turns.createPartition(collectionId);
    if (snapshot) this.putTurnFacts(collectionId, snapshot);
    this.budget.touch(collectionId);
    let reread = 0;
    try {
      // The graph's reads and the chunk reads (in LOAD_READERS disjoint ranges) run concurrently:
      // while one waits for its next batch from the database, another's batch is indexed.
      // The new partitions' first allocation counts at once (before anything can observe it), and
      // the growth after every BUDGET_CHECK_CHUNKS chunks of each reader, from its first chunk on.
      if (bounded) this.checkLoad(collectionId);
      // A reader that fails (or finds the load over budget) stops the others at their next chunk.
      let failed = false;
      const readChunks = async (index: number): Promise<void> => {
        let sinceCheck = BUDGET_CHECK_CHUNKS - 1;
        const part = { index, of: LOAD_READERS };
        // With a snapshot, the text is neither read nor tokenised: its terms and turn facts are in it.
        const chunks: AsyncIterable<Pick<ChunkDoc, '_id' | 'memory_id' | 'embedding'> & Partial<Pick<ChunkDoc, 'text' | 'occurred_at'>>> =
          snapshot
            ? this.store.chunks.vectorsOnlyForCollection(collectionId, this.modelId, part)
            : this.store.chunks.vectorsForCollection(collectionId, this.modelId, part);
        for await (const chunk of chunks) {
          if (failed) return;
          if (!chunk.embedding) continue;
          partition.upsertBytes(chunk._id, chunk.memory_id, chunk.embedding.buffer);
          if (chunk.text !== undefined) {
            lexicalPartition.upsert(chunk._id, chunk.memory_id, chunk.text);
            this.turns.upsert(collectionId, chunk._id, chunk.memory_id, chunk.text, chunk.occurred_at);
          }
          if (bounded && ++sinceCheck >= BUDGET_CHECK_CHUNKS) {
            sinceCheck = 0;
            this.checkLoad(collectionId);
          }
        }
      };
      const readers = Array.from({ length: LOAD_READERS }, (_, index) => readChunks(index));
      await Promise.all([...readers, this.loadGraph(collectionId)]).catch((error: unknown) => {
        failed = true;
        throw error;
      });
      if (snapshot) reread = await this.reconcileWithSnapshot(collectionId, snapshot.seq);
      // The last (partial) batches and the graph, measured once complete.
      if (bounded) this.checkLoad(collectionId);
    } catch (error) {
      if (error instanceof OverBudget) this.rememberBytes(collectionId, error.pinned.get(collectionId) ?? 0);
      this.dropPartition(collectionId);
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
    if (partition.size >= this.snapshotMinChunks && (!snapshot || reread > partition.size * SNAPSHOT_STALE_FRACTION))
      this.persistSoon(collectionId);
    // This partition still counts as loading here, so its own load never evicts it.
    this.enforceBudget();
  }

  /** The collection's persisted lexical partition, if one of this code's format exists and decodes. */
  private async readSnapshot(collectionId: string): Promise<(PartitionSnapshot & { seq: number }) | null> {
    if (this.snapshotMinChunks === Infinity || !this.snapshotReads) return null;
    const stored = await this.store.indexSnapshots.read(collectionId, this.modelId);
    if (!stored || stored.format !== SNAPSHOT_FORMAT) return null;
    try {
      return { ...decodePartitionSnapshot(stored.bytes), seq: stored.seq };
    } catch (error) {
      this.logger.warn({ collectionId, err: error }, 'index snapshot unreadable: loading from the chunks');
      return null;
    }
  }

  private putTurnFacts(collectionId: string, snapshot: PartitionSnapshot): void {
    const { chunkIds, memoryIds } = snapshot.lexical;
    const { question, dateCount, dates } = snapshot.turns;
    let at = 0;
    for (let slot = 0; slot < chunkIds.length; slot++) {
      const count = dateCount[slot]!;
      this.turns.put(collectionId, chunkIds[slot]!, memoryIds[slot]!, {
        question: question[slot] === 1,
        dates: dates.slice(at, at + count),
      });
      at += count;
    }
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
    const lost = new SnapshotUnusable(`the index feed no longer holds seq ${seq + 1}`);
    let after = seq;
    for (;;) {
      const changes = await log.readAfter(after, CHANGES_PER_PULL);
      if (after === seq && (changes.length > 0 ? changes[0]!.seq > seq + 1 : (await log.latestSeq()) > seq)) throw lost;
      for (const change of changes) if (change.memory_id) changed.add(change.memory_id);
      if (changes.length < CHANGES_PER_PULL) break;
      after = changes[changes.length - 1]!.seq;
    }
    const vectors = this.index.partition(collectionId);
    const lexical = this.lexical.partition(collectionId);
    if (!vectors || !lexical) return 0;
    for (const [chunkId, memoryId] of vectors.entries()) if (lexical.memoryOfChunk(chunkId) !== memoryId) changed.add(memoryId);
    for (const [chunkId, memoryId] of lexical.entries()) if (!vectors.hasChunk(chunkId)) changed.add(memoryId);
    const memoryIds = [...changed];
    for (let from = 0; from < memoryIds.length; from += RECONCILE_BATCH)
      await this.applyUpserts(memoryIds.slice(from, from + RECONCILE_BATCH));
    if (vectors.size !== lexical.size)
      throw new SnapshotUnusable(`${vectors.size} vectors but ${lexical.size} lexical chunks after reconciling`);
    return memoryIds.length;
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
  async snapshotsWritten(): Promise<void> {
    await Promise.all(this.persisting.values());
  }

  private async persist(collectionId: string): Promise<void> {
    const tenantId = await this.store.chunks.tenantOfCollection(collectionId);
    if (!tenantId) return;
    await this.catchUp();
    // From here to the encoding nothing awaits: the state is the feed applied up to `seq`.
    const seq = this.lastSeq;
    const lexical = this.lexical.partition(collectionId);
    if (!lexical) return;
    const state = lexical.exportState();
    const turns = turnColumns(state.chunkIds, (chunkId) => this.turns.factOf(collectionId, chunkId));
    const bytes = encodePartitionSnapshot({ lexical: state, turns });
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

  private async loadGraph(collectionId: string): Promise<void> {
    const partition = this.graph.createPartition(collectionId);
    const entities = new Map<string, GraphEntityInfo>();
    for await (const entity of this.store.graph.entitiesOfCollection(collectionId)) entities.set(entity._id, entityInfo(entity));
    const facts = new Map<string, GraphFactInfo>();
    for await (const fact of this.store.graph.factsOfCollection(collectionId)) facts.set(fact._id, factInfo(fact));
    const rowsByMemory = new Map<string, ProvenanceRow[]>();
    for await (const row of this.store.graph.mentionsOfCollection(collectionId)) {
      let rows = rowsByMemory.get(row.memory_id);
      if (!rows) rowsByMemory.set(row.memory_id, (rows = []));
      rows.push(provenanceRowOf(row));
    }
    for (const [memoryId, rows] of rowsByMemory) partition.setMemory(memoryId, rows, entities, facts);
  }

  /** Re-reads the graph provenance of changed memories (and what it names) into the loaded partitions. */
  private async applyGraphUpserts(memoryIds: string[]): Promise<void> {
    const loaded = new Set(this.index.loadedCollections());
    const rows = (await this.store.graph.mentionsOfMemories(memoryIds)).filter((row) => loaded.has(row.collection_id));
    const entityIds = [...new Set(rows.filter((row) => row.target_kind === 'entity').map((row) => row.target_id))];
    const factIds = [...new Set(rows.filter((row) => row.target_kind === 'fact').map((row) => row.target_id))];
    const [entities, facts] = await Promise.all([this.store.graph.entitiesByIds(entityIds), this.store.graph.factsByIds(factIds)]);
    const entityInfos = new Map(entities.map((entity) => [entity._id, entityInfo(entity)]));
    const factInfos = new Map(facts.map((fact) => [fact._id, factInfo(fact)]));
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
        this.graph.partition(collectionId)?.setMemory(memoryId, grouped.get(`${collectionId}\n${memoryId}`) ?? [], entityInfos, factInfos);
      }
    }
  }

  private async applyPendingChanges(): Promise<void> {
    for (;;) {
      const changes = await this.store.indexChanges.log.readAfter(this.lastSeq, CHANGES_PER_PULL);
      if (changes.length === 0) return;
      if (changes[0]!.seq > this.lastSeq + 1 && this.lastSeq > 0) {
        // We fell behind the feed's retention: our partitions may have missed changes, so they
        // are read again from the store. The newest seq is taken before the reads, so what is
        // published meanwhile is applied afterwards. The reloads must not wait for a catch-up:
        // this is one (waiting for it here hung this and every later search).
        const newest = await this.store.indexChanges.log.latestSeq();
        const collections = this.index.loadedCollections();
        this.logger.warn(
          { lastSeq: this.lastSeq, oldest: changes[0]!.seq, newest, collections: collections.length },
          'index feed gap: reloading partitions',
        );
        for (const collectionId of collections) this.dropPartition(collectionId);
        this.lastSeq = newest;
        await Promise.all(collections.map((collectionId) => this.trackLoad(collectionId, this.fillPartition(collectionId, false))));
        continue;
      }
      const upserts = new Set<string>();
      const dropped = new Set<string>();
      for (const change of changes) {
        if (change.op === 'drop_collection') {
          if (change.collection_id) dropped.add(change.collection_id);
        } else if (change.op === 'remove') {
          upserts.delete(change.memory_id);
          this.removeMemory(change.memory_id);
        } else {
          upserts.add(change.memory_id);
        }
      }
      await this.applyUpserts([...upserts]);
      // A removed collection's partitions go (its memories' removes came first). One a search holds
      // or a load is filling is left to the budget: the collection can no longer be searched.
      for (const collectionId of dropped) {
        if (this.budget.isHeld(collectionId) || this.loading.has(collectionId) || !this.index.partition(collectionId)) continue;
        this.dropPartition(collectionId);
        this.logger.debug({ collectionId }, 'index partition dropped (collection removed)');
      }
      this.lastSeq = changes[changes.length - 1]!.seq;
      if (upserts.size > 0) this.enforceBudget();
      if (changes.length < CHANGES_PER_PULL) return;
    }
  }

  private async applyUpserts(memoryIds: string[]): Promise<void> {
    if (memoryIds.length === 0 || this.index.loadedCollections().length === 0) return;
    await this.applyGraphUpserts(memoryIds);
    const chunks = await this.store.chunks.vectorsForMemories(memoryIds, this.modelId);
    // Replace, not merge: the memory's chunk set or collections may have changed. Only the chunk
    // indexes: the graph partitions were just replaced by applyGraphUpserts, and removing the
    // memory there too would drop the provenance it just read (every memory completed after a
    // collection's first search then lost its graph signal in this process).
    for (const memoryId of memoryIds) this.removeMemoryChunks(memoryId);
    for (const chunk of chunks) {
      if (!chunk.embedding) continue;
      const vector = binaryToVector(chunk.embedding);
      for (const collectionId of chunk.collection_ids) {
        this.index.partition(collectionId)?.upsert(chunk._id, chunk.memory_id, vector);
        this.lexical.partition(collectionId)?.upsert(chunk._id, chunk.memory_id, chunk.text);
        this.turns.upsert(collectionId, chunk._id, chunk.memory_id, chunk.text, chunk.occurred_at);
      }
    }
  }
}

/** A stored provenance row as the partition keeps it; facts carry their validity (absent on old rows). */
const provenanceRowOf = (
  row: Pick<MentionDoc, 'target_id' | 'chunk_index' | 'count' | 'description' | 'valid_from' | 'valid_to'>,
): ProvenanceRow => ({
  targetId: row.target_id,
  chunkIndex: row.chunk_index,
  count: row.count,
  description: row.description ?? '',
  ...(row.valid_from !== undefined || row.valid_to !== undefined
    ? { validFrom: row.valid_from ?? null, validTo: row.valid_to ?? null }
    : {}),
});

const entityInfo = (entity: Pick<EntityDoc, '_id' | 'name' | 'category' | 'description' | 'alias_keys'>): GraphEntityInfo => ({
  id: entity._id,
  name: entity.name,
  category: entity.category,
  description: entity.description,
  aliasKeys: entity.alias_keys,
});

const factInfo = (fact: FactDoc): GraphFactInfo => ({
  id: fact._id,
  subjectId: fact.subject_id,
  objectId: fact.object_id,
  predicate: fact.predicate,
  description: fact.description,
  confidence: fact.confidence,
});
