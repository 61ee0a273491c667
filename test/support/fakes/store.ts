import { ingestWorkflowId } from '../../../core/ids.js';
import { createLogger, type Logger } from '../../../core/logger.js';
import { MemoryPurge } from '../../../store/memory-purge.js';
import type { StartIngestion, Orchestrator } from '../../../services/orchestrator.js';
import { FakeCollections } from './collections.js';
import { derivedRepositories, FakeEventAcks, FakeEvents, FakePurgeIntents, FakeTenants } from './derived.js';
import { Journal } from './journal.js';
import { FakeMemories } from './memories.js';
import { FakeSnapshots } from './snapshots.js';

/**
 * The repositories as one in-memory store, sharing one journal, with the real delete cascade
 * (store/memory-purge.ts) running over them: a use case that deletes goes through the same steps
 * as in production.
 */
export function fakeStore() {
  const journal = new Journal();
  const repositories = {
    memories: new FakeMemories(journal),
    ...derivedRepositories(journal),
  };
  const intents = new FakePurgeIntents(journal);
  return {
    journal,
    ...repositories,
    snapshots: new FakeSnapshots(repositories.memories, journal),
    events: new FakeEvents(journal),
    eventAcks: new FakeEventAcks(journal),
    tenants: new FakeTenants(),
    collections: new FakeCollections(journal),
    intents,
    purge: new MemoryPurge(intents, repositories),
  };
}

export type FakeStore = ReturnType<typeof fakeStore>;

/** A logger that writes nothing. */
export const silentLogger = (): Logger => createLogger('test', 'silent');

/**
 * The Temporal client, faked: starting is idempotent per workflow id (a second start of a running
 * id answers alreadyStarted), and `failing` makes every call throw as an unreachable server does.
 */
export class FakeOrchestrator implements Orchestrator {
  readonly started = new Map<string, StartIngestion>();
  readonly stopped: string[] = [];
  readonly projections: { memoryId: string; tenantId: string; collectionIds: string[] }[] = [];
  failing = false;

  constructor(private readonly journal: Journal = new Journal()) {}

  private check(): void {
    if (this.failing) throw new Error('connect ECONNREFUSED 127.0.0.1:7233');
  }

  async startIngestion(request: StartIngestion): Promise<{ workflowId: string; alreadyStarted: boolean }> {
    this.check();
    const workflowId = request.append?.workflowId ?? ingestWorkflowId(request.memoryId);
    const alreadyStarted = this.started.has(workflowId);
    this.journal.record('orchestrator.startIngestion', workflowId);
    if (!alreadyStarted) this.started.set(workflowId, structuredClone(request));
    return { workflowId, alreadyStarted };
  }

  async startGraphProjection(request: { memoryId: string; tenantId: string; collectionIds: string[] }): Promise<void> {
    this.check();
    this.journal.record('orchestrator.startGraphProjection', request.memoryId, [...request.collectionIds]);
    this.projections.push(structuredClone(request));
  }

  async stopIngestion(workflowId: string): Promise<void> {
    this.check();
    this.journal.record('orchestrator.stopIngestion', workflowId);
    this.stopped.push(workflowId);
  }

  async healthy(): Promise<boolean> {
    return !this.failing;
  }
}
