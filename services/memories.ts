/**
 * Memory use cases: create (202 + one workflow), read, list, delete. Deletion is permanent and
 * immediate: the record, its chunks and vectors, its idempotency keys and its entries in every
 * search index go at once, and the workflow is stopped; the activities re-check existence after
 * each write, so a running pipeline cannot bring anything back.
 */
import { sha256Hex } from '../core/hash.js';
import { AppError, conflict, notFound, serviceUnavailable, unprocessable, validationError } from '../core/errors.js';
import { sniffMediaType } from '../extractors/sniff.js';
import { UnreadableContentError } from '../extractors/types.js';
import { appendWorkflowId, ingestWorkflowId, newId } from '../core/ids.js';
import { METADATA_MAX_BYTES, metadataBytes } from '../core/limits.js';
import type { MemoryFilter } from '../core/memory-filter.js';
import type { Logger } from '../core/logger.js';
import { isDuplicateKeyError } from '../store/db.js';
import type { Store } from '../store/index.js';
import type { ChunkRepository } from '../store/chunks.js';
import type { FileRepository } from '../store/files.js';
import type { IdempotencyRepository } from '../store/idempotency.js';
import type { IndexChangeFeed } from '../store/index-changes.js';
import type { FactEvents } from '../store/fact-events.js';
import type { MemoryRepository } from '../store/memories.js';
import type { MemoryPurge } from '../store/memory-purge.js';
import type { ChunkText, MemoryContent, MemoryFile, MemoryKind, MessageInput } from '../core/content-model.js';
import { isSearchable, type Memory, type MemorySummary } from '../core/memory-model.js';
import type { MemoryChange } from '../store/memories.js';
import type { Purge, PurgeOptions } from '../store/memory-purge.js';
import type { SearchIndex } from '../search/search-index.js';
import type { CollectionService } from './collections.js';
import type { Orchestrator } from './orchestrator.js';
import type { UploadService } from './uploads.js';

/** A file from the request, decoded; stored in GridFS before the memory is written. */
export interface UploadedFile {
  bytes: Buffer;
  filename: string;
  mediaType: string | undefined;
  partIndex: number;
}

/** A file already uploaded through a presigned URL. */
export interface UploadReference {
  uploadId: string;
  partIndex: number;
}

export interface CreateMemoryInput {
  collectionId: string;
  kind: MemoryKind;
  name: string | null;
  metadata: Record<string, unknown>;
  /** When the content happened, if the client said (core/memory-time.ts). */
  occurredAt: Date | null;
  content: MemoryContent;
  files?: (UploadedFile | UploadReference)[];
}

const isInline = (file: UploadedFile | UploadReference): file is UploadedFile => 'bytes' in file;

/** How often a metadata merge is re-checked when other merges keep changing the metadata under it. */
const MERGE_ATTEMPTS = 5;

export interface MemoryListInput {
  collectionIds: string[];
  filter: MemoryFilter;
  offset: number;
  limit: number;
}

export interface UpdateMemoryInput {
  name?: string | null;
  metadata?: Record<string, unknown>;
  /** true: the given keys are set and the others kept; false: the metadata is replaced. */
  mergeMetadata: boolean;
  collectionIds?: string[];
}

export interface AppendMessagesInput {
  collectionId: string;
  messages: MessageInput[];
}

/** What the memory use cases ask of storage, method by method (unit tests hand in-memory ones: test/support/fakes). */
export interface MemoryServiceStore {
  memories: Pick<
    MemoryRepository,
    | 'insert'
    | 'find'
    | 'exists'
    | 'update'
    | 'changeCollections'
    | 'clearCollectionSync'
    | 'claimAppend'
    | 'abandonAppend'
    | 'recordAccess'
    | 'list'
    | 'membershipsOf'
    | 'deleteMany'
    | 'findStaleQueued'
    | 'findStaleCollectionSyncs'
  >;
  chunks: Pick<ChunkRepository, 'forMemory' | 'setCollections'>;
  files: Pick<FileRepository, 'put' | 'deleteIds' | 'openDownload'>;
  idempotency: Pick<IdempotencyRepository, 'claim' | 'release'>;
  factEvents: Pick<FactEvents, 'removeMemories'>;
  procedures: Pick<Store['procedures'], 'removeMemories'>;
  indexChanges: Pick<IndexChangeFeed, 'publishUpserts'>;
  purge: Pick<MemoryPurge, 'begin' | 'finish' | 'resume' | 'pending'>;
}

