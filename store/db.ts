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
}

export interface Database {
  client: MongoClient;
  db: Db;
  capabilities: ServerCapabilities;
  close(): Promise<void>;
}

export async function connectDatabase(uri: string, dbName: string): Promise<Database> {
  const client = new MongoClient(uri, {
    // The stand-in speaks wire version 8 and no sessions; retryable writes need sessions.
    retryWrites: false,
    serverSelectionTimeoutMS: 15_000,
    maxPoolSize: 50,
  });
  await client.connect();
  const db = client.db(dbName);
  const capabilities = await probeCapabilities(db);
  return { client, db, capabilities, close: () => client.close() };
}

async function probeCapabilities(db: Db): Promise<ServerCapabilities> {
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
  return { cappedCollections, awaitingChangeStreams: await probeAwaitingChangeStreams(db, probeName) };
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
