/**
 * Where the time of one ingestion goes, read from its Temporal history: time inside activities
 * (compute: ActivityTaskStarted → ActivityTaskCompleted, summed), the rest of the workflow's life
 * (orchestration: dispatch, workflow tasks, persistence), and what lies outside the workflow
 * (API accept, workflow start, the client's polling granularity).
 */
import { Client, Connection } from '@temporalio/client';

export interface WorkflowBreakdown {
  workflowMs: number;
  computeMs: number;
  orchestrationMs: number;
  /** WorkflowExecutionStarted → the last ActivityTaskCompleted (the memory is complete inside that activity). */
  toLastActivityMs: number;
  /** The last ActivityTaskCompleted → WorkflowExecutionCompleted: after the memory is already searchable. */
  tailMs: number;
  /** Started → completed per activity type (last attempt). */
  perActivity: Map<string, number>;
  activities: number;
  workflowTasks: number;
}

interface TimestampLike {
  seconds?: { toString(): string } | number | null;
  nanos?: number | null;
}

function timestampMs(ts: TimestampLike | null | undefined): number {
  if (!ts) return Number.NaN;
  const seconds = ts.seconds === null || ts.seconds === undefined ? 0 : Number(ts.seconds.toString());
  return seconds * 1000 + (ts.nanos ?? 0) / 1e6;
}

const idKey = (id: { toString(): string } | number | null | undefined): string => (id === null || id === undefined ? '' : id.toString());

export async function fetchBreakdowns(
  address: string,
  namespace: string,
  workflowIds: string[],
): Promise<{ breakdowns: Map<string, WorkflowBreakdown>; errors: string[] }> {
  const connection = await Connection.connect({ address });
  const breakdowns = new Map<string, WorkflowBreakdown>();
  const errors: string[] = [];
  try {
    const client = new Client({ connection, namespace });
    for (const workflowId of workflowIds) {
      try {
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        const events = history.events ?? [];
        const startedAt = new Map<string, number>();
        const activityType = new Map<string, string>();
        const perActivity = new Map<string, number>();
        let lastActivityDone = Number.NaN;
        let workflowStart = Number.NaN;
        let workflowEnd = Number.NaN;
        let computeMs = 0;
        let activities = 0;
        let workflowTasks = 0;
        for (const event of events) {
          const time = timestampMs(event.eventTime);
          if (event.workflowExecutionStartedEventAttributes) workflowStart = time;
          else if (event.workflowExecutionCompletedEventAttributes) workflowEnd = time;
          else if (event.workflowTaskCompletedEventAttributes) workflowTasks += 1;
          else if (event.activityTaskScheduledEventAttributes) {
            activityType.set(idKey(event.eventId), event.activityTaskScheduledEventAttributes.activityType?.name ?? 'unknown');
          } else if (event.activityTaskStartedEventAttributes) startedAt.set(idKey(event.eventId), time);
          else if (event.activityTaskCompletedEventAttributes) {
            const attributes = event.activityTaskCompletedEventAttributes;
            const started = startedAt.get(idKey(attributes.startedEventId));
            if (started !== undefined) {
              const name = activityType.get(idKey(attributes.scheduledEventId)) ?? 'unknown';
              perActivity.set(name, (perActivity.get(name) ?? 0) + (time - started));
              computeMs += time - started;
              activities += 1;
            }
            lastActivityDone = time;
          }
        }
        if (Number.isNaN(workflowStart) || Number.isNaN(workflowEnd)) {
          errors.push(`${workflowId}: workflow not completed (${events.length} events)`);
          continue;
        }
        const workflowMs = workflowEnd - workflowStart;
        breakdowns.set(workflowId, {
          workflowMs,
          computeMs,
          orchestrationMs: workflowMs - computeMs,
          toLastActivityMs: lastActivityDone - workflowStart,
          tailMs: workflowEnd - lastActivityDone,
          perActivity,
          activities,
          workflowTasks,
        });
      } catch (error) {
        errors.push(`${workflowId}: ${(error as Error).message}`);
      }
    }
  } finally {
    await connection.close();
  }
  return { breakdowns, errors };
}
