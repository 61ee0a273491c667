/**
 * The pure rules of procedure derivation that sit between the text rules (extractors/procedures/:
 * derive, chaining, mining) and the records (store/procedures.ts): ids, a trace record from a
 * draft, which chains moved and need rewriting, an instance from its chain's traces, the nearest
 * pattern of each instance, and when a full re-mine is due. core/procedures/derivation.ts applies
 * them; each is a function of its inputs, so the unit tests need no database.
 */
import { deterministicUuid } from '../ids.js';
import type { GraphScope } from '../graph-model.js';
import type { ProcedureInstance, ProcedurePattern, ProcedureTrace } from '../procedure-model.js';
import type { ChainedInstance } from '../../extractors/procedures/chaining.js';
import type { TraceDraft } from '../../extractors/procedures/derive.js';
import { SignatureIndex, signatureKey, signatureOf } from '../../extractors/procedures/mining.js';

/** What derivation hands over for one trace: the draft plus its resolved graph facts. */
export interface NewTrace extends TraceDraft {
  factIds: string[];
}

/** A full re-mine falls due when the changes since the last one reach this share of its instances (at least 1). */
export const REMINE_SHARE = 0.1;

export const traceIdFor = (scope: GraphScope, memoryId: string, seq: number): string =>
  deterministicUuid('workflow-trace', scope.tenantId, scope.collectionId, memoryId, String(seq));
export const stateIdFor = (traceId: string): string => deterministicUuid('workflow-state', traceId);
export const patternIdFor = (scope: GraphScope, signature: string[]): string =>
  deterministicUuid('workflow-pattern', scope.tenantId, scope.collectionId, signatureKey(signature));
export const orderKeyOf = (memoryTime: Date, memoryId: string, seq: number): string =>
  `${memoryTime.toISOString()}|${memoryId}|${String(seq).padStart(6, '0')}`;

/** A memory's trace record from its draft; `instanceId` is the instance the trace belonged to before (kept until re-chained). */
export function traceRecord(
  scope: GraphScope,
  memoryId: string,
  memoryTime: Date,
  draft: NewTrace,
  instanceId: string | null,
): ProcedureTrace {
  const id = traceIdFor(scope, memoryId, draft.seq);
  return {
    id,
    tenant_id: scope.tenantId,
    collection_id: scope.collectionId,
    memory_id: memoryId,
    memory_time: memoryTime,
    chunk_index: draft.chunkIndex,
    seq: draft.seq,
    order_key: orderKeyOf(memoryTime, memoryId, draft.seq),
    verb_class: draft.verbClass,
    verb_lemma: draft.verbLemma,
    description: draft.description,
    occurred_at: draft.occurredAt,
    occurred_at_source: draft.occurredAtSource,
    extraction_confidence: draft.extractionConfidence,
    acting_entity_ids: draft.actingEntityIds,
    affected_entity_ids: draft.affectedEntityIds,
    fact_ids: draft.factIds,
    subject: draft.subject,
    case_keys: draft.caseKeys,
    before_state: draft.beforeState,
    after_state: draft.afterState,
    state_id: stateIdFor(id),
    instance_id: instanceId,
  };
}

/** A case key is too common to chain by when it is named in more than `maxMemories` memories, or on `limit` traces or more (the bounded read's cap). */
export const isCommonCaseKey = (memoryIdsOfTraces: readonly string[], limit: number, maxMemories: number): boolean =>
  memoryIdsOfTraces.length >= limit || new Set(memoryIdsOfTraces).size > maxMemories;

/**
 * After chaining: the traces whose instance changed (each with its new instance) and the instances
 * to rewrite: those a trace moved into or out of, and the chains of the `settled` traces (every
 * chain of the change's own rows is rewritten, so a retried change repairs what a crash left).
 */
