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
import { chunkTime, storedChunkTime } from '../core/memory-time.js';
import { planChunks, planFileChunks, type PlannedChunk } from '../extractors/chunking.js';
import type { FileExtractors } from '../extractors/files.js';
import type { StructureExtractor } from '../extractors/structure/types.js';
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import { UnreadableContentError } from '../extractors/types.js';
import type { Embedder } from '../models/embedder.js';
import type { Store } from '../store/index.js';
import type { Memory } from '../core/memory-model.js';
import type { Sentence } from '../extractors/structure/parse.js';
import { extractChunks, GraphBuilder, startExtractions, type StartedExtractions } from './graph-builder.js';
import { deriveMemoryProcedures } from './procedure-derivation.js';
import { progressTargetOf, ProgressQueue, reportTerminal, heartbeat } from './progress.js';

export interface IngestActivityDeps {
  store: Store;
  embedder: () => Promise<Embedder>;
  files: FileExtractors;
  logger: Logger;
  chunkMaxChars: number;
  maxChunksPerMemory: number;
  embeddingBatchSize: number;
  /** How long a passage request may wait for others to fill its model call (EMBEDDING_COALESCE_MS). */
  embeddingCoalesceMs: number;
  extractor: StructureExtractor;
  /** Cosine similarity of entity-name embeddings at or above which two entities merge. */
  entitySimilarityThreshold: number;
  /** The functional-predicate lexicon (FACT_LEXICON_FILE): validity and supersession of facts. */
  classifier: PredicateClassifier;
}

/** Set when a run processes messages appended to a conversation: where the new content starts. */
export interface AppendStart {
  fromMessage: number;
  fromChunk: number;
}

export interface IngestInput {
  memoryId: string;
  tenantId: string;
  append?: AppendStart;
}

export interface GraphProjectionInput {
  memoryId: string;
  tenantId: string;
  collectionIds: string[];
}

/** Later stages get the memory's collections from the read stage instead of re-reading it. */
export interface StageInput extends IngestInput {
  collectionIds: string[];
}

export interface ReadResult {
  chunkCount: number;
  collectionIds: string[];
  /** Every chunk of the memory as the stage wrote them, when that is all of them (not an append); not part of the activity's result. */
  chunks?: StoredChunk[];
}

export interface IndexResult {
  status: 'complete' | 'deleted';
  chunkCount: number;
}

