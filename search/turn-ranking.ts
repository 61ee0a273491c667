/**
 * What a conversation's structure adds to the fused scores (search/fusion.ts), by rule, with no
 * model at query time. Tuned on three LoCoMo conversations and checked on the other two
 * (docs/search.md):
 *
 *   - **A reply inherits from the turn it answers.** Half of LoCoMo's evidence turns follow a
 *     turn that ends with a question mark (a quarter of all turns do): "Was it relaxing?" matches
 *     the question, the next turn holds the answer. A turn gains `questionReply` × how far the
 *     question before it scores above it, and `neighbour` × the same for its other neighbours
 *     (short replies such as "Yeah, I'll give it a try" take their meaning from them).
 *   - **A turn that asks is rarely the answer:** it loses `questionPenalty`.
 *   - **Speakers.** A query that names some, not all, of the conversation's speakers is about
 *     their turns (search/turn-speakers.ts): a turn by a speaker it does not name loses
 *     `speakerMismatch`. (The speakers' names also leave the text BM25 and the embedding see.)
 *   - **Dates.** A query naming a day, a month or a year (search/turn-dates.ts) lifts the turns
 *     whose dates (their own time, and relative dates in them resolved against it) fall in that
 *     period by `dateMatch`, and brings them in as candidates even when no other signal found them.
 *     A query naming a day lifts the turns on that very day by `dayMatch` more than those of the
 *     days around it: in a chat, what was said "on 3 June" is in that day's session, while
 *     `dateMatch` alone left a better-worded turn of another session first. Its weight was chosen
 *     by leave-one-conversation-out (docs/search.md).
 *   - **The kind of answer.** A query asking "when" lifts the turns that mention a time, and one
 *     asking "how many / long / often / much" those that mention a quantity, and one asking "who /
 *     where / which" or for a name those that name someone or something, by `answerKind`
 *     (search/turn-answers.ts).
 *   - **Episodes.** A turn gains `episode` × the best score among the candidate turns of its memory
 *     (its session), its own included: what a question asks about is usually talked over in one
 *     session, so among turns that match about as well, those of the session that matches best
 *     come first. (Spreading the top turns over sessions instead lowered every figure.)
 *   - **Threads.** Last, a turn gains `thread` × how far its speaker's turn two before or after
 *     scores above it, when the turn between them asks: a topic, the other speaker's question about
 *     it, and the answer are one exchange, and the question's words often sit in one turn of it and
 *     the answer in the other. Its weight was chosen by leave-one-conversation-out (docs/search.md).
 *   - **Follow-ups.** When that question carries query terms the turn before it lacks (the query
 *     asks what the question asks), the reply after it gains `followUp` × the gap instead, above 1:
 *     it passes the turn that only named the topic. The query's terms per chunk come from the
 *     lexical index (LexicalIndex.queryTermMatches); weight and share by leave-one-conversation-out.
 *
 * The neighbours of every candidate join the candidates (their cosine read from the index) so that
 * the answer to a matching question can rank. Chunk ids are `<memory id>:<index>`.
 */
import type { Candidate, FusedCandidate } from './fusion.js';
import { onNamedDay, periodMatch, queryPeriod } from './turn-dates.js';
import type { QuerySpeakers } from './turn-speakers.js';
import type { QueryTermMatch } from './lexical-partition.js';

export interface TurnRankingWeights {
  questionReply: number;
  neighbour: number;
  questionPenalty: number;
  dateMatch: number;
  /** Added to `dateMatch` for the turns on the very day a query names (search/turn-dates.ts onNamedDay). */
  dayMatch: number;
  speakerMismatch: number;
  answerKind: number;
  episode: number;
  thread: number;
  /** Threads' weight when the question between carries the query's own words (a follow-up). */
  followUp: number;
  /** The IDF share of the query's terms the follow-up must add to the turn before it. */
  followUpShare: number;
}

export const DEFAULT_TURN_WEIGHTS: TurnRankingWeights = {
  questionReply: 0.8,
  neighbour: 0.3,
  questionPenalty: 0.1,
  dateMatch: 0.6,
  dayMatch: 1,
  speakerMismatch: 0.5,
  answerKind: 0.3,
  episode: 0.5,
  thread: 0.3,
  followUp: 1.2,
  followUpShare: 0.2,
};

/** What the ranking reads from the index about chunks beyond the pools. */
export interface TurnSource {
  /** Cosine of the query to each of these chunks (absent: not indexed in the searched partitions). */
  cosineOf(chunkIds: Iterable<string>): Map<string, number>;
  /** Whether the chunk asks (its text ends with a question mark). */
  isQuestion(chunkId: string): boolean;
  /** The dates the chunk speaks of (search/turn-dates.ts turnDates). */
  datesOf(chunkId: string): readonly Date[];
  /** The kinds of answer the chunk can give (search/turn-answers.ts turnAnswerKinds). */
  answersOf(chunkId: string): number;
  /** Who speaks the chunk (search/turn-speakers.ts turnSpeaker), if its text says. */
  speakerOf(chunkId: string): string | undefined;
  /** Every chunk of the searched partitions, with its memory. */
  chunks(): Iterable<[chunkId: string, memoryId: string]>;
}

