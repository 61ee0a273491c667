/**
 * Connection and capability probe. The code targets real MongoDB (a replica set in production);
 * the embedded stand-in (mongo-java-server) lacks some features, so the probe records what the
 * server can do and the repositories pick a portable path where it cannot. Every such choice is
 * made in store/, nowhere else.
 */
import { MongoClient, type Db } from 'mongodb';

export interface ServerCapabilities {
  /** Capped collections: refused by the stand-in ("not yet implemented"). */
  cappedCollections: boolean;
  /**
   * Change streams whose getMore waits for new data (awaitData). Real replica sets do; the
   * stand-in answers at once, so a change stream there becomes a tight getMore loop (measured:
   * about 1,500 getMores a second on an idle stream), and followers must poll instead.
   */
  awaitingChangeStreams: boolean;
  /**
   * Retryable writes: a write interrupted by a failover or a dropped connection is retried once by
   * the driver, exactly once in effect. Real replica sets and sharded clusters have them; the
   * stand-in has no sessions, so the driver refuses every write when they are on.
   */
  retryableWrites: boolean;
}

/** What `hello` says about retryable writes: sessions plus a replica set or a mongos. */
export function supportsRetryableWrites(hello: Record<string, unknown>): boolean {
  const sessions = typeof hello.logicalSessionTimeoutMinutes === 'number';
  const replicated = typeof hello.setName === 'string' || hello.msg === 'isdbgrid';
  return sessions && replicated;
}

export interface Database {
  client: MongoClient;
  db: Db;
  capabilities: ServerCapabilities;
  close(): Promise<void>;
}

export async function connectDatabase(uri: string, dbName: string): Promise<Database> {
  const options = { serverSelectionTimeoutMS: 15_000, maxPoolSize: 50 };
  // Asked first with retryable writes off (the stand-in refuses writes otherwise); on where the
  // server has them, unless the URI says otherwise.
  const probe = new MongoClient(uri, { ...options, retryWrites: false, maxPoolSize: 1 });
  let retryableWrites: boolean;
  try {
    await probe.connect();
    // `hello` (MongoDB 4.4.2+); the stand-in knows only its older name, `isMaster`.
    const admin = probe.db('admin');
    const hello = await admin.command({ hello: 1 }).catch(() => admin.command({ isMaster: 1 }));
    retryableWrites = supportsRetryableWrites(hello);
  } finally {
    await probe.close();
  }
  const explicit = /[?&]retryWrites=/i.test(uri);
  const client = new MongoClient(uri, explicit ? options : { ...options, retryWrites: retryableWrites });
  await client.connect();
  const db = client.db(dbName);
  const capabilities = await probeCapabilities(db, retryableWrites);
  const watchdog = watchForStuckClient(client, uri);
  return {
    client,
    db,
    capabilities,
    close: async () => {
      clearInterval(watchdog);
      await client.close();
    },
  };
}

const WATCH_EVERY_MS = 1_000;
/** How long the client may see its server as Unknown before a fresh client is asked. */
const STUCK_AFTER_MS = 3_000;

/**
 * A safety net, measured on the stand-in: restarted under load while a worker was busy, the
 * worker's driver (on Node 20, with other jobs loading both cores) kept the server Unknown for
 * minutes in 4 of 8 runs, every operation failing server selection with the error of the
 * connection the restart closed, while new connections to the same server worked. On Node 24, in
 * a loop of restarts during ingestion, 3 of 7 left the memories waiting 41-56 s (the others 5-9 s)
 * until the first version of this net, which waited for 20 s of failed pings, reconnected.
 *
 * The client's own view is followed through its monitoring events. When it has seen every server
 * as Unknown for STUCK_AFTER_MS, and a fresh client reaches the server on two checks in a row (a
 * monitor merely about to notice that the server is back is left to do so), the client is closed
 * and connected again; the driver allows that, and every Db and Collection of it keeps working.
 * A server that is really down is left alone (the fresh client fails too); a slow one stays
 * known, so a busy store never sets this off; nor does a replica set with one member down.
 */