export function createIngestActivities(deps: IngestActivityDeps) {
  const { store } = deps;
  /** Single-pass ingestions running in this worker: with more than one, their embedding requests wait to share model calls. */
  let inFlight = 0;
  const coalesceMs = (): number => (inFlight > 1 ? deps.embeddingCoalesceMs : 0);

  async function loadMemory(memoryId: string): Promise<Memory> {
    const memory = await store.memories.findForIngestion(memoryId);
    if (!memory) throw ApplicationFailure.nonRetryable(`memory ${memoryId} was deleted`, MEMORY_DELETED);
    return memory;
  }

  /** Removes everything derived from a memory deleted under us: the same steps as its delete. */
  async function purge(memory: Pick<Memory, 'id' | 'tenant_id'>): Promise<void> {
    await store.purge.removeDerived([{ memoryId: memory.id, tenantId: memory.tenant_id }]);
  }

  const targetOf = (input: StageInput) => ({ memoryId: input.memoryId, tenantId: input.tenantId, collectionIds: input.collectionIds });

  /** Moves the status on; doubles as the "still exists?" check that stops a deleted memory. */
  async function enterStage(input: StageInput, status: 'structuring' | 'indexing'): Promise<void> {
    if (!(await store.memories.setStatus(input.memoryId, status))) {
      throw ApplicationFailure.nonRetryable(`memory ${input.memoryId} was deleted`, MEMORY_DELETED);
    }
  }

  /** OCR, PDF text, transcription or parsing of each uploaded file, with page/window progress. */
  async function extractFiles(memory: Memory, progress: ProgressQueue): Promise<PlannedChunk[]> {
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
          progress.report(target, 'extract', 'reading', current, total, file.filename);
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
          // The stable refusal code, when there is one, ends the message where clients can find it.
          const code = error.code ? ` [${error.code}]` : '';
          throw ApplicationFailure.nonRetryable(`${file.filename}: ${error.message}${code}`, BAD_CONTENT);
        }
        throw error;
      }
    }
    return planned;
  }

  /**
   * Runs one activity's stages with a progress queue, settled before the activity ends: on
   * success (its failure fails the attempt) and on failure (the stage's own error is the one thrown).
   */
  async function withProgress<T>(work: (progress: ProgressQueue) => Promise<T>): Promise<T> {
    const progress = new ProgressQueue(store);
    try {
      const result = await work(progress);
      await progress.settle();
      return result;
    } catch (error) {
      await progress.settle().catch(() => undefined);
      throw error;
    }
  }

  async function readContent(input: IngestInput): Promise<ReadResult> {
    // The activity's result goes into the workflow's history: the counts and collections only.
    const { chunkCount, collectionIds } = await withProgress((progress) => readStage(input, progress));
    return { chunkCount, collectionIds };
  }

  /** `onPlanned`: given the chunks to write (index, text, source) before they are written. */
  async function readStage(
    input: IngestInput,
    progress: ProgressQueue,
    onPlanned?: (chunks: { index: number; text: string; source: PlannedChunk['source'] }[]) => void,
  ): Promise<ReadResult> {
    const memory = await loadMemory(input.memoryId);
    const target = progressTargetOf(memory);
    progress.report(target, 'read', 'reading', 0, 1);

    const fromChunk = input.append?.fromChunk ?? 0;
    const all = memory.content.files ? await extractFiles(memory, progress) : planChunks(memory.content, deps.chunkMaxChars);
    // An append run plans only the new messages; their chunks are numbered after the existing ones.
    const fromMessage = input.append?.fromMessage;
    const planned = fromMessage === undefined ? all : all.filter((chunk) => (chunk.source.message_index ?? 0) >= fromMessage);
    if (planned.length === 0) throw ApplicationFailure.nonRetryable('the memory has no text content to index', BAD_CONTENT);
    const total = fromChunk + planned.length;
    if (total > deps.maxChunksPerMemory) {
      throw ApplicationFailure.nonRetryable(
        `the content splits into ${total} chunks, more than the limit of ${deps.maxChunksPerMemory}`,
        BAD_CONTENT,
      );
    }
    onPlanned?.(planned.map((chunk, offset) => ({ index: fromChunk + offset, text: chunk.text, source: chunk.source })));
    const rows = planned.map((chunk, offset) => ({
      id: chunkId(memory.id, fromChunk + offset),
      memory_id: memory.id,
      tenant_id: memory.tenant_id,
      collection_ids: memory.collection_ids,
      index: fromChunk + offset,
      text: chunk.text,
      source: chunk.source,
      occurred_at: chunkTime(memory, chunk.source),
    }));
    await store.chunks.upsertMany(rows);
    // Only a retried attempt can have left extra chunks behind (its content cannot change, but
    // the chunk size setting can between deployments).
    if (Context.current().info.attempt > 1) await store.chunks.deleteFromIndex(memory.id, total);
    if (!(await store.memories.setStatus(memory.id, 'reading', { chunk_count: total }))) {
      await purge(memory);
      throw ApplicationFailure.nonRetryable(`memory ${memory.id} was deleted`, MEMORY_DELETED);
    }
    progress.report(target, 'chunk', 'reading', 1, 1, `${planned.length} chunks`);
    // Without an append these rows are now all the memory's chunks (a retry's leftovers beyond them
    // were deleted, and a write replaces a chunk whole, vector included).
    const chunks = input.append ? undefined : rows.map((row) => ({ ...row, embedding: null, embedding_model: null }));
    return { chunkCount: total, collectionIds: memory.collection_ids, ...(chunks ? { chunks } : {}) };
  }

  /**
   * Extracts entities and facts from the (new) chunks and merges them into each collection's graph.
   * `chunks`: the memory's chunks when the caller already read them; `keepParse`: the extractions
   * keep their parse for procedure derivation (a single pass, for a bounded number of chunks).
   */
  async function buildGraph(
    memory: Memory,
    collectionIds: string[],
    fromChunk: number,
    /** Where the structuring stage's progress goes; none when a complete memory's graph is projected. */
    progress: ProgressQueue | null,
    shared: { chunks?: StoredChunk[]; keepParse?: boolean; started?: StartedExtractions } = {},
  ) {
    const embedder = await deps.embedder();
    const builder = new GraphBuilder({
      graph: store.graph,
      extractor: deps.extractor,
      embedder,
      similarityThreshold: deps.entitySimilarityThreshold,
      classifier: deps.classifier,
      nameCoalesceMs: coalesceMs(),
    });
    const chunks = (shared.chunks ?? (await store.chunks.forMemory(memory.id))).filter((chunk) => chunk.index >= fromChunk);
    const target = progressTargetOf(memory);
    let lastReport = Date.now();
    const extractions = await extractChunks(
      deps.extractor,
      chunks,
      (done) => {
        heartbeat({ stage: 'structure', current: done, total: chunks.length });
        if (progress && Date.now() - lastReport > 250 && done < chunks.length) {
          lastReport = Date.now();
          progress.report(target, 'structure', 'structuring', done, chunks.length);
        }
      },
      (chunk) => storedChunkTime(chunk, memory),
      { keepParse: shared.keepParse === true, ...(shared.started ? { started: shared.started } : {}) },
    );
    let entities = 0;
    let facts = 0;
    for (const collectionId of collectionIds) {
      const scope = { tenantId: memory.tenant_id, collectionId };
      const written = await builder.writeToCollection(scope, memory.id, extractions);
      entities = Math.max(entities, written.entities);
      facts = Math.max(facts, written.facts);
      await store.factEvents.announceSupersessions(scope, memory.id, written.subjectIds, written.predicates);
    }
    return { chunks: chunks.length, entities, facts, extractions };
  }

  async function extractStructure(input: StageInput): Promise<void> {
    await withProgress((progress) => structureStage(input, progress));
  }

  /**
   * `pass`: run inside the single-pass activity, which shares the memory's chunks and the parse with
   * the later stages and checks for a delete once, when it enters indexing (after all graph writes).
   */
  async function structureStage(input: StageInput, progress: ProgressQueue, pass?: SinglePass): Promise<Memory> {
    // The memory's collections now, not when the run began: an update may have changed them. Read
    // beside the status change (either one finds a deleted memory): one round trip less on its path.
    const [, memory] = await Promise.all([enterStage(input, 'structuring'), loadMemory(input.memoryId)]);
    const built = await buildGraph(
      memory,
      memory.collection_ids,
      input.append?.fromChunk ?? 0,
      progress,
      pass
        ? {
            chunks: pass.chunks,
            keepParse: pass.chunks.length <= KEEP_PARSE_MAX_CHUNKS,
            ...(pass.extractions ? { started: pass.extractions } : {}),
          }
        : {},
    );
    if (pass) {
      for (const extraction of built.extractions) if (extraction.sentences) pass.parses.set(extraction.chunkIndex, extraction.sentences);
    } else if (!(await store.memories.exists(memory.id))) {
      await purge(memory);
      throw ApplicationFailure.nonRetryable(`memory ${memory.id} was deleted`, MEMORY_DELETED);
    }
    progress.report(
      targetOf(input),
      'structure',
      'structuring',
      built.chunks,
      built.chunks,
      `${built.entities} entities, ${built.facts} facts`,
    );
    return memory;
  }

  /**
   * Procedure traces of the memory in each of its collections, after structuring (the traces link
   * to the entities and facts it just wrote), then the instances and patterns around them.
   */
  async function deriveWorkflows(input: StageInput): Promise<void> {
    await deriveStage(await loadMemory(input.memoryId));
  }

  async function deriveStage(memory: Memory, pass?: SinglePass): Promise<void> {
    const started = Date.now();
    const traces = await deriveMemoryProcedures(
      store,
      memory,
      memory.collection_ids,
      () => heartbeat({ stage: 'workflows' }),
      pass ? { chunks: pass.chunks, parses: pass.parses } : {},
    );
    if (!pass && !(await store.memories.exists(memory.id))) {
      await purge(memory);
      throw ApplicationFailure.nonRetryable(`memory ${memory.id} was deleted`, MEMORY_DELETED);
    }
    deps.logger.debug({ memoryId: memory.id, traces, ms: Date.now() - started }, 'procedure traces derived');
  }

  /**
   * Adds a complete memory's graph to collections it was just associated with (an update). The
   * memory's chunks are already indexed; only the graph of those collections is missing.
   */
  async function projectGraph(input: GraphProjectionInput): Promise<void> {
    const memory = await loadMemory(input.memoryId);
    const collectionIds = input.collectionIds.filter((id) => memory.collection_ids.includes(id));
    if (collectionIds.length === 0) return;
    await buildGraph(memory, collectionIds, 0, null);
    await deriveMemoryProcedures(store, memory, collectionIds, () => heartbeat({ stage: 'workflows' }));
    const after = await store.memories.findForIngestion(memory.id);
    // Deleted, or detached again meanwhile: take back what this run wrote.
    if (!after) return purge(memory);
    const detached = collectionIds.filter((id) => !after.collection_ids.includes(id));
    if (detached.length > 0) {
      await store.factEvents.removeMemories(memory.tenant_id, [memory.id], detached);
      await store.procedures.removeMemories([memory.id], detached);
    }
    // Search processes reload the memory's graph (and vectors) from the store.
    await store.indexChanges.publishUpserts(memory.tenant_id, [{ id: memory.id, collectionIds: after.collection_ids }]);
  }

  async function embedAndIndex(input: StageInput): Promise<IndexResult> {
    return withProgress((progress) => indexStage(input, progress));
  }

  /** The chunks still to embed with the current model: chunks embedded by an earlier attempt are kept. */
  const toEmbed = (chunks: StoredChunk[], modelId: string): StoredChunk[] => chunks.filter((chunk) => chunk.embedding_model !== modelId);

  async function indexStage(input: StageInput, progress: ProgressQueue, pass?: SinglePass): Promise<IndexResult> {
    const memory = { id: input.memoryId, tenant_id: input.tenantId };
    const target = targetOf(input);
    const embedder = await deps.embedder();
    if (pass) {
      // The single pass's one delete check, after all its graph and trace writes: a delete that ran
      // its cascade before they landed leaves them behind, so take them back.
      if (!(await store.memories.setStatus(input.memoryId, 'indexing'))) {
        await purge(memory);
        throw ApplicationFailure.nonRetryable(`memory ${input.memoryId} was deleted`, MEMORY_DELETED);
      }
    } else await enterStage(input, 'indexing');

    const chunks = pass?.chunks ?? (await store.chunks.forMemory(memory.id));
    const todo = toEmbed(chunks, embedder.modelId);
    const total = chunks.length;
    let done = total - todo.length;
    progress.report(target, 'embed', 'indexing', done, total);

    for (let offset = 0; offset < todo.length; offset += deps.embeddingBatchSize) {
      if (Context.current().cancellationSignal.aborted) throw new Error('activity cancelled');
      const batch = todo.slice(offset, offset + deps.embeddingBatchSize);
      // The first batch was embedded while the memory was being structured (single pass).
      const early = offset === 0 ? pass?.firstBatch : undefined;
      const vectors = early
        ? await early
        : await embedder.embedPassages(
            batch.map((chunk) => chunk.text),
            { coalesceMs: coalesceMs() },
          );
      await store.chunks.setEmbeddings(
        embedder.modelId,
        batch.map((chunk, index) => ({ id: chunk.id, vector: vectors[index]! })),
      );
      done += batch.length;
      heartbeat({ stage: 'embed', current: done, total });
      if (done < total) progress.report(target, 'embed', 'indexing', done, total);
    }

    // Chunks take the memory's current collections: an update may have changed them mid-run. When
    // they already carry them there is nothing to write: the rows hold either what this run
    // wrote or read, or what an update set since, and an update sets the memory's collections of its time.
    const current = await store.memories.findForIngestion(memory.id);
    if (current && !chunks.every((chunk) => sameMembers(chunk.collection_ids, current.collection_ids))) {
      await store.chunks.setCollections(memory.id, current.collection_ids);
    }
    await store.indexChanges.publishUpserts(memory.tenant_id, [{ id: memory.id, collectionIds: current?.collection_ids ?? [] }]);
    const stillThere = await store.memories.setStatus(memory.id, 'complete', {
      embedding_model: embedder.modelId,
      status_message: null,
      indexed_chunk_count: total,
      append: null,
    });
    if (!stillThere) {
      await purge(memory);
      return { status: 'deleted', chunkCount: 0 };
    }
    // The stages' progress events first: the terminal event is the run's last.
    await progress.settle();
    await reportTerminal(store, target, 'complete', total, total);
    return { status: 'complete', chunkCount: total };
  }

  /** Final step of a failed run: nothing partial stays searchable, and the reason is recorded. */
  async function markFailed(input: IngestInput & { message: string }): Promise<void> {
    const memory = await store.memories.findForIngestion(input.memoryId);
    if (!memory) return;
    if (input.append) {
      // A failed append takes back only its own messages; what was searchable before stays so.
      const { fromChunk, fromMessage } = input.append;
      await store.chunks.deleteFromIndex(memory.id, fromChunk);
      // Supersessions its messages announced are undone (fact_restored), as for a failed ingestion.
      await store.factEvents.removeChunkRows(memory.tenant_id, memory.id, memory.collection_ids, fromChunk);
      await store.procedures.removeMemories([memory.id], memory.collection_ids, fromChunk);
      await store.indexChanges.publishUpserts(memory.tenant_id, [{ id: memory.id, collectionIds: memory.collection_ids }]);
      await store.memories.abandonAppend(memory.id, { from_chunk: fromChunk, from_message: fromMessage }, input.message);
      await reportTerminal(store, progressTargetOf(memory), 'failed', 0, 0, `append failed: ${input.message}`);
      deps.logger.info({ memoryId: memory.id, reason: input.message }, 'append failed');
      return;
    }
    // Nothing partial stays searchable; the record (with its reason) and its files stay.
    await store.chunks.deleteForMemories([memory.id]);
    await store.factEvents.removeMemories(memory.tenant_id, [memory.id]);
    await store.procedures.removeMemories([memory.id]);
    await store.indexChanges.publishRemoves(memory.tenant_id, [memory.id]);
    await store.memories.setStatus(memory.id, 'failed', { status_message: input.message, chunk_count: 0 });
    await reportTerminal(store, progressTargetOf(memory), 'failed', 0, 0, input.message);
    deps.logger.info({ memoryId: memory.id, reason: input.message }, 'ingestion failed');
  }

  /**
   * The whole pipeline in one activity (workflows since the `single-pass-ingest` patch): read,
   * structure, derive procedure traces, embed and index, with the same status changes, progress
   * events and heartbeats as the separate stages. No durability boundary is lost: every stage
   * writes idempotently and resumes from the store, and a retried attempt skips the read when the
   * previous attempt's heartbeats got past it (an OCR or transcription is not redone). In one
   * pass the chunks are read from the store once, the extractor's parse serves procedure
   * derivation, and the first batch of chunks is embedded while the memory is structured.
   */
  async function ingestContent(input: IngestInput): Promise<IndexResult> {
    inFlight += 1;
    try {
      return await withProgress((progress) => singlePass(input, progress));
    } finally {
      inFlight -= 1;
    }
  }

  async function singlePass(input: IngestInput, progress: ProgressQueue): Promise<IndexResult> {
    // A retry resumes after the stages its predecessors' heartbeats say were done (every stage writes
    // idempotently, so redoing one is only slower): a worker killed mid-embedding does not structure again.
    const done = stagesDoneBefore(Context.current().info.heartbeatDetails);
    // The extraction of a memory's chunks starts once they are planned, and runs while the read
    // stage writes them: it is the longest step of a small memory's path to searchable.
    let extractions: StartedExtractions | undefined;
    const startExtracting = (planned: Parameters<typeof startExtractions>[1]): void => {
      if (planned.length <= KEEP_PARSE_MAX_CHUNKS) extractions = startExtractions(deps.extractor, planned, { keepParse: true });
    };
    const read = done >= 1 ? null : await readStage(input, progress, startExtracting);
    const collectionIds = read ? read.collectionIds : (await loadMemory(input.memoryId)).collection_ids;
    const stage: StageInput = { ...input, collectionIds };
    const embedder = await deps.embedder();
    const chunks = read?.chunks ?? (await store.chunks.forMemory(input.memoryId));
    const first = toEmbed(chunks, embedder.modelId).slice(0, deps.embeddingBatchSize);
    const overlap = new AbortController();
    const cancelled = Context.current().cancellationSignal;
    const stop = (): void => overlap.abort(cancelled.reason);
    cancelled.addEventListener('abort', stop, { once: true });
    const pass: SinglePass = { chunks, parses: new Map(), ...(extractions ? { extractions } : {}) };
    // The first batch's vectors are needed once structuring is done: until then (at most
    // FIRST_BATCH_MAX_WAIT_MS) its request waits for other memories' chunks to share its model call.
    let structured!: () => void;
    const structuring = new Promise<void>((resolve) => (structured = resolve));
    if (first.length > 0) {
      pass.firstBatch = embedder.embedPassages(
        first.map((chunk) => chunk.text),
        { signal: overlap.signal, ...(inFlight > 1 ? { coalesceMs: FIRST_BATCH_MAX_WAIT_MS, until: structuring } : {}) },
      );
      // Awaited in the indexing stage; a failure before it must not surface as an unhandled rejection.
      pass.firstBatch.catch(() => undefined);
    }
    try {
      if (done < 2) {
        const memory = await structureStage(stage, progress, pass);
        structured();
        await deriveStage(memory, pass);
      } else if (done < 3) {
        structured();
        await deriveStage(await loadMemory(input.memoryId), pass);
      }
      structured();
      return await indexStage(stage, progress, pass);
    } finally {
      structured();
      cancelled.removeEventListener('abort', stop);
      overlap.abort(new Error('single pass ended'));
    }
  }

  return { readContent, extractStructure, deriveWorkflows, embedAndIndex, ingestContent, markFailed, projectGraph };
}

