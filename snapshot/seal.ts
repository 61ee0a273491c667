/**
 * Sealing (digest + signature) and opening (every check, cheapest first) of device snapshots.
 * Opening never returns part of a snapshot: it returns the whole body or throws a SnapshotError.
 */
import { createHash, randomUUID } from 'node:crypto';
import { CompactSign, compactVerify, importJWK, type JWK } from 'jose';
import { canonicalJsonBytes, canonicalJsonPieces } from '../core/canonical-json.js';
import { jsonTextDigest, type JsonTextDigest } from '../core/json-body.js';
import { activeKey, type SigningKeyset } from '../core/signing-keyset.js';
import { TimeSlicer } from '../core/time-slice.js';
import type { OpenedSnapshot, PreparedSnapshotCache } from './prepared-cache.js';
import {
  SNAPSHOT_FORMAT,
  SNAPSHOT_FORMAT_VERSION,
  KNOWN_MINORS,
  SNAPSHOT_MAJOR,
  bodySchema,
  bodySchemaById,
  checkReferences,
  parseBodyInSlices,
  countsOf,
  digestOf,
  headerOf,
  headerSchema,
  mentionRowBound,
  mentionRowCount,
  parseVersion,
  tenantBinding,
  type SnapshotBody,
  type SnapshotCaps,
  type WireBody,
  type WireBodyById,
  type SnapshotHeader,
} from './format.js';
import { fromWire, fromWireInSlices, resolveTargets, resolveTargetsInSlices, toWire, type SentMentions } from './wire.js';

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
  /** The body as sealed (wire form) and its canonical bytes: what opening it again would read. */
  wire: WireBody;
  bodyPieces: Buffer[];
  bodyBytes: number;
}

const PIECE_BYTES = 256 * 1024;
/** An episode of more chunks than this is made chunk by chunk; a smaller one, and any other item, is one piece. */
const CHUNKS_PER_PIECE = 16;

const manyChunks = (value: object): boolean => {
  const chunks = (value as { chunks?: unknown }).chunks;
  return Array.isArray(chunks) && chunks.length > CHUNKS_PER_PIECE;
};

/**
 * The body and its sections are opened item by item; an item only when it is an episode of many
 * chunks, and then down to its chunks. Opening every item field by field cost a call per field
 * (sealing a 3.5 MB body took ~29 ms of CPU instead of ~49, with the faster canonical writer), and
 * an item of a few chunks takes well under a slice.
 */
const worthOpening = (container: object, level: number): boolean =>
  level < 2 || (level === 2 ? manyChunks(container) : Array.isArray(container) && container.length > CHUNKS_PER_PIECE);

/**
 * The body's canonical JSON in pieces, hashed as it is produced: the digest's bytes and the bytes
 * sent are the same bytes, made once. It is made chunk by chunk (body, sections, items, an
 * episode's fields, its chunks), giving the event loop a turn whenever a slice is spent: a 2M-character
 * episode is megabytes of JSON, which in one stretch held every other request of the process.
 */
async function canonicalBodyPieces(body: WireBody, slicer: TimeSlicer): Promise<{ pieces: Buffer[]; digest: string }> {
  const hash = createHash('sha256');
  const pieces: Buffer[] = [];
  let pending: string[] = [];
  let pendingLength = 0;
  const flush = (): void => {
    if (pending.length === 0) return;
    const piece = Buffer.from(pending.join(''), 'utf8');
    hash.update(piece);
    pieces.push(piece);
    pending = [];
    pendingLength = 0;
  };
  // body > section > item > an episode's field > a chunk: the large ones opened (worthOpening).
  for (const text of canonicalJsonPieces(body, 4, worthOpening)) {
    pending.push(text);
    pendingLength += text.length;
    if (pendingLength >= PIECE_BYTES) flush();
    if (slicer.due()) await slicer.pause();
  }
  flush();
  return { pieces, digest: `sha256:${hash.digest('hex')}` };
}

