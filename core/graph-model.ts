/**
 * The graph's domain shapes: what extraction produces and what a graph storage (a collection in
 * MongoDB, a snapshot in memory) holds. Persistence types stay in store/graph.ts.
 */

/** Whose graph: one per collection, never shared across collections or tenants. */
export interface GraphScope {
  tenantId: string;
  collectionId: string;
}

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
}

/** The distinct words (two letters or more) of normalised names: what the name lookup matches. */
export const tokensOf = (keys: string[]): string[] => [
  ...new Set(keys.flatMap((key) => key.split(' ')).filter((token) => token.length > 1)),
];
