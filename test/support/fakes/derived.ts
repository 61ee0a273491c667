/** Fakes of the repositories that hold what a memory derives (chunks, files, graph, notices): what a delete must remove. */
import { Readable } from 'node:stream';
import { createHash, randomUUID } from 'node:crypto';
import type { ChunkRepository, StoredChunk } from '../../../store/chunks.js';
import type { FileRepository, StoredFile, StoredFileMetadata } from '../../../store/files.js';
import type { FactEvents } from '../../../store/fact-events.js';
import type { ClaimResult, IdempotencyClaim, IdempotencyRepository } from '../../../store/idempotency.js';
import type { ChangedMemory, IndexChangeFeed } from '../../../store/index-changes.js';
import type { IndexSnapshotRepository } from '../../../store/index-snapshots.js';
import type { Purge, PurgeIntents } from '../../../store/memory-purge.js';
import type { UploadRepository } from '../../../store/uploads.js';
import type { EventAckRepository } from '../../../store/event-acks.js';
import type { TenantRepository } from '../../../store/tenants.js';
import { entryMatches, type EventEntry, type EventFilter, type EventLog } from '../../../store/events.js';
import type { Store } from '../../../store/index.js';
import { copy, Journal } from './journal.js';

/** A chunk row as the fake keeps it (no vector bytes: the services above never read them). */
export type FakeChunk = Omit<StoredChunk, 'embedding'>;

export class FakeChunks implements Pick<ChunkRepository, 'forMemory' | 'hitTexts' | 'setCollections' | 'deleteForMemories'> {
  readonly rows = new Map<string, FakeChunk>();

  constructor(private readonly journal: Journal = new Journal()) {}

  /** Adds a memory's chunks (a fixture), ids `${memoryId}:${index}` as core/ids.ts chunkId makes them. */
  seed(memory: { id: string; tenant_id: string; collection_ids: string[] }, texts: string[]): void {
    texts.forEach((text, index) =>
      this.rows.set(`${memory.id}:${index}`, {
        id: `${memory.id}:${index}`,
        memory_id: memory.id,
        tenant_id: memory.tenant_id,
        collection_ids: [...memory.collection_ids],
        index,
        text,
        source: { type: 'text', start: 0, end: text.length },
        embedding_model: 'fake-model',
      }),
    );
  }

  async forMemory(memoryId: string): Promise<StoredChunk[]> {
    return [...this.rows.values()]
      .filter((row) => row.memory_id === memoryId)
      .sort((a, b) => a.index - b.index)
      .map((row) => copy({ ...row, embedding: null }));
  }

  async hitTexts(ids: string[]): Promise<Pick<StoredChunk, 'id' | 'index' | 'text' | 'source' | 'occurred_at'>[]> {
    this.journal.record('chunks.hitTexts', [...ids]);
    return ids.flatMap((id) => {
      const row = this.rows.get(id);
      return row
        ? [
            copy({
              id: row.id,
              index: row.index,
              text: row.text,
              source: row.source,
              ...(row.occurred_at ? { occurred_at: row.occurred_at } : {}),
            }),
          ]
        : [];
    });
  }

  async setCollections(memoryId: string, collectionIds: string[]): Promise<void> {
    this.journal.record('chunks.setCollections', memoryId, [...collectionIds]);
    for (const row of this.rows.values()) if (row.memory_id === memoryId) row.collection_ids = [...collectionIds];
  }

  async deleteForMemories(memoryIds: string[]): Promise<number> {
    this.journal.record('chunks.deleteForMemories', [...memoryIds]);
    let deleted = 0;
    for (const [id, row] of this.rows) if (memoryIds.includes(row.memory_id) && this.rows.delete(id)) deleted++;
    return deleted;
  }
}

export class FakeFiles implements Pick<FileRepository, 'put' | 'deleteIds' | 'deleteForMemories' | 'openDownload'> {
  readonly rows = new Map<string, StoredFile & { bytes: Buffer }>();

  constructor(private readonly journal: Journal = new Journal()) {}

  async put(bytes: Uint8Array, meta: Omit<StoredFileMetadata, 'size' | 'sha256'>): Promise<StoredFile> {
    const file: StoredFile = {
      ...meta,
      file_id: randomUUID(),
      size: bytes.byteLength,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    };
    this.journal.record('files.put', file.file_id);
    this.rows.set(file.file_id, { ...file, bytes: Buffer.from(bytes) });
    return { ...file };
  }

  openDownload(fileId: string): Readable {
    const row = this.rows.get(fileId);
    if (!row) throw new Error(`FileNotFound: file ${fileId} was not found`);
    return Readable.from([row.bytes]);
  }

