/** The graph storage seam shared by collection mode and device mode. */
import type { GraphScope, NewEntity, NewFact, NewMention } from './graph-model.js';

/** An entity as resolution needs it, whatever holds the graph. */
export interface EntityCandidate {
  id: string;
  key: string;
  category: string;
  /** Normalised keys that resolve to the entity. */
  aliasKeys: string[];
  /** Tokens of the alias keys. */
  tokens: string[];
  nameVector: Float32Array | null;
}

/**
 * Where a graph lives: a collection's graph in MongoDB (store/graph.ts) or a device snapshot held
 * in memory for one request (snapshot/snapshot-graph.ts). Resolution is written once, in
 * activities/graph-builder.ts, against this interface, and merging once, in core/graph-merge.ts,
 * which both implementations apply, so both storages build the same graph from the same text.
 */
export interface GraphStore {
  /** Entities that any of `keys` resolves to (exact alias match). */
  findByKeys(scope: GraphScope, keys: string[]): Promise<EntityCandidate[]>;
  /** Entities sharing a token with `keys`: candidates for fuzzy resolution. */
  findCandidates(scope: GraphScope, keys: string[], limit: number): Promise<EntityCandidate[]>;
  write(scope: GraphScope, entities: NewEntity[], facts: NewFact[], mentions: NewMention[]): Promise<void>;
}
