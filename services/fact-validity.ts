/**
 * The validity step of a search, after the graph signal and apart from fusion: facts that change
 * over time (docs/search.md, "Facts that change over time").
 *
 *   1. Every relationship gets its validity at `as_of` (now when absent) from its timeline
 *      (core/fact-timeline.ts): `valid_from`, `valid_to`, a `status` and what closed it.
 *   2. Relationships not valid then are left out, unless `include_history` asks for them (marked).
 *   3. Valid relationships rank above the rest; within each, those of a class the query asks
 *      about ("work" → employer) first; otherwise the graph's order stands.
 *   4. Hits whose memory backs only relationships that are no longer valid (of a functional
 *      class) score STALE_HIT_FACTOR of their fused score, and at most just under the lowest hit
 *      of a memory backing a current one: the chunk saying where someone used to work ranks below
 *      the one saying where they work now, and stays in the list.
 */
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import { validityAt, type FactTimeline, type ValidityStatus } from '../core/fact-timeline.js';
import type { GraphRelationshipResult, GraphSignal } from './graph-search.js';

export interface ValidityRequest {
  /** Answer as the facts stood at this instant (validity time); null: now. */
  asOf: Date | null;
  /** Also return relationships not valid at `asOf`, marked by their status. */
  includeHistory: boolean;
}

export interface RelationshipValidity {
  /** The functional class of the predicate (the lexicon's), or null for multi-valued facts. */
  predicate_class: string | null;
  status: ValidityStatus;
  /** ISO 8601; null: from an unknown start. */
  valid_from: string | null;
  /** ISO 8601; null: still holds (as far as the memories say). */
  valid_to: string | null;
  /** What closed the interval shown: the fact that superseded or ended it, and the memory saying so. */
  closed_by: { reason: 'superseded' | 'ended'; fact_id: string; memory_id: string } | null;
}

/** Share of its fused score a hit keeps when its memory states only facts that no longer hold. */
export const STALE_HIT_FACTOR = 0.5;

export interface ValidityOutcome {
  relationships: (GraphRelationshipResult & RelationshipValidity)[];
  /** Memories whose shown functional facts are all no longer valid at `as_of`. */
  staleMemories: Set<string>;
  /** Memories backing a shown functional fact valid at `as_of`. */
  currentMemories: Set<string>;
}

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/** Steps 1 to 3, and the memories step 4 demotes. */
export function applyValidity(
  signal: Pick<GraphSignal, 'relationships' | 'support'>,
  timelines: ReadonlyMap<string, FactTimeline>,
  query: string,
  classifier: PredicateClassifier,
  request: ValidityRequest,
  now: Date,
): ValidityOutcome {
  const at = request.asOf ?? now;
  const asked = classifier.classesAskedBy(query);
  const described = signal.relationships.map((relationship, order) => {
    const timeline = timelines.get(relationship.id);
    const { status, interval } = timeline ? validityAt(timeline, at) : { status: 'current' as const, interval: null };
    const closedBy = status === 'current' ? null : (interval?.closedBy ?? null);
    const validity: RelationshipValidity = {
      predicate_class: timeline?.className ?? null,
      status,
      valid_from: iso(interval?.from ?? null),
      valid_to: iso(interval?.to ?? null),
      closed_by: closedBy && { reason: closedBy.reason, fact_id: closedBy.factId, memory_id: closedBy.memoryId },
    };
    return { relationship: { ...relationship, ...validity }, order };
  });

  const current = new Set<string>();
  const stale = new Set<string>();
  for (const { relationship } of described) {
    if (relationship.predicate_class === null) continue;
    const backers = (signal.support.get(relationship.id) ?? []).map((backer) => backer.memoryId);
    for (const memoryId of backers) (relationship.status === 'current' ? current : stale).add(memoryId);
  }
  const staleMemories = new Set([...stale].filter((memoryId) => !current.has(memoryId)));

  const rank = (entry: (typeof described)[number]): number =>
    (entry.relationship.status === 'current' ? 0 : 2) +
    (entry.relationship.predicate_class && asked.has(entry.relationship.predicate_class) ? 0 : 1);
  const relationships = described
    .filter((entry) => request.includeHistory || entry.relationship.status === 'current')
    .sort((a, b) => rank(a) - rank(b) || a.order - b.order)
    .map((entry) => entry.relationship);
  return { relationships, staleMemories, currentMemories: current };
}

/**
 * Step 4 over fused candidates (any shape with a memory id and a score), re-sorted: a stale hit
 * keeps STALE_HIT_FACTOR of its score, and ranks below every hit of a memory stating a current
 * fact shown beside it (the chunk saying where someone used to work may match the words of the
 * question better than the one saying where they work now).
 */
export function demoteStaleHits<T extends { memoryId: string; score: number }>(
  fused: T[],
  outcome: Pick<ValidityOutcome, 'staleMemories' | 'currentMemories'>,
): T[] {
  if (outcome.staleMemories.size === 0) return fused;
  const currentScores = fused.filter((entry) => outcome.currentMemories.has(entry.memoryId)).map((entry) => entry.score);
  const ceiling = currentScores.length > 0 ? Math.min(...currentScores) * 0.99 : Infinity;
  return fused
    .map((entry) =>
      outcome.staleMemories.has(entry.memoryId) ? { ...entry, score: Math.min(entry.score * STALE_HIT_FACTOR, ceiling) } : entry,
    )
    .sort((a, b) => b.score - a.score);
}
