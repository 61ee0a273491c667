/**
 * The only Temporal client in the service: starts, terminates and describes the one workflow
 * each memory gets. No Temporal type leaks above this module.
 */
import { workflowsStarted } from '../core/metrics.js';
import { Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type ConnectionLike } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType, WorkflowIdReusePolicy } from '@temporalio/common';
import { graphWorkflowId, ingestWorkflowId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
// Types only: the workflow code itself runs in the worker's sandbox, never in this process.
import type * as workflows from '../workflows/index.js';

type WorkflowName = {
  [K in keyof typeof workflows]: (typeof workflows)[K] extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof typeof workflows];

/**
 * A workflow's type name, checked against the workflow module at compile time, so a rename there
 * breaks the build here instead of failing at run time as an unknown workflow type.
 */
function workflowType<K extends WorkflowName>(name: K): K {
  return name;
}

export const MEMORY_ID = defineSearchAttributeKey('MemoryId', SearchAttributeType.KEYWORD);
export const COLLECTION_ID = defineSearchAttributeKey('CollectionId', SearchAttributeType.KEYWORD);
export const TENANT_ID = defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD);
const SEARCH_ATTRIBUTE_NAMES = ['MemoryId', 'CollectionId', 'TenantId'] as const;

export interface StartIngestion {
  memoryId: string;
  tenantId: string;
  collectionIds: string[];
  /** An append run: its own workflow id and where the new messages start. */
  append?: { workflowId: string; fromMessage: number; fromChunk: number };
}

export interface Orchestrator {
  startIngestion(request: StartIngestion): Promise<{ workflowId: string; alreadyStarted: boolean }>;
  /** Builds a memory's graph in collections it was just associated with. */
  startGraphProjection(request: { memoryId: string; tenantId: string; collectionIds: string[] }): Promise<void>;
  stopIngestion(workflowId: string, reason: string): Promise<void>;
  healthy(): Promise<boolean>;
}

export interface OrchestratorOptions {
  connection: ConnectionLike & { healthService?: unknown };
  namespace: string;
  taskQueue: string;
  /** True when this process also runs a worker on the same connection (eager start works). */
  eagerStart: boolean;
  logger: Logger;
}

export function createOrchestrator(options: OrchestratorOptions): Orchestrator {
  const client = new Client({ connection: options.connection, namespace: options.namespace });

  return {
    async startIngestion(request) {
      const workflowId = request.append?.workflowId ?? ingestWorkflowId(request.memoryId);
      const append = request.append ? { fromMessage: request.append.fromMessage, fromChunk: request.append.fromChunk } : undefined;
      try {
        await client.workflow.start<(typeof workflows)['ingestMemory']>(workflowType('ingestMemory'), {
          workflowId,
          taskQueue: options.taskQueue,
          args: [{ memoryId: request.memoryId, tenantId: request.tenantId, ...(append ? { append } : {}) }],
          typedSearchAttributes: [
            { key: MEMORY_ID, value: request.memoryId },
            // Keyword holds one value: the memory's first collection is the one it was created in.
            { key: COLLECTION_ID, value: request.collectionIds[0] ?? '' },
            { key: TENANT_ID, value: request.tenantId },
          ],
          requestEagerStart: options.eagerStart,
          // Each ingestion job has a workflow id of its own (a memory's first ingestion, each
          // append), so a run that completed is never to be run again. The reconciler and an
          // idempotent replay start whatever they read as queued; a memory read as queued just
          // before its run completed was ingested a second time, its events sent again. A run
          // that failed, was terminated or timed out may still be started again.
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
        });
        workflowsStarted.inc({ workflow: workflowType('ingestMemory') });
        return { workflowId, alreadyStarted: false };
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return { workflowId, alreadyStarted: true };
        throw error;
      }
    },

    async startGraphProjection(request) {
      await client.workflow.start<(typeof workflows)['projectMemoryGraph']>(workflowType('projectMemoryGraph'), {
        workflowId: graphWorkflowId(request.memoryId),
        taskQueue: options.taskQueue,
        args: [request],
        typedSearchAttributes: [
          { key: MEMORY_ID, value: request.memoryId },
          { key: COLLECTION_ID, value: request.collectionIds[0] ?? '' },
          { key: TENANT_ID, value: request.tenantId },
        ],
        requestEagerStart: options.eagerStart,
      });
    },

    async stopIngestion(workflowId, reason) {
      try {
        await client.workflow.getHandle(workflowId).terminate(reason);
      } catch (error) {
        // Already finished, or never started: nothing to stop.
        if (error instanceof WorkflowNotFoundError) return;
        options.logger.warn({ err: error, workflowId }, 'could not terminate ingestion workflow');
      }
    },

    async healthy() {
      try {
        await client.workflowService.getSystemInfo({});
        return true;
      } catch {
        return false;
      }
    },
  };
}

/**
 * Registers the custom search attributes on a Temporal server that lacks them (the embedded dev
 * server gets them at boot; docker-compose registers them in its init container). Idempotent.
 */
export async function ensureSearchAttributes(
  connection: {
    operatorService: {
      addSearchAttributes(request: object): Promise<unknown>;
      listSearchAttributes(request: object): Promise<{ customAttributes?: Record<string, unknown> | null }>;
    };
  },
  namespace: string,
): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTE_NAMES.filter((name) => !(name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
  });
}
