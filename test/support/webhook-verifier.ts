/**
 * A Standard Webhooks verifier written from the specification's text alone (spec/standard-webhooks.md,
 * "Signature scheme", "Webhook headers", "Verifying signatures"), deliberately sharing nothing
 * with the sending code (core/webhook-signature.ts), so the suite checks our requests the way a
 * receiver library would:
 *   - the headers webhook-id, webhook-timestamp and webhook-signature must all be present;
 *   - the timestamp is integer Unix seconds within a tolerance of now (5 minutes, as the libraries);
 *   - the signed content is the bytes of `{id}.{timestamp}.{body}`;
 *   - webhook-signature is a space-separated list of `version,base64signature`; a request verifies
 *     when any one listed signature verifies;
 *   - v1: HMAC-SHA256 keyed with the base64 part of a `whsec_` secret, compared in constant time;
 *   - v1a: Ed25519 with a `whpk_` public key (base64 of the raw 32 bytes).
 */
import { createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface VerifyOptions {
  /** `whsec_…` secrets to try for v1. */
  secrets?: string[];
  /** `whpk_…` public keys to try for v1a. */
  publicKeys?: string[];
  toleranceSeconds?: number;
  /** The receiver's clock, in ms. */
  now?: number;
}

export type Verdict = { ok: true; scheme: 'v1' | 'v1a' } | { ok: false; reason: string };

// An Ed25519 SubjectPublicKeyInfo is this fixed DER prefix followed by the 32 raw key bytes (RFC 8410).
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

export function verifyWebhook(body: Buffer, headers: IncomingHttpHeaders, options: VerifyOptions): Verdict {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'missing headers' };
  if (!/^\d+$/.test(timestamp)) return { ok: false, reason: 'timestamp is not integer seconds' };
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: 'timestamp outside tolerance' };
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0) continue;
    const version = entry.slice(0, comma);
    const signature = Buffer.from(entry.slice(comma + 1), 'base64');
    if (version === 'v1') {
      for (const secret of options.secrets ?? []) {
        if (!secret.startsWith('whsec_')) continue;
        const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
          .update(content)
          .digest();
        if (expected.length === signature.length && timingSafeEqual(expected, signature)) return { ok: true, scheme: 'v1' };
      }
    } else if (version === 'v1a') {
      for (const publicKey of options.publicKeys ?? []) {
        if (!publicKey.startsWith('whpk_')) continue;
        const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
        const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
        if (verify(null, content, key, signature)) return { ok: true, scheme: 'v1a' };
      }
    }
  }
  return { ok: false, reason: 'no signature verifies' };
}
