import type { SearchOutcome } from '../../../services/search.js';

/**
 * MemoryResponse (v2): ranked chunks with provenance and a per-signal score breakdown, the
 * entities and relationships relevant to the query, and how confident the service is in them.
 */
export const presentSearch = (query: string, outcome: SearchOutcome) => ({
  query,
  hits: outcome.hits.map((hit) => ({
    memory_id: hit.memory.id,
    chunk_index: hit.chunkIndex,
    text: hit.text,
    score: hit.score,
    score_breakdown: hit.scores,
    raw_scores: hit.raw,
    source: hit.source,
    occurred_at: hit.occurredAt.toISOString(),
    memory: {
      name: hit.memory.name,
      kind: hit.memory.kind,
      metadata: hit.memory.metadata,
      collection_ids: hit.memory.collection_ids,
      created_at: hit.memory.created_at.toISOString(),
      occurred_at: hit.memory.occurred_at ? hit.memory.occurred_at.toISOString() : null,
    },
  })),
  entities: outcome.entities,
  relationships: outcome.relationships,
  confidence: outcome.confidence,
  query_stats: outcome.queryStats,
  total_hits: outcome.hits.length,
  timings_ms: outcome.timings,
});
