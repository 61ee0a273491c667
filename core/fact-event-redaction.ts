/**
 * What a fact event may keep once the graph rows it describes are gone (docs/events.md,
 * "Redacted fact events"). A `fact_superseded` or `fact_restored` payload names two facts: the
 * older one (its subject, predicate, object and their ids) and the newer one (its predicate,
 * object, ids and `superseded_at`, the time its memory gave it). When removing rows takes a fact
 * out of a collection's graph (a delete, a memory leaving the collection, a failed run taking back
 * what it wrote), or removes the memory whose statement of the newer fact did the superseding,
 * the fields describing that fact are dropped from every fact event that names it: names are the
 * memory's words, entity and fact ids are hashes of those words, and the date is what it said.
 * The subject goes when neither fact is left. What stays is `memory_id` (an opaque random id, as
 * on every event), `predicate_class` (a lexicon name) and whatever describes a fact still in the
 * graph; `redacted: true` marks the payload.
 */

export const FACT_EVENT_TYPES = ['fact_superseded', 'fact_restored'] as const;
export type FactEventType = (typeof FACT_EVENT_TYPES)[number];

export const isFactEventType = (type: string): type is FactEventType => (FACT_EVENT_TYPES as readonly string[]).includes(type);

/** What a removal took out of one collection's graph. */
export interface RemovedFromGraph {
  /** Facts left without any provenance row. */
  facts: ReadonlySet<string>;
  /** Memories all of whose rows in the collection were removed (a delete or a collection leave; not a failed append). */
  memories: ReadonlySet<string>;
}

const SUBJECT_FIELDS = ['subject_id', 'subject'];
const OLD_FACT_FIELDS = ['predicate', 'old_fact_id', 'old_object_id', 'old_object'];
const NEW_FACT_FIELDS: Record<FactEventType, string[]> = {
  fact_superseded: ['new_fact_id', 'new_predicate', 'new_object_id', 'new_object', 'superseded_at'],
  fact_restored: ['new_fact_id', 'superseded_at'],
};

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * The ids a fact event is found by when rows are removed (stored beside it, indexed): the facts
 * it names and the memory whose statement it reports.
 */
export function factEventRefs(payload: Record<string, unknown>): string[] {
  return [payload.old_fact_id, payload.new_fact_id, payload.memory_id].map(text).filter((id): id is string => id !== null);
}

/**
 * The payload with the fields describing removed facts dropped, or null when nothing in it
 * describes a removed fact (it is left as it is). Idempotent: a redacted payload gives null.
 */
export function redactFactPayload(
  type: FactEventType,
  payload: Record<string, unknown>,
  removed: RemovedFromGraph,
): Record<string, unknown> | null {
  const oldFact = text(payload.old_fact_id);
  const newFact = text(payload.new_fact_id);
  const memoryId = text(payload.memory_id);
  const oldGone = oldFact !== null && removed.facts.has(oldFact);
  // The newer fact's fields are its memory's statement: they go with the fact, or with the memory.
  const newGone = (newFact !== null && removed.facts.has(newFact)) || (memoryId !== null && removed.memories.has(memoryId));
  const drop = new Set<string>();
  if (oldGone) OLD_FACT_FIELDS.forEach((field) => drop.add(field));
  if (newGone) NEW_FACT_FIELDS[type].forEach((field) => drop.add(field));
  if (type === 'fact_restored' && oldGone) drop.add('valid_to');
  const oldLeft = oldFact !== null && !oldGone;
  const newLeft = newFact !== null && !newGone;
  if (!oldLeft && !newLeft) SUBJECT_FIELDS.forEach((field) => drop.add(field));
  const present = [...drop].filter((field) => field in payload);
  if (present.length === 0) return null;
  const kept = Object.fromEntries(Object.entries(payload).filter(([field]) => !drop.has(field)));
  return { ...kept, redacted: true };
}