function watchForStuckClient(client: MongoClient, uri: string): NodeJS.Timeout {
  const unknown = unknownServerTracker();
  client.on('serverDescriptionChanged', (event) => unknown.observe(event.address, event.newDescription.type));
  client.on('serverClosed', (event) => unknown.forget(event.address));
  let reachableChecks = 0;
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    if (!unknown.longerThan(STUCK_AFTER_MS)) {
      reachableChecks = 0;
      return;
    }
    checking = true;
    void (async () => {
      try {
        if (!(await reachableByFreshClient(uri))) {
          reachableChecks = 0;
          return;
        }
        // Still Unknown after the server answered a fresh client on two checks a second apart.
        if (++reachableChecks < 2 || !unknown.longerThan(STUCK_AFTER_MS)) return;
        reachableChecks = 0;
        process.emitWarning('MongoDB client stuck while the server answers: reconnecting it', { code: 'ENGRAM_MONGO_RECONNECT' });
        await client.close(true).catch(() => undefined);
        unknown.reset();
        await client.connect();
      } finally {
        checking = false;
      }
    })().catch(() => undefined);
  }, WATCH_EVERY_MS);
  timer.unref();
  return timer;
}

/**
 * Since when a client has seen every server it knows as Unknown (it can reach none), from its
 * monitoring events. One member of a replica set down leaves the others known: not stuck.
 */
export function unknownServerTracker(now: () => number = Date.now) {
  const types = new Map<string, string>();
  let allUnknownSince: number | null = null;
  const update = (): void => {
    const allUnknown = types.size > 0 && [...types.values()].every((type) => type === 'Unknown');
    if (!allUnknown) allUnknownSince = null;
    else allUnknownSince ??= now();
  };
  return {
    observe(address: string, type: string): void {
      types.set(address, type);
      update();
    },
    forget(address: string): void {
      types.delete(address);
      update();
    },
    longerThan(ms: number): boolean {
      return allUnknownSince !== null && now() - allUnknownSince >= ms;
    },
    reset(): void {
      types.clear();
      allUnknownSince = null;
    },
  };
}

async function reachableByFreshClient(uri: string): Promise<boolean> {
  const fresh = new MongoClient(uri, { retryWrites: false, serverSelectionTimeoutMS: 2_000, maxPoolSize: 1 });
  try {
    await fresh.connect();
    await fresh.db('admin').command({ ping: 1 });
    return true;
  } catch {
    return false;
  } finally {
    await fresh.close().catch(() => undefined);
  }
}

async function probeCapabilities(db: Db, retryableWrites: boolean): Promise<ServerCapabilities> {
  const probeName = `_capability_probe_${process.pid}_${Date.now()}`;
  let cappedCollections: boolean;
  try {
    await db.createCollection(probeName, { capped: true, size: 4096, max: 2 });
    const options = await db.collection(probeName).options();
    cappedCollections = options.capped === true;
  } catch {
    cappedCollections = false;
  } finally {
    await db.dropCollection(probeName).catch(() => undefined);
  }
  return { cappedCollections, awaitingChangeStreams: await probeAwaitingChangeStreams(db, probeName), retryableWrites };
}

async function probeAwaitingChangeStreams(db: Db, probeName: string): Promise<boolean> {
  const maxAwaitTimeMS = 300;
  try {
    const stream = db.collection(probeName).watch([], { maxAwaitTimeMS });
    try {
      const started = Date.now();
      await stream.tryNext();
      return Date.now() - started >= maxAwaitTimeMS / 2;
    } finally {
      await stream.close();
    }
  } catch {
    return false; // e.g. a standalone mongod: no change streams at all
  }
}

export async function ping(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}

/** Duplicate-key (E11000) detection that works for single and bulk writes. */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error as { code: unknown }).code === 11000;
}
