/**
 * Detached signatures over event frames (spec: Events → "Signature object", "Verification rules").
 *
 * The signed bytes are the UTF-8 canonical JSON (json-sort-keys-v1, core/canonical-json.ts) of
 * the whole frame without its `signature` member — every field, including fields added later,
 * not just the ones listed in `signed_fields`. Ed25519 (the default) signs those bytes directly;
 * ES256 signs their SHA-256 and encodes the signature as raw fixed-width r||s (IEEE P1363,
 * 64 bytes), not DER. The signature value is base64url without padding.
 *
 * Keys are imported with jose (JWK → CryptoKey); signing and verifying use node:crypto.
 * docs/event-signing.md has the byte rules and a reproducible worked example.
 */
import { KeyObject, sign, verify } from 'node:crypto';
import { importJWK, type JWK } from 'jose';
import { canonicalJsonBytes } from './canonical-json.js';

export type SigningAlgorithm = 'Ed25519' | 'ES256';
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['Ed25519', 'ES256'];

export const SIGNATURE_SCHEME = 'eddsa-detached';
export const CANONICALIZATION = 'json-sort-keys-v1';
export const SIGNATURE_ENCODING = 'base64url';
/** The fields every event frame carries and signs (spec order: sorted). */
export const SIGNED_FIELDS = ['action', 'collection_id', 'event_id', 'payload', 'seq', 'ts', 'type'] as const;

/** A private signing key. A keyset entry (core/signing-keyset.ts) is one. */
export interface SigningKey {
  kid: string;
  alg: SigningAlgorithm;
  /** OKP/Ed25519 for `Ed25519`, EC/P-256 for `ES256`; must contain `d`. */
  private_jwk: JWK;
}

export interface SignatureObject {
  scheme: typeof SIGNATURE_SCHEME;
  algorithm: SigningAlgorithm;
  canonicalization: typeof CANONICALIZATION;
  key_id: string;
  /** The top-level fields the signature covers: every field of the frame except `signature`, sorted. */
  signed_fields: string[];
  encoding: typeof SIGNATURE_ENCODING;
  value: string;
}

interface EventFrameFields {
  action: 'event';
  seq: number;
  event_id: string;
  type: string;
  collection_id: string;
  payload: Record<string, unknown>;
  ts: string;
  /** Optional fields the service may add; they are signed too. */
  [field: string]: unknown;
}

export type EventFrameWithoutSignature = EventFrameFields & { signature?: undefined };
export type EventFrame = EventFrameFields & { signature: SignatureObject };

/** A frame as received: anything parsed from JSON. verifyEventFrame checks it all. */
export type UnverifiedFrame = Readonly<Record<string, unknown>>;

export type PublicKeySet = readonly JWK[] | { readonly keys: readonly JWK[] };

const SIGNATURE_BYTES = 64; // Ed25519, and P-256 r||s (32 + 32)
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export class EventSignatureError extends Error {
  override name = 'EventSignatureError';
}

function signWith(alg: SigningAlgorithm, bytes: Buffer, key: KeyObject): Buffer {
  return alg === 'Ed25519' ? sign(null, bytes, key) : sign('sha256', bytes, { key, dsaEncoding: 'ieee-p1363' });
}

function verifyWith(alg: SigningAlgorithm, bytes: Buffer, key: KeyObject, signature: Buffer): boolean {
  return alg === 'Ed25519' ? verify(null, bytes, key, signature) : verify('sha256', bytes, { key, dsaEncoding: 'ieee-p1363' }, signature);
}

/** Whether `jwk` is a key of the type `alg` uses (and is not marked for another use). */
export function jwkMatchesAlgorithm(jwk: JWK, alg: SigningAlgorithm): boolean {
  if (jwk.use !== undefined && jwk.use !== 'sig') return false;
  if (alg === 'Ed25519') {
    return jwk.kty === 'OKP' && jwk.crv === 'Ed25519' && (jwk.alg === undefined || jwk.alg === 'EdDSA' || jwk.alg === 'Ed25519');
  }
  return jwk.kty === 'EC' && jwk.crv === 'P-256' && (jwk.alg === undefined || jwk.alg === 'ES256');
}

/** Only the key material: metadata such as `use`, `key_ops` or `status` never reaches the import. */
function keyMaterial(jwk: JWK, withPrivate: boolean): JWK {
  const material: JWK = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  if (jwk.kty === 'EC') material.y = jwk.y;
  if (withPrivate) material.d = jwk.d;
  return material;
}

// Imported keys, cached per JWK object: importing costs far more than an Ed25519 signature.
const privateKeys = new WeakMap<JWK, Promise<KeyObject>>();
const publicKeys = new WeakMap<JWK, Promise<KeyObject>>();

