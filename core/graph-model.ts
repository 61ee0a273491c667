/**
 * The graph's domain shapes: what extraction produces and what a graph storage (a collection in
 * MongoDB, a snapshot in memory) holds. Persistence types stay in store/graph.ts.
 */

import { sha256Hex } from './hash.js';

/** Whose graph: one per collection, never shared across collections or tenants. */
export interface GraphScope {
  tenantId: string;
  collectionId: string;
}

/** Deterministic ids: the same name in the same collection is the same node, from any process. */
export const entityIdFor = (scope: GraphScope, key: string): string =>
  sha256Hex(`entity\n${scope.tenantId}\n${scope.collectionId}\n${key}`).slice(0, 32);

export const factIdFor = (scope: GraphScope, subjectId: string, predicate: string, objectId: string): string =>
  sha256Hex(`fact\n${scope.tenantId}\n${scope.collectionId}\n${subjectId}\n${predicate}\n${objectId}`).slice(0, 32);

export interface NewEntity {
  id: string;
  key: string;
  name: string;
  category: string;
  aliases: string[];
  aliasKeys: string[];
  description: string;
  nameVector: Float32Array | null;
}

export interface NewFact {
  id: string;
  subjectId: string;
  objectId: string;
  predicate: string;
  description: string;
  confidence: number;
}

export interface NewMention {
  memoryId: string;
  chunkIndex: number;
  kind: 'entity' | 'fact';
  targetId: string;
  count: number;
  confidence: number;
  description: string;
  /**
   * Facts only: when the chunk says the fact held (core/fact-timeline.ts). `validFrom` null: from
   * an unknown start (an ending); `validTo` null: no end stated. Absent on rows stored before
   * validity existed.
   */
  validFrom?: Date | null;
  validTo?: Date | null;
  /**
   * Entities only: the names this memory gave the entity, as written. When the memory goes, an
   * entity that others still mention keeps only the names they gave it (store/graph.ts).
   */
  names?: string[];
}

/**
 * A target's weight: the sum of its provenance rows' counts (a row without one counts 1). Derived
 * from the rows wherever a graph is held, never kept as a stored counter.
 */
export function weightsOf(rows: Iterable<{ target_id: string; count?: number }>): Map<string, number> {
  const weights = new Map<string, number>();
  for (const row of rows) weights.set(row.target_id, (weights.get(row.target_id) ?? 0) + (row.count ?? 1));
  return weights;
}

/** The words (two letters or more) of one normalised name, in order. */
export const keyTokens = (key: string): string[] => key.split(' ').filter((token) => token.length > 1);

/** The distinct words of normalised names: what the name lookup matches. */
export const tokensOf = (keys: string[]): string[] => [...new Set(keys.flatMap(keyTokens))];
