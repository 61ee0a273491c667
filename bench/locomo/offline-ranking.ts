/**
 * The rankings the offline harness compares (bench/locomo/offline.ts): each signal alone, the
 * fusion as it was (search/fusion.ts with vector and lexical), and the service's current ranking
 * (search/turn-ranking.ts), all over the service's own index classes.
 */
import { DEFAULT_FUSION_WEIGHTS, fuse, type Candidate } from '../../search/fusion.js';
import type { LexicalIndex } from '../../search/lexical-index.js';
import { expandTurnCandidates, rerankTurns, type TurnSource } from '../../search/turn-ranking.js';
import type { VectorIndex } from '../../search/vector-index.js';

export interface OfflineCorpus {
  vectors: VectorIndex;
  lexical: LexicalIndex;
  turns: Map<string, { text: string; time: Date; role: string }>;
  dates: Map<string, Date[]>;
}

const MIN_SIMILARITY = 0.78;
const POOL = 100;

export function rankOffline(
  corpus: OfflineCorpus,
  variant: string,
  query: string,
  queryVector: Float32Array,
  collectionId: string,
  limit: number,
): string[] {
  const vectorHits = corpus.vectors.search(queryVector, [collectionId], POOL);
  if (variant === 'vector') {
    return vectorHits
      .filter((hit) => hit.score >= MIN_SIMILARITY)
      .slice(0, limit)
      .map((hit) => hit.chunkId);
  }
  const lexical = corpus.lexical.search(query, [collectionId], POOL);
  if (variant === 'lexical') return lexical.hits.slice(0, limit).map((hit) => hit.chunkId);
  if (variant === 'before') {
    const candidates = new Map<string, Candidate>();
    const candidate = (chunkId: string, memoryId: string): Candidate => {
      let entry = candidates.get(chunkId);
      if (!entry) candidates.set(chunkId, (entry = { chunkId, memoryId }));
      return entry;
    };
    for (const hit of vectorHits) candidate(hit.chunkId, hit.memoryId).cosine = hit.score;
    for (const hit of lexical.hits) candidate(hit.chunkId, hit.memoryId).bm25 = hit.score;
    for (const [chunkId, entry] of candidates) if (!entry.bm25 && (entry.cosine ?? 0) < MIN_SIMILARITY) candidates.delete(chunkId);
    const fused = fuse(
      [...candidates.values()],
      {
        signals: new Set(['vector', 'lexical']),
        cosineFloor: Math.min(...vectorHits.map((hit) => hit.score)),
        cosineMax: Math.max(...vectorHits.map((hit) => hit.score)),
        bm25Max: lexical.hits[0]?.score ?? 0,
        lexicalRarity: lexical.stats.maxRarity,
      },
      // The weights as they were before the turn ranking.
      { ...DEFAULT_FUSION_WEIGHTS, lexical: 0.4, lexicalRarity: 0.5 },
    );
    return fused.slice(0, limit).map((entry) => entry.chunkId);
  }
  // The service's ranking (services/search.ts) without the graph signal and activation.
  const candidates = new Map<string, Candidate>();
  const candidate = (chunkId: string, memoryId: string): Candidate => {
    let entry = candidates.get(chunkId);
    if (!entry) candidates.set(chunkId, (entry = { chunkId, memoryId }));
    return entry;
  };
  for (const hit of vectorHits) candidate(hit.chunkId, hit.memoryId).cosine = hit.score;
  for (const hit of lexical.hits) candidate(hit.chunkId, hit.memoryId).bm25 = hit.score;
  for (const [chunkId, entry] of candidates) if (!entry.bm25 && (entry.cosine ?? 0) < MIN_SIMILARITY) candidates.delete(chunkId);
  const source: TurnSource = {
    cosineOf: (chunkIds) => corpus.vectors.similarities(queryVector, [collectionId], chunkIds),
    isQuestion: (chunkId) => corpus.turns.get(chunkId)?.text.trim().endsWith('?') ?? false,
    datesOf: (chunkId) => corpus.dates.get(chunkId) ?? [],
    chunks: () => corpus.vectors.entries([collectionId]),
  };
  const dated = expandTurnCandidates(candidates, query, source);
  const fused = fuse(
    [...candidates.values()],
    {
      signals: new Set(['vector', 'lexical']),
      cosineFloor: Math.min(...vectorHits.map((hit) => hit.score)),
      cosineMax: Math.max(...vectorHits.map((hit) => hit.score)),
      bm25Max: lexical.hits[0]?.score ?? 0,
      lexicalRarity: lexical.stats.maxRarity,
    },
    DEFAULT_FUSION_WEIGHTS,
  );
  return rerankTurns(fused, dated, source)
    .slice(0, limit)
    .map((entry) => entry.chunkId);
}
