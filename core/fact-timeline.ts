/**
 * When each fact held: validity intervals derived from the facts' provenance rows, never stored.
 *
 * Each provenance row of a fact says when its memory puts the fact: `validFrom` (the sentence's
 * explicit start, else the memory's time) and `validTo` (an explicit end, or the time of an
 * ending: "left Acme", "no longer lives in Oslo"; such rows have no `validFrom`). Record time,
 * when the service learned it, plays no part.
 *
 * Facts are grouped by subject and predicate class (core/fact-lexicon.ts) and their rows are
 * replayed in time order:
 *   - an assertion opens its fact, and supersedes every open fact of the group with a different
 *     object that opened strictly earlier (same-time assertions of two objects both stand); an
 *     assertion of one of the class's ending objects ("have status" closed) ends them instead;
 *   - an ending closes every open fact of the group with the object it names; a fact known only
 *     from endings held until then, from an unknown start; an ending and an assertion of another
 *     object by one memory at one instant ("moved from Berlin to Lisbon") is a supersession;
 *   - a fact of no class is its own group: only its own explicit ends close it.
 * Each closed interval names the fact and the memory that closed it. Because the intervals are
 * recomputed from whatever rows exist, deleting the memory that superseded a fact reopens it:
 * deletes stay exact with nothing to undo.
 *
 * Rows stored before validity existed carry neither time: they count as an assertion from the
 * beginning of time, so anything later supersedes them.
 */
import type { PredicateClassifier } from './fact-lexicon.js';

export interface ValidityRow {
  memoryId: string;
  /** The chunk of the memory that states it (a failed append takes back the rows of its chunks). */
  chunkIndex?: number;
  validFrom: Date | null;
  validTo: Date | null;
}

export interface TimelineFact {
  id: string;
  subjectId: string;
  objectId: string;
  predicate: string;
  /** Words of the object's names, for lexicon classes that name their objects. */
  objectKey: string;
  rows: ValidityRow[];
}

export interface Closure {
  /** `superseded`: a later fact of the class with another object; `ended`: an ending or an explicit end. */
  reason: 'superseded' | 'ended';
  factId: string;
  memoryId: string;
}

export interface ValidityInterval {
  /** null: held from an unknown start. */
  from: Date | null;
  /** null: still holds. */
  to: Date | null;
  closedBy: Closure | null;
}

export interface FactTimeline {
  /** The functional class the fact belongs to, or null (multi-valued: nothing supersedes it). */
  className: string | null;
  /** In time order; at least one. */
  intervals: ValidityInterval[];
}

export type ValidityStatus = 'current' | 'superseded' | 'ended' | 'not_yet_valid';

