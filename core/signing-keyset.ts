/**
 * A signing keyset, used for live-event frames and for device snapshots (each has its own keyset
 * file): private keys in a JSON file (or an env value), one active key that
 * signs, and retired keys kept for verification until their retention ends.
 *
 * File format (mode 0600):
 *   { "keys": [ { "kid", "alg": "Ed25519"|"ES256", "status": "active"|"retired",
 *                 "created_at": ISO-8601, "retired_at"?: ISO-8601, "private_jwk": {kty, crv, x, [y], d} } ] }
 * Exactly one key is active; kids are unique. New kids are RFC 7638 JWK thumbprints (SHA-256,
 * base64url) of the public key, so a client can check a kid against the key material it pins.
 *
 * Writes are atomic (a temp file in the same directory, then link or rename over the target),
 * so a reader never sees a half-written keyset. Rotation holds `<path>.lock` while it works.
 */
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto';
import { type FileHandle, link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { z } from 'zod';
import { SIGNING_ALGORITHMS, type SigningAlgorithm, type SigningKey } from './event-signature.js';

export type KeyStatus = 'active' | 'retired';

export interface KeysetEntry extends SigningKey {
  status: KeyStatus;
  created_at: string;
  /** When the key stopped signing; retention counts from here (from created_at if absent). */
  retired_at?: string;
}

export interface SigningKeyset {
  keys: KeysetEntry[];
}

/** A public key as served at GET /v1/memory-events/signing-keys. Never has `d`. */
export interface PublicSigningJwk {
  kty: 'OKP' | 'EC';
  crv: 'Ed25519' | 'P-256';
  x: string;
  y?: string;
  kid: string;
  /** JOSE algorithm: `EdDSA` (RFC 8037) for Ed25519 keys, `ES256` for P-256 keys. */
  alg: 'EdDSA' | 'ES256';
  use: 'sig';
  status: KeyStatus;
}

export interface PublicKeyset {
  keys: PublicSigningJwk[];
}

export const DEFAULT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export class KeysetError extends Error {
  override name = 'KeysetError';
}

const base64url = z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');
const okpPrivateJwk = z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: base64url, d: base64url });
const ecPrivateJwk = z.object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: base64url, y: base64url, d: base64url });
const timestamp = z.iso.datetime({ offset: true });
const entrySchema = z.object({
  kid: z.string().min(1).max(256),
  alg: z.enum(['Ed25519', 'ES256']),
  status: z.enum(['active', 'retired']),
  created_at: timestamp,
  retired_at: timestamp.optional(),
  private_jwk: z.discriminatedUnion('kty', [okpPrivateJwk, ecPrivateJwk]),
});
const keysetSchema = z.object({ keys: z.array(entrySchema).min(1) });

/** Checks that `d` really belongs to `x`/`y`: a mismatched JWK would sign with a key nobody can verify. */
function checkKeyPair(entry: KeysetEntry): void {
  const jwk = entry.private_jwk;
  const expectedKty = entry.alg === 'Ed25519' ? 'OKP' : 'EC';
  if (jwk.kty !== expectedKty) throw new KeysetError(`key ${entry.kid}: alg ${entry.alg} needs a ${expectedKty} JWK, got ${jwk.kty}`);
  let derived: JWK;
  try {
    const privateKey = createPrivateKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, d: jwk.d }, format: 'jwk' });
    derived = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  } catch (error) {
    throw new KeysetError(`key ${entry.kid}: private_jwk is not a usable key (${(error as Error).message})`);
  }
  if (derived.x !== jwk.x || (jwk.kty === 'EC' && derived.y !== jwk.y)) {
    throw new KeysetError(`key ${entry.kid}: private_jwk's public part does not match its private part`);
  }
}

