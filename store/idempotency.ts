/**
 * Idempotency keys for POST /v1/memories. The record is claimed (with the memory id it will
 * create) before the memory is written, so a retry after a crash finishes the same memory
 * instead of starting a second one. Expiry is checked at read time: TTL indexes are a real
 * MongoDB nicety the stand-in accepts but never runs.
 */
import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError } from './db.js';

interface IdempotencyDoc {
  _id: string; // `${tenant_id}:${key}`
  tenant_id: string;
  memory_id: string;
  request_hash: string;
  created_at: Date;
}

/** A client's Idempotency-Key within its tenant, and the memory a request under it creates. */
export interface IdempotencyClaim {
  tenantId: string;
  key: string;
  memoryId: string;
  requestHash: string;
}

export type ClaimResult = { claimed: true } | { claimed: false; existing: { memoryId: string; requestHash: string } };

const idOf = (tenantId: string, key: string): string => `${tenantId}:${key}`;

export class IdempotencyRepository {
  readonly collection: Collection<IdempotencyDoc>;

  constructor(
    db: Db,
    private readonly ttlSeconds: number,
  ) {
    this.collection = db.collection<IdempotencyDoc>('idempotency_keys');
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ created_at: 1 }, { expireAfterSeconds: this.ttlSeconds });
    await this.collection.createIndex({ memory_id: 1 });
  }

  async claim(claim: IdempotencyClaim): Promise<ClaimResult> {
    const doc: IdempotencyDoc = {
      _id: idOf(claim.tenantId, claim.key),
      tenant_id: claim.tenantId,
      memory_id: claim.memoryId,
      request_hash: claim.requestHash,
      created_at: new Date(),
    };
    for (;;) {
      try {
        await this.collection.insertOne(doc);
        return { claimed: true };
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      const existing = await this.collection.findOne({ _id: doc._id });
      if (!existing) continue; // Expired and removed between our insert and read: claim again.
      const ageSeconds = (Date.now() - existing.created_at.getTime()) / 1000;
      if (ageSeconds <= this.ttlSeconds)
        return { claimed: false, existing: { memoryId: existing.memory_id, requestHash: existing.request_hash } };
      // Expired but not yet swept: replace it only if nobody else already did.
      await this.collection.deleteOne({ _id: doc._id, created_at: existing.created_at });
    }
  }

  async release(tenantId: string, key: string): Promise<void> {
    await this.collection.deleteOne({ _id: idOf(tenantId, key) });
  }

  async forgetMemories(memoryIds: string[]): Promise<void> {
    await this.collection.deleteMany({ memory_id: { $in: memoryIds } });
  }
}