interface TimelineEvent {
  time: number;
  kind: 'assert' | 'end';
  fact: TimelineFact;
  memoryId: string;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Replays one group's rows (same subject, same class; or one fact alone). The facts in
 * `closingFacts` name an ending object of the class ("have status" closed): asserting one closes
 * the group's open facts as `ended`, not `superseded`.
 */
export function groupTimeline(
  facts: readonly TimelineFact[],
  closingFacts: ReadonlySet<string> = new Set(),
): Map<string, ValidityInterval[]> {
  const events: TimelineEvent[] = [];
  for (const fact of facts) {
    for (const row of fact.rows) {
      if (row.validFrom === null && row.validTo === null) {
        events.push({ time: -Infinity, kind: 'assert', fact, memoryId: row.memoryId });
        continue;
      }
      if (row.validFrom !== null) events.push({ time: row.validFrom.getTime(), kind: 'assert', fact, memoryId: row.memoryId });
      if (row.validTo !== null) events.push({ time: row.validTo.getTime(), kind: 'end', fact, memoryId: row.memoryId });
    }
  }
  // Ends before assertions at one instant ("moved from Berlin to Lisbon"); ids make it deterministic.
  events.sort(
    (a, b) =>
      a.time - b.time ||
      (a.kind === b.kind ? 0 : a.kind === 'end' ? -1 : 1) ||
      compareText(a.fact.id, b.fact.id) ||
      compareText(a.memoryId, b.memoryId),
  );

  const intervals = new Map<string, ValidityInterval[]>(facts.map((fact) => [fact.id, []]));
  const open = new Map<string, { fact: TimelineFact; from: number }>();
  const close = (factId: string, time: number, closedBy: Closure): ValidityInterval => {
    const entry = open.get(factId)!;
    open.delete(factId);
    const interval = { from: dateOf(entry.from), to: new Date(time), closedBy };
    intervals.get(factId)!.push(interval);
    return interval;
  };

  // Intervals ended at the current instant: "moved from Berlin to Lisbon" ends Berlin and asserts
  // Lisbon at once, and one memory saying both is a supersession, not an ending.
  let endedNow: { time: number; interval: ValidityInterval; objectId: string }[] = [];
  for (const event of events) {
    const by = { factId: event.fact.id, memoryId: event.memoryId };
    if (endedNow[0] !== undefined && endedNow[0].time !== event.time) endedNow = [];
    if (event.kind === 'assert') {
      const closing = closingFacts.has(event.fact.id);
      for (const [id, entry] of [...open]) {
        if (entry.fact.objectId !== event.fact.objectId && entry.from < event.time) {
          close(id, event.time, { reason: closing ? 'ended' : 'superseded', ...by });
        }
      }
      for (const ended of closing ? [] : endedNow) {
        if (ended.objectId !== event.fact.objectId && ended.interval.closedBy?.memoryId === event.memoryId) {
          ended.interval.closedBy = { reason: 'superseded', ...by };
        }
      }
      if (!open.has(event.fact.id)) open.set(event.fact.id, { fact: event.fact, from: event.time });
      continue;
    }
    let closedOwn = false;
    for (const [id, entry] of [...open]) {
      if (entry.fact.objectId === event.fact.objectId && entry.from < event.time) {
        const interval = close(id, event.time, { reason: 'ended', ...by });
        endedNow.push({ time: event.time, interval, objectId: entry.fact.objectId });
        if (id === event.fact.id) closedOwn = true;
      }
    }
    // Known only from an ending ("left Acme"): it held until then.
    if (!closedOwn && !open.has(event.fact.id) && intervals.get(event.fact.id)!.length === 0) {
      const interval: ValidityInterval = { from: null, to: new Date(event.time), closedBy: { reason: 'ended', ...by } };
      intervals.get(event.fact.id)!.push(interval);
      endedNow.push({ time: event.time, interval, objectId: event.fact.objectId });
    }
  }
  for (const [id, entry] of open) intervals.get(id)!.push({ from: dateOf(entry.from), to: null, closedBy: null });
  for (const list of intervals.values()) list.sort((a, b) => (a.from?.getTime() ?? -Infinity) - (b.from?.getTime() ?? -Infinity));
  return intervals;
}

const dateOf = (time: number): Date | null => (Number.isFinite(time) ? new Date(time) : null);

/** A row saying the fact held until then and no longer ("left Acme", "is no longer with Acme"). */
const isEndingRow = (row: ValidityRow): boolean => row.validFrom === null && row.validTo !== null;

/**
 * The groups a fact takes part in: its asserted class, or every class it may end, or none. A
 * vague predicate (`endsWhenNegated`: "be with") takes part only through its ending rows.
 */
export function groupsOf(fact: TimelineFact, classifier: PredicateClassifier): { className: string | null; keys: string[] } {
  const asserted = classifier.assertsOf(fact.predicate, fact.objectKey);
  if (asserted !== null) return { className: asserted, keys: [`${fact.subjectId}\n${asserted}`] };
  const ended = classifier.endsOf(fact.predicate, fact.objectKey);
  if (ended.length > 0) return { className: ended[0]!, keys: ended.map((name) => `${fact.subjectId}\n${name}`) };
  const saidOver = fact.rows.some(isEndingRow) ? classifier.endsWhenSaidOver(fact.predicate, fact.objectKey) : [];
  if (saidOver.length > 0) return { className: saidOver[0]!, keys: saidOver.map((name) => `${fact.subjectId}\n${name}`) };
  return { className: null, keys: [`fact\n${fact.id}`] };
}

/**
 * Timelines of `facts`, each computed over its whole group: `facts` must hold, for every
 * subject it names, all of that subject's facts (the caller reads them by subject).
 */
export function factTimelines(facts: readonly TimelineFact[], classifier: PredicateClassifier): Map<string, FactTimeline> {
  const groups = new Map<string, TimelineFact[]>();
  const classOf = new Map<string, string | null>();
  const closingFacts = new Set<string>();
  for (const fact of facts) {
    const { className, keys } = groupsOf(fact, classifier);
    classOf.set(fact.id, className);
    if (className !== null && classifier.endsClassByObject(className, fact.objectKey)) closingFacts.add(fact.id);
    // A vague predicate in a class ("be with") counts only by its endings: "is with Acme" supersedes nothing.
    const member =
      className !== null && classifier.endsWhenSaidOver(fact.predicate, fact.objectKey).length > 0
        ? { ...fact, rows: fact.rows.filter(isEndingRow) }
        : fact;
    for (const key of keys) {
      const members = groups.get(key);
      if (members) members.push(member);
      else groups.set(key, [member]);
    }
  }
  const result = new Map<string, FactTimeline>();
  for (const members of groups.values()) {
    for (const [id, intervals] of groupTimeline(members, closingFacts)) {
      // An ending shared by two classes gets the same interval from both: the first is kept.
      if (!result.has(id)) result.set(id, { className: classOf.get(id) ?? null, intervals });
    }
  }
  endWithTiedFacts(facts, result, classifier);
  return result;
}

/**
 * A class's `endsWith` (the role's employer): each interval of a fact of the class is cut where
 * the subject's fact of the tied class that held when the interval began stops holding, unless
 * something else closed it first or that fact still holds. The cut is an ending (`ended`), closed
 * by what closed the tied fact ("joined Initech" ends the CFO role held at Globex). An interval
 * from an unknown start, or one that began while no tied fact held, is tied to nothing. When
 * several tied facts held at its start, the last of them to stop decides.
 */
function endWithTiedFacts(facts: readonly TimelineFact[], timelines: Map<string, FactTimeline>, classifier: PredicateClassifier): void {
  const bySubject = new Map<string, TimelineFact[]>();
  for (const fact of facts) {
    const list = bySubject.get(fact.subjectId);
    if (list) list.push(fact);
    else bySubject.set(fact.subjectId, [fact]);
  }
  for (const subjectFacts of bySubject.values()) {
    for (const fact of subjectFacts) {
      const timeline = timelines.get(fact.id);
      const ties = timeline?.className ? classifier.endsWithOf(timeline.className) : [];
      if (!timeline || ties.length === 0) continue;
      const anchors = subjectFacts.flatMap((other) => {
        const tied = timelines.get(other.id);
        return tied?.className && ties.includes(tied.className) ? tied.intervals.map((interval) => ({ factId: other.id, interval })) : [];
      });
      timeline.intervals = timeline.intervals.map((interval) => {
        if (interval.from === null) return interval;
        const start = interval.from.getTime();
        const holding = anchors.filter(
          ({ interval: anchor }) => (anchor.from?.getTime() ?? -Infinity) <= start && (anchor.to === null || start < anchor.to.getTime()),
        );
        if (holding.length === 0 || holding.some(({ interval: anchor }) => anchor.to === null)) return interval;
        const last = holding.reduce((a, b) => (b.interval.to!.getTime() > a.interval.to!.getTime() ? b : a));
        const end = last.interval.to!;
        if (interval.to !== null && interval.to.getTime() <= end.getTime()) return interval;
        const closer = last.interval.closedBy;
        return {
          from: interval.from,
          to: end,
          closedBy: { reason: 'ended', factId: closer?.factId ?? last.factId, memoryId: closer?.memoryId ?? '' },
        };
      });
    }
  }
}

/** A fact's standing at `at`: the interval that holds then, or the last one before, or the first after. */
export function validityAt(timeline: FactTimeline, at: Date): { status: ValidityStatus; interval: ValidityInterval | null } {
  const time = at.getTime();
  let before: ValidityInterval | null = null;
  for (const interval of timeline.intervals) {
    const started = interval.from === null || interval.from.getTime() <= time;
    if (!started) continue;
    if (interval.to === null || time < interval.to.getTime()) return { status: 'current', interval };
    before = interval;
  }
  if (before) return { status: before.closedBy?.reason === 'superseded' ? 'superseded' : 'ended', interval: before };
  const first = timeline.intervals[0] ?? null;
  return { status: first ? 'not_yet_valid' : 'current', interval: first };
}

export interface Supersession {
  className: string;
  oldFactId: string;
  newFactId: string;
  /** The memory whose statement of the new fact closed the old one. */
  memoryId: string;
  /** When the old fact stopped holding: the new fact's start. */
  at: Date;
}

const bySupersessionTime = (a: Supersession, b: Supersession): number =>
  a.at.getTime() - b.at.getTime() || compareText(a.oldFactId, b.oldFactId);

const supersessionsOf = (timelines: Map<string, FactTimeline>): Map<string, Supersession> => {
  const found = new Map<string, Supersession>();
  for (const [id, timeline] of timelines) {
    for (const interval of timeline.intervals) {
      const closedBy = interval.closedBy;
      if (closedBy?.reason !== 'superseded' || interval.to === null || timeline.className === null) continue;
      // What the events name it by (old_fact_id, new_fact_id, superseded_at): an earlier start
      // learned later does not make it another supersession.
      const key = `${id}\n${closedBy.factId}\n${interval.to.getTime()}`;
      found.set(key, {
        className: timeline.className,
        oldFactId: id,
        newFactId: closedBy.factId,
        memoryId: closedBy.memoryId,
        at: interval.to,
      });
    }
  }
  return found;
};

/**
 * The supersessions that `memoryId`'s rows brought about among `facts` (every fact of the
 * subjects it touched): those replaying with its rows finds and replaying without them does not,
 * in time order. A memory stating an older fact can also bring one about (its own fact arrives
 * superseded by a newer one already known).
 */
export function newSupersessions(facts: readonly TimelineFact[], memoryId: string, classifier: PredicateClassifier): Supersession[] {
  const without = facts
    .map((fact) => ({ ...fact, rows: fact.rows.filter((row) => row.memoryId !== memoryId) }))
    .filter((fact) => fact.rows.length > 0);
  const before = supersessionsOf(factTimelines(without, classifier));
  const after = supersessionsOf(factTimelines(facts, classifier));
  return [...after]
    .filter(([key]) => !before.has(key))
    .map(([, supersession]) => supersession)
    .sort(bySupersessionTime);
}

export interface Restoration extends Supersession {
  /** Where the restored fact's interval ends now: null when it holds again. */
  validTo: Date | null;
}

/**
 * What removing rows (all rows of the memories in `removed`, or the rows a predicate picks: a
 * failed append's chunks) changes among `facts` (every fact of the subjects those rows touch): the supersessions undone whose old fact holds again at that time (`restored`,
 * `memoryId` naming the deleted memory that had stated the newer fact), and the supersessions the
 * delete brings about (`superseded`: an older fact now closed by a later one that the deleted
 * memory's fact had stood between), each in time order; and the facts left without any row
 * (`goneFacts`), whose events must stop describing them (core/fact-event-redaction.ts).
 */
export function deletionChanges(
  facts: readonly TimelineFact[],
  removed: ReadonlySet<string> | ((row: ValidityRow) => boolean),
  classifier: PredicateClassifier,
): { restored: Restoration[]; superseded: Supersession[]; goneFacts: Set<string> } {
  const isRemoved = typeof removed === 'function' ? removed : (row: ValidityRow) => removed.has(row.memoryId);
  const without = facts
    .map((fact) => ({ ...fact, rows: fact.rows.filter((row) => !isRemoved(row)) }))
    .filter((fact) => fact.rows.length > 0);
  const kept = new Set(without.map((fact) => fact.id));
  const goneFacts = new Set(facts.filter((fact) => !kept.has(fact.id)).map((fact) => fact.id));
  const before = supersessionsOf(factTimelines(facts, classifier));
  const afterTimelines = factTimelines(without, classifier);
  const after = supersessionsOf(afterTimelines);
  const restored: Restoration[] = [];
  for (const [key, supersession] of before) {
    if (after.has(key)) continue;
    const timeline = afterTimelines.get(supersession.oldFactId);
    if (!timeline) continue; // the old fact went with the deleted memories
    const { status, interval } = validityAt(timeline, supersession.at);
    if (status === 'current') restored.push({ ...supersession, validTo: interval?.to ?? null });
  }
  const superseded = [...after].filter(([key]) => !before.has(key)).map(([, supersession]) => supersession);
  return { restored: restored.sort(bySupersessionTime), superseded: superseded.sort(bySupersessionTime), goneFacts };
}
