/**
 * An event-frame signature verifier written from docs/event-signing.md alone, sharing nothing with
 * the signing code (core/event-signature.ts, core/canonical-json.ts), so the suites check frames the way
 * a subscriber would: the frame without `signature`, canonicalised as json-sort-keys-v1 (keys
 * sorted by code unit, no white space), verified with Ed25519 against the JWK named by `key_id`.
 */
import { createPublicKey, verify } from 'node:crypto';

/** A public key as GET /v1/memory-events/signing-keys lists it. */
export interface SigningJwk {
  kid: string;
  kty: string;
  crv: string;
  x: string;
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Whether the frame's detached signature verifies under one of the keys (false when its key is not among them). */
export function verifyEventFrame(frame: Record<string, unknown>, keys: SigningJwk[]): boolean {
  const { signature, ...signed } = frame as Record<string, unknown> & { signature: { key_id: string; value: string } };
  const jwk = keys.find((key) => key.kid === signature.key_id);
  if (!jwk) return false;
  const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  return verify(null, Buffer.from(canonicalJson(signed), 'utf8'), publicKey, Buffer.from(signature.value, 'base64url'));
}
