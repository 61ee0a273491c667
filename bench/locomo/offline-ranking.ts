/**
 * The rankings the offline harness compares (bench/locomo/offline.ts): each signal alone, the
 * fusion as it was (search/fusion.ts with vector and lexical), and the service's current ranking
 * (search/turn-ranking.ts), all over the service's own index classes.
 */
import {
  DEFAULT_FUSION_WEIGHTS,
  fuse,
  type Candidate,
  type FusedCandidate,
  type FusionWeights,
  type SignalName,
} from '../../search/fusion.js';
import { type GraphPartition } from '../../search/graph-index.js';
import { matchGraph, type GraphMatchOptions } from '../../search/graph-match.js';
import { graphValue } from '../../services/graph-search.js';
import type { LexicalIndex } from '../../search/lexical-index.js';
import {
  DEFAULT_TURN_WEIGHTS,
  expandTurnCandidates,
  followUpChunks,
  rerankTurns,
  turnLenders,
  type TurnRankingWeights,
  type TurnSource,
} from '../../search/turn-ranking.js';
import type { VectorIndex } from '../../search/vector-index.js';
import type { TurnFacts } from '../../search/turn-facts.js';
import { querySpeakers } from '../../search/turn-speakers.js';
import { queryAnswerKind } from '../../search/turn-answers.js';

export interface OfflineCorpus {
  vectors: VectorIndex;
  lexical: LexicalIndex;
  turns: Map<string, { text: string; time: Date; role: string }>;
  /** The service's per-chunk turn facts (asks, dates, speaker), one partition per conversation. */
  facts: TurnFacts;
  /**
   * Each conversation's graph (bench/locomo/offline-graph.ts) and each query's graph keys (its
   * word runs and extracted names, services/graph-search.ts), when the graph signal is ranked.
   */
  graph?: { partitions: Map<string, GraphPartition>; keysOf: Map<string, string[]> };
}

const MIN_SIMILARITY = 0.78;

/**
 * Weight overrides for trying a change on the harness (never the service's defaults):
 * LOCOMO_FUSION_WEIGHTS and LOCOMO_TURN_WEIGHTS, JSON objects of the fields to change.
 */
const overrides = <T>(name: string, defaults: T): T => {
  const raw = process.env[name];
  return raw ? { ...defaults, ...(JSON.parse(raw) as Partial<T>) } : defaults;
};
/** The fusion weights the harness ranks with (the service's, with LOCOMO_FUSION_WEIGHTS applied). */
export const HARNESS_FUSION_WEIGHTS = overrides('LOCOMO_FUSION_WEIGHTS', DEFAULT_FUSION_WEIGHTS);
/** The turn weights the harness ranks with (the service's, with LOCOMO_TURN_WEIGHTS applied). */
export const HARNESS_TURN_WEIGHTS = overrides('LOCOMO_TURN_WEIGHTS', DEFAULT_TURN_WEIGHTS);
const POOL = 100;

/** What the ranking searches for: the query without the speakers it names, when it names some (search/turn-speakers.ts). */
export const searchedText = (corpus: OfflineCorpus, query: string, collectionId: string): string =>
  querySpeakers(query, corpus.facts.speakers([collectionId]))?.text ?? query;