  /** Idempotent, as the GridFS one: an id already gone is skipped. */
  async deleteIds(fileIds: string[]): Promise<void> {
    this.journal.record('files.deleteIds', [...fileIds]);
    for (const id of fileIds) this.rows.delete(id);
  }

  async deleteForMemories(memoryIds: string[]): Promise<void> {
    this.journal.record('files.deleteForMemories', [...memoryIds]);
    for (const [id, row] of this.rows) if (row.memory_id !== null && memoryIds.includes(row.memory_id)) this.rows.delete(id);
  }
}

export class FakeUploads implements Pick<UploadRepository, 'forgetMemories'> {
  constructor(private readonly journal: Journal = new Journal()) {}

  async forgetMemories(memoryIds: string[]): Promise<void> {
    this.journal.record('uploads.forgetMemories', [...memoryIds]);
  }
}

/** Keys unique per tenant (`tenant:key`), as the repository's `_id`; no expiry (tests run well inside the TTL). */
export class FakeIdempotency implements Pick<IdempotencyRepository, 'claim' | 'release' | 'forgetMemories'> {
  readonly rows = new Map<string, { memoryId: string; requestHash: string }>();

  constructor(private readonly journal: Journal = new Journal()) {}

  async claim(claim: IdempotencyClaim): Promise<ClaimResult> {
    const id = `${claim.tenantId}:${claim.key}`;
    const existing = this.rows.get(id);
    if (existing) return { claimed: false, existing: { ...existing } };
    this.journal.record('idempotency.claim', id);
    this.rows.set(id, { memoryId: claim.memoryId, requestHash: claim.requestHash });
    return { claimed: true };
  }

  async release(tenantId: string, key: string): Promise<void> {
    this.journal.record('idempotency.release', `${tenantId}:${key}`);
    this.rows.delete(`${tenantId}:${key}`);
  }

  async forgetMemories(memoryIds: string[]): Promise<void> {
    this.journal.record('idempotency.forgetMemories', [...memoryIds]);
    for (const [id, row] of this.rows) if (memoryIds.includes(row.memoryId)) this.rows.delete(id);
  }
}

/** One notice on the index-change feed. */
export type FakeIndexNotice =
  | { op: 'upsert'; tenantId: string; memoryId: string; collectionIds: string[] }
  | { op: 'remove'; tenantId: string; memoryId: string }
  | { op: 'reload_collection' | 'drop_collection'; tenantId: string; collectionId: string }
  | { op: 'refresh_graph'; tenantId: string; memoryId: string; targetIds: string[] };

/** The feed as a list of notices; each call gets the next seqs, as the sequenced log gives them. */
export class FakeIndexChanges implements Pick<
  IndexChangeFeed,
  'publishUpserts' | 'publishRemoves' | 'publishCollectionDropped' | 'publishCollectionReload' | 'publishGraphRefresh'
> {
  readonly notices: FakeIndexNotice[] = [];

  constructor(private readonly journal: Journal = new Journal()) {}

  private publish(notices: FakeIndexNotice[]): number[] {
    return notices.map((notice) => {
      this.notices.push(notice);
      return this.notices.length;
    });
  }

  async publishUpserts(tenantId: string, memories: readonly ChangedMemory[]): Promise<number[]> {
    this.journal.record(
      'indexChanges.publishUpserts',
      tenantId,
      memories.map((memory) => memory.id),
    );
    return this.publish(
      memories.map((memory) => ({ op: 'upsert', tenantId, memoryId: memory.id, collectionIds: [...memory.collectionIds] })),
    );
  }

  async publishRemoves(tenantId: string, memoryIds: readonly string[]): Promise<number[]> {
    this.journal.record('indexChanges.publishRemoves', tenantId, [...memoryIds]);
    return this.publish(memoryIds.map((memoryId) => ({ op: 'remove', tenantId, memoryId })));
  }

  async publishGraphRefresh(tenantId: string, memoryId: string, targetIds: readonly string[]): Promise<void> {
    if (targetIds.length === 0) return;
    this.journal.record('indexChanges.publishGraphRefresh', tenantId, memoryId, [...targetIds]);
    this.publish([{ op: 'refresh_graph', tenantId, memoryId, targetIds: [...targetIds] }]);
  }

  async publishCollectionDropped(tenantId: string, collectionId: string): Promise<void> {
    this.journal.record('indexChanges.publishCollectionDropped', tenantId, collectionId);
    this.publish([{ op: 'drop_collection', tenantId, collectionId }]);
  }

  async publishCollectionReload(tenantId: string, collectionId: string): Promise<void> {
    this.journal.record('indexChanges.publishCollectionReload', tenantId, collectionId);
    this.publish([{ op: 'reload_collection', tenantId, collectionId }]);
  }
}

