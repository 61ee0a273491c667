import type { SearchOutcome } from '../../../services/search.js';

/** MemoryResponse (v1): ranked chunks with provenance and a per-signal score breakdown. */
export const presentSearch = (query: string, outcome: SearchOutcome) => ({
  query,
  hits: outcome.hits.map((hit) => ({
    memory_id: hit.memory._id,
    chunk_index: hit.chunkIndex,
    text: hit.text,
    score: hit.score,
    score_breakdown: hit.scores,
    source: hit.source,
    memory: {
      name: hit.memory.name,
      kind: hit.memory.kind,
      metadata: hit.memory.metadata,
      collection_ids: hit.memory.collection_ids,
      created_at: hit.memory.created_at.toISOString(),
    },
  })),
  total_hits: outcome.hits.length,
  timings_ms: outcome.timings,
});
