/**
 * Sealing (digest + signature) and opening (every check, cheapest first) of device snapshots.
 * Opening never returns part of a snapshot: it returns the whole body or throws a SnapshotError.
 */
import { createHash, randomUUID } from 'node:crypto';
import { CompactSign, compactVerify, importJWK, type JWK } from 'jose';
import { canonicalJson, canonicalJsonBytes } from '../core/canonical-json.js';
import { activeKey, type SigningKeyset } from '../core/signing-keyset.js';
import {
  SNAPSHOT_FORMAT,
  SNAPSHOT_FORMAT_VERSION,
  SNAPSHOT_MAJOR,
  SNAPSHOT_MINOR,
  bodySchema,
  checkReferences,
  countsOf,
  digestOf,
  headerOf,
  headerSchema,
  fromWire,
  toWire,
  parseVersion,
  tenantBinding,
  type SnapshotBody,
  type SnapshotCaps,
  type WireBody,
  type SnapshotHeader,
} from './format.js';

export type SnapshotErrorCode =
  | 'snapshot_invalid'
  | 'snapshot_version_unsupported'
  | 'snapshot_signature_invalid'
  | 'snapshot_digest_mismatch'
  | 'snapshot_model_mismatch'
  | 'snapshot_tenant_mismatch'
  | 'snapshot_too_large';

export class SnapshotError extends Error {
  constructor(
    readonly code: SnapshotErrorCode,
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'SnapshotError';
  }
}

const JWS_TYPE = 'engram-snapshot+jws';

export const EMPTY_BODY = (): SnapshotBody => ({ episodes: [], entities: [], facts: [], mentions: [] });

/** A sealed snapshot as JSON bytes, in pieces: written to a response or a PUT as is, never joined. */
export interface SealedSnapshot {
  header: SnapshotHeader & { signature: string };
  pieces: Buffer[];
  bytes: number;
}

const PIECE_BYTES = 256 * 1024;

/**
 * The body's canonical JSON in pieces, hashed as it is produced: the digest's bytes and the bytes
 * sent are the same bytes, made once. (Canonical JSON of an object is its sorted members, and of
 * an array its items joined by commas, so encoding item by item gives the same text.)
 */
function canonicalBodyPieces(body: WireBody): { pieces: Buffer[]; digest: string } {
  const hash = createHash('sha256');
  const pieces: Buffer[] = [];
  let pending: string[] = [];
  let pendingLength = 0;
  const emit = (text: string): void => {
    pending.push(text);
    pendingLength += text.length;
    if (pendingLength >= PIECE_BYTES) flush();
  };
  const flush = (): void => {
    if (pending.length === 0) return;
    const piece = Buffer.from(pending.join(''), 'utf8');
    hash.update(piece);
    pieces.push(piece);
    pending = [];
    pendingLength = 0;
  };
  const sections = Object.keys(body).sort() as (keyof WireBody)[];
  emit('{');
  sections.forEach((section, s) => {
    emit(`${s > 0 ? ',' : ''}${JSON.stringify(section)}:[`);
    (body[section] as unknown[]).forEach((item, i) => emit(`${i > 0 ? ',' : ''}${canonicalJson(item)}`));
    emit(']');
  });
  emit('}');
  flush();
  return { pieces, digest: `sha256:${hash.digest('hex')}` };
}

export async function sealSnapshot(
  input: { graphId: string; tenantId: string; embeddingModel: string; body: SnapshotBody; createdAt?: Date },
  keyset: SigningKeyset,
): Promise<SealedSnapshot> {
  const { pieces, digest } = canonicalBodyPieces(toWire(input.body));
  const header: SnapshotHeader = {
    format: SNAPSHOT_FORMAT,
    format_version: SNAPSHOT_FORMAT_VERSION,
    graph_id: input.graphId,
    tenant_binding: tenantBinding(input.tenantId),
    embedding_model: input.embeddingModel,
    created_at: (input.createdAt ?? new Date()).toISOString(),
    counts: countsOf(input.body),
    digest,
  };
  const key = activeKey(keyset);
  const privateKey = await importJWK(key.private_jwk, key.alg === 'Ed25519' ? 'EdDSA' : 'ES256');
  const signature = await new CompactSign(canonicalJsonBytes(header))
    .setProtectedHeader({ alg: key.alg === 'Ed25519' ? 'EdDSA' : 'ES256', kid: key.kid, typ: JWS_TYPE })
    .sign(privateKey);
  const sealed = { ...header, signature };
  const document = [Buffer.from('{"body":'), ...pieces, Buffer.from(`,${JSON.stringify(sealed).slice(1)}`)];
  return { header: sealed, pieces: document, bytes: document.reduce((sum, piece) => sum + piece.length, 0) };
}

export interface OpenContext {
  tenantId: string;
  embeddingModel: string;
  dimensions: number;
  caps: SnapshotCaps;
  keyset: SigningKeyset;
}

