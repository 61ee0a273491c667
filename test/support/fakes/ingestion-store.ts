/**
 * The repositories the ingestion activities (activities/ingest.ts) use, in memory, for their unit
 * tests under MockActivityEnvironment: the memory record, its chunks and files, its graph rows and
 * procedure traces, and the progress events and index notices the activities publish.
 *
 * Every write is recorded in `journal`, in order, so a test can say what happened before what (a
 * heartbeat that claims a stage done must come after that stage's writes). `deleteAt` plays a
 * concurrent delete: once the named write has landed, the record goes and the delete's cascade
 * (store/memory-purge.ts removeDerived) runs, as it does in the API process; what an activity writes
 * after that survives unless the activity takes it back, which is what the tests look for.
 *
 * Only the methods the activities call are here; the cast in `asStore` says so.
 */
import type { NewEntity, NewFact, NewMention, GraphScope } from '../../../core/graph-model.js';
import type { Memory } from '../../../core/memory-model.js';
import type { NewTrace } from '../../../core/procedures/rules.js';
import type { IngestionProgressPayload } from '../../../store/events.js';
import type { Store } from '../../../store/index.js';
import type { NewChunk, StoredChunk } from '../../../store/chunks.js';

export type JournalEntry = { op: string; memoryId: string; detail?: unknown };

interface GraphRow {
  scope: GraphScope;
  mention: NewMention;
}

