/**
 * An append-only log whose entries get a strictly increasing `seq`, shared by every process.
 *
 * Why not `findOneAndUpdate({$inc})` on a counter: the stand-in answers concurrent `$inc` with
 * duplicate values (measured: 200 increments gave 187-199 distinct numbers). Why not one insert
 * per entry with `max(seq)+1` and retry: correct under a unique index, but 400 concurrent appends
 * cost ~40,000 retries. So each process funnels its appends through ONE writer loop that commits
 * them in batches ("group commit"): read max(seq), then an ordered insertMany of max+1..max+n.
 * The unique index on `seq` arbitrates between processes; the loser re-reads max and retries
 * only what was not inserted. Contention is therefore bounded by the number of processes, not by
 * the number of concurrent callers.
 *
 * Gap-freedom for readers: entry N+1 can only be written by a process that has already read N
 * as committed (it read max = N), and an ordered insertMany commits its entries one after
 * another, so a reader that sees N+1 can already see N. Readers never observe a hole that is
 * filled later.
 *
 * Retention: a capped collection where the server supports it (real MongoDB); otherwise (the
 * stand-in refuses capped collections) entries at or below `latest - maxEntries` are trimmed by
 * seq from time to time. Either way readers must expect the oldest entries to disappear.
 */
import type { ChangeStream, Collection, Db, Document, Filter, OptionalUnlessRequiredId } from 'mongodb';
import { isDuplicateKeyError, type ServerCapabilities } from './db.js';

export interface LogEntry extends Document {
  _id: string;
  seq: number;
}

interface PendingAppend<T> {
  entry: Omit<T, 'seq'>;
  resolve: (seq: number) => void;
  reject: (error: unknown) => void;
}

export interface SequencedLogOptions {
  maxEntries: number;
  maxBytes: number;
  /** Entries committed per insertMany; bounds one batch's size and latency. */
  batchSize?: number;
  /**
   * `global` (the default): the newest maxEntries are kept, by a capped collection where the
   * server has them, else by trimming on seq. `owner`: never capped, never trimmed here; the
   * owner trims (the event log keeps a window per tenant, store/events.ts).
   */
  retention?: 'global' | 'owner';
}

const TRIM_EVERY_APPENDS = 500;

/** The seqs a batch of `count` commits with when the newest committed seq is `base`: base+1 … base+count, in order. */
export const seqsAfter = (base: number, count: number): number[] => Array.from({ length: count }, (_, index) => base + index + 1);

/** Whether this log trims itself: not when the server caps it, nor when its owner trims (retention `owner`). */
export const trimsItself = (capped: boolean, retention: SequencedLogOptions['retention']): boolean => !capped && retention !== 'owner';

/** Entries at or below the returned seq fall outside the newest `maxEntries`; null when none do. */
export function retentionCutoff(latest: number, maxEntries: number): number | null {
  const cutoff = latest - maxEntries;
  return cutoff > 0 ? cutoff : null;
}

/**
 * After an ordered insert of `ids` clashed with another process: the items whose entry is stored
 * (`storedSeq`, by id) are committed with that seq, the others are retried, in their order.
 */
export function settleClash<I>(items: I[], ids: string[], storedSeq: Map<string, number>): { committed: [I, number][]; retry: I[] } {
  const committed: [I, number][] = [];
  const retry: I[] = [];
  items.forEach((item, index) => {
    const seq = storedSeq.get(ids[index]!);
    if (seq === undefined) retry.push(item);
    else committed.push([item, seq]);
  });
  return { committed, retry };
}

export class SequencedLog<T extends LogEntry> {
  private readonly pending: PendingAppend<T>[] = [];
  private draining = false;
  private appendsSinceTrim = 0;
  readonly collection: Collection<T>;

  private constructor(
    collection: Collection<T>,
    private readonly capped: boolean,
    private readonly options: SequencedLogOptions,
  ) {
    this.collection = collection;
  }