export interface OpenedSnapshot {
  graphId: string;
  body: SnapshotBody;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks a snapshot a client sent, in this order: shape of the header, format version, caps (on
 * array lengths, before any parsing work), signature over the header, tenant and model, then the
 * body's shape, its digest and every reference inside it. `{}` is the empty snapshot: a new graph.
 */
export async function openSnapshot(input: unknown, context: OpenContext, field = 'snapshot'): Promise<OpenedSnapshot> {
  if (!isObject(input)) throw new SnapshotError('snapshot_invalid', field, `${field} must be a JSON object`);
  if (Object.keys(input).length === 0) return { graphId: randomUUID(), body: EMPTY_BODY() };

  const header = headerSchema.safeParse(input);
  if (!header.success) {
    const issue = header.error.issues[0]!;
    const path = [field, ...issue.path.map(String)].join('.');
    throw new SnapshotError('snapshot_invalid', path, `${path}: ${issue.message}`);
  }
  const { major, minor } = parseVersion(header.data.format_version);
  if (major !== SNAPSHOT_MAJOR) {
    throw new SnapshotError(
      'snapshot_version_unsupported',
      `${field}.format_version`,
      `${field}.format_version ${header.data.format_version} is not supported (this service reads ${SNAPSHOT_MAJOR}.x)`,
    );
  }

  const body = header.data.body;
  const { caps } = context;
  const limits: ['episodes' | 'entities' | 'facts' | 'mentions', number][] = [
    ['episodes', caps.maxEpisodes],
    ['entities', caps.maxEntities],
    ['facts', caps.maxFacts],
    ['mentions', caps.maxMentions],
  ];
  for (const [name, cap] of limits) {
    const count = itemCount(body, name);
    if (count > cap) {
      throw new SnapshotError(
        'snapshot_too_large',
        `${field}.body.${name === 'mentions' ? 'episodes.*.mentions' : name}`,
        `${field}.body.${name} has ${count} items; the cap is ${cap}`,
      );
    }
  }

  await verifySignature(header.data.signature, input, context.keyset, field);
  if (header.data.tenant_binding !== tenantBinding(context.tenantId)) {
    throw new SnapshotError('snapshot_tenant_mismatch', `${field}.tenant_binding`, `${field} was made for another tenant`);
  }
  if (header.data.embedding_model !== context.embeddingModel) {
    throw new SnapshotError(
      'snapshot_model_mismatch',
      `${field}.embedding_model`,
      `${field}.embedding_model is ${header.data.embedding_model}; this service embeds with ${context.embeddingModel} and never mixes models`,
    );
  }

  const parsed = bodySchema(caps, minor <= SNAPSHOT_MINOR).safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = [field, 'body', ...issue.path.map(String)].join('.');
    const code = issue.code === 'too_big' && issue.origin === 'array' ? 'snapshot_too_large' : 'snapshot_invalid';
    throw new SnapshotError(
      code,
      path,
      `${path}: ${issue.code === 'unrecognized_keys' ? `unrecognized field(s) ${issue.keys.join(', ')}` : issue.message}`,
    );
  }
  // The digest covers the body as sent (unknown fields of a newer minor included).
  if (digestOf(body) !== header.data.digest) {
    throw new SnapshotError('snapshot_digest_mismatch', `${field}.body`, `${field}.body does not match its digest (changed or truncated)`);
  }
  const checked = parsed.data as WireBody;
  const issues = checkReferences(checked, context.dimensions);
  if (issues.length > 0) {
    const first = issues[0]!;
    throw new SnapshotError('snapshot_invalid', `${field}.${first.path}`, `${field}.${first.path}: ${first.issue}`);
  }
  return { graphId: header.data.graph_id, body: fromWire(checked) };
}

/**
 * Items of one kind as sent, counted on array lengths only (no parsing): mentions travel inside
 * their episodes on the wire, so theirs is the sum over the episodes.
 */
function itemCount(body: Record<string, unknown>, name: 'episodes' | 'entities' | 'facts' | 'mentions'): number {
  if (name !== 'mentions') return Array.isArray(body[name]) ? body[name].length : 0;
  const episodes = body.episodes;
  if (!Array.isArray(episodes)) return 0;
  let count = 0;
  for (const episode of episodes) {
    const rows = isObject(episode) ? episode.mentions : undefined;
    if (Array.isArray(rows)) count += rows.length;
  }
  return count;
}

async function verifySignature(jws: string, document: Record<string, unknown>, keyset: SigningKeyset, field: string): Promise<void> {
  const refuse = (why: string): never => {
    throw new SnapshotError('snapshot_signature_invalid', `${field}.signature`, `${field}.signature does not verify: ${why}`);
  };
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(jws, async (protectedHeader) => {
      if (protectedHeader.typ !== JWS_TYPE) refuse('not a snapshot signature');
      const entry = keyset.keys.find((key) => key.kid === protectedHeader.kid);
      if (!entry) return refuse('signed by a key this service does not know');
      const alg = entry.alg === 'Ed25519' ? 'EdDSA' : 'ES256';
      if (protectedHeader.alg !== alg) refuse(`algorithm ${String(protectedHeader.alg)} does not match the key`);
      const { d: _private, ...publicJwk } = entry.private_jwk as JWK;
      return importJWK(publicJwk, alg);
    }));
  } catch (error) {
    if (error instanceof SnapshotError) throw error;
    return refuse('the signature is malformed or forged');
  }
  let signed: Buffer;
  try {
    signed = canonicalJsonBytes(headerOf(document));
  } catch {
    return refuse('the header is not canonical JSON');
  }
  if (!Buffer.from(payload).equals(signed)) refuse('the header was changed after signing');
}
