import type { Collection } from '../../../core/memory-model.js';
import { CollectionNameTakenError, type CollectionRepository } from '../../../store/collections.js';
import { copy, Journal } from './journal.js';

/** The methods of CollectionRepository this fake implements. */
export type CollectionRecords = Pick<
  CollectionRepository,
  'create' | 'findById' | 'findByName' | 'existing' | 'existingIds' | 'countForTenant' | 'expired' | 'remove' | 'list'
>;

/** The liveness rule of store/collections.ts: no `expires_at` lives forever, an ephemeral collection until its time. */
const isLive = (collection: Collection, now = Date.now()): boolean => !collection.expires_at || collection.expires_at.getTime() > now;

/** The `collections` collection in memory: names unique per tenant, every read scoped to the tenant and to live rows. */
export class FakeCollections implements CollectionRecords {
  readonly rows = new Map<string, Collection>();

  constructor(private readonly journal: Journal = new Journal()) {}

  /** Adds a row directly (a fixture); an ephemeral one with `expiresAt`. */
  seed(tenantId: string, id: string, expiresAt: Date | null = null): Collection {
    const collection: Collection = {
      id,
      tenant_id: tenantId,
      name: `collection-${id}`,
      description: null,
      metadata: {},
      created_at: new Date(Date.UTC(2026, 0, 1) + this.rows.size),
      ...(expiresAt ? { expires_at: expiresAt } : {}),
    };
    this.rows.set(id, collection);
    return copy(collection);
  }

  async create(collection: Collection): Promise<Collection> {
    // The unique index is on (tenant_id, name) over every row, expired ones included.
    if ([...this.rows.values()].some((row) => row.tenant_id === collection.tenant_id && row.name === collection.name)) {
      throw new CollectionNameTakenError(collection.name);
    }
    this.journal.record('collections.create', collection.id);
    this.rows.set(collection.id, copy(collection));
    return collection;
  }

  async findById(tenantId: string, id: string): Promise<Collection | null> {
    const row = this.rows.get(id);
    return row && row.tenant_id === tenantId && isLive(row) ? copy(row) : null;
  }

  async findByName(tenantId: string, name: string): Promise<Collection | null> {
    const row = [...this.rows.values()].find((one) => one.tenant_id === tenantId && one.name === name && isLive(one));
    return row ? copy(row) : null;
  }

  async existing(tenantId: string, ids: string[]): Promise<Map<string, { ephemeral: boolean }>> {
    const found = new Map<string, { ephemeral: boolean }>();
    for (const id of ids) {
      const row = this.rows.get(id);
      if (row && row.tenant_id === tenantId && isLive(row)) found.set(id, { ephemeral: !!row.expires_at });
    }
    return found;
  }

  async existingIds(tenantId: string, ids: string[]): Promise<Set<string>> {
    return new Set((await this.existing(tenantId, ids)).keys());
  }

  async countForTenant(tenantId: string): Promise<number> {
    return [...this.rows.values()].filter((row) => row.tenant_id === tenantId && isLive(row)).length;
  }

  async expired(now: Date, limit: number): Promise<Pick<Collection, 'id' | 'tenant_id'>[]> {
    return [...this.rows.values()]
      .filter((row) => row.expires_at && row.expires_at <= now)
      .sort((a, b) => a.expires_at!.getTime() - b.expires_at!.getTime())
      .slice(0, limit)
      .map((row) => ({ id: row.id, tenant_id: row.tenant_id }));
  }

  async remove(id: string): Promise<void> {
    this.journal.record('collections.remove', id);
    this.rows.delete(id);
  }

  async list(tenantId: string, offset: number, limit: number): Promise<{ items: Collection[]; total: number }> {
    const live = [...this.rows.values()]
      .filter((row) => row.tenant_id === tenantId && isLive(row))
      .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1));
    return { items: live.slice(offset, offset + limit).map(copy), total: live.length };
  }
}