export type IngestActivities = ReturnType<typeof createIngestActivities>;

type StoredChunk = Awaited<ReturnType<Store['chunks']['forMemory']>>[number];

const sameMembers = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((id) => b.includes(id));

/** Shared by the stages of one single-pass activity. */
interface SinglePass {
  /** The memory's chunks, read once after the read stage wrote them. */
  chunks: StoredChunk[];
  /** The extractor's parse of each chunk, by chunk index, for procedure derivation. */
  parses: Map<number, Sentence[]>;
  /** Vectors of the first chunks still to embed (up to one embedding batch), computed during structuring. */
  firstBatch?: Promise<Float32Array[]>;
  /** The extractor's answers for the chunks the read stage planned, handed over before it wrote them. */
  extractions?: StartedExtractions;
}

/**
 * Memories of up to this many chunks keep the extractor's parse for procedure derivation (a few
 * hundred bytes per token); larger ones are parsed again there, as before.
 */
const KEEP_PARSE_MAX_CHUNKS = 64;

/** The longest a single pass's first embedding batch waits for others' chunks (it is needed when structuring ends). */
const FIRST_BATCH_MAX_WAIT_MS = 2000;

/**
 * How many of the single pass's stages (read, structure, derive) an earlier attempt finished, from
 * its last heartbeat: `chunk` ends the read and `structure` runs after it; `workflows` beats only once
 * the structure is written; `embed` only once derivation is too. Heartbeats of one attempt go forward
 * in this order, and a stage once done stays done, so a stale heartbeat only means redoing more.
 */
export function stagesDoneBefore(details: unknown): number {
  if (typeof details !== 'object' || details === null || !('stage' in details) || typeof details.stage !== 'string') return 0;
  return STAGES_DONE_AT_HEARTBEAT.get(details.stage) ?? 0;
}

const STAGES_DONE_AT_HEARTBEAT = new Map([
  ['chunk', 1],
  ['structure', 1],
  ['workflows', 2],
  ['embed', 3],
]);
