/**
 * Turns pipeline progress into ingestion_progress events and Temporal heartbeats, in one place,
 * so the event stream, the memory's status and the Temporal UI always tell the same story.
 */
import { progressReported } from '../core/metrics.js';
import { Context } from '@temporalio/activity';
import type { UserStage } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { Memory } from '../core/memory-model.js';

export interface ProgressTarget {
  memoryId: string;
  tenantId: string;
  collectionIds: string[];
}

export const progressTargetOf = (memory: Pick<Memory, 'id' | 'tenant_id' | 'collection_ids'>): ProgressTarget => ({
  memoryId: memory.id,
  tenantId: memory.tenant_id,
  collectionIds: memory.collection_ids,
});

export async function reportProgress(
  store: Store,
  target: ProgressTarget,
  stage: string,
  userStage: UserStage,
  current: number,
  total: number,
  message: string | null = null,
): Promise<void> {
  heartbeat({ stage, current, total });
  progressReported.inc({ user_stage: userStage });
  await store.events.appendProgress(target.tenantId, target.collectionIds, {
    engram_id: target.memoryId,
    stage,
    user_stage: userStage,
    current,
    total,
    message,
  });
}

/**
 * A run's terminal event (complete or failed), reported once per activity even when attempts
 * overlap: an attempt that outlived its heartbeat timeout on a loaded worker can finish after its
 * retry started, and both get here. The mark is written after the append, so a crash between the
 * two repeats the event (delivery is at least once) instead of losing it.
 */
export async function reportTerminal(
  store: Store,
  target: ProgressTarget,
  userStage: 'complete' | 'failed',
  current: number,
  total: number,
  message: string | null = null,
): Promise<void> {
  const scope = activityScope();
  if (scope !== null && (await store.memories.terminalReported(target.memoryId, scope))) return;
  await reportProgress(store, target, userStage, userStage, current, total, message);
  if (scope !== null) await store.memories.markTerminalReported(target.memoryId, scope);
}

/** What the attempts of one activity call share (its run and activity id); null outside an activity. */
function activityScope(): string | null {
  try {
    const info = Context.current().info;
    return info.workflowExecution ? `${info.workflowExecution.runId}/${info.activityId}` : null;
  } catch {
    return null;
  }
}

/** Heartbeat when running inside an activity; a no-op elsewhere (e.g. unit use). */
export function heartbeat(details: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // Not in an activity context.
  }
}