  static async open<T extends LogEntry>(
    db: Db,
    name: string,
    capabilities: ServerCapabilities,
    options: SequencedLogOptions,
  ): Promise<SequencedLog<T>> {
    const exists = (await db.listCollections({ name }, { nameOnly: true }).toArray()).length > 0;
    let capped = false;
    const global = (options.retention ?? 'global') === 'global';
    if (!exists && global && capabilities.cappedCollections) {
      try {
        await db.createCollection(name, { capped: true, size: options.maxBytes, max: options.maxEntries });
        capped = true;
      } catch (error) {
        // Another process created it first: fall through and read its options.
        if (!/already exists/i.test(String(error))) throw error;
      }
    }
    if (exists || !capped) {
      const info = await db.listCollections({ name }).toArray();
      const options = (info[0] as { options?: { capped?: boolean } } | undefined)?.options;
      capped = options?.capped === true;
    }
    const collection = db.collection<T>(name);
    await collection.createIndex({ seq: 1 } as Document, { unique: true, name: 'seq_unique' });
    return new SequencedLog(collection, capped, options);
  }

  get isCapped(): boolean {
    return this.capped;
  }

  /** Appends one entry; resolves with its seq once it is committed. */
  append(entry: Omit<T, 'seq'>): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.pending.push({ entry, resolve, reject });
      void this.drain();
    });
  }

  appendMany(entries: Omit<T, 'seq'>[]): Promise<number[]> {
    return Promise.all(entries.map((entry) => this.append(entry)));
  }

  async latestSeq(): Promise<number> {
    const newest = await this.collection.find({}, { sort: { seq: -1 }, limit: 1, projection: { seq: 1 } }).next();
    return newest?.seq ?? 0;
  }

  async oldestSeq(): Promise<number> {
    const oldest = await this.collection.find({}, { sort: { seq: 1 }, limit: 1, projection: { seq: 1 } }).next();
    return oldest?.seq ?? 0;
  }

  /**
   * The highest seq among the first `limit` entries after `afterSeq` (afterSeq when there are
   * none): a range seek over the seq index reading seqs only, where latestSeq's descending sort
   * scans on the stand-in.
   */
  async lastSeqAfter(afterSeq: number, limit: number): Promise<number> {
    const query = { seq: { $gt: afterSeq } } as Filter<T>;
    const found = await this.collection.find(query, { sort: { seq: 1 }, limit, projection: { _id: 0, seq: 1 } }).toArray();
    return found.length > 0 ? (found[found.length - 1]!.seq as number) : afterSeq;
  }

  /** Entries with seq > afterSeq in seq order, optionally narrowed by a filter. */
  async readAfter(afterSeq: number, limit: number, filter: Filter<T> = {}): Promise<T[]> {
    const query = { ...filter, seq: { $gt: afterSeq } } as Filter<T>;
    return (await this.collection.find(query, { sort: { seq: 1 }, limit }).toArray()) as T[];
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.options.batchSize ?? 256);
        try {
          await this.commit(batch);
        } catch (error) {
          for (const item of batch) item.reject(error);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Commits a batch in order, retrying whatever another process beat us to. */
  private async commit(batch: PendingAppend<T>[]): Promise<void> {
    let remaining = batch;
    for (let attempt = 0; remaining.length > 0; attempt++) {
      const seqs = seqsAfter(await this.latestSeq(), remaining.length);
      const docs = remaining.map((item, index) => ({ ...item.entry, seq: seqs[index]! }) as T);
      try {
        await this.collection.insertMany(docs as OptionalUnlessRequiredId<T>[], { ordered: true });
        docs.forEach((doc, index) => remaining[index]?.resolve(doc.seq));
        remaining = [];
      } catch (error) {
        if (!isDuplicateKeyError(error) || attempt > 1000) throw error;
        // Find out which of ours made it (an ordered insert stops at the first clash).
        const ids = docs.map((doc) => doc._id);
        const stored = await this.collection.find({ _id: { $in: ids } } as Filter<T>, { projection: { _id: 1, seq: 1 } }).toArray();
        const storedSeq = new Map<string, number>(stored.map((doc) => [String(doc._id), doc.seq]));
        const settled = settleClash(remaining, ids, storedSeq);
        for (const [item, seq] of settled.committed) item.resolve(seq);
        remaining = settled.retry;
        // Brief jitter so two processes do not collide in lockstep.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      }
    }
    this.appendsSinceTrim += batch.length;
    if (trimsItself(this.capped, this.options.retention) && this.appendsSinceTrim >= TRIM_EVERY_APPENDS) {
      this.appendsSinceTrim = 0;
      await this.trim();
    }
  }

  /** Portable retention for servers without capped collections: drop entries by seq. */
  async trim(): Promise<number> {
    if (!trimsItself(this.capped, this.options.retention)) return 0;
    const cutoff = retentionCutoff(await this.latestSeq(), this.options.maxEntries);
    if (cutoff === null) return 0;
    const result = await this.collection.deleteMany({ seq: { $lte: cutoff } } as Filter<T>);
    return result.deletedCount;
  }
}

/** Polling interval where no change stream waits: a new entry waits 5 ms on average, 10 at most, for its wake-up. */
const POLL_MS = 10;
/** Seqs one poll reads at most: a burst moves the poll's mark this far per read. */
const POLL_SEQS = 1000;
const SAFETY_POLL_MS = 1000;

/**
 * Wake-ups for followers of a log, chosen by what the server can do (store/db.ts probes it):
 * - a change stream where getMore awaits new data (real replica sets): a wake-up within
 *   milliseconds of an insert, no polling; if it dies, polling takes over until it reopens;
 * - otherwise (the stand-in, whose change streams spin, or a standalone server) one cheap
 *   indexed range read past the last seen seq every 10 ms, waking followers only when it moved.
 * A slow safety wake-up runs either way, so a lost notification only delays, never loses.
 */
export function followLog<T extends LogEntry>(
  log: SequencedLog<T>,
  awaiting: boolean,
  onAppend: () => void,
  onFallback: (error: unknown) => void,
): () => Promise<void> {
  let stopped = false;
  let stream: ChangeStream<T> | null = null;
  let poll: NodeJS.Timeout | null = null;
  let lastSeen = -1;
  // Also lets paused followers (a slow consumer's drained socket) continue when nothing new came.
  const safety = setInterval(onAppend, SAFETY_POLL_MS);
  safety.unref();
  const startPolling = () => {
    if (poll) return;
    let busy = false;
    poll = setInterval(() => {
      if (busy) return;
      busy = true;
      // A range seek past the last seen seq, reading seqs only, stays cheap however long the log
      // is (one round trip per poll); the stand-in answers "newest seq" (sort descending) by
      // scanning, so that runs once, at the start.
      (lastSeen < 0 ? log.latestSeq() : log.lastSeqAfter(lastSeen, POLL_SEQS))
        .then((latest) => {
          if (latest !== lastSeen) {
            lastSeen = latest;
            onAppend();
          }
        }, onFallback)
        .finally(() => {
          busy = false;
        });
    }, POLL_MS);
    poll.unref();
  };
  const open = () => {
    if (stopped) return;
    try {
      stream = log.collection.watch([{ $match: { operationType: 'insert' } }], { batchSize: 1000 });
      stream.on('change', onAppend);
      stream.on('error', (error) => {
        onFallback(error);
        startPolling();
        void stream?.close().catch(() => undefined);
        setTimeout(open, 5000).unref();
      });
    } catch (error) {
      onFallback(error);
      startPolling();
    }
  };
  if (awaiting) open();
  else startPolling();
  return async () => {
    stopped = true;
    clearInterval(safety);
    if (poll) clearInterval(poll);
    await stream?.close().catch(() => undefined);
  };
}
