/**
 * API-key authentication. Keys are looked up by their sha256 hash. A short positive cache spares
 * a database round trip per request; revocation therefore takes effect within KEY_CACHE_MS
 * in every process (documented in the README).
 */
import type { Store } from '../store/index.js';

export interface Principal {
  tenantId: string;
  keyId: string;
}

const KEY_CACHE_MS = 5_000;

export function createAuthService(store: Store) {
  const cache = new Map<string, { principal: Principal; expires: number }>();
  return {
    async authenticate(key: string): Promise<Principal | null> {
      const cached = cache.get(key);
      if (cached && cached.expires > Date.now()) return cached.principal;
      const doc = await store.tenants.findActiveKey(key);
      if (!doc) {
        cache.delete(key);
        return null;
      }
      const principal = { tenantId: doc.tenant_id, keyId: doc._id };
      if (cache.size > 10_000) cache.clear();
      cache.set(key, { principal, expires: Date.now() + KEY_CACHE_MS });
      return principal;
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