export function rankOffline(
  corpus: OfflineCorpus,
  variant: string,
  query: string,
  vectorOf: (text: string) => Float32Array,
  collectionId: string,
  limit: number,
  turnWeights: TurnRankingWeights = HARNESS_TURN_WEIGHTS,
  fusionWeights: FusionWeights = HARNESS_FUSION_WEIGHTS,
  graphOptions: GraphMatchOptions = {},
  trace?: (ranking: { fused: FusedCandidate[]; reranked: FusedCandidate[]; answerKind: number }) => void,
): string[] {
  // Each signal alone, and the fusion as it was, search the query as written.
  let queryVector = vectorOf(query);
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
  // The service's ranking (services/search.ts) without activation, and without the graph signal
  // unless the corpus has the graphs. The graph matches the query as written, as the service's does.
  const partition = corpus.graph?.partitions.get(collectionId);
  const graph = partition && fusionWeights.graph > 0 ? matchGraph([partition], corpus.graph!.keysOf.get(query) ?? [], graphOptions) : null;
  const speakers = querySpeakers(query, corpus.facts.speakers([collectionId]));
  if (speakers) {
    query = speakers.text;
    queryVector = vectorOf(query);
  }
  const currentVectorHits = speakers ? corpus.vectors.search(queryVector, [collectionId], POOL) : vectorHits;
  const currentLexical = speakers ? corpus.lexical.search(query, [collectionId], POOL) : lexical;
  const candidates = new Map<string, Candidate>();
  const candidate = (chunkId: string, memoryId: string): Candidate => {
    let entry = candidates.get(chunkId);
    if (!entry) candidates.set(chunkId, (entry = { chunkId, memoryId }));
    return entry;
  };
  for (const hit of currentVectorHits) candidate(hit.chunkId, hit.memoryId).cosine = hit.score;
  for (const hit of currentLexical.hits) candidate(hit.chunkId, hit.memoryId).bm25 = hit.score;
  if (graph) {
    const graphBest = [...graph.chunks].sort((a, b) => b[1].value - a[1].value).slice(0, POOL);
    for (const [chunkId, { memoryId }] of graphBest) candidate(chunkId, memoryId);
  }
  for (const [chunkId, entry] of candidates)
    if (!entry.bm25 && !(graph && graphValue(graph, chunkId, entry.memoryId)) && (entry.cosine ?? 0) < MIN_SIMILARITY)
      candidates.delete(chunkId);
  const source: TurnSource = {
    cosineOf: (chunkIds) => corpus.vectors.similarities(queryVector, [collectionId], chunkIds),
    isQuestion: (chunkId) => corpus.facts.isQuestion([collectionId], chunkId),
    answersOf: (chunkId) => corpus.facts.answersOf([collectionId], chunkId),
    datesOf: (chunkId) => corpus.facts.datesOf([collectionId], chunkId),
    speakerOf: (chunkId) => corpus.facts.speakerOf([collectionId], chunkId),
    chunks: () => corpus.vectors.entries([collectionId]),
  };
  const dated = expandTurnCandidates(candidates, query, source, turnWeights);
  if (graph) {
    for (const entry of candidates.values()) {
      const value = graphValue(graph, entry.chunkId, entry.memoryId);
      if (value > 0) entry.graph = value;
    }
  }
  const signals: SignalName[] = graph ? ['vector', 'lexical', 'graph'] : ['vector', 'lexical'];
  const context = {
    signals: new Set(signals),
    cosineFloor: Math.min(...currentVectorHits.map((hit) => hit.score)),
    cosineMax: Math.max(...currentVectorHits.map((hit) => hit.score)),
    bm25Max: currentLexical.hits[0]?.score ?? 0,
    lexicalRarity: currentLexical.stats.maxRarity,
  };
  const fused = fuse([...candidates.values()], context, fusionWeights);
  const queryTerms = corpus.lexical.queryTermMatches(
    query,
    [collectionId],
    followUpChunks(candidates.keys(), (chunkId) => source.isQuestion(chunkId)),
  );
  const options = { speakers, answerKind: queryAnswerKind(query), weights: turnWeights, queryTerms };
  let reranked = rerankTurns(fused, dated, source, options);
  // LOCOMO_LEADERS=cut: the service's second ranking, over the candidates within reach of the top
  // only (services/search.ts, without activation's headroom); =lenders keeps their turn neighbours.
  const wanted = limit * 2 + 5;
  if (process.env.LOCOMO_LEADERS && reranked.length > wanted) {
    const bar = reranked[wanted - 1]!.score - 0.001;
    const kept = new Set(reranked.filter((entry) => entry.score >= bar).map((entry) => entry.chunkId));
    if (process.env.LOCOMO_LEADERS === 'lenders') for (const id of turnLenders(kept, candidates)) kept.add(id);
    reranked = rerankTurns(
      fuse(
        [...kept].map((id) => candidates.get(id)!),
        context,
        fusionWeights,
      ),
      dated,
      source,
      options,
    );
  }
  trace?.({ fused, reranked, answerKind: queryAnswerKind(query) });
  return reranked.slice(0, limit).map((entry) => entry.chunkId);
}
