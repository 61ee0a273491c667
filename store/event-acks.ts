/**
 * The last acknowledged event seq per subscriber identity (API key + client-chosen subscriber
 * id), so a reconnect without last_ack_seq resumes after the last ack. Acks only move forward.
 * Subscriber ids are client-chosen, so rows neither moved nor held by a connected subscriber for
 * WS_ACK_RETENTION_HOURS are removed (a sweep in each API process, services/event-stream.ts
 * expireAcks): such a subscriber resumes from the log's head.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from './db.js';

export class EventAckRepository {
  private readonly acks: Collection<{ _id: string; seq: number; updated_at: Date }>;

  constructor(db: Db) {
    this.acks = db.collection('ws_acks');
  }

  async ensureIndexes(): Promise<void> {
    await this.acks.createIndex({ updated_at: 1 });
  }

  /** Marks the identities' acks as in use at `at` (their seqs do not change). */
  async touch(identities: string[], at: Date): Promise<void> {
    if (identities.length > 0) await this.acks.updateMany({ _id: { $in: identities } }, { $set: { updated_at: at } });
  }

  /** Forgets acks neither moved nor touched since `olderThan`; returns how many. */
  async expire(olderThan: Date): Promise<number> {
    return (await this.acks.deleteMany({ updated_at: { $lt: olderThan } })).deletedCount;
  }

  async lastAck(identity: string): Promise<number | null> {
    return (await this.acks.findOne({ _id: identity }))?.seq ?? null;
  }

  async record(identity: string, seq: number): Promise<void> {
    const moved = await this.acks.updateOne({ _id: identity, seq: { $lt: seq } }, { $set: { seq, updated_at: new Date() } });
    if (moved.matchedCount === 1) return;
    try {
      await this.acks.insertOne({ _id: identity, seq, updated_at: new Date() });
    } catch (error) {
      // Exists with a higher (or equal) seq already: acks never move back.
      if (!isDuplicateKeyError(error)) throw error;
    }
  }
}
