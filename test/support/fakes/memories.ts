import type { MemoryFilter, MetadataCondition } from '../../../core/memory-filter.js';
import { appendAbandoned, appendClaimed, isSearchable, type Memory, type MemorySummary } from '../../../core/memory-model.js';
import type { AppendRun } from '../../../core/memory-model.js';
import type { MemoryStatus } from '../../../core/content-model.js';
import type { MemoryServiceStore } from '../../../services/memories.js';
import { ACCESS_HISTORY, type MemoryChange, type MemoryListQuery, type MemoryRepository } from '../../../store/memories.js';
import { copy, duplicateKeyError, Journal } from './journal.js';

/**
 * The methods of MemoryRepository this fake implements: what services/memories.ts asks for, and
 * what ingestion, the purge and search call besides.
 */
export type MemoryRecords = MemoryServiceStore['memories'] &
  Pick<MemoryRepository, 'findForIngestion' | 'searchable' | 'setStatus' | 'ownedBy'>;

const isLive = (memory: Pick<Memory, 'expires_at'>, now = Date.now()): boolean => !memory.expires_at || memory.expires_at.getTime() > now;
const summaryOf = ({ content: _content, ...summary }: Memory): MemorySummary => copy(summary);

function valueAt(metadata: Record<string, unknown>, path: string[]): unknown {
  let value: unknown = metadata;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * MongoDB's meaning of one condition, for scalars: a missing field equals null, `$ne`/`$nin`
 * match a missing field, and an ordering compares only values of one type.
 */
function conditionHolds(metadata: Record<string, unknown>, condition: MetadataCondition): boolean {
  const value = valueAt(metadata, condition.path);
  const equals = (wanted: unknown) => (wanted === null ? value === null || value === undefined : value === wanted);
  const bound = 'value' in condition ? condition.value : undefined;
  const ordered = (test: (a: number | string, b: number | string) => boolean) =>
    (typeof value === 'number' || typeof value === 'string') && typeof value === typeof bound
      ? test(value, bound as number | string)
      : false;
  switch (condition.op) {
    case 'eq':
      return equals(condition.value);
    case 'ne':
      return !equals(condition.value);
    case 'gt':
      return ordered((a, b) => a > b);
    case 'gte':
      return ordered((a, b) => a >= b);
    case 'lt':
      return ordered((a, b) => a < b);
    case 'lte':
      return ordered((a, b) => a <= b);
    case 'in':
      return condition.values.some(equals);
    case 'nin':
      return !condition.values.some(equals);
    case 'exists':
      return (value !== undefined) === condition.value;
  }
}

/** What store/memory-filter.ts's query selects, evaluated in memory. */
export function matchesFilter(memory: Pick<Memory, 'metadata' | 'kind' | 'created_at'>, filter: MemoryFilter): boolean {
  if (filter.kind && memory.kind !== filter.kind) return false;
  if (filter.createdAfter && memory.created_at < filter.createdAfter) return false;
  if (filter.createdBefore && memory.created_at >= filter.createdBefore) return false;
  return filter.metadata.every((condition) => conditionHolds(memory.metadata, condition));
}

/**
 * The `memories` collection in memory. Rows are copied in and out, as documents are. Methods with
 * many parameters take the repository's own (`Parameters<…>`), so the two cannot drift apart.
 */
export class FakeMemories implements MemoryRecords {
  readonly rows = new Map<string, Memory>();

  constructor(private readonly journal: Journal = new Journal()) {}

  /** A row as it is stored now (a copy), for assertions; undefined when there is none. */
  row(id: string): Memory | undefined {
    const row = this.rows.get(id);
    return row ? copy(row) : undefined;
  }

  async insert(memory: Memory): Promise<void> {
    if (this.rows.has(memory.id)) throw duplicateKeyError(`memories _id ${memory.id}`);
    this.journal.record('memories.insert', memory.id);
    this.rows.set(memory.id, copy(memory));
  }

  async find(tenantId: string, id: string): Promise<Memory | null> {
    const row = this.rows.get(id);
    return row && row.tenant_id === tenantId && isLive(row) ? copy(row) : null;
  }

  async findForIngestion(id: string): Promise<Memory | null> {
    const row = this.rows.get(id);
    return row ? copy(row) : null;
  }

  async exists(id: string): Promise<boolean> {
    return this.rows.has(id);
  }

  async searchable(tenantId: string, ids: string[], filter: MemoryFilter = { metadata: [] }): Promise<Map<string, MemorySummary>> {
    const found = new Map<string, MemorySummary>();
    for (const id of ids) {
      const row = this.rows.get(id);
      if (row && row.tenant_id === tenantId && isSearchable(row) && isLive(row) && matchesFilter(row, filter))
        found.set(id, summaryOf(row));
    }
    return found;
  }

  async recordAccess(ids: string[], at = new Date()): Promise<void> {
    this.journal.record('memories.recordAccess', ids);
    for (const id of ids) {
      const row = this.rows.get(id);
      if (row) row.accessed_at = [...(row.accessed_at ?? []), at].slice(-ACCESS_HISTORY);
    }
  }

  /** The conditional write both updates share: tenant's row, and (for a merge) the metadata as it was read, field order included. */
  private writable(tenantId: string, id: string, unlessMetadataChanged?: Record<string, unknown>): Memory | null {
    const row = this.rows.get(id);
    if (!row || row.tenant_id !== tenantId) return null;
    if (unlessMetadataChanged && JSON.stringify(row.metadata) !== JSON.stringify(unlessMetadataChanged)) return null;
    return row;
  }

  private apply(row: Memory, change: MemoryChange): void {
    if (change.name !== undefined) row.name = change.name;
    if (change.metadata !== undefined)
      row.metadata = change.mergeMetadata ? { ...row.metadata, ...copy(change.metadata) } : copy(change.metadata);
    if (change.collectionIds !== undefined) row.collection_ids = [...change.collectionIds];
    if (change.statusMessage !== undefined) row.status_message = change.statusMessage;
    row.updated_at = new Date();
  }

  async update(...[tenantId, id, change, unlessMetadataChanged]: Parameters<MemoryRepository['update']>): Promise<Memory | null> {
    const row = this.writable(tenantId, id, unlessMetadataChanged);
    if (!row) return null;
    this.journal.record('memories.update', id, change);
    this.apply(row, change);
    return copy(row);
  }

  async changeCollections(
    ...[tenantId, id, change, moved, unlessMetadataChanged]: Parameters<MemoryRepository['changeCollections']>
  ): Promise<Memory | null> {
    const row = this.writable(tenantId, id, unlessMetadataChanged);
    if (!row) return null;
    this.journal.record('memories.changeCollections', id, change, moved);
    this.apply(row, change);
    const sync = row.collections_sync ?? { added: [], removed: [], since: new Date(0) };
    const addToSet = (list: string[], more: string[]) => [
      ...list,
      ...more.filter((item, index) => !list.includes(item) && more.indexOf(item) === index),
    ];
    row.collections_sync = {
      added: addToSet(sync.added, moved.added),
      removed: addToSet(sync.removed, moved.removed),
      since: row.updated_at,
    };
    return copy(row);
  }

  async clearCollectionSync(id: string, since: Date): Promise<void> {
    const row = this.rows.get(id);
    if (row?.collections_sync && row.collections_sync.since.getTime() === since.getTime()) {
      this.journal.record('memories.clearCollectionSync', id);
      delete row.collections_sync;
    }
  }

  async claimAppend(
    ...[tenantId, id, expected, messages, workflowId]: Parameters<MemoryRepository['claimAppend']>
  ): Promise<Memory | null> {
    const row = this.rows.get(id);
    if (
      !row ||
      row.tenant_id !== tenantId ||
      row.status !== 'complete' ||
      row.chunk_count !== expected.chunkCount ||
      row.content.messages?.length !== expected.messageCount
    )
      return null;
    this.journal.record('memories.claimAppend', id, messages.length);
    row.content.messages = [...row.content.messages, ...copy(messages)];
    Object.assign(row, appendClaimed({ from_message: expected.messageCount, from_chunk: expected.chunkCount }, workflowId, new Date()));
    return copy(row);
  }

  async abandonAppend(id: string, run: AppendRun, message: string): Promise<boolean> {
    const row = this.rows.get(id);
    if (!row) return false;
    this.journal.record('memories.abandonAppend', id);
    row.content.messages = (row.content.messages ?? []).slice(0, run.from_message);
    Object.assign(row, appendAbandoned(run, message, new Date()));
    return true;
  }

  async list(query: MemoryListQuery): Promise<{ items: MemorySummary[]; total: number }> {
    const now = Date.now();
    const matching = [...this.rows.values()]
      .filter(
        (row) =>
          row.tenant_id === query.tenantId &&
          isLive(row, now) &&
          (query.collectionIds.length === 0 || row.collection_ids.some((id) => query.collectionIds.includes(id))) &&
          matchesFilter(row, query.filter),
      )
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { items: matching.slice(query.offset, query.offset + query.limit).map(summaryOf), total: matching.length };
  }

  async setStatus(id: string, status: MemoryStatus, extra: Partial<Omit<Memory, 'id'>> = {}): Promise<boolean> {
    const row = this.rows.get(id);
    if (!row) return false;
    const now = new Date();
    Object.assign(row, copy(extra), { status, updated_at: now }, status === 'complete' ? { completed_at: now } : {});
    return true;
  }

  async membershipsOf(tenantId: string, ids: string[]): Promise<{ id: string; collection_ids: string[] }[]> {
    const now = Date.now();
    return [...this.rows.values()]
      .filter((row) => row.tenant_id === tenantId && ids.includes(row.id) && isLive(row, now))
      .map((row) => ({ id: row.id, collection_ids: [...row.collection_ids] }));
  }

  /** Not filtered by expiry, as the repository's: the purge and the expiry sweep delete expired imports too. */
  async ownedBy(tenantId: string, ids: string[]): Promise<{ id: string; workflow_id: string; collection_ids: string[] }[]> {
    return [...this.rows.values()]
      .filter((row) => row.tenant_id === tenantId && ids.includes(row.id))
      .map((row) => ({ id: row.id, workflow_id: row.workflow_id, collection_ids: [...row.collection_ids] }));
  }

  async deleteMany(tenantId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    this.journal.record('memories.deleteMany', tenantId, [...ids]);
    for (const id of ids) if (this.rows.get(id)?.tenant_id === tenantId) this.rows.delete(id);
  }

  async findStaleCollectionSyncs(olderThan: Date, limit: number): Promise<MemorySummary[]> {
    return [...this.rows.values()]
      .filter((row) => row.collections_sync && row.collections_sync.since < olderThan)
      .slice(0, limit)
      .map(summaryOf);
  }

  async findStaleQueued(olderThan: Date, limit: number): Promise<MemorySummary[]> {
    return [...this.rows.values()]
      .filter((row) => row.status === 'queued' && row.created_at < olderThan)
      .sort((a, b) => a.created_at.getTime() - b.created_at.getTime())
      .slice(0, limit)
      .map(summaryOf);
  }
}
