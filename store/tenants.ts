import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../core/hash.js';
import type { Collection, Db } from 'mongodb';
import { newId } from '../core/ids.js';
import type { ApiKey, Tenant } from '../core/tenant-model.js';
import { fromStored, toStored, type Stored } from './stored.js';

type TenantDoc = Stored<Tenant>;
type ApiKeyDoc = Stored<ApiKey>;

export const hashApiKey = (key: string): string => sha256Hex(key);

export function generateApiKey(): string {
  return `mk_${randomBytes(24).toString('base64url')}`;
}

/** The shape generateApiKey produces (24 random bytes in base64url): anything else was never issued. */
const API_KEY_SHAPE = /^mk_[A-Za-z0-9_-]{32}$/;
export const isWellFormedApiKey = (key: string): boolean => API_KEY_SHAPE.test(key);

export class TenantRepository {
  readonly tenants: Collection<TenantDoc>;
  readonly keys: Collection<ApiKeyDoc>;

  constructor(db: Db) {
    this.tenants = db.collection<TenantDoc>('tenants');
    this.keys = db.collection<ApiKeyDoc>('api_keys');
  }

  async ensureIndexes(): Promise<void> {
    await this.tenants.createIndex({ name: 1 }, { unique: true });
    await this.keys.createIndex({ key_hash: 1 }, { unique: true });
    await this.keys.createIndex({ tenant_id: 1, created_at: 1 });
  }

  async createTenant(name: string): Promise<Tenant> {
    const tenant: Tenant = { id: newId(), name, created_at: new Date() };
    await this.tenants.insertOne(toStored(tenant));
    return tenant;
  }

  async findTenant(idOrName: string): Promise<Tenant | null> {
    // Two indexed lookups rather than one $or, which the stand-in answers by scanning.
    const doc = (await this.tenants.findOne({ _id: idOrName })) ?? (await this.tenants.findOne({ name: idOrName }));
    return doc ? fromStored<Tenant>(doc) : null;
  }

  async listTenants(): Promise<Tenant[]> {
    return (await this.tenants.find({}, { sort: { created_at: 1 } }).toArray()).map(fromStored<Tenant>);
  }

  /** Returns the plaintext key once; only its hash is stored. */
  async createKey(tenantId: string, name: string): Promise<{ key: string; record: ApiKey }> {
    const key = generateApiKey();
    const record: ApiKey = {
      id: newId(),
      tenant_id: tenantId,
      name,
      key_hash: hashApiKey(key),
      prefix: key.slice(0, 10),
      created_at: new Date(),
      revoked_at: null,
      last_used_at: null,
    };
    await this.keys.insertOne(toStored(record));
    return { key, record };
  }

  async findActiveKey(key: string): Promise<ApiKey | null> {
    const doc = await this.keys.findOne({ key_hash: hashApiKey(key), revoked_at: null });
    return doc ? fromStored<ApiKey>(doc) : null;
  }

  async isKeyActive(keyId: string): Promise<boolean> {
    return (await this.keys.findOne({ _id: keyId, revoked_at: null }, { projection: { _id: 1 } })) !== null;
  }

  /** Which of these key ids are revoked (or no longer exist). */
  async inactiveKeyIds(keyIds: string[]): Promise<Set<string>> {
    if (keyIds.length === 0) return new Set();
    const active = await this.keys.find({ _id: { $in: keyIds }, revoked_at: null }, { projection: { _id: 1 } }).toArray();
    const activeIds = new Set(active.map((doc) => doc._id));
    return new Set(keyIds.filter((id) => !activeIds.has(id)));
  }

  async listKeys(tenantId?: string): Promise<ApiKey[]> {
    return (await this.keys.find(tenantId ? { tenant_id: tenantId } : {}, { sort: { created_at: 1 } }).toArray()).map(fromStored<ApiKey>);
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const result = await this.keys.updateOne({ _id: keyId, revoked_at: null }, { $set: { revoked_at: new Date() } });
    return result.modifiedCount === 1;
  }
}