export function chainMoves(
  rows: readonly Pick<ProcedureTrace, 'id' | 'instance_id'>[],
  chains: readonly ChainedInstance[],
  settled: ReadonlySet<string>,
): { moves: { traceId: string; instanceId: string }[]; dirty: Set<string> } {
  const instanceOfTrace = new Map<string, string>();
  for (const chain of chains) for (const traceId of chain.traceIds) instanceOfTrace.set(traceId, chain.id);
  const moved = rows.filter((row) => row.instance_id !== instanceOfTrace.get(row.id));
  const dirty = new Set<string>();
  for (const row of moved) {
    dirty.add(instanceOfTrace.get(row.id)!);
    if (row.instance_id) dirty.add(row.instance_id);
  }
  for (const id of settled) {
    const chainId = instanceOfTrace.get(id);
    if (chainId) dirty.add(chainId);
  }
  return { moves: moved.map((row) => ({ traceId: row.id, instanceId: instanceOfTrace.get(row.id)! })), dirty };
}

/** The trace fields an instance is computed from. */
export type ChainMember = Pick<
  ProcedureTrace,
  | 'id'
  | 'memory_id'
  | 'order_key'
  | 'verb_class'
  | 'occurred_at'
  | 'after_state'
  | 'acting_entity_ids'
  | 'affected_entity_ids'
  | 'case_keys'
>;

/** An instance without its pattern link (the link is decided by assignment or a mine). */
export type InstanceFields = Omit<ProcedureInstance, 'pattern_id' | 'pattern_distance' | 'position'>;

/** An instance from its chain's traces (any order), or null for a chain with none left. */
export function instanceOf(scope: GraphScope, chainId: string, members: readonly ChainMember[], now: Date): InstanceFields | null {
  const traces = [...members].sort((a, b) => (a.order_key < b.order_key ? -1 : a.order_key > b.order_key ? 1 : 0));
  const last = traces[traces.length - 1];
  if (!last) return null;
  const linked = traces.filter((trace) => trace.acting_entity_ids.length + trace.affected_entity_ids.length + trace.case_keys.length > 0);
  return {
    id: chainId,
    tenant_id: scope.tenantId,
    collection_id: scope.collectionId,
    memory_ids: [...new Set(traces.map((trace) => trace.memory_id))],
    trace_count: traces.length,
    last_activity_at: new Date(Math.max(...traces.map((trace) => trace.occurred_at.getTime()))),
    signature: signatureOf(traces.map((trace) => trace.verb_class)),
    evidence: linked.length / traces.length,
    current_trace_id: last.id,
    current_state_description: last.after_state,
    updated_at: now,
  };
}

/** An instance's link to a pattern (all null: no pattern). */
export interface PatternLink {
  instanceId: string;
  patternId: string | null;
  distance: number | null;
  position: { step: number; of: number } | null;
}

/**
 * Assignment between full mines: each instance links to the nearest existing pattern (or none),
 * and the patterns touched are those the instances left or joined, plus `vanishedPatternIds`
 * (patterns that lost a member which no longer exists).
 */
export function assignToNearest(
  patterns: readonly Pick<ProcedurePattern, 'id' | 'signature'>[],
  instances: readonly Pick<ProcedureInstance, 'id' | 'signature' | 'pattern_id'>[],
  vanishedPatternIds: readonly string[],
): { links: PatternLink[]; touched: Set<string> } {
  const touched = new Set<string>(vanishedPatternIds);
  const index = new SignatureIndex(patterns.map((pattern) => pattern.signature));
  const links = instances.map((instance): PatternLink => {
    const found = index.nearest(instance.signature);
    const patternId = found ? patterns[found.index]!.id : null;
    if (instance.pattern_id) touched.add(instance.pattern_id);
    if (patternId) touched.add(patternId);
    return {
      instanceId: instance.id,
      patternId,
      distance: found ? found.alignment.distance : null,
      position: found ? { step: found.alignment.step, of: found.alignment.of } : null,
    };
  });
  return { links, touched };
}

/** What paces full mines of a collection: the instances at its last full mine and the changes since. */
export interface MiningPacing {
  instancesAtMine: number;
  changesSince: number;
}

/** Whether the changes since the last full mine call for another (no mining record yet: always). */
export function fullMineDue(state: MiningPacing | null): boolean {
  const threshold = Math.max(1, Math.floor((state?.instancesAtMine ?? 0) * REMINE_SHARE));
  return !state || state.changesSince >= threshold;
}
