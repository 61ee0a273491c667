/** Operator use cases behind the admin CLI and the dev bootstrap: tenants, keys, collections. */
import type { Store } from '../store/index.js';
import type { Collection } from '../core/memory-model.js';
import type { ApiKey, Tenant } from '../core/tenant-model.js';
import { createCollectionService } from './collections.js';

export class AdminError extends Error {}

export function createAdminService(store: Store) {
  const collections = createCollectionService(store);

  async function tenant(idOrName: string): Promise<Tenant> {
    const found = await store.tenants.findTenant(idOrName);
    if (!found) throw new AdminError(`no tenant with id or name "${idOrName}"`);
    return found;
  }

  return {
    tenant,
    async createTenant(name: string): Promise<Tenant> {
      if (await store.tenants.findTenant(name)) throw new AdminError(`a tenant named "${name}" already exists`);
      return store.tenants.createTenant(name);
    },
    listTenants: () => store.tenants.listTenants(),
    async createKey(tenantRef: string, name: string): Promise<{ key: string; record: ApiKey }> {
      return store.tenants.createKey((await tenant(tenantRef)).id, name);
    },
    async listKeys(tenantRef?: string): Promise<ApiKey[]> {
      return store.tenants.listKeys(tenantRef ? (await tenant(tenantRef)).id : undefined);
    },
    async revokeKey(keyId: string): Promise<void> {
      if (!(await store.tenants.revokeKey(keyId))) throw new AdminError(`no active key with id "${keyId}"`);
    },
    async createCollection(tenantRef: string, name: string): Promise<Collection> {
      return collections.create((await tenant(tenantRef)).id, { name });
    },
    async listCollections(tenantRef: string): Promise<Collection[]> {
      return (await collections.list((await tenant(tenantRef)).id, 0, 10_000)).items;
    },
    /** Tenant (reused if it exists) + a fresh key + a collection (reused if it exists). */
    async bootstrap(tenantName: string, collectionName: string, keyName: string) {
      const existing = await store.tenants.findTenant(tenantName);
      const tenantRecord = existing ?? (await store.tenants.createTenant(tenantName));
      const { key, record } = await store.tenants.createKey(tenantRecord.id, keyName);
      const collection =
        (await store.collections.findByName(tenantRecord.id, collectionName)) ??
        (await collections.create(tenantRecord.id, { name: collectionName }));
      return { tenant: tenantRecord, apiKey: key, keyId: record.id, collection };
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
