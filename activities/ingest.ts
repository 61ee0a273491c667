/**
 * The ingestion activities, built by a factory so the worker injects MongoDB and the models.
 * Every activity is idempotent: Temporal may run it again after a crash or timeout, so writes
 * use deterministic ids (memory id + chunk index) and resume from what is already stored.
 *
 * Deletion may happen at any moment while these run. Each activity re-checks that its memory
 * still exists after writing, and cleans up what it wrote if not, so nothing is resurrected.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Logger } from '../core/logger.js';
import { BAD_CONTENT, MEMORY_DELETED } from '../core/failure-types.js';
import { chunkId } from '../core/ids.js';
import { planChunks, planFileChunks, type PlannedChunk } from '../extractors/chunking.js';
import type { FileExtractors } from '../extractors/files.js';
import { UnreadableContentError } from '../extractors/types.js';
import type { Embedder } from '../models/embedder.js';
import type { Store } from '../store/index.js';
import type { MemoryDoc } from '../store/memories.js';
import { progressTargetOf, reportProgress, heartbeat } from './progress.js';

export interface IngestActivityDeps {
  store: Store;
  embedder: () => Promise<Embedder>;
  files: FileExtractors;
  logger: Logger;
  chunkMaxChars: number;
  maxChunksPerMemory: number;
  embeddingBatchSize: number;
}

export interface IngestInput {
  memoryId: string;
  tenantId: string;
}

/** Later stages get the memory's collections from the read stage instead of re-reading it. */
export interface StageInput extends IngestInput {
  collectionIds: string[];
}

export interface ReadResult {
  chunkCount: number;
  collectionIds: string[];
}

export interface IndexResult {
  status: 'complete' | 'deleted';
  chunkCount: number;
}