/** Validates a parsed keyset. Throws KeysetError naming the problem; never echoes key material. */
export function parseKeyset(input: unknown): SigningKeyset {
  const parsed = keysetSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new KeysetError(`invalid signing keyset: ${issues.join('; ')}`);
  }
  const keyset: SigningKeyset = {
    keys: parsed.data.keys.map((entry) => {
      const copy: KeysetEntry = {
        kid: entry.kid,
        alg: entry.alg,
        status: entry.status,
        created_at: entry.created_at,
        private_jwk: { ...entry.private_jwk },
      };
      if (entry.retired_at !== undefined) copy.retired_at = entry.retired_at;
      return copy;
    }),
  };
  const kids = new Set<string>();
  for (const entry of keyset.keys) {
    if (kids.has(entry.kid)) throw new KeysetError(`invalid signing keyset: kid ${entry.kid} appears twice`);
    kids.add(entry.kid);
    checkKeyPair(entry);
  }
  const active = keyset.keys.filter((entry) => entry.status === 'active').length;
  if (active !== 1) throw new KeysetError(`invalid signing keyset: ${active} active keys (exactly one is required)`);
  return keyset;
}

/** A keyset given as an environment variable's value (the JSON text of the file format). */
export function keysetFromEnv(value: string): SigningKeyset {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    // The message of a JSON.parse error can quote the input: keep key material out of logs.
    throw new KeysetError('the signing keyset from the environment is not valid JSON');
  }
  return parseKeyset(json);
}

/** The key that signs. */
export function activeKey(keyset: SigningKeyset): KeysetEntry {
  const active = keyset.keys.find((entry) => entry.status === 'active');
  if (!active) throw new KeysetError('the signing keyset has no active key');
  return active;
}

/** The public half of every key (active first, then retired newest first), for the JWKS endpoint. */
export function publicJwks(keyset: SigningKeyset): PublicKeyset {
  const ordered = [...keyset.keys].sort((a, b) => {
    if (a.status !== b.status) return a.status === 'active' ? -1 : 1;
    return Date.parse(b.retired_at ?? b.created_at) - Date.parse(a.retired_at ?? a.created_at);
  });
  return {
    keys: ordered.map((entry) => {
      const jwk = entry.private_jwk;
      if (typeof jwk.x !== 'string') throw new KeysetError(`key ${entry.kid} has no public part`);
      // Built member by member from a fixed list, so `d` (or anything else) can never slip through.
      const out: PublicSigningJwk =
        entry.alg === 'Ed25519'
          ? { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: entry.kid, alg: 'EdDSA', use: 'sig', status: entry.status }
          : { kty: 'EC', crv: 'P-256', x: jwk.x, y: String(jwk.y), kid: entry.kid, alg: 'ES256', use: 'sig', status: entry.status };
      return out;
    }),
  };
}

/** A fresh key; its kid is the RFC 7638 thumbprint of its public key. */
export async function generateKeysetEntry(alg: SigningAlgorithm = 'Ed25519', now: Date = new Date()): Promise<KeysetEntry> {
  if (!SIGNING_ALGORITHMS.includes(alg)) throw new KeysetError(`unsupported signing algorithm ${String(alg)}`);
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const exported = await exportJWK(privateKey);
  const privateJwk: JWK =
    alg === 'Ed25519'
      ? { kty: 'OKP', crv: 'Ed25519', x: exported.x, d: exported.d }
      : { kty: 'EC', crv: 'P-256', x: exported.x, y: exported.y, d: exported.d };
  const kid = await calculateJwkThumbprint(privateJwk, 'sha256');
  return { kid, alg, status: 'active', created_at: now.toISOString(), private_jwk: privateJwk };
}

function serialise(keyset: SigningKeyset): string {
  return `${JSON.stringify(keyset, null, 2)}\n`;
}

async function writeTemp(target: string, text: string): Promise<string> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return temp;
}

async function syncDirectory(directory: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch {
    // Best effort: not every platform or file system can fsync a directory.
  } finally {
    await handle?.close();
  }
}

async function readJsonFile(file: string): Promise<unknown | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new KeysetError(`${file} is not valid JSON`);
  }
}

