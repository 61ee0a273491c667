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

/**
 * The progress events of one activity attempt, appended in order but not waited for by the stages
 * that report them: each append is a store round trip, and a memory's stages reported five of them
 * on its path to searchable. The heartbeat and the count are taken at once.
 * `settle` waits for every queued append and rethrows the first failure; the attempt settles
 * before its terminal event (which must come last) and before it ends, so a later activity's events
 * (markFailed's `failed`) never come before one of this attempt's. After a failure the rest of the
 * queue is dropped: an attempt that fails is retried, and its retry reports again.
 */
export class ProgressQueue {
  private tail: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | null = null;

  constructor(private readonly store: Store) {}

  report(target: ProgressTarget, stage: string, userStage: UserStage, current: number, total: number, message: string | null = null): void {
    heartbeat({ stage, current, total });
    progressReported.inc({ user_stage: userStage });
    const payload = { engram_id: target.memoryId, stage, user_stage: userStage, current, total, message };
    this.tail = this.tail.then(async () => {
      if (this.failure) return;
      try {
        await this.store.events.appendProgress(target.tenantId, target.collectionIds, payload);
      } catch (error) {
        this.failure = { error };
      }
    });
  }

  async settle(): Promise<void> {
    await this.tail;
    if (this.failure) throw this.failure.error;
  }
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
  // The terminal event is waited for: the mark below must follow it.
  const event = new ProgressQueue(store);
  event.report(target, userStage, userStage, current, total, message);
  await event.settle();
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

/** Each running attempt's last heartbeat details and when they were sent, repeated by keepAlive. */
const lastDetails = new WeakMap<Context, { details: unknown; at: number }>();

/** Heartbeat when running inside an activity; a no-op elsewhere (e.g. unit use). */
export function heartbeat(details: unknown): void {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return; // Not in an activity context.
  }
  lastDetails.set(context, { details, at: Date.now() });
  context.heartbeat(details);
}

/**
 * How long keepAlive covers an attempt whose stages report no progress point: past it the
 * repeats stop, the heartbeat timeout ends the attempt, and Temporal retries it. Far above any
 * stretch measured between two progress points (a collection's graph writes, a wait for the model
 * thread: seconds to tens of seconds on a saturated machine), far below startToClose (90 minutes).
 */
export const KEEP_ALIVE_STALL_MS = 10 * 60_000;

/**
 * Runs an attempt with a heartbeat at least every third of its heartbeat timeout, repeating the
 * last details it sent (or, before its first, the previous attempt's, so the resume point is never
 * lost). The stages heartbeat at their progress points, but on a saturated machine the stretch
 * between two of them (a collection's graph writes, a wait for the shared model thread) outlasted
 * the 15 s timeout: every attempt of a LoCoMo session timed out the same way until its retries ran
 * out and an accepted memory failed. A heartbeat timeout is for a worker that is gone; this timer
 * stops with the process or a blocked event loop, so that is still what it detects. It also stops
 * after `stallMs` without a progress point, so an attempt stuck on a promise that never settles
 * (a store call lost in a driver, say) is retried within minutes rather than held until
 * startToClose.
 */
export async function keepAlive<T>(context: Context, work: () => Promise<T>, stallMs = KEEP_ALIVE_STALL_MS): Promise<T> {
  const timeoutMs = context.info.heartbeatTimeoutMs;
  if (!timeoutMs) return work();
  const startedAt = Date.now();
  let stalled = false;
  const timer = setInterval(
    () => {
      const last = lastDetails.get(context);
      if (Date.now() - (last?.at ?? startedAt) > stallMs) {
        if (!stalled)
          context.log.warn('no progress point for too long: heartbeats stop, so the attempt times out and is retried', { stallMs });
        stalled = true;
        return;
      }
      stalled = false;
      context.heartbeat((last ?? { details: context.info.heartbeatDetails as unknown }).details);
    },
    Math.max(10, Math.floor(timeoutMs / 3)),
  );
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