export class FakeIndexSnapshots implements Pick<IndexSnapshotRepository, 'removeForTenant'> {
  constructor(private readonly journal: Journal = new Journal()) {}

  async removeForTenant(tenantId: string): Promise<void> {
    this.journal.record('indexSnapshots.removeForTenant', tenantId);
  }
}

/**
 * The graph's removal (with its fact events): recorded, since what it removes is the graph
 * repository's concern. Like the real one it announces the records it rewrote on the feed.
 */
export class FakeFactEvents implements Pick<FactEvents, 'removeMemories' | 'removeChunkRows'> {
  /** By memory: the graph records other memories still mention that its removal rewrites (set by a test). */
  readonly rewrites = new Map<string, string[]>();

  constructor(
    private readonly journal: Journal = new Journal(),
    private readonly indexChanges: Pick<FakeIndexChanges, 'publishGraphRefresh'> = new FakeIndexChanges(journal),
  ) {}

  async removeMemories(tenantId: string, memoryIds: string[], onlyCollections?: string[]): Promise<void> {
    this.journal.record('factEvents.removeMemories', [...memoryIds], onlyCollections ? [...onlyCollections] : undefined);
    await this.announce(tenantId, memoryIds);
  }

  async removeChunkRows(tenantId: string, memoryId: string, collectionIds: string[], fromChunk: number): Promise<void> {
    this.journal.record('factEvents.removeChunkRows', memoryId, [...collectionIds], fromChunk);
    await this.announce(tenantId, [memoryId]);
  }

  private async announce(tenantId: string, memoryIds: string[]): Promise<void> {
    const rewritten = [...new Set(memoryIds.flatMap((memoryId) => this.rewrites.get(memoryId) ?? []))];
    if (memoryIds.length > 0) await this.indexChanges.publishGraphRefresh(tenantId, memoryIds[0]!, rewritten);
  }
}

export class FakeProcedures implements Pick<Store['procedures'], 'removeMemories'> {
  constructor(private readonly journal: Journal = new Journal()) {}

  async removeMemories(memoryIds: string[], onlyCollections?: string[]): Promise<void> {
    this.journal.record('procedures.removeMemories', [...memoryIds], onlyCollections ? [...onlyCollections] : undefined);
  }
}

/** `memory_purges` in memory: one intent per memory, the first request time kept (the Mongo one's $setOnInsert). */
export class FakePurgeIntents implements PurgeIntents {
  readonly rows = new Map<string, Purge & { requestedAt: Date }>();

  constructor(private readonly journal: Journal = new Journal()) {}

  async ensureIndexes(): Promise<void> {}

  async record(purges: Purge[], requestedAt: Date): Promise<void> {
    this.journal.record(
      'intents.record',
      purges.map((purge) => purge.memoryId),
    );
    for (const purge of purges) if (!this.rows.has(purge.memoryId)) this.rows.set(purge.memoryId, { ...purge, requestedAt });
  }

  async remove(memoryIds: string[]): Promise<void> {
    this.journal.record('intents.remove', [...memoryIds]);
    for (const id of memoryIds) this.rows.delete(id);
  }

  async olderThan(olderThan: Date, limit: number): Promise<Purge[]> {
    return [...this.rows.values()]
      .filter((row) => row.requestedAt < olderThan)
      .sort((a, b) => a.requestedAt.getTime() - b.requestedAt.getTime())
      .slice(0, limit)
      .map(({ requestedAt: _requestedAt, ...purge }) => purge);
  }
}

/** One event on the durable log, as appended. */
export interface FakeEvent {
  seq: number;
  type: string;
  tenantId: string;
  collectionIds: string[];
  payload: Record<string, unknown>;
}

/**
 * The durable event log: appends get seqs in order; reads follow store/events.ts (a subscriber's
 * reads use the same `entryMatches` rule as its query); `trim(tenantId, throughSeq)` drops a
 * tenant's events and raises its watermark first, as trimTenant does. `follow` is driven by hand:
 * `notify()` wakes the followers.
 */
export class FakeEvents implements Pick<
  EventLog,
  'append' | 'readAll' | 'readFor' | 'readSeqs' | 'trimmedThrough' | 'oldestRetained' | 'follow'