async function importKey(jwk: JWK, alg: SigningAlgorithm, withPrivate: boolean): Promise<KeyObject> {
  // Extractable, because node:crypto's KeyObject.from() of a non-extractable CryptoKey is deprecated
  // (DEP0204 on Node 24). The key never leaves this process either way.
  const imported = await importJWK(keyMaterial(jwk, withPrivate), alg, { extractable: true });
  if (imported instanceof Uint8Array) throw new EventSignatureError('expected an asymmetric key, got a symmetric one');
  return KeyObject.from(imported);
}

function cachedImport(cache: WeakMap<JWK, Promise<KeyObject>>, jwk: JWK, alg: SigningAlgorithm, withPrivate: boolean): Promise<KeyObject> {
  let key = cache.get(jwk);
  if (!key) {
    key = importKey(jwk, alg, withPrivate);
    cache.set(jwk, key);
    // A failed import is not cached: the next call reports the error again.
    key.catch(() => cache.delete(jwk));
  }
  return key;
}

/**
 * Signs a frame (everything in it; it must not have a `signature` yet). Throws
 * EventSignatureError for a missing required field or an unusable key, and CanonicalJsonError
 * for a value that has no canonical form (NaN, a Date, undefined in an array...).
 */
export async function signEventFrame(frame: EventFrameWithoutSignature, key: SigningKey): Promise<SignatureObject> {
  if (frame.signature !== undefined) throw new EventSignatureError('the frame already has a signature');
  for (const field of SIGNED_FIELDS) {
    if (frame[field] === undefined) throw new EventSignatureError(`the frame has no ${field}`);
  }
  if (!SIGNING_ALGORITHMS.includes(key.alg)) throw new EventSignatureError(`unsupported signing algorithm ${String(key.alg)}`);
  if (!jwkMatchesAlgorithm(key.private_jwk, key.alg) || typeof key.private_jwk.d !== 'string') {
    throw new EventSignatureError(`key ${key.kid} is not a private ${key.alg} key`);
  }
  const bytes = canonicalJsonBytes(frame);
  const privateKey = await cachedImport(privateKeys, key.private_jwk, key.alg, true);
  const value = signWith(key.alg, bytes, privateKey).toString('base64url');
  const signedFields = Object.keys(frame)
    .filter((field) => frame[field] !== undefined)
    .sort();
  return {
    scheme: SIGNATURE_SCHEME,
    algorithm: key.alg,
    canonicalization: CANONICALIZATION,
    key_id: key.kid,
    signed_fields: signedFields,
    encoding: SIGNATURE_ENCODING,
    value,
  };
}

/** The frame with its signature attached: what the service sends. */
export async function withSignature(frame: EventFrameWithoutSignature, key: SigningKey): Promise<EventFrame> {
  return { ...frame, signature: await signEventFrame(frame, key) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Verification rules 1–2: true only when the frame has a well-formed signature object whose
 * key_id names a key in `publicJwks` of the signature's algorithm, and the signature matches the
 * canonical bytes of the frame without `signature`. Never throws for bad input: a malformed
 * frame, an unknown kid, an unimportable key or a bad signature are all `false`. Retired keys
 * still in the set verify. Replay/ordering (rule 3) is the caller's job.
 */
export async function verifyEventFrame(frame: EventFrame | UnverifiedFrame, publicJwks: PublicKeySet): Promise<boolean> {
  if (!isRecord(frame)) return false;
  const { signature, ...unsigned } = frame;
  if (!isRecord(signature)) return false;
  const { scheme, algorithm, canonicalization, key_id: kid, signed_fields: signedFields, encoding, value } = signature;
  if (scheme !== SIGNATURE_SCHEME || canonicalization !== CANONICALIZATION || encoding !== SIGNATURE_ENCODING) return false;
  if (algorithm !== 'Ed25519' && algorithm !== 'ES256') return false;
  if (typeof kid !== 'string' || typeof value !== 'string' || !BASE64URL.test(value)) return false;
  if (!Array.isArray(signedFields) || !signedFields.every((field) => typeof field === 'string')) return false;
  const signatureBytes = Buffer.from(value, 'base64url');
  // Exactly one encoding per signature: no padding, no trailing bits, the fixed length.
  if (signatureBytes.length !== SIGNATURE_BYTES || signatureBytes.toString('base64url') !== value) return false;

  let bytes: Buffer;
  try {
    bytes = canonicalJsonBytes(unsigned);
  } catch {
    return false;
  }
  const keys: unknown = Array.isArray(publicJwks) ? publicJwks : (publicJwks as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) return false;
  for (const jwk of keys as unknown[]) {
    if (!isRecord(jwk) || jwk.kid !== kid || !jwkMatchesAlgorithm(jwk, algorithm)) continue;
    try {
      const publicKey = await cachedImport(publicKeys, jwk, algorithm, false);
      if (verifyWith(algorithm, bytes, publicKey, signatureBytes)) return true;
    } catch {
      // An unusable key in the set verifies nothing; try any other key with this kid.
    }
  }
  return false;
}