/**
 * What each chunk's dates add to its score for the period the query names, weights applied
 * (absent: no match or no period).
 */
export type DateMatches = ReadonlyMap<string, number>;

export function chunkPosition(chunkId: string): { memoryId: string; index: number } | null {
  const at = chunkId.lastIndexOf(':');
  if (at <= 0) return null;
  const index = Number(chunkId.slice(at + 1));
  return Number.isInteger(index) ? { memoryId: chunkId.slice(0, at), index } : null;
}

const neighbourId = (position: { memoryId: string; index: number }, offset: number): string =>
  `${position.memoryId}:${position.index + offset}`;

/**
 * Adds to `candidates` the chunks in the query's period and the neighbours of every candidate,
 * and reads the cosine of those the vector pool did not hold. Returns what the dates add to each
 * chunk (`dateMatch` × the period match, plus `dayMatch` on the very day a query names).
 */
export function expandTurnCandidates(
  candidates: Map<string, Candidate>,
  query: string,
  source: TurnSource,
  weights: TurnRankingWeights = DEFAULT_TURN_WEIGHTS,
): DateMatches {
  const add = (chunkId: string, memoryId: string): Candidate => {
    let entry = candidates.get(chunkId);
    if (!entry) candidates.set(chunkId, (entry = { chunkId, memoryId }));
    return entry;
  };
  const dated = new Map<string, number>();
  const period = weights.dateMatch > 0 ? queryPeriod(query) : null;
  if (period) {
    for (const [chunkId, memoryId] of source.chunks()) {
      const dates = source.datesOf(chunkId);
      const match = periodMatch(period, dates);
      if (match <= 0) continue;
      dated.set(chunkId, weights.dateMatch * match + (onNamedDay(period, dates) ? weights.dayMatch : 0));
      add(chunkId, memoryId);
    }
  }
  const neighbours: [string, string][] = [];
  for (const id of candidates.keys()) {
    const position = chunkPosition(id);
    if (!position) continue;
    for (const offset of [-1, 1]) {
      const other = neighbourId(position, offset);
      if (!candidates.has(other)) neighbours.push([other, position.memoryId]);
    }
  }
  const unscored = [...candidates.values()].filter((entry) => entry.cosine === undefined).map((entry) => entry.chunkId);
  const cosines = source.cosineOf([...neighbours.map(([id]) => id), ...unscored]);
  for (const [id, memoryId] of neighbours) {
    const cosine = cosines.get(id);
    if (cosine !== undefined) add(id, memoryId).cosine = cosine;
  }
  for (const id of unscored) {
    const cosine = cosines.get(id);
    if (cosine !== undefined) candidates.get(id)!.cosine = cosine;
  }
  return dated;
}

/** The fused candidates re-scored by their conversation context and dates, best first. */
export function rerankTurns(
  fused: readonly FusedCandidate[],
  dated: DateMatches,
  source: Pick<TurnSource, 'isQuestion' | 'speakerOf' | 'answersOf'>,
  options: {
    speakers?: QuerySpeakers | null;
    /** The kind of answer the query asks for (search/turn-answers.ts queryAnswerKind; 0: none). */
    answerKind?: number;
    weights?: TurnRankingWeights;
    /** Which of the query's terms a candidate holds (LexicalIndex.queryTermMatches), for follow-ups. */
    queryTerms?: ReadonlyMap<string, QueryTermMatch>;
  } = {},
): FusedCandidate[] {
  const { speakers, answerKind = 0, weights = DEFAULT_TURN_WEIGHTS, queryTerms } = options;
  const scores = new Map(fused.map((entry) => [entry.chunkId, entry.score]));
  const reranked = fused.map((entry) => {
    const own = entry.score;
    let score = own;
    const position = chunkPosition(entry.chunkId);
    if (position) {
      const previous = neighbourId(position, -1);
      const next = neighbourId(position, 1);
      const fromPrevious =
        Math.max(0, (scores.get(previous) ?? 0) - own) * (source.isQuestion(previous) ? weights.questionReply : weights.neighbour);
      const fromNext = Math.max(0, (scores.get(next) ?? 0) - own) * weights.neighbour;
      score += Math.max(fromPrevious, fromNext);
    }
    score += dated.get(entry.chunkId) ?? 0;
    if (answerKind !== 0 && (source.answersOf(entry.chunkId) & answerKind) !== 0) score += weights.answerKind;
    if (source.isQuestion(entry.chunkId)) score -= weights.questionPenalty;
    if (speakers?.partial) {
      const speaker = source.speakerOf(entry.chunkId);
      if (speaker !== undefined && !speakers.named.has(speaker)) score -= weights.speakerMismatch;
    }
    return { ...entry, score };
  });
  if (weights.episode > 0) {
    const bestOfMemory = new Map<string, number>();
    for (const entry of reranked) bestOfMemory.set(entry.memoryId, Math.max(bestOfMemory.get(entry.memoryId) ?? 0, entry.score));
    for (const entry of reranked) entry.score += weights.episode * bestOfMemory.get(entry.memoryId)!;
  }
  if (weights.thread > 0 || weights.followUp > 0)
    liftThreads(
      reranked,
      source,
      weights.thread,
      queryTerms && { terms: queryTerms, weight: weights.followUp, share: weights.followUpShare },
    );
  for (const entry of reranked) entry.score = Math.round(entry.score * 10_000) / 10_000;
  reranked.sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0));
  return reranked;
}

