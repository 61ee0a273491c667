import type { ChunkText } from '../../../core/content-model.js';
import type { Memory, MemorySummary } from '../../../core/memory-model.js';
import { storedChunkTime } from '../../../core/memory-time.js';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export const presentMemory = (memory: MemorySummary) => ({
  id: memory.id,
  collection_id: memory.collection_ids[0] ?? null,
  collection_ids: memory.collection_ids,
  kind: memory.kind,
  name: memory.name,
  metadata: memory.metadata,
  occurred_at: iso(memory.occurred_at ?? null),
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
export const presentMemoryWithChunks = (memory: Memory, chunks: ChunkText[]) => ({
  ...presentMemory(memory),
  ...(memory.content.files
    ? {
        files: memory.content.files.map((file, part) => ({
          part,
          filename: file.filename,
          media_type: file.media_type,
          size: file.size,
          sha256: file.sha256,
          download_path: `/v1/memories/${memory.id}/content?part=${part}`,
        })),
      }
    : {}),
  chunks: chunks.map((chunk) => chunk.text),
  // Each chunk's time (core/memory-time.ts): its message's timestamp, else the memory's time.
  chunk_sources: chunks.map((chunk) => ({ ...chunk.source, occurred_at: storedChunkTime(chunk, memory).toISOString() })),
});

export const presentAccepted = (memory: MemorySummary) => ({
  id: memory.id,
  status: memory.status,
  collection_id: memory.collection_ids[0] ?? null,
  kind: memory.kind,
  workflow_id: memory.workflow_id,
  created_at: iso(memory.created_at),
});
