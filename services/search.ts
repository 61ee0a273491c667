/**
 * Collection-mode search: embed the query, take the nearest chunks from this process's vector
 * index, then keep only chunks whose memory still exists and is complete (the index may briefly
 * hold a memory that another process is deleting; the store is the source of truth).
 */
import type { Embedder } from '../models/embedder.js';
import type { SearchIndex } from '../search/search-index.js';
import type { ChunkSource } from '../store/chunks.js';
import type { Store } from '../store/index.js';
import type { MemorySummaryDoc } from '../store/memories.js';
import type { CollectionService } from './collections.js';

export interface SearchInput {
  query: string;
  collectionIds: string[];
  limit: number;
}

export interface SearchHit {
  memory: MemorySummaryDoc;
  chunkIndex: number;
  text: string;
  source: ChunkSource;
  score: number;
  scores: { vector: number };
}

export interface SearchOutcome {
  hits: SearchHit[];
  timings: { embed_ms: number; index_ms: number; fetch_ms: number; total_ms: number };
}

/** Extra candidates taken from the index to survive the visibility filter. */
const OVERFETCH = 3;

export function createSearchService(deps: {
  store: Store;
  collections: CollectionService;
  searchIndex: SearchIndex;
  embedder: () => Promise<Embedder>;
}) {
  return {
    async search(tenantId: string, input: SearchInput): Promise<SearchOutcome> {
      const started = performance.now();
      await deps.collections.assertReadable(tenantId, input.collectionIds, 'collection_ids');
      const embedder = await deps.embedder();
      const vector = await embedder.embedQuery(input.query);
      const embedded = performance.now();
      const candidates = await deps.searchIndex.search(vector, input.collectionIds, input.limit * OVERFETCH + 10);
      const searched = performance.now();

      const memoryIds = [...new Set(candidates.map((hit) => hit.memoryId))];
      const [visible, chunks] = await Promise.all([
        deps.store.memories.completeIds(memoryIds),
        deps.store.chunks.byIds(candidates.map((hit) => hit.chunkId)),
      ]);
      const chunkById = new Map(chunks.map((chunk) => [chunk._id, chunk]));
      const hits: SearchHit[] = [];
      for (const candidate of candidates) {
        const memory = visible.get(candidate.memoryId);
        const chunk = chunkById.get(candidate.chunkId);
        if (!memory || !chunk || memory.tenant_id !== tenantId) continue;
        hits.push({
          memory,
          chunkIndex: chunk.index,
          text: chunk.text,
          source: chunk.source,
          score: candidate.score,
          scores: { vector: candidate.score },
        });
        if (hits.length >= input.limit) break;
      }
      const finished = performance.now();
      return {
        hits,
        timings: {
          embed_ms: round(embedded - started),
          index_ms: round(searched - embedded),
          fetch_ms: round(finished - searched),
          total_ms: round(finished - started),
        },
      };
    },
  };
}

const round = (ms: number): number => Math.round(ms * 10) / 10;

export type SearchService = ReturnType<typeof createSearchService>;
