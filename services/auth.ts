/**
 * API-key authentication. Keys are looked up by their sha256 hash. A short positive cache spares
 * a database round trip per request; revocation therefore takes effect within KEY_CACHE_MS
 * in every process (documented in the README).
 *
 * A bad key must not cost a database query each time (issue 20): a key that cannot have been
 * issued (wrong shape) is refused without one, and the hashes of keys the database did not know
 * are remembered for BAD_KEY_CACHE_MS in a bounded negative cache. Keys are 192 random bits, so
 * a key refused once cannot become valid later (a revoked key stays revoked).
 */
import { keyLookups } from '../core/metrics.js';
import { hashApiKey, isWellFormedApiKey } from '../store/tenants.js';
import type { Store } from '../store/index.js';

export interface Principal {
  tenantId: string;
  keyId: string;
}

const KEY_CACHE_MS = 5_000;
const KEY_CACHE_MAX = 10_000;
const BAD_KEY_CACHE_MS = 10 * 60_000;
const BAD_KEY_CACHE_MAX = 50_000;

export function createAuthService(store: Store) {
  const cache = new Map<string, { principal: Principal; expires: number }>();
  // Insertion-ordered, so the first entry is the oldest: bounded by dropping from the front.
  const badKeys = new Map<string, number>();

  const cachedPrincipal = (key: string): Principal | null => {
    const cached = cache.get(key);
    return cached && cached.expires > Date.now() ? cached.principal : null;
  };

  const rememberBadKey = (hash: string): void => {
    badKeys.delete(hash);
    badKeys.set(hash, Date.now() + BAD_KEY_CACHE_MS);
    while (badKeys.size > BAD_KEY_CACHE_MAX) badKeys.delete(badKeys.keys().next().value as string);
  };

  return {
    /** The principal of a key this process validated in the last few seconds, without a lookup. */
    cachedPrincipal,

    async authenticate(key: string): Promise<Principal | null> {
      const cached = cachedPrincipal(key);
      if (cached) return cached;
      if (!isWellFormedApiKey(key)) return null;
      const hash = hashApiKey(key);
      const badUntil = badKeys.get(hash);
      if (badUntil !== undefined) {
        if (badUntil > Date.now()) return null;
        badKeys.delete(hash);
      }
      keyLookups.inc();
      const doc = await store.tenants.findActiveKey(key);
      if (!doc) {
        cache.delete(key);
        rememberBadKey(hash);
        return null;
      }
      const principal = { tenantId: doc.tenant_id, keyId: doc.id };
      if (cache.size > KEY_CACHE_MAX) cache.clear();
      cache.set(key, { principal, expires: Date.now() + KEY_CACHE_MS });
      return principal;
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
