/** Wire shapes of the workflow reads (spec: Workflow instance summary/detail, Workflow pattern). */
import type { InstanceDetail, PatternDetail, StateView } from '../../../services/procedures.js';
import type { ProcedureInstance, ProcedurePattern, ProcedureTrace } from '../../../core/procedure-model.js';

export const presentInstanceSummary = (instance: ProcedureInstance) => ({
  id: instance.id,
  collection_id: instance.collection_id,
  pattern_id: instance.pattern_id,
  current_state_description: instance.current_state_description,
  last_activity_at: instance.last_activity_at.toISOString(),
  trace_count: instance.trace_count,
});

const presentState = (state: StateView) => ({
  node_id: state.nodeId,
  description: state.description,
  entered_at: state.enteredAt ? state.enteredAt.toISOString() : null,
  members: { entities: state.entities, facts: state.facts },
});

const presentTrace = (trace: ProcedureTrace) => ({
  id: trace.id,
  verb_class: trace.verb_class,
  description: trace.description,
  occurred_at: trace.occurred_at.toISOString(),
  extraction_confidence: trace.extraction_confidence,
  // Additive fields (spec Versioning 4): how occurred_at was found, the verb, the entities, the prior state.
  occurred_at_source: trace.occurred_at_source,
  verb: trace.verb_lemma,
  acting_entity_ids: trace.acting_entity_ids,
  affected_entity_ids: trace.affected_entity_ids,
  before_state_description: trace.before_state,
  memory_id: trace.memory_id,
});

export const presentInstanceDetail = (detail: InstanceDetail) => ({
  ...presentInstanceSummary(detail.instance),
  current_state: presentState(detail.currentState),
  ...(detail.instance.pattern_id && detail.instance.position ? { position: detail.instance.position } : {}),
  history: detail.history.map((entry) => ({ state: presentState(entry.state), trace: entry.trace ? presentTrace(entry.trace) : null })),
  history_truncated: detail.historyTruncated,
  similar_instances: detail.similar.map((instance) => ({
    id: instance.id,
    pattern_id: instance.pattern_id,
    current_state_description: instance.current_state_description,
    last_activity_at: instance.last_activity_at.toISOString(),
  })),
});

export const presentPatternSummary = (pattern: ProcedurePattern) => ({
  id: pattern.id,
  collection_id: pattern.collection_id,
  name: pattern.name,
  description: pattern.description,
  confidence: pattern.confidence,
  instance_count: pattern.instance_count,
  pattern_size: pattern.pattern_size,
});

export const presentPatternDetail = (detail: PatternDetail) => ({
  ...presentPatternSummary(detail.pattern),
  canonical_signature: detail.pattern.canonical_signature,
  weighted_frequency: detail.pattern.weighted_frequency,
  canonical_instance_id: detail.pattern.canonical_instance_id,
  instance_ids: detail.instanceIds,
  instance_ids_total: detail.instanceIdsTotal,
});
