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

/** Heartbeat when running inside an activity; a no-op elsewhere (e.g. unit use). */
export function heartbeat(details: unknown): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // Not in an activity context.
  }
}
