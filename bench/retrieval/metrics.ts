/**
 * Retrieval-quality metrics over ranked conversation turns. A search hit is a chunk; a turn is
 * one message of one memory (`${memory_id}:${message_index}`). A long message can yield several
 * chunks, so hits are mapped to turns and deduplicated, keeping each turn's first (best) rank.
 */
import { fieldMeans } from '../stats.js';

export interface TurnHit {
  memory_id: string;
  chunk_index?: number;
  source?: { message_index?: number } | null;
}

export const turnKey = (memoryId: string, messageIndex: number): string => `${memoryId}:${messageIndex}`;

/**
 * Distinct turn keys in rank order. A hit without a message index (not a conversation chunk)
 * still takes its rank, under a key no evidence can match, so it pushes evidence down as it should.
 */
export function rankedTurns(hits: readonly TurnHit[]): string[] {
  const seen = new Set<string>();
  const ranked: string[] = [];
  for (const hit of hits) {
    const index = hit.source?.message_index;
    const key = index === undefined ? `${hit.memory_id}#chunk${hit.chunk_index ?? '?'}` : turnKey(hit.memory_id, index);
    if (seen.has(key)) continue;
    seen.add(key);
    ranked.push(key);
  }
  return ranked;
}

function distinctEvidence(evidence: readonly string[]): Set<string> {
  const set = new Set(evidence);
  if (set.size === 0) throw new RangeError('a question needs at least one evidence turn');
  return set;
}

/** Distinct keys in order (the ranking should already be distinct; this keeps the metric honest if not). */
function distinct(ranked: readonly string[]): string[] {
  return [...new Set(ranked)];
}

/** Fraction of the evidence turns found among the top k distinct turns. */
export function recallAtK(ranked: readonly string[], evidence: readonly string[], k: number): number {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
  const wanted = distinctEvidence(evidence);
  const top = distinct(ranked).slice(0, k);
  let found = 0;
  for (const key of top) if (wanted.has(key)) found += 1;
  return found / wanted.size;
}

/** 1-based rank of the first evidence turn in the ranking, or null when none is in it. */
export function firstEvidenceRank(ranked: readonly string[], evidence: readonly string[]): number | null {
  const wanted = distinctEvidence(evidence);
  const index = distinct(ranked).findIndex((key) => wanted.has(key));
  return index === -1 ? null : index + 1;
}

/** 1 / rank of the first evidence turn; 0 when no evidence turn is in the (truncated) ranking. */
export function reciprocalRank(ranked: readonly string[], evidence: readonly string[]): number {
  const rank = firstEvidenceRank(ranked, evidence);
  return rank === null ? 0 : 1 / rank;
}

/** Rank (1-based) of each evidence turn, null when absent: what the per-question log records. */
export function evidenceRanks(ranked: readonly string[], evidence: readonly string[]): (number | null)[] {
  const order = distinct(ranked);
  return [...distinctEvidence(evidence)].map((key) => {
    const index = order.indexOf(key);
    return index === -1 ? null : index + 1;
  });
}

export interface QuestionScore {
  recallAt5: number;
  recallAt10: number;
  reciprocalRank: number;
}

export function scoreQuestion(ranked: readonly string[], evidence: readonly string[]): QuestionScore {
  return {
    recallAt5: recallAtK(ranked, evidence, 5),
    recallAt10: recallAtK(ranked, evidence, 10),
    reciprocalRank: reciprocalRank(ranked, evidence),
  };
}

export interface Aggregate {
  questions: number;
  recallAt5: number;
  recallAt10: number;
  /** Mean reciprocal rank (within the ranking's length: MRR@10 for limit 10). */
  mrr: number;
}

/** Means over questions (macro average: each question weighs the same). NaN figures when empty. */
export function aggregate(scores: readonly QuestionScore[]): Aggregate {
  const { recallAt5, recallAt10, reciprocalRank } = fieldMeans(scores, ['recallAt5', 'recallAt10', 'reciprocalRank']);
  return { questions: scores.length, recallAt5, recallAt10, mrr: reciprocalRank };
}
