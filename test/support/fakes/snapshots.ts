import type { GraphScope } from '../../../core/graph-model.js';
import {
  importedMemoryFields,
  type ExportCounts,
  type ExportedGraph,
  type ImportedMemory,
  type SnapshotRepository,
} from '../../../store/snapshots.js';
import { Journal } from './journal.js';
import type { FakeMemories } from './memories.js';

/**
 * Device snapshots' reads and writes over the fake memories: an import writes complete memories
 * that expire with their collection, `memoryIdsOf` pages through a collection's memories. What an
 * export reads is set by the test (`exported`, `counts`), since reading it is the repository's
 * query; `failWrite` makes the next import's write fail part-way.
 */
export class FakeSnapshots implements Pick<
  SnapshotRepository,
  'countCollection' | 'readCollection' | 'writeImport' | 'memoryIdsOf' | 'removeLeftoversOf'
> {
  counts: ExportCounts | null = null;
  exported: ExportedGraph = { memories: [], entities: [], facts: [], mentions: [] };
  /** Thrown by readCollection instead of answering (an ExportBudgetExceeded, say). */
  readError: Error | null = null;
  failWrite: Error | null = null;
  readonly imports: { scope: GraphScope; memories: ImportedMemory[]; graph: Parameters<SnapshotRepository['writeImport']>[4] }[] = [];

  constructor(
    private readonly memories: FakeMemories,
    private readonly journal: Journal = new Journal(),
  ) {}

  async countCollection(tenantId: string, collectionId: string): Promise<ExportCounts> {
    this.journal.record('snapshots.countCollection', tenantId, collectionId);
    return (
      this.counts ?? {
        episodes: this.exported.memories.length,
        entities: this.exported.entities.length,
        facts: this.exported.facts.length,
        mentions: this.exported.mentions.length,
      }
    );
  }

  async readCollection(tenantId: string, collectionId: string, model: string, budgetBytes: number): Promise<ExportedGraph> {
    this.journal.record('snapshots.readCollection', tenantId, collectionId, model, budgetBytes);
    if (this.readError) throw this.readError;
    return structuredClone(this.exported);
  }

  async writeImport(...[scope, expiresAt, model, memories, graph]: Parameters<SnapshotRepository['writeImport']>): Promise<void> {
    this.journal.record('snapshots.writeImport', scope.collectionId, memories.length);
    this.imports.push({ scope, memories, graph });
    const now = new Date();
    for (const [index, memory] of memories.entries()) {
      // A failure part-way leaves what was written before it, as the repository's batches do.
      if (this.failWrite && index === Math.floor(memories.length / 2)) throw this.failWrite;
      await this.memories.insert({ id: memory.id, ...importedMemoryFields(memory, scope, model, now, expiresAt) });
    }
    if (this.failWrite) throw this.failWrite;
  }

  async memoryIdsOf(tenantId: string, collectionId: string, limit: number): Promise<string[]> {
    return [...this.memories.rows.values()]
      .filter((row) => row.tenant_id === tenantId && row.collection_ids.includes(collectionId))
      .slice(0, limit)
      .map((row) => row.id);
  }

  async removeLeftoversOf(tenantId: string, collectionId: string): Promise<void> {
    this.journal.record('snapshots.removeLeftoversOf', tenantId, collectionId);
  }
}
