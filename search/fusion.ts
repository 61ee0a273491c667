/**
 * Fuses the four search signals into one ranking. Pure: no I/O.
 *
 * Plain reciprocal-rank fusion of BM25 and a dense model ranked worse than the dense model alone
 * on a conversational benchmark (MODELS.md), because RRF throws away how far apart the scores
 * are and gives a weak lexical list as much say as a strong one. So this fusion works on scores:
 *
 *   - vector: cosine, min-max normalised over the vector candidates (the k-th best → 0, the best → 1);
 *   - lexical: BM25 divided by the best BM25 of the query, and its weight scaled by how rare the
 *     rarest matched query term is (a code or a name found in one chunk is strong evidence; common
 *     words matching everywhere are not);
 *   - graph: 1 − e^(−Σ entity scores) of the query's entities and their neighbours in the chunk;
 *   - activation: recency and frequency of use of the chunk's memory (see activation.ts).
 *
 *   score = w_v·v + w_l·(1 − β + β·rarity)·l + w_g·g + w_a·a
 *
 * The weights were tuned on the tune half of the retrieval bench (bench/retrieval) and are
 * reported on the other half; see docs/search.md. With one signal the score is that signal's raw
 * value (cosine, BM25, …), so single-signal rankings are exactly that signal's order.
 */
export type SignalName = 'vector' | 'lexical' | 'graph' | 'activation';
export const ALL_SIGNALS: readonly SignalName[] = ['vector', 'lexical', 'graph', 'activation'];

export interface FusionWeights {
  vector: number;
  lexical: number;
  graph: number;
  activation: number;
  /** β: how much the lexical weight depends on the rarity of the matched query terms (0..1). */
  lexicalRarity: number;
}

/**
 * Tuned with the turn ranking (search/turn-ranking.ts) on three LoCoMo conversations and checked
 * on the other two (docs/search.md): BM25 counts for more than it did (0.4 with β 0.5 before),
 * since names and rare words in a question are what tells one turn of a long chat from another.
 * The graph's weight (1 before) and its entities' specificity (search/graph-index.ts entityScore)
 * were chosen together by leave-one-conversation-out on LoCoMo: at 1 the graph lowered MRR, since
 * its matches mostly repeat what BM25 already found.
 */
export const DEFAULT_FUSION_WEIGHTS: FusionWeights = {
  vector: 1,
  lexical: 0.8,
  graph: 0.25,
  activation: 0.1,
  lexicalRarity: 0,
};

export interface Candidate {
  chunkId: string;
  memoryId: string;
  /** Raw signal values; absent when the signal did not retrieve the chunk. */
  cosine?: number;
  bm25?: number;
  graph?: number;
  activation?: number;
}

export interface FusionContext {
  signals: ReadonlySet<SignalName>;
  /** The lowest and highest cosine among the vector candidates. */
  cosineFloor: number;
  cosineMax: number;
  /** The best BM25 of the query. */
  bm25Max: number;
  /** Rarity of the rarest matched query term, 0..1 (LexicalQueryStats.maxRarity). */
  lexicalRarity: number;
}

export interface ScoreBreakdown {
  vector?: number;
  lexical?: number;
  graph?: number;
  activation?: number;
}

export interface FusedCandidate extends Candidate {
  score: number;
  /** Each enabled signal's normalised value, 0..1. */
  breakdown: ScoreBreakdown;
}

const clamp01 = (value: number): number => (value < 0 ? 0 : value > 1 ? 1 : value);
const round = (value: number): number => Math.round(value * 10_000) / 10_000;

export function normalisedSignals(candidate: Candidate, context: FusionContext): ScoreBreakdown {
  const breakdown: ScoreBreakdown = {};
  if (context.signals.has('vector')) {
    const span = context.cosineMax - context.cosineFloor;
    breakdown.vector = candidate.cosine === undefined ? 0 : span <= 0 ? 1 : clamp01((candidate.cosine - context.cosineFloor) / span);
  }
  if (context.signals.has('lexical')) {
    breakdown.lexical = candidate.bm25 === undefined || context.bm25Max <= 0 ? 0 : clamp01(candidate.bm25 / context.bm25Max);
  }
  if (context.signals.has('graph')) breakdown.graph = clamp01(candidate.graph ?? 0);
  if (context.signals.has('activation')) breakdown.activation = clamp01(candidate.activation ?? 0);
  return breakdown;
}

/** The single enabled signal's raw value, when only one is enabled. */
function singleSignalScore(candidate: Candidate, signal: SignalName): number {
  switch (signal) {
    case 'vector':
      return candidate.cosine ?? 0;
    case 'lexical':
      return candidate.bm25 ?? 0;
    case 'graph':
      return candidate.graph ?? 0;
    case 'activation':
      return candidate.activation ?? 0;
  }
}

/** Scores and sorts the candidates (best first; ties broken by chunk id for a stable order). */
export function fuse(candidates: readonly Candidate[], context: FusionContext, weights: FusionWeights): FusedCandidate[] {
  const enabled = ALL_SIGNALS.filter((signal) => context.signals.has(signal));
  const lexicalWeight = weights.lexical * (1 - weights.lexicalRarity + weights.lexicalRarity * clamp01(context.lexicalRarity));
  const fused = candidates.map((candidate): FusedCandidate => {
    const breakdown = normalisedSignals(candidate, context);
    let score: number;
    if (enabled.length === 1) score = singleSignalScore(candidate, enabled[0]!);
    else {
      score =
        weights.vector * (breakdown.vector ?? 0) +
        lexicalWeight * (breakdown.lexical ?? 0) +
        weights.graph * (breakdown.graph ?? 0) +
        weights.activation * (breakdown.activation ?? 0);
    }
    const rounded: ScoreBreakdown = {};
    for (const [signal, value] of Object.entries(breakdown) as [SignalName, number][]) rounded[signal] = round(value);
    return { ...candidate, score, breakdown: rounded };
  });
  fused.sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0));
  // Rounded only for the response, after sorting on the exact values.
  for (const candidate of fused) candidate.score = round(candidate.score);
  return fused;
}
