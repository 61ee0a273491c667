/** Direct read access to the stack's database, for asserting what an API cannot show (e.g. that no chunk survives a delete). */
import assert from 'node:assert/strict';
import { MongoClient, type Db } from 'mongodb';
import { stack } from './client.js';

let client: MongoClient | null = null;

export async function database(): Promise<Db> {
  const env = stack().serviceEnv;
  if (!client) {
    client = new MongoClient(env.MONGODB_URI!, { retryWrites: false });
    await client.connect();
  }
  return client.db(env.MONGODB_DB);
}

export async function closeDatabase(): Promise<void> {
  await client?.close();
  client = null;
}

/** The last event the stack logged for a memory (its ingestion_progress stream ends there). */
export async function lastEventOf(memoryId: string): Promise<{ payload: { user_stage: string; message: string | null } } | null> {
  const db = await database();
  return db
    .collection<{ payload: { user_stage: string; message: string | null } }>('memory_events')
    .find({ 'payload.engram_id': memoryId }, { sort: { seq: -1 }, limit: 1 })
    .next();
}

/**
 * Waits until the memory's last event is terminal (`complete` or `failed`): the pipeline records
 * the status first and appends the event just after, so a client that saw the status may be a
 * few milliseconds ahead of the log.
 */
export async function terminalEventOf(memoryId: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const last = await lastEventOf(memoryId);
    if (last && ['complete', 'failed'].includes(last.payload.user_stage)) return last;
    if (Date.now() > deadline) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Asserts the memory's final event is `failed` with a message matching `reason`. */
export async function assertFailedEvent(memoryId: string, reason: RegExp): Promise<void> {
  const last = await terminalEventOf(memoryId);
  assert.equal(last?.payload.user_stage, 'failed');
  assert.match(last?.payload.message ?? '', reason);
}
