import type { ChunkDoc } from '../../../store/chunks.js';
import type { MemorySummaryDoc } from '../../../store/memories.js';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export const presentMemory = (memory: MemorySummaryDoc) => ({
  id: memory._id,
  collection_id: memory.collection_ids[0] ?? null,
  collection_ids: memory.collection_ids,
  kind: memory.kind,
  name: memory.name,
  metadata: memory.metadata,
  status: memory.status,
  status_message: memory.status_message,
  chunk_count: memory.chunk_count,
  embedding_model: memory.embedding_model,
  workflow_id: memory.workflow_id,
  created_at: iso(memory.created_at),
  updated_at: iso(memory.updated_at),
  completed_at: iso(memory.completed_at),
});

/** Retrieve adds the chunk texts (spec: strings) and, beside them, where each came from. */
export const presentMemoryWithChunks = (memory: MemorySummaryDoc, chunks: ChunkDoc[]) => ({
  ...presentMemory(memory),
  chunks: chunks.map((chunk) => chunk.text),
  chunk_sources: chunks.map((chunk) => chunk.source),
});

export const presentAccepted = (memory: MemorySummaryDoc) => ({
  id: memory._id,
  status: memory.status,
  collection_id: memory.collection_ids[0] ?? null,
  kind: memory.kind,
  workflow_id: memory.workflow_id,
  created_at: iso(memory.created_at),
});