export class FakeIngestionStore {
  readonly journal: JournalEntry[] = [];
  readonly memories = new Map<string, Memory>();
  readonly chunks = new Map<string, StoredChunk>();
  readonly files = new Map<string, Buffer>();
  readonly entities = new Map<string, NewEntity>();
  readonly facts = new Map<string, NewFact>();
  readonly mentions: GraphRow[] = [];
  readonly traces: { scope: GraphScope; memoryId: string; traces: NewTrace[] }[] = [];
  readonly progress: IngestionProgressPayload[] = [];
  /** The index feed's notices, in order: what search processes load and drop. */
  readonly notices: { kind: 'upsert' | 'remove'; memoryId: string }[] = [];
  private readonly terminalMarks = new Map<string, string>();
  private deleteAfter: { op: string; remaining: number } | null = null;

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
    this.memories.set(memory.id, memory);
    return memory;
  }

  /** A concurrent delete lands right after the `nth` write named `op` (1: the first). */
  deleteAt(op: string, nth = 1): void {
    this.deleteAfter = { op, remaining: nth };
  }

  /** What is left that was derived from the memory: nothing, after a delete (and search was last told to drop it). */
  derivedOf(memoryId: string): { chunks: number; mentions: number; traces: number; searchable: boolean } {
    const notices = this.notices.filter((notice) => notice.memoryId === memoryId);
    return {
      chunks: [...this.chunks.values()].filter((chunk) => chunk.memory_id === memoryId).length,
      mentions: this.mentions.filter((row) => row.mention.memoryId === memoryId).length,
      traces: this.traces.filter((row) => row.memoryId === memoryId && row.traces.length > 0).length,
      searchable: notices.at(-1)?.kind === 'upsert',
    };
  }

  ops(): string[] {
    return this.journal.map((entry) => entry.op);
  }

  private record(op: string, memoryId: string, detail?: unknown): void {
    this.journal.push({ op, memoryId, ...(detail === undefined ? {} : { detail }) });
    if (this.deleteAfter?.op === op && --this.deleteAfter.remaining === 0) {
      this.deleteAfter = null;
      this.memories.delete(memoryId);
      this.removeDerived(memoryId);
      this.journal.push({ op: 'concurrent delete', memoryId });
    }
  }

  private removeDerived(memoryId: string): void {
    for (const [id, chunk] of this.chunks) if (chunk.memory_id === memoryId) this.chunks.delete(id);
    for (let i = this.mentions.length - 1; i >= 0; i--) if (this.mentions[i]!.mention.memoryId === memoryId) this.mentions.splice(i, 1);
    for (let i = this.traces.length - 1; i >= 0; i--) if (this.traces[i]!.memoryId === memoryId) this.traces.splice(i, 1);
    this.notices.push({ kind: 'remove', memoryId });
  }

  asStore(): Store {
    const memoriesOf = (memoryId: string) => [...this.chunks.values()].filter((chunk) => chunk.memory_id === memoryId);
    const repositories = {
      memories: {
        findForIngestion: async (id: string) => structuredClone(this.memories.get(id) ?? null),
        exists: async (id: string) => this.memories.has(id),
        setStatus: async (id: string, status: Memory['status'], extra: Partial<Memory> = {}) => {
          const memory = this.memories.get(id);
          this.record(`status ${status}`, id, extra);
          if (!memory) return false;
          Object.assign(memory, extra, { status });
          return true;
        },
        terminalReported: async (id: string, scope: string) => this.terminalMarks.get(id) === scope,
        markTerminalReported: async (id: string, scope: string) => void this.terminalMarks.set(id, scope),
      },
      files: {
        read: async (fileId: string) => {
          const bytes = this.files.get(fileId);
          if (!bytes) throw new Error(`no file ${fileId}`);
          return bytes;
        },
      },
      chunks: {
        upsertMany: async (chunks: NewChunk[]) => {
          for (const chunk of chunks) {
            const known = this.chunks.get(chunk.id);
            this.chunks.set(chunk.id, { embedding: null, embedding_model: null, ...known, ...structuredClone(chunk) } as StoredChunk);
          }
          this.record('chunks written', chunks[0]?.memory_id ?? '', chunks.length);
        },
        forMemory: async (memoryId: string) => structuredClone(memoriesOf(memoryId).sort((a, b) => a.index - b.index)),
        deleteFromIndex: async (memoryId: string, keepCount: number) => {
          for (const chunk of memoriesOf(memoryId)) if (chunk.index >= keepCount) this.chunks.delete(chunk.id);
          this.record('chunks trimmed', memoryId, keepCount);
        },
        setEmbeddings: async (model: string, items: { id: string; vector: Float32Array }[]) => {
          const memoryId = this.chunks.get(items[0]?.id ?? '')?.memory_id ?? '';
          for (const { id, vector } of items) {
            const chunk = this.chunks.get(id);
            if (chunk) Object.assign(chunk, { embedding_model: model, embedding: vector });
          }
          this.record(
            'chunks embedded',
            memoryId,
            items.map((item) => item.id),
          );
        },
        setCollections: async (memoryId: string, collectionIds: string[]) => {
          for (const chunk of memoriesOf(memoryId)) chunk.collection_ids = [...collectionIds];
        },
      },
      graph: {
        findByKeys: async () => [],
        findCandidates: async () => [],
        write: async (scope: GraphScope, entities: NewEntity[], facts: NewFact[], mentions: NewMention[]) => {
          for (const entity of entities) this.entities.set(entity.id, entity);
          for (const fact of facts) this.facts.set(fact.id, fact);
          for (const mention of mentions) this.mentions.push({ scope, mention });
          this.record('graph written', mentions[0]?.memoryId ?? '', scope.collectionId);
        },
        mentionsOfMemories: async (memoryIds: string[]) =>
          this.mentions
            .filter((row) => memoryIds.includes(row.mention.memoryId))
            .map(({ scope, mention }) => ({
              tenant_id: scope.tenantId,
              collection_id: scope.collectionId,
              memory_id: mention.memoryId,
              chunk_index: mention.chunkIndex,
              target_kind: mention.kind,
              target_id: mention.targetId,
            })),
        entitiesByIds: async (ids: string[]) => ids.flatMap((id) => (this.entities.has(id) ? [this.entities.get(id)!] : [])),
        factsByIds: async (ids: string[]) =>
          ids.flatMap((id) => {
            const fact = this.facts.get(id);
            return fact ? [{ id, subject_id: fact.subjectId, object_id: fact.objectId }] : [];
          }),
      },
      factEvents: {
        announceSupersessions: async (scope: GraphScope, memoryId: string) =>
          this.record('supersessions announced', memoryId, scope.collectionId),
      },
      procedures: {
        replaceMemoryTraces: async (scope: GraphScope, memoryId: string, _time: Date, traces: NewTrace[]) => {
          this.traces.push({ scope, memoryId, traces });
          this.record('traces written', memoryId, scope.collectionId);
        },
      },
      events: {
        appendProgress: async (_tenantId: string, _collectionIds: string[], payload: IngestionProgressPayload) => {
          this.progress.push(payload);
          this.record(`progress ${payload.stage}`, payload.engram_id);
        },
      },
      indexChanges: {
        publishUpserts: async (_tenantId: string, changed: { id: string; collectionIds: string[] }[]) => {
          for (const { id } of changed) this.notices.push({ kind: 'upsert', memoryId: id });
          this.record('index notified', changed[0]?.id ?? '', changed[0]?.collectionIds);
        },
      },
      purge: {
        removeDerived: async (purges: { memoryId: string }[]) => {
          for (const { memoryId } of purges) {
            this.removeDerived(memoryId);
            this.record('purged', memoryId);
          }
        },
      },
    };
    return repositories as unknown as Store; // only what activities/ingest.ts calls on the paths under test
  }
}
