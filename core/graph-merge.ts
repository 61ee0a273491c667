/**
 * How a new entity or fact merges into the one a graph already holds under its id, written once for
 * both storages: the collection graph (store/graph.ts, as one atomic upsert per row) and a device
 * snapshot's graph in memory (snapshot/snapshot-graph.ts, through `mergeInto`).
 *
 *   kept         written by the first memory that names the target, never changed by later ones
 *                (name, category, description, name vector; a fact's ends and predicate);
 *   accumulated  sets that grow with every memory (an entity's aliases and alias keys);
 *   highest      numbers that keep their largest value (a fact's confidence).
 */
import { normalizeEntityName } from './entity-names.js';
import type { NewEntity, NewFact } from './graph-model.js';

export interface MergePlan<Kept, Accumulated extends Record<string, string[]>, Highest extends Record<string, number>> {
  kept: Kept;
  accumulated: Accumulated;
  highest: Highest;
}

/** An entity's merge, its name vector in the storage's own encoding. */
export function entityMerge<Vector>(entity: NewEntity, encodeVector: (vector: Float32Array) => Vector) {
  return {
    kept: {
      key: entity.key,
      name: entity.name,
      category: entity.category,
      description: entity.description,
      name_vector: entity.nameVector ? encodeVector(entity.nameVector) : null,
    },
    accumulated: { aliases: [...new Set(entity.aliases)], alias_keys: [...new Set(entity.aliasKeys)] },
    highest: {},
  } satisfies MergePlan<object, Record<string, string[]>, Record<string, number>>;
}

export function factMerge(fact: NewFact) {
  return {
    kept: { subject_id: fact.subjectId, object_id: fact.objectId, predicate: fact.predicate, description: fact.description },
    accumulated: {},
    highest: { confidence: fact.confidence },
  } satisfies MergePlan<object, Record<string, string[]>, Record<string, number>>;
}

/** The record a plan makes of what is held (`known`, or nothing yet): the in-memory form of the upsert. */
export function mergeInto<Kept extends object, Accumulated extends Record<string, string[]>, Highest extends Record<string, number>>(
  known: (Kept & Accumulated & Highest) | undefined,
  plan: MergePlan<Kept, Accumulated, Highest>,
): Kept & Accumulated & Highest {
  if (!known) return { ...plan.kept, ...plan.accumulated, ...plan.highest };
  const merged = { ...known };
  for (const [field, values] of Object.entries(plan.accumulated)) {
    (merged as Record<string, string[]>)[field] = [...new Set([...(known as Record<string, string[]>)[field]!, ...values])];
  }
  for (const [field, value] of Object.entries(plan.highest)) {
    (merged as Record<string, number>)[field] = Math.max((known as Record<string, number>)[field]!, value);
  }
  return merged;
}

/** The names an entity is known by, as the collection graph stores them. */
export interface EntityNames {
  key: string;
  name: string;
  aliases: string[];
  alias_keys: string[];
}

/**
 * The reverse of the merge for names: what an entity is called once the memories that gave it the
 * `lost` names are gone and others still mention it. Those names leave its aliases, their keys
 * leave its alias keys (unless a name it keeps has the same key), and when its name was one of
 * them it takes the first name it keeps, and that name's key. `renamed`: the name changed, so
 * anything derived from the old one (the name vector) must go too.
 */
export function entityNamesWithout(entity: EntityNames, lost: ReadonlySet<string>): EntityNames & { renamed: boolean } {
  const aliases = entity.aliases.filter((alias) => !lost.has(alias));
  const name = lost.has(entity.name) ? (aliases[0] ?? entity.name) : entity.name;
  const keptKeys = new Set([name, ...aliases].map(normalizeEntityName));
  const lostKeys = new Set([...lost].map(normalizeEntityName).filter((key) => !keptKeys.has(key)));
  const key = lostKeys.has(entity.key) ? normalizeEntityName(name) : entity.key;
  const aliasKeys = entity.alias_keys.filter((aliasKey) => !lostKeys.has(aliasKey));
  if (!aliasKeys.includes(key)) aliasKeys.unshift(key);
  return { key, name, aliases, alias_keys: aliasKeys, renamed: name !== entity.name };
}