export async function sealSnapshot(
  input: {
    graphId: string;
    tenantId: string;
    embeddingModel: string;
    body: SnapshotBody;
    createdAt?: Date;
    /** Mentions strings that can be sent again as they came (format.ts SentMentions). */
    sent?: SentMentions | undefined;
  },
  keyset: SigningKeyset,
): Promise<SealedSnapshot> {
  const slicer = new TimeSlicer();
  const wire = await toWire(input.body, slicer, input.sent);
  const { pieces, digest } = await canonicalBodyPieces(wire, slicer);
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
  return {
    header: sealed,
    pieces: document,
    bytes: document.reduce((sum, piece) => sum + piece.length, 0),
    wire,
    bodyPieces: pieces,
    bodyBytes: pieces.reduce((sum, piece) => sum + piece.length, 0),
  };
}

/**
 * What opening a snapshot this service just sealed gives, without opening it: a device create
 * keeps its answer prepared, since the client's next call usually sends it back. Its body and
 * bytes are worked out on that next call, not in the create (about 50 ms at 1,000 memories).
 */
export function openedOf(sealed: SealedSnapshot): OpenedSnapshot {
  let body: SnapshotBody | undefined;
  let bodySent: unknown;
  return {
    graphId: sealed.header.graph_id,
    snapshotId: snapshotIdOf(sealed.header.format_version, sealed.header.digest),
    bodyBytes: sealed.bodyBytes,
    get body(): SnapshotBody {
      return (body ??= fromWire(resolveTargets(sealed.wire).body));
    },
    // The same body, an episode at a time: a 2M-character episode's rows took ~105 ms in one stretch.
    ready: async (slicer: TimeSlicer): Promise<void> => {
      if (body) return;
      const resolved = await resolveTargetsInSlices(sealed.wire, true, slicer);
      body ??= await fromWireInSlices(resolved.body, slicer);
    },
    wire: sealed.wire,
    signed: { header: headerOf({ ...sealed.header }), signature: sealed.header.signature },
    // As a client sends it back: the canonical bytes, parsed (the wire object's keys are in another order).
    get bodySent(): unknown {
      return (bodySent ??= JSON.parse(Buffer.concat(sealed.bodyPieces).toString('utf8')));
    },
  };
}

/**
 * Whether two parsed JSON values have the same JSON text: the same values, object keys in the
 * same order. It stands for comparing JSON.stringify of both at a third of its cost (a 3.5 MB body:
 * ~3 ms of CPU against ~10), which every call on a prepared snapshot paid.
 */
