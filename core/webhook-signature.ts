/**
 * Webhook request signatures, as the Standard Webhooks specification defines them, so that its
 * receiver libraries verify our requests unchanged (docs/webhooks.md, "Verifying a request"):
 *
 *   signed bytes   `{webhook-id}.{webhook-timestamp}.{body}` (UTF-8; the id is the event id, a
 *                  UUID, so it never contains a `.`; the timestamp is integer Unix seconds)
 *   v1             HMAC-SHA256 keyed with the base64-decoded part of a `whsec_` secret
 *   v1a            Ed25519 with the event signing key (public key at GET /v1/memory-events/signing-keys,
 *                  also given as `whpk_` + base64 of the raw 32-byte key)
 *   header         `webhook-signature: v1,<base64> [v1,<base64> …] [v1a,<base64>]`, space-separated:
 *                  one v1 per secret still valid (two during a rotation's overlap), then v1a.
 *
 * Base64 here is the standard alphabet with padding (what the spec's examples and libraries use),
 * not base64url.
 */
import { createHmac, randomBytes, sign, type KeyObject } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
export const PUBLIC_KEY_PREFIX = 'whpk_';
/** 32 random bytes: the spec asks for 24 to 64. */
const SECRET_BYTES = 32;

/** A fresh `whsec_` secret. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The HMAC key of a `whsec_` secret: its base64 part, decoded. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  if (key.length < 24) throw new Error('a webhook secret holds at least 24 bytes');
  return key;
}

/** The bytes both schemes sign. */
export function signedContent(id: string, timestampSeconds: number, body: string | Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`, 'utf8'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/** `v1,<base64 HMAC-SHA256>` for one secret. */
export function signV1(secret: string, content: Buffer): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(content).digest('base64')}`;
}

/** `v1a,<base64 Ed25519 signature>`. */
export function signV1a(privateKey: KeyObject, content: Buffer): string {
  return `v1a,${sign(null, content, privateKey).toString('base64')}`;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of one attempt: every still-valid secret signs (v1), then the Ed25519 key (v1a) if given. */
export function webhookHeaders(
  id: string,
  timestampSeconds: number,
  body: string,
  secrets: readonly string[],
  ed25519: KeyObject | null,
): WebhookHeaders {
  if (id.includes('.')) throw new Error('a webhook id must not contain "."');
  const content = signedContent(id, timestampSeconds, body);
  const signatures = secrets.map((secret) => signV1(secret, content));
  if (ed25519) signatures.push(signV1a(ed25519, content));
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}

/** `whpk_` + standard base64 of the raw Ed25519 public key, from a JWK's base64url `x`. */
export function whpkOf(x: string): string {
  return `${PUBLIC_KEY_PREFIX}${Buffer.from(x, 'base64url').toString('base64')}`;
}
