/**
 * Procedures' domain shapes (read at /v1/workflows, docs/workflows.md): a procedure trace, an
 * observed instance (an execution chain of traces) and a mined pattern, each scoped to one
 * collection. Persistence row types stay in store/procedures.ts.
 */

/** Where a trace's occurred_at came from: a date in its text, or the memory's own time. */
export type OccurredAtSource = 'explicit' | 'memory_time';

export interface ProcedureTrace {
  id: string;
  tenant_id: string;
  collection_id: string;
  memory_id: string;
  memory_time: Date;
  chunk_index: number;
  seq: number;
  /** Sorts an instance's traces: memory time, memory id, position in the memory. */
  order_key: string;
  verb_class: string;
  verb_lemma: string;
  description: string;
  occurred_at: Date;
  occurred_at_source: OccurredAtSource;
  extraction_confidence: number;
  acting_entity_ids: string[];
  affected_entity_ids: string[];
  /** Graph facts of the trace's chunk between its entities: members of its after-state. */
  fact_ids: string[];
  subject: string;
  case_keys: string[];
  before_state: string | null;
  after_state: string;
  /** node_id of the after-state. */
  state_id: string;
  instance_id: string | null;
}

export interface ProcedureInstance {
  id: string;
  tenant_id: string;
  collection_id: string;
  memory_ids: string[];
  trace_count: number;
  last_activity_at: Date;
  signature: string[];
  /** Share of traces linked to a graph entity or a case identifier. */
  evidence: number;
  current_trace_id: string;
  current_state_description: string;
  pattern_id: string | null;
  pattern_distance: number | null;
  position: { step: number; of: number } | null;
  updated_at: Date;
}

export interface ProcedurePattern {
  id: string;
  tenant_id: string;
  collection_id: string;
  name: string;
  description: string;
  confidence: number;
  instance_count: number;
  pattern_size: number;
  canonical_signature: string;
  signature: string[];
  weighted_frequency: number;
  canonical_instance_id: string;
  mined_at: Date;
}
