/**
 * Collections and memories as the service sees them: `id`, not MongoDB's `_id`. The repositories
 * in store/ map to and from what they persist; services, activities and the API use these.
 */
import type { MemoryContent, MemoryKind, MemoryStatus } from './content-model.js';

export interface Collection {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  /**
   * Set on ephemeral collections (imported device snapshots): read-only, and gone after this time.
   * Expired ones are invisible at once; each API process's sweep (`sweepExpired` in services/device-memory.ts) removes them.
   */
  expires_at?: Date | null;
}

export interface Memory {
  id: string;
  tenant_id: string;
  collection_ids: string[];
  kind: MemoryKind;
  name: string | null;
  metadata: Record<string, unknown>;
  content: MemoryContent;
  /** When the content happened, as the client gave it; chunk times fall back to it (core/memory-time.ts). */
  occurred_at?: Date | null;
  status: MemoryStatus;
  status_message: string | null;
  chunk_count: number;
  embedding_model: string | null;
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  /**
   * Set on memories imported into an ephemeral collection (its expiry): from then on the memory is
   * invisible to every read (store/memories.ts), before the sweeper removes it.
   */
  expires_at?: Date | null;
  /**
   * Chunks [0, indexed_chunk_count) are searchable. Set when a run completes, so while appended
   * messages are being processed the earlier ones stay searchable and the new ones are not yet.
   * Absent on records written before appends existed: then `status === 'complete'` decides.
   */
  indexed_chunk_count?: number;
  /** The run in progress when messages are appended: where the new content starts. */
  append?: AppendRun | null;
  /** Most recent uses (retrieval by id, appearing in search results), newest last; feeds activation. */
  accessed_at?: Date[];
  /**
   * A collection change not yet carried through to chunks, graph and the index feed (written with
   * the change itself, cleared once the graph projection has started): a crash or an unreachable
   * Temporal after the change leaves it for the reconciler.
   */
  collections_sync?: CollectionSync | null;
}

/** A memory without its content: what lists and hot read paths load. */
export type MemorySummary = Omit<Memory, 'content'>;

export interface CollectionSync {
  added: string[];
  removed: string[];
  since: Date;
}

export interface AppendRun {
  from_message: number;
  from_chunk: number;
}

/**
 * An append run's two transitions, one rule for the repository and its in-memory fake: claimed,
 * the memory is queued again with the run's start recorded; abandoned, it is complete again at
 * the chunks it had before the run, saying why (its messages are dropped by the caller).
 */
export const appendClaimed = (run: AppendRun, workflowId: string, now: Date) => ({
  status: 'queued' as const,
  status_message: null,
  workflow_id: workflowId,
  append: run,
  updated_at: now,
});

export const appendAbandoned = (run: AppendRun, message: string, now: Date) => ({
  status: 'complete' as const,
  status_message: `append failed: ${message}`,
  chunk_count: run.from_chunk,
  indexed_chunk_count: run.from_chunk,
  append: null,
  updated_at: now,
});

/** The one "searchable" rule: complete, or complete before an append now in progress. */
export const isSearchable = (memory: Pick<Memory, 'status' | 'indexed_chunk_count'>): boolean =>
  memory.status === 'complete' || (memory.indexed_chunk_count ?? 0) > 0;
