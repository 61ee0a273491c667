/**
 * The store as the ingestion activities (activities/ingest.ts) use it, in memory: the shared fakes
 * of this folder (memories, chunks, files, the index feed, the real delete cascade of
 * store/memory-purge.ts over them), extended with the writes only ingestion makes: chunks written
 * and embedded, graph rows, procedure traces, progress events, the terminal-report marks.
 *
 * Every write is in the shared journal, in order, so a test can say what happened before what (a
 * heartbeat that claims a stage done must come after that stage's writes). `deleteAt` plays a
 * concurrent delete: once the named write has landed, the record goes and the delete's cascade
 * removes what was derived so far, as the API process does; what an activity writes after that
 * survives unless the activity takes it back, which is what the tests look for.
 */
import type { GraphScope, NewEntity, NewFact, NewMention } from '../../../core/graph-model.js';
import type { MemoryStatus } from '../../../core/content-model.js';
import type { Memory } from '../../../core/memory-model.js';
import type { NewTrace } from '../../../core/procedures/rules.js';
import type { NewChunk, StoredChunk } from '../../../store/chunks.js';
import type { IngestionProgressPayload } from '../../../store/events.js';
import type { StoredFile } from '../../../store/files.js';
import { mentionRow } from '../../../store/graph.js';
import type { Store } from '../../../store/index.js';
import { MemoryPurge } from '../../../store/memory-purge.js';
import {
  derivedRepositories,
  FakeChunks,
  FakeFactEvents,
  FakeFiles,
  FakeProcedures,
  FakePurgeIntents,
  type FakeIndexChanges,
} from './derived.js';
import { Journal } from './journal.js';
import { FakeMemories } from './memories.js';

/** A journal that can stop the world after a given write to run a concurrent delete in between. */
class InterruptibleJournal extends Journal {
  after: ((at: string) => void) | null = null;

  override record(at: string, ...args: unknown[]): void {
    super.record(at, ...args);
    this.after?.(at);
  }
}

class IngestionMemories extends FakeMemories {
  private readonly marks = new Map<string, string>();

  constructor(private readonly log: Journal) {
    super(log);
  }

  override async setStatus(id: string, status: MemoryStatus, extra: Partial<Omit<Memory, 'id'>> = {}): Promise<boolean> {
    const found = await super.setStatus(id, status, extra);
    this.log.record(`memories.setStatus ${status}`, id, found);
    return found;
  }

  async terminalReported(id: string, scope: string): Promise<boolean> {
    return this.marks.get(id) === scope;
  }

  async markTerminalReported(id: string, scope: string): Promise<void> {
    this.marks.set(id, scope);
  }
}

class IngestionChunks extends FakeChunks {
  constructor(private readonly log: Journal) {
    super(log);
  }

  async upsertMany(chunks: NewChunk[]): Promise<void> {
    // As the repository's replaceOne: the row is replaced whole, its vector and model with it.
    for (const chunk of chunks) this.rows.set(chunk.id, { embedding_model: null, ...structuredClone(chunk) });
    this.log.record('chunks.upsertMany', chunks[0]?.memory_id, chunks.length);
  }

  async deleteFromIndex(memoryId: string, keepCount: number): Promise<void> {
    for (const [id, row] of this.rows) if (row.memory_id === memoryId && row.index >= keepCount) this.rows.delete(id);
    this.log.record('chunks.deleteFromIndex', memoryId, keepCount);
  }

  async setEmbeddings(model: string, items: { id: string; vector: Float32Array }[]): Promise<void> {
    // As the repository's updateOne by id: a chunk deleted meanwhile is not written again.
    for (const { id } of items) {
      const row = this.rows.get(id);
      if (row) row.embedding_model = model;
    }
    this.log.record(
      'chunks.setEmbeddings',
      items.map((item) => item.id),
    );
  }
}

class IngestionFiles extends FakeFiles {
  /** A stored file's bytes, as an upload left them (a fixture). */
  seed(fileId: string, memoryId: string, bytes: Buffer): void {
    this.rows.set(fileId, { file_id: fileId, memory_id: memoryId, bytes } as StoredFile & { bytes: Buffer });
  }