export interface MemoryServiceDeps {
  store: MemoryServiceStore;
  orchestrator: Orchestrator;
  collections: Pick<CollectionService, 'assertReadable' | 'assertWritable'>;
  uploads: Pick<UploadService, 'take' | 'untake' | 'attached'>;
  /** Present in processes that serve search: lets a delete drop vectors without waiting. */
  searchIndex: Pick<SearchIndex, 'forget'> | null;
  logger: Logger;
  /** MAX_COLLECTIONS_PER_MEMORY: each membership copies the memory's chunks into another index partition. */
  maxCollectionsPerMemory?: number;
}

/** Files enter the hash by their digest, not their bytes. */
const requestHash = (input: CreateMemoryInput): string =>
  sha256Hex(
    JSON.stringify({ ...input, files: input.files?.map((file) => (isInline(file) ? { ...file, bytes: sha256Hex(file.bytes) } : file)) }),
  );

export function createMemoryService(deps: MemoryServiceDeps) {
  const { store, orchestrator, logger } = deps;

  /**
   * The one read-only check of every change a client makes to existing memories (update, metadata
   * merge, append, delete, collection changes in either direction): each collection the memories
   * belong to, and each one `touched` adds, must be writable. An imported memory belongs to an
   * ephemeral collection, so it can be neither changed, deleted, nor attached to a permanent
   * collection (whose copy its expiry would delete); nothing is moved into an ephemeral one either.
   */
  async function assertWritableMemories(
    tenantId: string,
    memories: Pick<Memory, 'collection_ids'>[],
    field: string,
    touched: string[] = [],
  ): Promise<void> {
    const ids = [...new Set([...memories.flatMap((memory) => memory.collection_ids), ...touched])];
    if (ids.length > 0) await deps.collections.assertWritable(tenantId, ids, field);
  }

  async function insertQueued(tenantId: string, memoryId: string, input: CreateMemoryInput): Promise<Memory> {
    const now = new Date();
    const memory: Memory = {
      id: memoryId,
      tenant_id: tenantId,
      collection_ids: [input.collectionId],
      kind: input.kind,
      name: input.name,
      metadata: input.metadata,
      content: input.content,
      ...(input.occurredAt ? { occurred_at: input.occurredAt } : {}),
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

  /** Refuses, before anything is stored, files whose bytes are of no kind we can read (415). */
  async function assertSupportedFiles(files: UploadedFile[]): Promise<void> {
    for (const file of files) {
      const field = `content_parts.${file.partIndex}`;
      try {
        const sniffed = await sniffMediaType(file.bytes, file.mediaType, file.filename);
        if (sniffed.kind === 'unsupported') {
          throw new AppError(
            415,
            'unsupported_media_type',
            `content part ${file.partIndex} (${file.filename}) is ${sniffed.mediaType}, which cannot be ingested`,
            [{ field, issue: `unsupported type ${sniffed.mediaType}` }],
          );
        }
      } catch (error) {
        if (error instanceof UnreadableContentError)
          throw new AppError(400, 'validation_failed', `content part ${file.partIndex}: ${error.message}`, [
            { field, issue: error.message },
          ]);
        throw error;
      }
    }
  }

  /** Inline parts are stored now; uploaded ones are taken (once) from their upload. */
  async function gatherFiles(
    tenantId: string,
    memoryId: string,
    collectionId: string,
    files: (UploadedFile | UploadReference)[],
    taken: Map<string, MemoryFile>,
  ): Promise<MemoryFile[]> {
    const stored: MemoryFile[] = [];
    try {
      for (const file of files) {
        if (!isInline(file)) {
          const record = await deps.uploads.take(tenantId, collectionId, file.uploadId, `content_parts.${file.partIndex}.upload_id`);
          taken.set(file.uploadId, record);
          stored.push(record);
          continue;
        }
        const record = await store.files.put(file.bytes, {
          tenant_id: tenantId,
          memory_id: memoryId,
          filename: file.filename,
          media_type: file.mediaType ?? 'application/octet-stream',
        });
        stored.push({
          file_id: record.file_id,
          filename: record.filename,
          media_type: record.media_type,
          size: record.size,
          sha256: record.sha256,
        });
      }
      return stored;
    } catch (error) {
      await giveBack({ files: stored }, taken);
      throw error;
    }
  }

  /** Undo of gatherFiles: inline files are deleted, uploads become available again. */
  async function giveBack(content: MemoryContent, taken: Map<string, MemoryFile>): Promise<void> {
    const takenIds = new Set([...taken.values()].map((file) => file.file_id));
    await store.files.deleteIds((content.files ?? []).map((file) => file.file_id).filter((id) => !takenIds.has(id)));
    for (const uploadId of taken.keys()) await deps.uploads.untake(uploadId);
    taken.clear();
  }

  /** Returns false when the workflow already existed (starting is idempotent). */
  async function start(memory: Pick<Memory, 'id' | 'tenant_id' | 'collection_ids' | 'append' | 'workflow_id'>): Promise<boolean> {
    const started = await orchestrator.startIngestion({
      memoryId: memory.id,
      tenantId: memory.tenant_id,
      collectionIds: memory.collection_ids,
      ...(memory.append
        ? { append: { workflowId: memory.workflow_id, fromMessage: memory.append.from_message, fromChunk: memory.append.from_chunk } }
        : {}),
    });
    return !started.alreadyStarted;
  }

  /**
   * The rest of a delete once the records are gone: the workflows are stopped, then the data
   * purged. A workflow that cannot be stopped now (Temporal unreachable) stops itself: every
   * stage checks that its memory exists and cleans up what it wrote.
   */
  async function completePurges(purges: Purge[], resumed = false, options: PurgeOptions = {}): Promise<void> {
    if (purges.length === 0) return;
    await Promise.all(
      purges.map((purge) =>
        orchestrator
          .stopIngestion(purge.workflowId, 'memory deleted')
          .catch((error: unknown) =>
            logger.warn({ err: error, memoryId: purge.memoryId }, 'could not stop the workflow of a deleted memory'),
          ),
      ),
    );
    await (resumed ? store.purge.resume(purges) : store.purge.finish(purges, options));
  }

  /**
   * Name, metadata (merged or replaced) and collections; only what is given changes. A merge is
   * checked against the metadata it read and written only onto that: when another merge got in
   * between, it is checked again against the new metadata.
   */
  async function update(tenantId: string, memoryId: string, input: UpdateMemoryInput): Promise<Memory> {
    for (let attempt = 1; ; attempt++) {
      const updated = await updateOnce(tenantId, memoryId, input);
      if (updated) return updated;
      if (attempt === MERGE_ATTEMPTS) {
        throw conflict('memory_busy', `Memory ${memoryId} is being changed by other requests; retry the update`, 'metadata');
      }
    }
  }

  /** One read-check-write of update(); null when a merge found the metadata changed meanwhile. */
  async function updateOnce(tenantId: string, memoryId: string, input: UpdateMemoryInput): Promise<Memory | null> {
    const memory = await store.memories.find(tenantId, memoryId);
    if (!memory) throw notFound('memory', memoryId);
    const field = input.collectionIds !== undefined ? 'collection_ids' : input.metadata !== undefined ? 'metadata' : 'name';
    await assertWritableMemories(tenantId, [memory], field, input.collectionIds ?? []);
    const change: MemoryChange = {};
    if (input.name !== undefined) change.name = input.name;
    if (input.metadata !== undefined) {
      if (input.mergeMetadata) {
        // Each PATCH is within the limit; what they merge into must be too, or a record grows
        // towards MongoDB's 16 MB document limit one merge at a time.
        const merged = metadataBytes({ ...memory.metadata, ...input.metadata });
        if (merged > METADATA_MAX_BYTES) {
          throw validationError([
            {
              field: 'metadata',
              issue: `merged with the stored metadata it would be ${merged} bytes of JSON; at most ${METADATA_MAX_BYTES}`,
            },
          ]);
        }
      }
      change.metadata = input.metadata;
      change.mergeMetadata = input.mergeMetadata;
    }
    let added: string[] = [];
    let removed: string[] = [];
    if (input.collectionIds !== undefined) {
      const wanted = [...new Set(input.collectionIds)];
      const maxCollections = deps.maxCollectionsPerMemory ?? Infinity;
      if (wanted.length > maxCollections) {
        throw validationError([
          {
            field: 'collection_ids',
            issue: `a memory may belong to at most ${maxCollections} collections (MAX_COLLECTIONS_PER_MEMORY); ${wanted.length} were given`,
          },
        ]);
      }
      await deps.collections.assertReadable(tenantId, wanted, 'collection_ids');
      added = wanted.filter((id) => !memory.collection_ids.includes(id));
      removed = memory.collection_ids.filter((id) => !wanted.includes(id));
      if (added.length > 0 || removed.length > 0) {
        if (memory.status !== 'complete' && memory.status !== 'failed') {
          throw conflict(
            'memory_busy',
            `Memory ${memoryId} is being processed (status ${memory.status}); change its collections once it is complete`,
            'collection_ids',
          );
        }
        change.collectionIds = wanted;
      }
    }
    const changesCollections = change.collectionIds !== undefined;
    const merging = input.metadata !== undefined && input.mergeMetadata ? memory.metadata : undefined;
    const updated = changesCollections
      ? await store.memories.changeCollections(tenantId, memoryId, change, { added, removed }, merging)
      : await store.memories.update(tenantId, memoryId, change, merging);
    if (!updated) {
      if (merging && (await store.memories.exists(memoryId))) return null;
      throw notFound('memory', memoryId);
    }
    if (changesCollections) {
      try {
        await carryCollectionChange(updated);
      } catch (error) {
        // The change is recorded with what is left to do, so the reconciler finishes it.
        logger.warn({ err: error, memoryId }, 'collection change not carried through yet; the reconciler will');
      }
    }
    return updated;
  }

  /**
   * Carries a recorded collection change through: chunks follow the memory's collections, the
   * graph leaves the collections it left, every search process reloads the memory, and the graph
   * is projected into the collections it joined. Idempotent; the record is cleared last.
   */
  async function carryCollectionChange(memory: MemorySummary): Promise<void> {
    const sync = memory.collections_sync;
    if (!sync) return;
    await store.chunks.setCollections(memory.id, memory.collection_ids);
    const left = sync.removed.filter((id) => !memory.collection_ids.includes(id));
    if (left.length > 0) {
      // The entities it named there lose its description and names, announced with the removal.
      await store.factEvents.removeMemories(memory.tenant_id, [memory.id], left);
      await store.procedures.removeMemories([memory.id], left);
    }
    await store.indexChanges.publishUpserts(memory.tenant_id, [{ id: memory.id, collectionIds: memory.collection_ids }]);
    const joined = sync.added.filter((id) => memory.collection_ids.includes(id));
    if (joined.length > 0 && memory.status === 'complete') {
      await orchestrator.startGraphProjection({ memoryId: memory.id, tenantId: memory.tenant_id, collectionIds: joined });
    }
    await store.memories.clearCollectionSync(memory.id, sync.since);
  }

  /** Deletes permanently (the one delete cascade), with no read-only check: callers decide who may. */
  async function purge(
    tenantId: string,
    memoryIds: string[],
    options: PurgeOptions = {},
  ): Promise<{ deleted: string[]; notFound: string[] }> {
    const unique = [...new Set(memoryIds)];
    const purges = await store.purge.begin(tenantId, unique);
    const deleted = purges.map((one) => one.memoryId);
    deps.searchIndex?.forget(deleted);
    await completePurges(purges, false, options);
    const deletedSet = new Set(deleted);
    return { deleted, notFound: unique.filter((id) => !deletedSet.has(id)) };
  }

  /** Adds messages to a conversation memory; only they are read, structured and indexed. */
  async function append(tenantId: string, memoryId: string, input: AppendMessagesInput): Promise<Memory> {
    const memory = await store.memories.find(tenantId, memoryId);
    if (!memory) throw notFound('memory', memoryId);
    await assertWritableMemories(tenantId, [memory], 'collection_id');
    if (memory.kind !== 'conversation' || !memory.content.messages) {
      throw conflict('memory_not_conversation', `Memory ${memoryId} is a ${memory.kind}; messages can only be appended to a conversation`);
    }
    if (!memory.collection_ids.includes(input.collectionId)) {
      throw validationError([{ field: 'collection_id', issue: `memory ${memoryId} does not belong to collection ${input.collectionId}` }]);
    }
    const busy = () =>
      new AppError(
        409,
        'memory_busy',
        `Memory ${memoryId} is being processed (status ${memory.status}); append once it is complete`,
        undefined,
        { 'Retry-After': '1' },
      );
    if (memory.status !== 'complete') throw busy();
    const messageCount = memory.content.messages.length;
    const workflowId = appendWorkflowId(memoryId, messageCount);
    const claimed = await store.memories.claimAppend(
      tenantId,
      memoryId,
      { chunkCount: memory.chunk_count, messageCount },
      input.messages,
      workflowId,
    );
    if (!claimed) throw busy();
    try {
      await start(claimed);
    } catch (error) {
      logger.error({ err: error, memoryId }, 'could not start append workflow');
      // Nothing half-written: the messages go back out and the memory is as it was.
      await store.memories.abandonAppend(memoryId, { from_message: messageCount, from_chunk: memory.chunk_count }, 'pipeline unavailable');
      await store.memories.update(tenantId, memoryId, { statusMessage: memory.status_message });
      throw serviceUnavailable('orchestrator_unavailable', 'The ingestion pipeline is unavailable; retry the request');
    }
    return claimed;
  }

  return {
    async create(
      tenantId: string,
      input: CreateMemoryInput,
      idempotencyKey: string | null,
    ): Promise<{ memory: Memory; replayed: boolean }> {
      await deps.collections.assertWritable(tenantId, [input.collectionId], 'collection_id');
      if (input.files) await assertSupportedFiles(input.files.filter(isInline));
      let memoryId = newId();
      if (idempotencyKey !== null) {
        const hash = requestHash(input);
        const claim = await store.idempotency.claim({ tenantId, key: idempotencyKey, memoryId, requestHash: hash });
        if (!claim.claimed) {
          if (claim.existing.requestHash !== hash) {
            throw unprocessable(
              'idempotency_key_reused',
              'This Idempotency-Key was already used with a different request body',
              'Idempotency-Key',
            );
          }
          memoryId = claim.existing.memoryId;
          const existing = await store.memories.find(tenantId, memoryId);
          if (existing) {
            // The first attempt may have died before starting its workflow: starting is idempotent.
            if (existing.status === 'queued') await start(existing).catch(() => undefined);
            return { memory: existing, replayed: true };
          }
          // The first attempt died before writing the memory: finish its work under the same id.
        }
      }

      const taken = new Map<string, MemoryFile>();
      let content = input.content;
      let memory: Memory;
      try {
        if (input.files) content = { files: await gatherFiles(tenantId, memoryId, input.collectionId, input.files, taken) };
        memory = await insertQueued(tenantId, memoryId, { ...input, content });
      } catch (error) {
        await giveBack(content, taken);
        throw error;
      }
      for (const [uploadId, file] of taken) await deps.uploads.attached(uploadId, memoryId, file.file_id);
      try {
        await start(memory);
      } catch (error) {
        // Leave nothing half-written: the client is told to retry and no orphan record remains.
        logger.error({ err: error, memoryId }, 'could not start ingestion workflow');
        await store.memories.deleteMany(tenantId, [memoryId]);
        await giveBack(content, taken);
        if (idempotencyKey !== null) await store.idempotency.release(tenantId, idempotencyKey);
        throw serviceUnavailable('orchestrator_unavailable', 'The ingestion pipeline is unavailable; retry the request');
      }
      return { memory, replayed: false };
    },

    update,
    append,

    async get(tenantId: string, memoryId: string): Promise<{ memory: Memory; chunks: ChunkText[] }> {
      const memory = await store.memories.find(tenantId, memoryId);
      if (!memory) throw notFound('memory', memoryId);
      // Retrieval by id is a use of the memory: it raises its activation in later searches. Only
      // of one that search can find (core/memory-model.ts isSearchable): a client polling a memory
      // in its first run is watching it, not using it (each poll would add a trace and a write).
      if (isSearchable(memory))
        void store.memories.recordAccess([memoryId]).catch((error: unknown) => logger.warn({ err: error }, 'could not record access'));
      const chunks = await store.chunks.forMemory(memoryId);
      return { memory, chunks };
    },

    /** The original uploaded file of a memory (part index as sent), for its owner to download. */
    async openFile(tenantId: string, memoryId: string, part: number) {
      const memory = await store.memories.find(tenantId, memoryId);
      if (!memory) throw notFound('memory', memoryId);
      const file = memory.content.files?.[part];
      if (!file) {
        const count = memory.content.files?.length ?? 0;
        throw new AppError(
          404,
          'content_not_found',
          count === 0 ? `Memory ${memoryId} has no uploaded files` : `Memory ${memoryId} has ${count} file(s); part ${part} does not exist`,
          [{ field: 'part', issue: 'no such content part' }],
        );
      }
      return { file, stream: store.files.openDownload(file.file_id) };
    },

    async list(tenantId: string, input: MemoryListInput): Promise<{ items: MemorySummary[]; total: number }> {
      if (input.collectionIds.length > 0) await deps.collections.assertReadable(tenantId, input.collectionIds, 'collection_ids');
      return store.memories.list({ tenantId, ...input });
    },

    /**
     * Deletes permanently. Durable once the memories are reported deleted: a crash after that
     * leaves an intent that `sweepDeletions` finishes (store/memory-purge.ts).
     */
    async delete(tenantId: string, memoryIds: string[]): Promise<{ deleted: string[]; notFound: string[] }> {
      await assertWritableMemories(tenantId, await store.memories.membershipsOf(tenantId, memoryIds), 'memory_ids');
      return purge(tenantId, memoryIds);
    },

    /** Deletes without the read-only check: the expiry sweep and an import's own cleanup remove imported memories. */
    purge,

    /** Finishes deletes that a crash interrupted (requested more than `olderThanMs` ago). */
    async sweepDeletions(olderThanMs: number): Promise<number> {
      const pending = await store.purge.pending(new Date(Date.now() - olderThanMs), 100);
      await completePurges(pending, true);
      return pending.length;
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

    /** Carries through collection changes that a crash or an unreachable Temporal left unfinished. */
    async reconcileCollectionChanges(olderThanMs: number): Promise<number> {
      const stale = await store.memories.findStaleCollectionSyncs(new Date(Date.now() - olderThanMs), 100);
      for (const memory of stale) await carryCollectionChange(memory);
      return stale.length;
    },
  };
}

export type MemoryService = ReturnType<typeof createMemoryService>;
