/**
 * What procedure derivation (core/procedures/derivation.ts) needs from storage: typed reads and
 * writes of traces, instances and patterns, and the per-collection mining record with its lease.
 * store/procedures.ts implements it over MongoDB; the unit tests over arrays.
 */
import type { GraphScope } from '../graph-model.js';
import type { ProcedureInstance, ProcedurePattern, ProcedureTrace } from '../procedure-model.js';
import type { ChainMember, InstanceFields, MiningPacing, PatternLink } from './rules.js';

/** The trace fields the chaining rule reads. */
export type ChainRow = Pick<
  ProcedureTrace,
  'id' | 'memory_id' | 'memory_time' | 'seq' | 'case_keys' | 'instance_id' | 'subject' | 'verb_class'
>;

/** Traces of one subject near a memory's time (chaining rule 4's look-ups). */
export interface SubjectQuery {
  subject: string;
  notMemoryId: string;
  from: Date;
  to: Date;
  verbClasses: string[];
  /** Only traces without a case key. */
  unnumberedOnly: boolean;
  /** 1: earliest first; -1: latest first. */
  direction: 1 | -1;
  limit: number;
}

export interface ProcedureRecords {
  // ---- traces
  /** A memory's traces in one collection: ids and instances. */
  memoryTraceInstances(scope: GraphScope, memoryId: string): Promise<Pick<ProcedureTrace, 'id' | 'instance_id'>[]>;
  /** Deletes `goneIds`, then writes `traces` whole (replacing any with the same id). */
  replaceTraces(goneIds: string[], traces: ProcedureTrace[]): Promise<void>;
  /** Traces of memories, in every collection or the named ones, optionally only of chunks from `fromChunk` on. */
  tracesOfMemories(
    memoryIds: string[],
    onlyCollections?: string[],
    fromChunk?: number,
  ): Promise<Pick<ProcedureTrace, 'id' | 'tenant_id' | 'collection_id' | 'instance_id'>[]>;
  deleteTraces(ids: string[]): Promise<void>;
  /** Memory ids of at most `limit` traces naming a case key. */
  memoriesNamingCaseKey(scope: GraphScope, key: string, limit: number): Promise<string[]>;
  /** Traces of any of the memories, instances or case keys. */
  chainRows(scope: GraphScope, seeds: { memoryIds: string[]; instanceIds: string[]; caseKeys: string[] }): Promise<ChainRow[]>;
  subjectTraces(scope: GraphScope, query: SubjectQuery): Promise<Pick<ProcedureTrace, 'memory_id' | 'instance_id'>[]>;
  moveTraces(moves: { traceId: string; instanceId: string }[]): Promise<void>;
  chainMembers(scope: GraphScope, traceIds: string[]): Promise<ChainMember[]>;

  // ---- instances
  /** Instances that list any of the memories, in every collection or the named ones. */
  instancesFedBy(memoryIds: string[], onlyCollections?: string[]): Promise<Pick<ProcedureInstance, 'id' | 'tenant_id' | 'collection_id'>[]>;
  /** Writes instances, keeping the pattern links of existing ones (a new one starts unlinked). */
  upsertInstances(instances: InstanceFields[]): Promise<void>;
  /** Deletes instances; returns the patterns they were linked to (read before the delete). */
  deleteInstances(scope: GraphScope, ids: string[]): Promise<string[]>;
  instancesByIds(scope: GraphScope, ids: string[]): Promise<Pick<ProcedureInstance, 'id' | 'signature' | 'pattern_id'>[]>;
  /** Whether another instance of the collection with no pattern has exactly this signature. */
  hasUnlinkedTwin(scope: GraphScope, instanceId: string, signature: readonly string[]): Promise<boolean>;
  instancesToMine(
    scope: GraphScope,
  ): Promise<Pick<ProcedureInstance, 'id' | 'signature' | 'last_activity_at' | 'evidence' | 'pattern_id'>[]>;
  setPatternLinks(links: PatternLink[]): Promise<void>;

  // ---- patterns (between full mines)
  patternsOf(scope: GraphScope): Promise<Pick<ProcedurePattern, 'id' | 'signature' | 'canonical_instance_id'>[]>;
  countPatternMembers(scope: GraphScope, patternId: string): Promise<number>;
  /** Deletes the pattern and unlinks its members. */
  dissolvePattern(scope: GraphScope, patternId: string): Promise<void>;
  isPatternMember(scope: GraphScope, instanceId: string, patternId: string): Promise<boolean>;
  /** The member closest to the pattern (then most recent), or null. */
  closestPatternMember(scope: GraphScope, patternId: string): Promise<string | null>;
  updatePattern(
    patternId: string,
    set: Partial<Pick<ProcedurePattern, 'instance_count' | 'description' | 'canonical_instance_id'>>,
  ): Promise<void>;

  // ---- a full mine's writes, fenced by its lease epoch
  /** Writes the patterns over rows of an older or equal epoch; false when a newer mine's row is in the way. */
  writeMinedPatterns(patterns: ProcedurePattern[], epoch: number): Promise<boolean>;
  /** Links instances over links of an older or equal epoch. */
  linkMinedInstances(links: PatternLink[], epoch: number): Promise<void>;
  /** Unlinks instances whose link is of an older or equal epoch. */
  unlinkMinedInstances(scope: GraphScope, instanceIds: string[], epoch: number): Promise<void>;
  /** Deletes the collection's patterns of older mines that are not in `keepIds`. */
  deleteOlderPatterns(scope: GraphScope, keepIds: string[], epoch: number): Promise<void>;
  /** Notes a finished mine, if the lease is still `epoch`'s. */
  recordMine(scope: GraphScope, epoch: number, instanceCount: number, minedAt: Date): Promise<void>;

  // ---- the mining record and its lease
  /** Counts a change (and moves the version); returns the instances at the last mine and the changes since. */
  noteChanges(scope: GraphScope, changes: number): Promise<MiningPacing | null>;
  /** The instances at the last mine and the changes since (null: no record yet), as noteChanges returns them. */
  miningPacing(collectionId: string): Promise<MiningPacing | null>;
  /** A full mine is owed: the sweep runs it once the collection is quiet. */
  markMineOwed(collectionId: string): Promise<void>;
  /** A mine starts: clears what was owed and returns the version it starts from. */
  startMine(collectionId: string): Promise<number>;
  miningVersion(collectionId: string): Promise<number>;
  /** Takes the collection's mining lease: its epoch for the one caller that took it, else null. */
  claimMineLease(scope: GraphScope): Promise<number | null>;
  /** Extends the lease if `epoch` still holds it; false when it was taken over. */
  renewMineLease(collectionId: string, epoch: number): Promise<boolean>;
  /** Ends the lease if `epoch` still holds it. */
  releaseMineLease(collectionId: string, epoch: number): Promise<void>;
  /** Collections owed a full mine, quiet for `quietMs`, whose lease is free. */
  owedMines(quietMs: number, limit: number): Promise<GraphScope[]>;
}