  async read(fileId: string): Promise<Buffer> {
    const row = this.rows.get(fileId);
    if (!row) throw new Error(`FileNotFound: file ${fileId} was not found`);
    return row.bytes;
  }
}

/**
 * Takes out, in place, the rows derived from `memoryIds` (only those in `onlyCollections`, when
 * given): what the repositories' removals by memory do, for the rows these fakes hold in arrays.
 */
function removeDerived<Row>(
  rows: Row[],
  origin: (row: Row) => { scope: GraphScope; memoryId: string },
  memoryIds: string[],
  onlyCollections?: string[],
): void {
  for (let i = rows.length - 1; i >= 0; i--) {
    const { scope, memoryId } = origin(rows[i]!);
    if (memoryIds.includes(memoryId) && (!onlyCollections || onlyCollections.includes(scope.collectionId))) rows.splice(i, 1);
  }
}

/** The graph's rows of every collection; their removal goes through FactEvents, as in the store. */
export class FakeGraph {
  readonly entities = new Map<string, NewEntity>();
  readonly facts = new Map<string, NewFact>();
  readonly mentions: { scope: GraphScope; mention: NewMention }[] = [];

  constructor(private readonly log: Journal) {}

  async findByKeys(): Promise<never[]> {
    return [];
  }

  async findCandidates(): Promise<never[]> {
    return [];
  }

  async write(scope: GraphScope, entities: NewEntity[], facts: NewFact[], mentions: NewMention[]): Promise<void> {
    for (const entity of entities) this.entities.set(entity.id, entity);
    for (const fact of facts) this.facts.set(fact.id, fact);
    for (const mention of mentions) this.mentions.push({ scope, mention: structuredClone(mention) });
    this.log.record('graph.write', mentions[0]?.memoryId, scope.collectionId);
  }

  async mentionsOfMemories(memoryIds: string[]) {
    return this.mentions.filter((row) => memoryIds.includes(row.mention.memoryId)).map(({ scope, mention }) => mentionRow(scope, mention));
  }

  async entitiesByIds(ids: string[]): Promise<NewEntity[]> {
    return ids.flatMap((id) => (this.entities.has(id) ? [this.entities.get(id)!] : []));
  }

  async factsByIds(ids: string[]) {
    return ids.flatMap((id) => {
      const fact = this.facts.get(id);
      return fact ? [{ id, subject_id: fact.subjectId, object_id: fact.objectId }] : [];
    });
  }

  remove(memoryIds: string[], onlyCollections?: string[]): void {
    removeDerived(this.mentions, (row) => ({ scope: row.scope, memoryId: row.mention.memoryId }), memoryIds, onlyCollections);
  }
}

class IngestionFactEvents extends FakeFactEvents {
  constructor(
    private readonly log: Journal,
    private readonly graph: FakeGraph,
    indexChanges: FakeIndexChanges,
  ) {
    super(log, indexChanges);
  }

  override async removeMemories(tenantId: string, memoryIds: string[], onlyCollections?: string[]): Promise<void> {
    await super.removeMemories(tenantId, memoryIds, onlyCollections);
    this.graph.remove(memoryIds, onlyCollections);
  }

  /** The subjects each call was asked to replay. */
  readonly announced: { memoryId: string; collectionId: string; subjectIds: string[]; predicates: string[] | undefined }[] = [];

  async announceSupersessions(scope: GraphScope, memoryId: string, subjectIds: string[], predicates?: string[]): Promise<void> {
    this.announced.push({ memoryId, collectionId: scope.collectionId, subjectIds, predicates });
    this.log.record('factEvents.announceSupersessions', memoryId, scope.collectionId);
  }
}

class IngestionProcedures extends FakeProcedures {
  readonly traces: { scope: GraphScope; memoryId: string; traces: NewTrace[] }[] = [];

  constructor(private readonly log: Journal) {
    super(log);
  }

