/** Tenants and their API keys as the service sees them (`id`); store/tenants.ts persists them. */

export interface Tenant {
  id: string;
  name: string;
  created_at: Date;
}

export interface ApiKey {
  id: string;
  tenant_id: string;
  name: string;
  /** sha256 of the whole key: keys are high-entropy random strings, so a fast hash is enough. */
  key_hash: string;
  /** First characters of the key, shown in listings so a human can tell keys apart. */
  prefix: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}
