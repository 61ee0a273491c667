/**
 * The LoCoMo metric (its README): a result's rank is the first position at which an evidence turn's
 * full text appears in the response; recall_any@k (some evidence turn in the top k), recall_all@10
 * (every evidence turn in the top 10) and the reciprocal rank of the first evidence turn. Pure.
 */
import { fieldMeans } from '../stats.js';

export interface LocomoScore {
  recallAny5: number;
  recallAny10: number;
  recallAll10: number;
  reciprocalRank: number;
}

/** 1-based rank of each evidence text among the hit texts (null when absent). */
export function evidenceRanks(hitTexts: readonly string[], evidence: readonly string[]): (number | null)[] {
  return evidence.map((text) => {
    const index = hitTexts.findIndex((hit) => hit.includes(text));
    return index === -1 ? null : index + 1;
  });
}

export function scoreLocomo(hitTexts: readonly string[], evidence: readonly string[]): LocomoScore {
  if (evidence.length === 0) throw new RangeError('a question needs at least one evidence turn');
  const ranks = evidenceRanks(hitTexts, evidence);
  const found = ranks.filter((rank): rank is number => rank !== null);
  const first = found.length > 0 ? Math.min(...found) : null;
  return {
    recallAny5: first !== null && first <= 5 ? 1 : 0,
    recallAny10: first !== null && first <= 10 ? 1 : 0,
    recallAll10: found.length === ranks.length && found.every((rank) => rank <= 10) ? 1 : 0,
    reciprocalRank: first === null ? 0 : 1 / first,
  };
}

export interface LocomoAggregate extends LocomoScore {
  questions: number;
}

/** Means over questions (each weighs the same); NaN when there are none. */
export function aggregateLocomo(scores: readonly LocomoScore[]): LocomoAggregate {
  return { questions: scores.length, ...fieldMeans(scores, ['recallAny5', 'recallAny10', 'recallAll10', 'reciprocalRank']) };
}