export function createIngestActivities(deps: IngestActivityDeps) {
  const { store } = deps;

  async function loadMemory(memoryId: string): Promise<MemoryDoc> {
    const memory = await store.memories.findForIngestion(memoryId);
    if (!memory) throw ApplicationFailure.nonRetryable(`memory ${memoryId} was deleted`, MEMORY_DELETED);
    return memory;
  }

  /** Removes everything derived from a memory that has been deleted under us. */
  async function purge(memory: Pick<MemoryDoc, '_id' | 'tenant_id'>): Promise<void> {
    await store.chunks.deleteForMemories([memory._id]);
    await store.indexChanges.publish('remove', memory.tenant_id, [memory._id]);
  }

  const targetOf = (input: StageInput) => ({ memoryId: input.memoryId, tenantId: input.tenantId, collectionIds: input.collectionIds });

  /** Moves the status on; doubles as the "still exists?" check that stops a deleted memory. */
  async function enterStage(input: StageInput, status: 'structuring' | 'indexing'): Promise<void> {
    if (!(await store.memories.setStatus(input.memoryId, status))) {
      throw ApplicationFailure.nonRetryable(`memory ${input.memoryId} was deleted`, MEMORY_DELETED);
    }
  }

  /** OCR, PDF text, transcription or parsing of each uploaded file, with page/window progress. */
  async function extractFiles(memory: MemoryDoc): Promise<PlannedChunk[]> {
    const target = progressTargetOf(memory);
    const files = memory.content.files ?? [];
    const planned: PlannedChunk[] = [];
    for (const [index, file] of files.entries()) {
      const bytes = await store.files.read(file.file_id);
      let lastReport = 0;
      const onProgress = async (current: number, total: number) => {
        heartbeat({ stage: 'extract', file: index, current, total });
        // One event per unit, but not more than a few a second for fast formats.
        if (current === total || Date.now() - lastReport > 250) {
          lastReport = Date.now();
          await reportProgress(store, target, 'extract', 'reading', current, total, file.filename);
        }
      };
      try {
        const extraction = await deps.files.extract(
          bytes,
          file.media_type,
          file.filename,
          onProgress,
          Context.current().cancellationSignal,
        );
        planned.push(...planFileChunks(extraction, index, file.filename, deps.chunkMaxChars));
      } catch (error) {
        if (error instanceof UnreadableContentError) {
          throw ApplicationFailure.nonRetryable(`${file.filename}: ${error.message}`, BAD_CONTENT);
        }
        throw error;
      }
    }
    return planned;
  }

  async function readContent(input: IngestInput): Promise<ReadResult> {
    const memory = await loadMemory(input.memoryId);
    const target = progressTargetOf(memory);
    await reportProgress(store, target, 'read', 'reading', 0, 1);

    const planned = memory.content.files ? await extractFiles(memory) : planChunks(memory.content, deps.chunkMaxChars);
    if (planned.length === 0) throw ApplicationFailure.nonRetryable('the memory has no text content to index', BAD_CONTENT);
    if (planned.length > deps.maxChunksPerMemory) {
      throw ApplicationFailure.nonRetryable(
        `the content splits into ${planned.length} chunks, more than the limit of ${deps.maxChunksPerMemory}`,
        BAD_CONTENT,
      );
    }
    await store.chunks.upsertMany(
      planned.map((chunk, index) => ({
        _id: chunkId(memory._id, index),
        memory_id: memory._id,
        tenant_id: memory.tenant_id,
        collection_ids: memory.collection_ids,
        index,
        text: chunk.text,
        source: chunk.source,
      })),
    );
    // Only a retried attempt can have left extra chunks behind (its content cannot change, but
    // the chunk size setting can between deployments).
    if (Context.current().info.attempt > 1) await store.chunks.deleteFromIndex(memory._id, planned.length);
    if (!(await store.memories.setStatus(memory._id, 'reading', { chunk_count: planned.length }))) {
      await purge(memory);
      throw ApplicationFailure.nonRetryable(`memory ${memory._id} was deleted`, MEMORY_DELETED);
    }
    await reportProgress(store, target, 'chunk', 'reading', 1, 1, `${planned.length} chunks`);
    return { chunkCount: planned.length, collectionIds: memory.collection_ids };
  }

  /** Structure extraction is a pass-through here; the graph extractor plugs in at this stage. */
  async function extractStructure(input: StageInput): Promise<void> {
    await enterStage(input, 'structuring');
    await reportProgress(store, targetOf(input), 'structure', 'structuring', 1, 1);
  }

  async function embedAndIndex(input: StageInput): Promise<IndexResult> {
    const memory = { _id: input.memoryId, tenant_id: input.tenantId };
    const target = targetOf(input);
    const embedder = await deps.embedder();
    await enterStage(input, 'indexing');

    const chunks = await store.chunks.forMemory(memory._id);
    // Resume: chunks embedded by an earlier attempt with the same model are kept.
    const todo = chunks.filter((chunk) => chunk.embedding_model !== embedder.modelId);
    const total = chunks.length;
    let done = total - todo.length;
    await reportProgress(store, target, 'embed', 'indexing', done, total);

    for (let offset = 0; offset < todo.length; offset += deps.embeddingBatchSize) {
      if (Context.current().cancellationSignal.aborted) throw new Error('activity cancelled');
      const batch = todo.slice(offset, offset + deps.embeddingBatchSize);
      const vectors = await embedder.embedPassages(batch.map((chunk) => chunk.text));
      await store.chunks.setEmbeddings(
        embedder.modelId,
        batch.map((chunk, index) => ({ id: chunk._id, vector: vectors[index]! })),
      );
      done += batch.length;
      heartbeat({ stage: 'embed', current: done, total });
      if (done < total) await reportProgress(store, target, 'embed', 'indexing', done, total);
    }

    await store.indexChanges.publish('upsert', memory.tenant_id, [memory._id]);
    const stillThere = await store.memories.setStatus(memory._id, 'complete', {
      embedding_model: embedder.modelId,
      status_message: null,
    });
    if (!stillThere) {
      await purge(memory);
      return { status: 'deleted', chunkCount: 0 };
    }
    await reportProgress(store, target, 'complete', 'complete', total, total);
    return { status: 'complete', chunkCount: total };
  }

  /** Final step of a failed run: nothing partial stays searchable, and the reason is recorded. */
  async function markFailed(input: IngestInput & { message: string }): Promise<void> {
    const memory = await store.memories.findForIngestion(input.memoryId);
    if (!memory) return;
    await purge(memory);
    await store.memories.setStatus(memory._id, 'failed', { status_message: input.message, chunk_count: 0 });
    await reportProgress(store, progressTargetOf(memory), 'failed', 'failed', 0, 0, input.message);
    deps.logger.info({ memoryId: memory._id, reason: input.message }, 'ingestion failed');
  }

  return { readContent, extractStructure, embedAndIndex, markFailed };
}

export type IngestActivities = ReturnType<typeof createIngestActivities>;