  async replaceMemoryTraces(scope: GraphScope, memoryId: string, _time: Date, traces: NewTrace[]): Promise<void> {
    this.traces.push({ scope, memoryId, traces });
    this.log.record('procedures.replaceMemoryTraces', memoryId, scope.collectionId);
  }

  override async removeMemories(memoryIds: string[], onlyCollections?: string[]): Promise<void> {
    await super.removeMemories(memoryIds, onlyCollections);
    removeDerived(this.traces, (row) => row, memoryIds, onlyCollections);
  }
}

export function fakeIngestionStore() {
  const journal = new InterruptibleJournal();
  const graph = new FakeGraph(journal);
  const derived = derivedRepositories(journal);
  const repositories = {
    ...derived,
    memories: new IngestionMemories(journal),
    chunks: new IngestionChunks(journal),
    files: new IngestionFiles(journal),
    factEvents: new IngestionFactEvents(journal, graph, derived.indexChanges),
    procedures: new IngestionProcedures(journal),
  };
  const purge = new MemoryPurge(new FakePurgeIntents(journal), repositories);
  const progress: IngestionProgressPayload[] = [];
  const events = {
    appendProgress: async (_tenantId: string, _collectionIds: string[], payload: IngestionProgressPayload) => {
      progress.push(payload);
      journal.record(`events.appendProgress ${payload.stage}`, payload.engram_id);
    },
  };

  return {
    ...repositories,
    journal,
    graph,
    progress,
    store: { ...repositories, graph, events, purge } as unknown as Store, // only what activities/ingest.ts calls

    /** A memory as the API stores it on create: queued, no chunks yet. */
    seedMemory(fields: Partial<Memory> & Pick<Memory, 'id' | 'content'>): Memory {
      const now = new Date('2026-01-01T00:00:00Z');
      const memory: Memory = {
        tenant_id: 'tenant-1',
        collection_ids: ['col-a'],
        kind: 'document',
        name: null,
        metadata: {},
        status: 'queued',
        status_message: null,
        chunk_count: 0,
        embedding_model: null,
        workflow_id: `ingest-${fields.id}`,
        created_at: now,
        updated_at: now,
        completed_at: null,
        ...fields,
      };
      repositories.memories.rows.set(memory.id, structuredClone(memory));
      return memory;
    },

    /**
     * A concurrent delete lands right after the `nth` write named `at` (1: the first): the record
     * goes, then what was derived so far (the delete's own cascade, as far as these fakes hold it).
     */
    deleteAt(at: string, memoryId: string, nth = 1): void {
      let remaining = nth;
      journal.after = (written) => {
        if (written !== at || --remaining > 0) return;
        journal.after = null;
        repositories.memories.rows.delete(memoryId);
        for (const [id, row] of repositories.chunks.rows) if (row.memory_id === memoryId) repositories.chunks.rows.delete(id);
        graph.remove([memoryId]);
        removeDerived(repositories.procedures.traces, (row) => row, [memoryId]);
        repositories.indexChanges.notices.push({ op: 'remove', tenantId: 'tenant-1', memoryId });
        journal.record('concurrent delete', memoryId);
      };
    },

    /** What is left that was derived from the memory (nothing, after a delete), and whether search was last told to load it. */
    derivedOf(memoryId: string): { chunks: number; mentions: number; traces: number; searchable: boolean } {
      const notices = repositories.indexChanges.notices.filter((notice) => 'memoryId' in notice && notice.memoryId === memoryId);
      return {
        chunks: [...repositories.chunks.rows.values()].filter((chunk) => chunk.memory_id === memoryId).length,
        mentions: graph.mentions.filter((row) => row.mention.memoryId === memoryId).length,
        traces: repositories.procedures.traces.filter((row) => row.memoryId === memoryId).length,
        searchable: notices.at(-1)?.op === 'upsert',
      };
    },
  };
}

export type FakeIngestionStore = ReturnType<typeof fakeIngestionStore>;
export type { StoredChunk };
