/**
 * Follows the sequenced index-change feed for the search index (search/search-index.ts is its
 * client): in the background (cheap polling of an indexed seq), and on demand before every search
 * (catchUp), so a memory whose status is `complete` is visible to the next search in any process
 * (read-your-writes), and a deleted one never is.
 */
import type { Logger } from '../core/logger.js';
import type { IndexChange } from '../store/index-changes.js';

const FOLLOW_INTERVAL_MS = 500;
const CHANGES_PER_PULL = 1000;

/** The feed as the follower reads it (narrow, so unit tests can stand in for it). */
export interface FeedSource {
  indexChanges: {
    log: {
      latestSeq(): Promise<number>;
      /** `filter`: only notices of this op and tenant (the index's snapshot writer asks for removes). */
      readAfter(afterSeq: number, limit: number, filter?: Partial<Pick<IndexChange, 'op' | 'tenant_id'>>): Promise<IndexNotice[]>;
    };
  };
}

/** What the follower reads of a notice. */
export type IndexNotice = Pick<IndexChange, 'seq' | 'op' | 'memory_id' | 'collection_ids' | 'collection_id' | 'target_ids'>;

/**
 * Changed memories, each with the collections its notices name: the index reads only those in a
 * loaded partition. null: a notice that names none (written by an earlier version), read regardless.
 */
export type ChangedMemories = ReadonlyMap<string, ReadonlySet<string> | null>;

/** What the follower asks of the index, in feed order. */
export interface FeedClient {
  /**
   * A memory was removed: it leaves every partition at once. Returns the entities it named: the
   * delete may have taken some names from those other memories still back (store/graph.ts).
   */
  removeMemory(memoryId: string): string[];
  /** Re-reads these entities' and facts' records (names, descriptions) into the partitions that hold them. */
  refreshGraphRecords(targetIds: string[]): Promise<void>;
  /** Memories changed: re-read those in a loaded partition (the others just leave theirs). */
  applyUpserts(upserts: ChangedMemories): Promise<void>;
  /** Collections were removed with all their memories (an expiry publishes this one notice, not one remove per memory). */
  dropCollections(collectionIds: Iterable<string>): void;
  /** Collections changed in bulk (an import): their partitions are read again. */
  reloadCollections(collectionIds: string[]): Promise<void>;
  /** A batch is applied; `upserts`: how many changed memories it named. */
  afterBatch(upserts: number): void;
  /**
   * The follower fell behind the feed's retention: the partitions may have missed changes, so they
   * are read again. The follower has already moved to `newest` (taken before the reads), so what is
   * published meanwhile is applied afterwards.
   */
  reloadAfterGap(gap: { lastSeq: number; oldest: number; newest: number }): Promise<void>;
}

export class FeedFollower {
  private lastSeq = 0;
  private pull: Promise<void> = Promise.resolve();
  private queuedPull: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: FeedSource,
    private readonly client: FeedClient,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.lastSeq = await this.store.indexChanges.log.latestSeq();
    this.timer = setInterval(() => {
      this.catchUp().catch((error: unknown) => this.logger.warn({ err: error }, 'index follow failed'));
    }, FOLLOW_INTERVAL_MS);
    this.timer.unref();
  }

  /** The seq of the last change applied: the partitions hold the feed up to it. */
  get appliedSeq(): number {
    return this.lastSeq;
  }

  /** Stops following the feed; resolves once a pull in flight has finished (before the store closes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pull;
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

  private async applyPendingChanges(): Promise<void> {
    for (;;) {
      const changes = await this.store.indexChanges.log.readAfter(this.lastSeq, CHANGES_PER_PULL);
      if (changes.length === 0) return;
      if (changes[0]!.seq > this.lastSeq + 1 && this.lastSeq > 0) {
        // The reloads must not wait for a catch-up: this is one (waiting for it here hung this
        // and every later search).
        const newest = await this.store.indexChanges.log.latestSeq();
        const gap = { lastSeq: this.lastSeq, oldest: changes[0]!.seq, newest };
        this.lastSeq = newest;
        await this.client.reloadAfterGap(gap);
        continue;
      }
      const upserts = new Map<string, Set<string> | null>();
      const renamed = new Set<string>();
      const dropped = new Set<string>();
      const reloaded = new Set<string>();
      for (const change of changes) {
        if (change.op === 'drop_collection') {
          if (change.collection_id) dropped.add(change.collection_id);
        } else if (change.op === 'reload_collection') {
          if (change.collection_id) reloaded.add(change.collection_id);
        } else if (change.op === 'remove') {
          upserts.delete(change.memory_id);
          for (const entityId of this.client.removeMemory(change.memory_id)) renamed.add(entityId);
        } else if (change.op === 'refresh_graph') {
          for (const targetId of change.target_ids ?? []) renamed.add(targetId);
        } else {
          const known = upserts.has(change.memory_id) ? upserts.get(change.memory_id)! : new Set<string>();
          const named = known && change.collection_ids ? new Set([...known, ...change.collection_ids]) : null;
          upserts.set(change.memory_id, named);
        }
      }
      await this.client.applyUpserts(upserts);
      if (renamed.size > 0) await this.client.refreshGraphRecords([...renamed]);
      this.client.dropCollections(dropped);
      await this.client.reloadCollections([...reloaded].filter((id) => !dropped.has(id)));
      this.lastSeq = changes[changes.length - 1]!.seq;
      this.client.afterBatch(upserts.size);
      if (changes.length < CHANGES_PER_PULL) return;
    }
  }
}