> {
  readonly appended: FakeEvent[] = [];
  readonly entries: EventEntry[] = [];
  private readonly watermarks = new Map<string, number>();
  private readonly followers = new Set<() => void>();
  private seq = 0;
  readonly log = { latestSeq: async (): Promise<number> => this.seq };

  constructor(private readonly journal: Journal = new Journal()) {}

  async append(type: string, tenantId: string, collectionId: string | string[], payload: Record<string, unknown>): Promise<number> {
    this.journal.record('events.append', type, tenantId);
    const collectionIds = Array.isArray(collectionId) ? [...collectionId] : [collectionId];
    const seq = ++this.seq;
    this.appended.push({ seq, type, tenantId, collectionIds, payload: copy(payload) });
    this.entries.push({
      id: randomUUID(),
      seq,
      type,
      tenant_id: tenantId,
      collection_id: collectionIds[0] ?? '',
      ...(collectionIds.length > 1 ? { collection_ids: collectionIds } : {}),
      payload: copy(payload),
      ts: new Date(),
    });
    return seq;
  }

  async readAll(afterSeq: number, limit: number): Promise<EventEntry[]> {
    return this.entries
      .filter((entry) => entry.seq > afterSeq)
      .slice(0, limit)
      .map(copy);
  }

  async readSeqs(seqs: number[]): Promise<EventEntry[]> {
    return this.entries.filter((entry) => seqs.includes(entry.seq)).map(copy);
  }

  async readFor(filter: EventFilter, afterSeq: number, limit: number): Promise<EventEntry[]> {
    return this.entries
      .filter((entry) => entry.seq > afterSeq && entryMatches(entry, filter))
      .slice(0, limit)
      .map(copy);
  }

  async trimmedThrough(tenantId: string): Promise<number> {
    return this.watermarks.get(tenantId) ?? 0;
  }

  async oldestRetained(tenantId: string, afterSeq: number): Promise<number | null> {
    return this.entries.find((entry) => entry.tenant_id === tenantId && entry.seq > afterSeq)?.seq ?? null;
  }

  /** Drops the tenant's events up to `throughSeq`, the watermark raised first. */
  trim(tenantId: string, throughSeq: number): void {
    this.watermarks.set(tenantId, Math.max(this.watermarks.get(tenantId) ?? 0, throughSeq));
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (entry.tenant_id === tenantId && entry.seq <= throughSeq) this.entries.splice(i, 1);
    }
  }

  follow(onAppend: () => void): () => Promise<void> {
    this.followers.add(onAppend);
    return async () => void this.followers.delete(onAppend);
  }

  /** Wakes every follower, as the change stream or the poll does after an append. */
  notify(): void {
    for (const follower of this.followers) follower();
  }
}

/** Acknowledged seqs per subscriber identity (`keyId:subscriberId`), and when each last moved or was touched. */
export class FakeEventAcks implements Pick<EventAckRepository, 'lastAck' | 'record' | 'touch' | 'expire'> {
  readonly rows = new Map<string, { seq: number; usedAt: Date }>();

  constructor(private readonly journal: Journal = new Journal()) {}

  async lastAck(identity: string): Promise<number | null> {
    return this.rows.get(identity)?.seq ?? null;
  }

  async record(identity: string, seq: number): Promise<void> {
    this.journal.record('eventAcks.record', identity, seq);
    if ((this.rows.get(identity)?.seq ?? -1) >= seq) return;
    this.rows.set(identity, { seq, usedAt: new Date() });
  }

  async touch(identities: string[], at: Date): Promise<void> {
    this.journal.record('eventAcks.touch', [...identities].sort(), at);
    for (const identity of identities) {
      const row = this.rows.get(identity);
      if (row) row.usedAt = at;
    }
  }

  async expire(olderThan: Date): Promise<number> {
    const expired = [...this.rows].filter(([, row]) => row.usedAt < olderThan).map(([identity]) => identity);
    for (const identity of expired) this.rows.delete(identity);
    return expired.length;
  }
}

/** API keys' revocation, as the stream checks it: `revoked` holds the revoked key ids. */
export class FakeTenants implements Pick<TenantRepository, 'inactiveKeyIds'> {
  readonly revoked = new Set<string>();

  async inactiveKeyIds(keyIds: string[]): Promise<Set<string>> {
    return new Set(keyIds.filter((id) => this.revoked.has(id)));
  }
}

/**
 * One fake of each repository the delete cascade clears beside the memory itself, sharing one
 * journal: the common part of every in-memory store here (a store that extends some of them
 * spreads this first and puts its own after it).
 */
export function derivedRepositories(journal: Journal) {
  const indexChanges = new FakeIndexChanges(journal);
  return {
    chunks: new FakeChunks(journal),
    files: new FakeFiles(journal),
    uploads: new FakeUploads(journal),
    idempotency: new FakeIdempotency(journal),
    indexChanges,
    indexSnapshots: new FakeIndexSnapshots(journal),
    factEvents: new FakeFactEvents(journal, indexChanges),
    procedures: new FakeProcedures(journal),
  };
}
