import { AppError, conflict, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { Collection } from '../core/memory-model.js';
import { CollectionNameTakenError, type CollectionRepository } from '../store/collections.js';

export interface CreateCollectionInput {
  name: string;
  description?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface CollectionLimits {
  /** MAX_COLLECTIONS_PER_TENANT; unbounded when absent (the operator's admin CLI). */
  maxCollectionsPerTenant?: number;
}

/** What the collection rules ask of storage: the repository's reads and its create (unit tests hand an in-memory one). */
export interface CollectionServiceStore {
  collections: Pick<CollectionRepository, 'create' | 'findById' | 'findByName' | 'list' | 'existing' | 'countForTenant'>;
}

export function createCollectionService(store: CollectionServiceStore, limits: CollectionLimits = {}) {
  async function readable(tenantId: string, ids: string[], field: string) {
    const unique = [...new Set(ids)];
    const found = await store.collections.existing(tenantId, unique);
    const missing = unique.find((id) => !found.has(id));
    if (missing !== undefined) throw notFound('collection', missing, field);
    return found;
  }

  /** MAX_COLLECTIONS_PER_TENANT, for created and imported (ephemeral) collections alike. */
  async function assertBelowLimit(tenantId: string, name: string): Promise<void> {
    const max = limits.maxCollectionsPerTenant;
    // Counted before the insert: concurrent creates can pass it together, by at most their number
    // (no multi-document transactions on the stand-in); the bound still holds within that margin.
    if (max !== undefined && (await store.collections.countForTenant(tenantId)) >= max) {
      throw conflict(
        'collection_limit_reached',
        `This tenant already has the most collections allowed (${max}, MAX_COLLECTIONS_PER_TENANT); name: no collection "${name}" was created`,
        'name',
      );
    }
  }

  return {
    async create(tenantId: string, input: CreateCollectionInput): Promise<Collection> {
      await assertBelowLimit(tenantId, input.name);
      try {
        return await store.collections.create({
          id: newId(),
          tenant_id: tenantId,
          name: input.name,
          description: input.description ?? null,
          metadata: input.metadata ?? {},
          created_at: new Date(),
        });
      } catch (error) {
        if (error instanceof CollectionNameTakenError) {
          throw conflict('collection_name_taken', `A collection named "${input.name}" already exists`, 'name');
        }
        throw error;
      }
    },

    async get(tenantId: string, id: string): Promise<Collection> {
      const collection = await store.collections.findById(tenantId, id);
      if (!collection) throw notFound('collection', id);
      return collection;
    },

    async getByName(tenantId: string, name: string): Promise<Collection> {
      const collection = await store.collections.findByName(tenantId, name);
      if (!collection) throw new AppError(404, 'collection_not_found', `No collection named ${name}`);
      return collection;
    },

    list(tenantId: string, offset: number, limit: number) {
      return store.collections.list(tenantId, offset, limit);
    },

    /** Throws 404 naming the first id the tenant cannot read; existence never leaks. */
    async assertReadable(tenantId: string, ids: string[], field: string): Promise<void> {
      await readable(tenantId, ids, field);
    },

    /** Readable, and not an imported snapshot (ephemeral collections are read-only copies): 409 otherwise. */
    async assertWritable(tenantId: string, ids: string[], field: string): Promise<void> {
      const found = await readable(tenantId, ids, field);
      const ephemeral = [...found].find(([, info]) => info.ephemeral);
      if (ephemeral) {
        throw conflict('collection_read_only', `Collection ${ephemeral[0]} is an imported snapshot (ephemeral) and is read-only`, field);
      }
    },

    /** A new ephemeral collection for an imported snapshot; the caller fills it, the sweeper removes it after `ttlSeconds`. */
    async createEphemeral(tenantId: string, ttlSeconds: number): Promise<Collection> {
      const id = newId();
      await assertBelowLimit(tenantId, `snapshot-import-${id}`);
      const now = new Date();
      return store.collections.create({
        id,
        tenant_id: tenantId,
        name: `snapshot-import-${id}`,
        description: 'Imported device snapshot (ephemeral, read-only)',
        metadata: {},
        created_at: now,
        expires_at: new Date(now.getTime() + ttlSeconds * 1000),
      });
    },
  };
}

export type CollectionService = ReturnType<typeof createCollectionService>;
