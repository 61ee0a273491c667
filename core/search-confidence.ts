/**
 * How confident a search was, in the figures a `memory_unconfident` event carries: one definition
 * for the search service that measures them and the client that reads the event (client/frames.ts).
 */
export type UnconfidentReason = 'no_results' | 'low_activation' | 'low_fact_confidence';

export interface ConfidenceFigures {
  entity_count: number;
  fact_count: number;
  episode_count: number;
  source_count: number;
  avg_activation: number;
  max_activation: number;
  avg_fact_confidence: number;
}