/** The keyset in `file`, or undefined when there is no such file. Never creates anything. */
export async function readKeysetFile(file: string): Promise<SigningKeyset | undefined> {
  const json = await readJsonFile(file);
  if (json === undefined) return undefined;
  try {
    return parseKeyset(json);
  } catch (error) {
    if (error instanceof KeysetError) throw new KeysetError(`${file}: ${error.message}`);
    throw error;
  }
}

export interface CreateOptions {
  /** Algorithm of the first key when the file is created (default Ed25519). */
  alg?: SigningAlgorithm;
  now?: () => Date;
}

/**
 * The keyset in `file`; when the file is absent, creates it (mode 0600, parent directories as
 * needed) with one active key. Concurrent first starts agree: the file is linked into place, and
 * a process that loses the race uses the winner's keyset.
 */
export async function loadOrCreateKeyset(file: string, options: CreateOptions = {}): Promise<SigningKeyset> {
  const existing = await readKeysetFile(file);
  if (existing) return existing;
  await mkdir(path.dirname(file), { recursive: true });
  const keyset: SigningKeyset = { keys: [await generateKeysetEntry(options.alg, (options.now ?? (() => new Date()))())] };
  const temp = await writeTemp(file, serialise(keyset));
  try {
    await link(temp, file);
    await syncDirectory(path.dirname(file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temp);
  }
  const stored = await readKeysetFile(file);
  if (!stored) throw new KeysetError(`${file} disappeared while it was being created`);
  return stored;
}

export interface RotateOptions extends CreateOptions {
  /** How long a retired key stays in the keyset, counted from its retirement (default 30 days). */
  retentionMs?: number;
}

export interface RotationResult {
  keyset: SigningKeyset;
  /** The new active key. */
  added: KeysetEntry;
  /** The key that was active before (now retired); undefined when the file did not exist. */
  retired: KeysetEntry | undefined;
  /** Retired keys whose retention had ended; they are gone from the file. */
  dropped: KeysetEntry[];
}

async function withLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  let handle: FileHandle;
  try {
    handle = await open(lock, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new KeysetError(`${lock} exists: another rotation is running (if none is, a crashed one left it; delete it and retry)`);
    }
    throw error;
  }
  try {
    await handle.writeFile(`${process.pid}\n`);
    await handle.close();
    return await work();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

/**
 * Adds a new active key; the previous active key becomes retired (still served for
 * verification); retired keys retired more than `retentionMs` ago are dropped. Creates the file
 * when it is absent. Processes that loaded the keyset earlier sign with the old key until they
 * reload it.
 */
export async function rotateKeyset(file: string, options: RotateOptions = {}): Promise<RotationResult> {
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  if (!Number.isFinite(retentionMs) || retentionMs < 0) throw new KeysetError('retention must be a non-negative number of milliseconds');
  const now = (options.now ?? (() => new Date()))();
  await mkdir(path.dirname(file), { recursive: true });
  return withLock(file, async () => {
    const current = await readKeysetFile(file);
    const added = await generateKeysetEntry(options.alg ?? current?.keys.find((k) => k.status === 'active')?.alg, now);
    const kept: KeysetEntry[] = [];
    const dropped: KeysetEntry[] = [];
    let retired: KeysetEntry | undefined;
    for (const entry of current?.keys ?? []) {
      if (entry.status === 'active') {
        retired = { ...entry, status: 'retired', retired_at: now.toISOString() };
        kept.push(retired);
      } else if (Date.parse(entry.retired_at ?? entry.created_at) + retentionMs < now.getTime()) {
        dropped.push(entry);
      } else {
        kept.push(entry);
      }
    }
    if (kept.some((entry) => entry.kid === added.kid)) throw new KeysetError('generated a key whose kid is already in the keyset');
    const keyset = parseKeyset({ keys: [added, ...kept] });
    const temp = await writeTemp(file, serialise(keyset));
    try {
      await rename(temp, file);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await syncDirectory(path.dirname(file));
    return { keyset, added, retired, dropped };
  });
}
