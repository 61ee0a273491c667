import { AppError, conflict, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { CollectionNameTakenError, type CollectionDoc } from '../store/collections.js';
import type { Store } from '../store/index.js';

export interface CreateCollectionInput {
  name: string;
  description?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface CollectionLimits {
  /** MAX_COLLECTIONS_PER_TENANT; unbounded when absent (the operator's admin CLI). */
  maxCollectionsPerTenant?: number;
}

export function createCollectionService(store: Store, limits: CollectionLimits = {}) {
  return {
    async create(tenantId: string, input: CreateCollectionInput): Promise<CollectionDoc> {
      const max = limits.maxCollectionsPerTenant;
      // Counted before the insert: concurrent creates can pass it together, by at most their number
      // (no multi-document transactions on the stand-in); the bound still holds within that margin.
      if (max !== undefined && (await store.collections.countForTenant(tenantId)) >= max) {
        throw conflict(
          'collection_limit_reached',
          `This tenant already has the most collections allowed (${max}, MAX_COLLECTIONS_PER_TENANT); name: no collection "${input.name}" was created`,
          'name',
        );
      }
      try {
        return await store.collections.create({
          _id: newId(),
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

    async get(tenantId: string, id: string): Promise<CollectionDoc> {
      const collection = await store.collections.findById(tenantId, id);
      if (!collection) throw notFound('collection', id);
      return collection;
    },

    async getByName(tenantId: string, name: string): Promise<CollectionDoc> {
      const collection = await store.collections.findByName(tenantId, name);
      if (!collection) throw new AppError(404, 'collection_not_found', `No collection named ${name}`);
      return collection;
    },

    list(tenantId: string, offset: number, limit: number) {
      return store.collections.list(tenantId, offset, limit);
    },

    /** Throws 404 naming the first id the tenant cannot read; existence never leaks. */
    async assertReadable(tenantId: string, ids: string[], field: string): Promise<void> {
      const unique = [...new Set(ids)];
      const found = await store.collections.existingIds(tenantId, unique);
      const missing = unique.find((id) => !found.has(id));
      if (missing !== undefined) throw notFound('collection', missing, field);
    },
  };
}

export type CollectionService = ReturnType<typeof createCollectionService>;
