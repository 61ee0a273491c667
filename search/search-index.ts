/**
 * Keeps this process's VectorIndex consistent with MongoDB. Partitions are loaded lazily, the
 * first time a collection is searched, and then kept current by following the sequenced
 * index-change feed: in the background (cheap polling of an indexed seq), and once more before
 * every search, so a memory whose status is `complete` is always visible to the next search
 * (read-your-writes across processes), and a deleted one never is.
 */
import type { Logger } from '../core/logger.js';
import { binaryToVector } from '../store/chunks.js';
import type { Store } from '../store/index.js';
import { VectorIndex, type VectorHit } from './vector-index.js';

const FOLLOW_INTERVAL_MS = 500;
const CHANGES_PER_PULL = 1000;

export class SearchIndex {
  private readonly index: VectorIndex;
  private lastSeq = 0;
  private readonly loading = new Map<string, Promise<void>>();
  private pull: Promise<void> = Promise.resolve();
  private queuedPull: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly modelId: string,
    dimensions: number,
    private readonly logger: Logger,
  ) {
    this.index = new VectorIndex(dimensions);
  }

  async start(): Promise<void> {
    this.lastSeq = await this.store.indexChanges.log.latestSeq();
    this.timer = setInterval(() => {
      this.catchUp().catch((error: unknown) => this.logger.warn({ err: error }, 'index follow failed'));
    }, FOLLOW_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
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

  async search(query: Float32Array, collectionIds: string[], k: number): Promise<VectorHit[]> {
    await Promise.all(collectionIds.map((collectionId) => this.ensureLoaded(collectionId)));
    await this.catchUp();
    return this.index.search(query, collectionIds, k);
  }

  /** The deleting process drops the memory at once instead of waiting for its own notice. */
  forget(memoryIds: string[]): void {
    for (const memoryId of memoryIds) this.index.removeMemory(memoryId);
  }

  loadedChunkCount(): number {
    return this.index.loadedCollections().reduce((sum, id) => sum + (this.index.partition(id)?.size ?? 0), 0);
  }

  ensureLoaded(collectionId: string): Promise<void> {
    if (this.index.partition(collectionId)) return Promise.resolve();
    let loading = this.loading.get(collectionId);
    if (!loading) {
      loading = this.loadPartition(collectionId).finally(() => this.loading.delete(collectionId));
      this.loading.set(collectionId, loading);
    }
    return loading;
  }

  /**
   * Catch up first, then snapshot the chunks: anything published after the catch-up is applied
   * again by later pulls, and applying a change twice is harmless.
   */
  private async loadPartition(collectionId: string): Promise<void> {
    await this.catchUp();
    const started = Date.now();
    const partition = this.index.createPartition(collectionId);
    try {
      for await (const chunk of this.store.chunks.vectorsForCollection(collectionId, this.modelId)) {
        if (chunk.embedding) partition.upsert(chunk._id, chunk.memory_id, binaryToVector(chunk.embedding));
      }
    } catch (error) {
      this.index.dropPartition(collectionId);
      throw error;
    }
    this.logger.debug({ collectionId, chunks: partition.size, ms: Date.now() - started }, 'index partition loaded');
  }

  private async applyPendingChanges(): Promise<void> {
    for (;;) {
      const changes = await this.store.indexChanges.log.readAfter(this.lastSeq, CHANGES_PER_PULL);
      if (changes.length === 0) return;
      if (changes[0]!.seq > this.lastSeq + 1 && this.lastSeq > 0) {
        // We fell behind the feed's retention: our partitions may have missed changes.
        this.logger.warn({ lastSeq: this.lastSeq, oldest: changes[0]!.seq }, 'index feed gap: reloading partitions');
        const collections = this.index.loadedCollections();
        for (const collectionId of collections) this.index.dropPartition(collectionId);
        this.lastSeq = changes[changes.length - 1]!.seq;
        await Promise.all(collections.map((collectionId) => this.ensureLoaded(collectionId)));
        continue;
      }
      const upserts = new Set<string>();
      for (const change of changes) {
        if (change.op === 'remove') {
          upserts.delete(change.memory_id);
          this.index.removeMemory(change.memory_id);
        } else {
          upserts.add(change.memory_id);
        }
      }
      await this.applyUpserts([...upserts]);
      this.lastSeq = changes[changes.length - 1]!.seq;
      if (changes.length < CHANGES_PER_PULL) return;
    }
  }

  private async applyUpserts(memoryIds: string[]): Promise<void> {
    if (memoryIds.length === 0 || this.index.loadedCollections().length === 0) return;
    const chunks = await this.store.chunks.vectorsForMemories(memoryIds, this.modelId);
    // Replace, not merge: the memory's chunk set or collections may have changed.
    for (const memoryId of memoryIds) this.index.removeMemory(memoryId);
    for (const chunk of chunks) {
      if (!chunk.embedding) continue;
      const vector = binaryToVector(chunk.embedding);
      for (const collectionId of chunk.collection_ids) this.index.partition(collectionId)?.upsert(chunk._id, chunk.memory_id, vector);
    }
  }
}