export function sameJsonText(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index += 1) if (!sameJsonText(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  const others = Object.keys(b);
  if (keys.length !== others.length) return false;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (key !== others[index] || !sameJsonText((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** What a snapshot is cached under: its format version (which decides how strictly it was read) and digest. */
const snapshotIdOf = (formatVersion: string, digest: string): string => `${formatVersion} ${digest}`;

export interface OpenContext {
  tenantId: string;
  embeddingModel: string;
  dimensions: number;
  caps: SnapshotCaps;
  keyset: SigningKeyset;
  /** Snapshots already opened for this tenant, prepared (snapshot/prepared-cache.ts). */
  cache?: PreparedSnapshotCache;
  /** Where a long open gives the event loop its turns (default: a new TimeSlicer; a test counts them). */
  slicer?: TimeSlicer;
}

export type { OpenedSnapshot };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks a snapshot a client sent, in this order: shape of the header, format version, caps (on
 * array lengths, before any parsing work), signature over the header, tenant and model, then the
 * body's shape, its digest and every reference inside it. `{}` is the empty snapshot: a new graph.
 */
export async function openSnapshot(
  input: unknown,
  context: OpenContext,
  field = 'snapshot',
  /** The digest of JSON.stringify(input.body), when a worker thread worked it out (core/json-body.ts). */
  sent?: JsonTextDigest,
  /** The SHA-256 of the snapshot's exact bytes as the request carried them (core/json-span.ts), remembered once it opens. */
  spanDigest?: string,
): Promise<OpenedSnapshot> {
  if (!isObject(input)) throw new SnapshotError('snapshot_invalid', field, `${field} must be a JSON object`);
  if (Object.keys(input).length === 0) return { graphId: randomUUID(), snapshotId: null, body: EMPTY_BODY(), bodyBytes: 0 };

  const header = headerSchema.safeParse(input);
  if (!header.success) {
    const issue = header.error.issues[0]!;
    const path = [field, ...issue.path.map(String)].join('.');
    throw new SnapshotError('snapshot_invalid', path, `${path}: ${issue.message}`);
  }
  const { major, minor } = parseVersion(header.data.format_version);
  const knownMinor = KNOWN_MINORS.get(major);
  if (knownMinor === undefined) {
    throw new SnapshotError(
      'snapshot_version_unsupported',
      `${field}.format_version`,
      `${field}.format_version ${header.data.format_version} is not supported (this service reads ${[...KNOWN_MINORS.keys()].map((known) => `${known}.x`).join(' and ')}; it writes ${SNAPSHOT_MAJOR}.x)`,
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
    const count = itemCount(body, name, cap);
    if (count > cap) {
      throw new SnapshotError(
        'snapshot_too_large',
        `${field}.body.${name === 'mentions' ? 'episodes.*.mentions' : name}`,
        `${field}.body.${name} has ${count} items; the cap is ${cap}`,
      );
    }
  }

  await verifyHeader(header.data.signature, input, context, field);
  // Bytes sent again open to the entry they opened to now, when it was opened from this very header.
  const remember = (opened: OpenedSnapshot): OpenedSnapshot => {
    if (spanDigest !== undefined && opened.signed?.signature === header.data.signature)
      context.cache?.rememberSpan(context.tenantId, spanDigest, opened);
    return opened;
  };

  // Verified over the bytes once. The body as JSON.stringify writes it is its canonical JSON when
  // its keys came in canonical order, as they do in a snapshot handed back unchanged. A snapshot
  // already opened for this tenant under this version and digest keeps the body whose text hashed
  // to the digest then: a body with the same JSON text is the same body, used as prepared (no
  // hash, parse, check or index build again).
  const snapshotId = snapshotIdOf(header.data.format_version, header.data.digest);
  // With the digest of the text sent: it is the held body's text exactly when it is the signed digest
  // (the held one hashed to it), so neither body is walked.
  const prepared = context.cache?.lookup(context.tenantId, snapshotId, (held) =>
    sent ? sent.digest === header.data.digest : sameJsonText(held.bodySent, body),
  );
  if (prepared) {
    await prepared.ready?.(context.slicer ?? new TimeSlicer());
    return remember(prepared);
  }
  const asSent = sent ?? jsonTextDigest(body);
  const sentDigest = asSent.digest;

  const strict = minor <= knownMinor;
  // 1.x mentions name their targets by id; 2.x ones by index, resolved to ids for the checks (after the digest).
  // The checks and the flattening walk every row of a body of up to SNAPSHOT_MAX_BYTES: about 1.4 s
  // of CPU at 32 MiB in one stretch before they were sliced (docs/device-memory.md).
  const slicer = context.slicer ?? new TimeSlicer();
  const parsed = await parseBodyInSlices(major === 1 ? bodySchemaById(caps, strict) : bodySchema(caps, strict), body, slicer);
  if (!parsed.ok) {
    const { issue } = parsed;
    const path = [field, 'body', ...issue.path.map(String)].join('.');
    const code = issue.code === 'too_big' && issue.origin === 'array' ? 'snapshot_too_large' : 'snapshot_invalid';
    throw new SnapshotError(
      code,
      path,
      `${path}: ${issue.code === 'unrecognized_keys' ? `unrecognized field(s) ${issue.keys.join(', ')}` : issue.message}`,
    );
  }
  // Read strictly, the schema changes nothing (no defaults or transforms, and no unknown field to
  // drop: format.unit.test.ts checks), so the body as sent is what it validated, and zod's copy of
  // it is not kept with the snapshot (a second copy of the whole body, in every GC after it).
  const data = strict ? body : parsed.data;
  // The digest covers the body as sent (unknown fields of a newer minor included). Canonicalised
  // again only when the bytes as sent did not match (a client that reordered keys).
  if (sentDigest !== header.data.digest && digestOf(body) !== header.data.digest) {
    throw new SnapshotError('snapshot_digest_mismatch', `${field}.body`, `${field}.body does not match its digest (changed or truncated)`);
  }
  // 2.x mentions are decoded here (a row that does not decode is reported at its index); a row names
  // its target by index, so a problem with the target is reported there.
  const resolved =
    major === 1 ? { body: data as WireBodyById, issues: [] } : await resolveTargetsInSlices(data as WireBody, strict, slicer);
  const issues = [
    ...resolved.issues,
    ...(await checkReferences(resolved.body, context.dimensions, slicer)).map((found) =>
      major === 1 ? found : { ...found, path: found.path.replace(/\.target_id$/, '.target') },
    ),
  ];
  const checked = resolved.body;
  if (issues.length > 0) {
    const first = issues[0]!;
    throw new SnapshotError('snapshot_invalid', `${field}.${first.path}`, `${field}.${first.path}: ${first.issue}`);
  }
  const opened: OpenedSnapshot = {
    graphId: header.data.graph_id,
    snapshotId,
    body: await fromWireInSlices(checked, slicer),
    // In this service's own version, read strictly: a device create may send its mentions again as they are.
    ...(major === SNAPSHOT_MAJOR && strict ? { wire: data as WireBody } : {}),
    bodyBytes: asSent.bytes,
    // Kept only when its text is the bytes that were digested (a reordered body is never matched).
    ...(sentDigest === header.data.digest ? { bodySent: body } : {}),
    signed: { header: headerOf(input), signature: header.data.signature },
  };
  // A body that came reordered is not kept: it could never be matched again.
  if (opened.bodySent !== undefined) context.cache?.store(context.tenantId, opened);
  return remember(opened);
}

/**
 * A snapshot whose exact bytes this tenant's call opened before (the cache found them by their
 * digest: PreparedSnapshotCache.bySpan): the same bytes hold the same header and body, so only
 * what may have changed since is checked again — the signature against the keyset of the moment
 * (a key retired meanwhile), then tenant and model as openSnapshot checks them.
 */
export async function openPrepared(opened: OpenedSnapshot, context: OpenContext, field = 'snapshot'): Promise<OpenedSnapshot> {
  const signed = opened.signed;
  // Every snapshot kept prepared keeps its header (opened from a request, or sealed here).
  if (!signed) throw new Error('openPrepared: a prepared snapshot without its signed header');
  await verifyHeader(signed.signature, signed.header, context, field);
  await opened.ready?.(context.slicer ?? new TimeSlicer());
  return opened;
}

/** The signature over the header, then the tenant it was made for and the model it embeds with. */
async function verifyHeader(signature: string, document: Record<string, unknown>, context: OpenContext, field: string): Promise<void> {
  await verifySignature(signature, document, context.keyset, field);
  if (document.tenant_binding !== tenantBinding(context.tenantId)) {
    throw new SnapshotError('snapshot_tenant_mismatch', `${field}.tenant_binding`, `${field} was made for another tenant`);
  }
  if (document.embedding_model !== context.embeddingModel) {
    throw new SnapshotError(
      'snapshot_model_mismatch',
      `${field}.embedding_model`,
      `${field}.embedding_model is ${String(document.embedding_model)}; this service embeds with ${context.embeddingModel} and never mixes models`,
    );
  }
}

/**
 * Items of one kind as sent, counted on array lengths only (no parsing): mentions travel inside
 * their episodes on the wire, so theirs is the sum over the episodes. For 2.x mentions this is a
 * bound of the count when that bound is within the cap (it only decides "over the cap?").
 */
function itemCount(body: Record<string, unknown>, name: 'episodes' | 'entities' | 'facts' | 'mentions', cap: number): number {
  if (name !== 'mentions') return Array.isArray(body[name]) ? body[name].length : 0;
  const episodes = body.episodes;
  if (!Array.isArray(episodes)) return 0;
  const mentions = episodes.map((episode) => (isObject(episode) ? episode.mentions : undefined));
  // 2.x rows are counted only when their strings are long enough to hold more than the cap (every
  // call pays this before its signature is checked).
  let bound = 0;
  for (const rows of mentions) bound += typeof rows === 'string' ? mentionRowBound(rows.length) : mentionRowCount(rows);
  if (bound <= cap) return bound;
  return mentions.reduce<number>((count, rows) => count + mentionRowCount(rows), 0);
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
