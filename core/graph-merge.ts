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
