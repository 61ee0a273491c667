/**
 * One workflow per memory: read → structure → derive procedure traces → embed and index, in one activity
 * (older runs: one activity per stage). Deterministic code only: it
 * imports nothing but types from the activities and reaches them through proxyActivities.
 * Heartbeat timeouts let Temporal notice a dead worker and retry the activity elsewhere; the
 * activities are idempotent and resume from what is stored, so a crash never duplicates chunks.
 */
import { ActivityFailure, ApplicationFailure, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities, GraphProjectionInput, IngestInput } from '../activities/index.js';
import { BAD_CONTENT, INGESTION_FAILED, MEMORY_DELETED } from '../core/failure-types.js';

/**
 * The stages' activities: heartbeating, retried with backoff, except for content that cannot be
 * read or a deleted memory. Retries are at most 10 s apart, so a memory goes on within 10 s of its
 * database coming back (30 s apart, memories of the database-restart test waited up to 30 s after
 * the store had recovered); 25 attempts keep the span they cover (about 205 s) above the 181 s
 * of the earlier 12 attempts, 30 s apart, before a memory is marked failed.
 */
const stageActivities = (startToCloseTimeout: string) =>
  proxyActivities<Activities>({
    startToCloseTimeout,
    heartbeatTimeout: '15 seconds',
    retry: {
      initialInterval: '500 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '10 seconds',
      maximumAttempts: 25,
      nonRetryableErrorTypes: [BAD_CONTENT, MEMORY_DELETED],
    },
  });

const pipeline = stageActivities('30 minutes');
/** The single-pass activity: every stage in one, each still heartbeating (the whole of a 2M-character memory). */
const singlePass = stageActivities('90 minutes');

const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  // No attempt limit: recording the failure must eventually happen.
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

export interface IngestOutcome {
  memoryId: string;
  status: 'complete' | 'failed' | 'deleted';
  chunkCount: number;
  message?: string;
}

export async function ingestMemory(input: IngestInput): Promise<IngestOutcome> {
  try {
    // One activity for all the stages: two workflow tasks per memory instead of five (each task is a
    // dispatch and a persistence round trip). Guarded: runs started before replay their histories unchanged.
    if (patched('single-pass-ingest')) {
      const indexed = await singlePass.ingestContent(input);
      return { memoryId: input.memoryId, status: indexed.status, chunkCount: indexed.chunkCount };
    }
    const read = await pipeline.readContent(input);
    const stage = { ...input, collectionIds: read.collectionIds };
    await pipeline.extractStructure(stage);
    // Guarded: runs started before this stage existed replay their recorded history unchanged.
    if (patched('derive-workflow-traces')) await pipeline.deriveWorkflows(stage);
    const indexed = await pipeline.embedAndIndex(stage);
    return { memoryId: input.memoryId, status: indexed.status, chunkCount: indexed.chunkCount };
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : error;
    if (cause instanceof ApplicationFailure && cause.type === MEMORY_DELETED) {
      return { memoryId: input.memoryId, status: 'deleted', chunkCount: 0 };
    }
    const message = cause instanceof Error ? cause.message : String(cause);
    await bookkeeping.markFailed({ ...input, message });
    throw ApplicationFailure.nonRetryable(`ingestion of memory ${input.memoryId} failed: ${message}`, INGESTION_FAILED);
  }
}

/**
 * A memory newly associated with collections gets its graph there (its vectors already serve
 * every collection it is in). Started by an update; idempotent like the stages.
 */
export async function projectMemoryGraph(input: GraphProjectionInput): Promise<void> {
  try {
    await pipeline.projectGraph(input);
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : error;
    if (cause instanceof ApplicationFailure && cause.type === MEMORY_DELETED) return;
    throw error;
  }
}
