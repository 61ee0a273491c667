/**
 * Memory use cases: create (202 + one workflow), read, list, delete. Deletion is permanent and
 * immediate: the record, its chunks and vectors, its idempotency keys and its entries in every
 * search index go at once, and the workflow is stopped; the activities re-check existence after
 * each write, so a running pipeline cannot bring anything back.
 */
import { createHash } from 'node:crypto';
import { notFound, serviceUnavailable, unprocessable } from '../core/errors.js';
import { ingestWorkflowId, newId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { ChunkDoc } from '../store/chunks.js';
import { isDuplicateKeyError } from '../store/db.js';
import type { Store } from '../store/index.js';
import type { MemoryContent, MemoryDoc, MemoryKind, MemorySummaryDoc } from '../store/memories.js';
import type { SearchIndex } from '../search/search-index.js';
import type { CollectionService } from './collections.js';
import type { Orchestrator } from './orchestrator.js';

export interface CreateMemoryInput {
  collectionId: string;
  kind: MemoryKind;
  name: string | null;
  metadata: Record<string, unknown>;
  content: MemoryContent;
}

export interface MemoryListInput {
  collectionIds: string[];
  metadataFilter: Record<string, unknown>;
  offset: number;
  limit: number;
}

export interface MemoryServiceDeps {
  store: Store;
  orchestrator: Orchestrator;
  collections: CollectionService;
  /** Present in processes that serve search: lets a delete drop vectors without waiting. */
  searchIndex: SearchIndex | null;
  logger: Logger;
}

const requestHash = (input: CreateMemoryInput): string => createHash('sha256').update(JSON.stringify(input)).digest('hex');

export function createMemoryService(deps: MemoryServiceDeps) {
  const { store, orchestrator, logger } = deps;

  async function insertQueued(tenantId: string, memoryId: string, input: CreateMemoryInput): Promise<MemoryDoc> {
    const now = new Date();
    const memory: MemoryDoc = {
      _id: memoryId,
      tenant_id: tenantId,
      collection_ids: [input.collectionId],
      kind: input.kind,
      name: input.name,
      metadata: input.metadata,
      content: input.content,
      status: 'queued',
      status_message: null,
      chunk_count: 0,
      embedding_model: null,
      workflow_id: ingestWorkflowId(memoryId),
      created_at: now,
      updated_at: now,
      completed_at: null,
    };
    try {
      await store.memories.insert(memory);
      return memory;
    } catch (error) {
      // A concurrent retry with the same idempotency key inserted it first.
      if (!isDuplicateKeyError(error)) throw error;
      const existing = await store.memories.find(tenantId, memoryId);
      if (!existing) throw error;
      return existing;
    }
  }

  /** Returns false when the workflow already existed (starting is idempotent). */
  async function start(memory: Pick<MemoryDoc, '_id' | 'tenant_id' | 'collection_ids'>): Promise<boolean> {
    const started = await orchestrator.startIngestion({
      memoryId: memory._id,
      tenantId: memory.tenant_id,
      collectionIds: memory.collection_ids,
    });
    return !started.alreadyStarted;
  }

  return {
    async create(
      tenantId: string,
      input: CreateMemoryInput,
      idempotencyKey: string | null,
    ): Promise<{ memory: MemoryDoc; replayed: boolean }> {
      await deps.collections.assertReadable(tenantId, [input.collectionId], 'collection_id');
      let memoryId = newId();
      const claimId = idempotencyKey === null ? null : `${tenantId}:${idempotencyKey}`;
      if (claimId !== null) {
        const hash = requestHash(input);
        const claim = await store.idempotency.claim({
          _id: claimId,
          tenant_id: tenantId,
          memory_id: memoryId,
          request_hash: hash,
          created_at: new Date(),
        });
        if (!claim.claimed) {
          if (claim.existing.request_hash !== hash) {
            throw unprocessable(
              'idempotency_key_reused',
              'This Idempotency-Key was already used with a different request body',
              'Idempotency-Key',
            );
          }
          memoryId = claim.existing.memory_id;
          const existing = await store.memories.find(tenantId, memoryId);
          if (existing) {
            // The first attempt may have died before starting its workflow: starting is idempotent.
            if (existing.status === 'queued') await start(existing).catch(() => undefined);
            return { memory: existing, replayed: true };
          }
          // The first attempt died before writing the memory: finish its work under the same id.
        }
      }

      const memory = await insertQueued(tenantId, memoryId, input);
      try {
        await start(memory);
      } catch (error) {
        // Leave nothing half-written: the client is told to retry and no orphan record remains.
        logger.error({ err: error, memoryId }, 'could not start ingestion workflow');
        await store.memories.deleteMany(tenantId, [memoryId]);
        if (claimId !== null) await store.idempotency.release(claimId);
        throw serviceUnavailable('orchestrator_unavailable', 'The ingestion pipeline is unavailable; retry the request');
      }
      return { memory, replayed: false };
    },

    async get(tenantId: string, memoryId: string): Promise<{ memory: MemoryDoc; chunks: ChunkDoc[] }> {
      const memory = await store.memories.find(tenantId, memoryId);
      if (!memory) throw notFound('memory', memoryId);
      const chunks = await store.chunks.forMemory(memoryId);
      return { memory, chunks };
    },

    async list(tenantId: string, input: MemoryListInput): Promise<{ items: MemorySummaryDoc[]; total: number }> {
      if (input.collectionIds.length > 0) await deps.collections.assertReadable(tenantId, input.collectionIds, 'collection_ids');
      return store.memories.list({ tenantId, ...input });
    },

    async delete(tenantId: string, memoryIds: string[]): Promise<{ deleted: string[]; notFound: string[] }> {
      const unique = [...new Set(memoryIds)];
      const deleted = await store.memories.deleteMany(tenantId, unique);
      if (deleted.length > 0) {
        deps.searchIndex?.forget(deleted);
        await store.chunks.deleteForMemories(deleted);
        await store.idempotency.forgetMemories(deleted);
        await store.indexChanges.publish('remove', tenantId, deleted);
        await Promise.all(deleted.map((id) => orchestrator.stopIngestion(id, 'memory deleted')));
      }
      const deletedSet = new Set(deleted);
      return { deleted, notFound: unique.filter((id) => !deletedSet.has(id)) };
    },

    /**
     * Hands accepted memories that never reached Temporal (the process died between insert and
     * start) to their workflow. Starting is idempotent, so running this anywhere is safe.
     */
    async reconcileQueued(olderThanMs: number): Promise<number> {
      const stale = await store.memories.findStaleQueued(new Date(Date.now() - olderThanMs), 100);
      let started = 0;
      // Most of these already have a running workflow whose first activity waits in a backlog.
      for (const memory of stale) if (await start(memory)) started++;
      return started;
    },
  };
}

export type MemoryService = ReturnType<typeof createMemoryService>;