/**
 * Threads: a turn gains `weight` × how far its speaker's turn two before or after scores above it,
 * when the turn between them asks ("We went to a show." / "What's the band?" / "Summer Sounds!").
 * The scores are those after every other rule (episodes included), read from one snapshot, so the
 * order in which turns are visited does not matter. Only candidates lend, and only across a
 * candidate that asks: nothing is read beyond what the ranking holds.
 *
 * **Follow-ups.** When the other speaker's question between them carries query terms that the
 * turn before it lacks, worth at least `followUp.share` of the query's IDF, the turn after the
 * question gains `followUp.weight` × the gap instead (above 1: it passes the turn before). The
 * query asks what that question asks ("What did Caroline take away from the book?": "I loved
 * 'Becoming Nicole'" / "What did you take away from it?" / "It taught me self-acceptance"), so
 * the answer is its reply, not the turn that only names the topic. Without such words in the
 * question, the topic's turn is as often the answer, and the thread lends only `weight`.
 */
export function liftThreads(
  entries: FusedCandidate[],
  source: Pick<TurnSource, 'isQuestion' | 'speakerOf'>,
  weight: number,
  followUp?: { terms: ReadonlyMap<string, QueryTermMatch>; weight: number; share: number },
): void {
  // Each memory's candidates by turn index, parsed once: the lookups below are numeric.
  const turnsOf = new Map<string, Map<number, FusedCandidate>>();
  const placed = entries.map((entry) => {
    const position = chunkPosition(entry.chunkId);
    if (!position) return null;
    let turns = turnsOf.get(position.memoryId);
    if (!turns) turnsOf.set(position.memoryId, (turns = new Map()));
    turns.set(position.index, entry);
    return { turns, index: position.index };
  });
  const gains = entries.map((entry, at) => {
    if (!placed[at]) return 0;
    const { turns, index } = placed[at];
    let gain = 0;
    for (const offset of [-2, 2]) {
      const other = turns.get(index + offset);
      if (!other || other.score <= entry.score) continue;
      const between = turns.get(index + offset / 2);
      if (!between || !source.isQuestion(between.chunkId)) continue;
      const speaker = source.speakerOf(entry.chunkId);
      if (speaker === undefined || source.speakerOf(other.chunkId) !== speaker) continue;
      const followed =
        offset < 0 && followUp !== undefined && asksFurther(followUp.terms, between.chunkId, other.chunkId) >= followUp.share;
      const lent = followed ? Math.max(weight, followUp.weight) : weight;
      gain = Math.max(gain, lent * (other.score - entry.score));
    }
    return gain;
  });
  entries.forEach((entry, index) => (entry.score += gains[index]!));
}

/**
 * The share of the query's IDF carried by terms that `question` holds and `before` (the turn it
 * follows) does not: 0 when either is unknown or the query has no weighed terms.
 */
export function asksFurther(terms: ReadonlyMap<string, QueryTermMatch>, question: string, before: string): number {
  const asked = terms.get(question);
  if (!asked) return 0;
  const added = asked.mask & ~(terms.get(before)?.mask ?? 0);
  if (added === 0) return 0;
  let total = 0;
  let further = 0;
  asked.weights.forEach((idf, bit) => {
    total += idf;
    if (added & (1 << bit)) further += idf;
  });
  return total > 0 ? further / total : 0;
}

/**
 * The chunks whose query terms the follow-up rule reads: every candidate that asks, and the turn
 * before it (when a candidate too).
 */
export function followUpChunks(candidateIds: Iterable<string>, isQuestion: (chunkId: string) => boolean): string[] {
  const ids = new Set(candidateIds);
  const wanted: string[] = [];
  for (const chunkId of ids) {
    if (!isQuestion(chunkId)) continue;
    wanted.push(chunkId);
    const position = chunkPosition(chunkId);
    const before = position && neighbourId(position, -1);
    if (before && ids.has(before)) wanted.push(before);
  }
  return wanted;
}

/**
 * The candidates whose scores the turn rules read for these chunks and that are not among them:
 * each chunk's turns one and two before and after it in its memory. A ranking narrowed to the
 * leaders keeps them, or a leader would lose what its question, its neighbours or its thread
 * lend it between the two rankings.
 */
export function turnLenders(chunkIds: ReadonlySet<string>, candidates: ReadonlyMap<string, unknown>): string[] {
  const lenders = new Set<string>();
  for (const chunkId of chunkIds) {
    const position = chunkPosition(chunkId);
    if (!position) continue;
    for (const offset of [-2, -1, 1, 2]) {
      const other = neighbourId(position, offset);
      if (!chunkIds.has(other) && candidates.has(other)) lenders.add(other);
    }
  }
  return [...lenders];
}
