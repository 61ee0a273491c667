/**
 * The device-memory snapshot: a collection's graph state as one JSON document that a client keeps
 * and hands back. docs/device-memory.md is the contract across releases; this module is its code.
 *
 *   { format, format_version, graph_id, tenant_binding, embedding_model, created_at, counts,
 *     digest, body: { episodes (with their mentions), entities, facts }, signature }
 *
 * - `digest` is `sha256:<hex>` over the canonical JSON bytes (core/canonical-json.ts) of `body`,
 *   so any change or truncation of the body is caught.
 * - `signature` is a compact JWS (EdDSA, Ed25519) whose payload is the canonical JSON of every
 *   other top-level field (the header, digest included): the service signs what it made and
 *   verifies before it uses anything.
 * - Vectors are base64: entity name vectors int8 (a float32 scale, then one byte per dimension),
 *   chunk vectors float16 (two bytes per dimension, little-endian).
 * - Mentions travel inside their episodes. Since 2.0 an episode's mentions are one string of rows
 *   (encodeMentions), each naming its target by its index in the body's entities followed by its
 *   facts. 1.x sent a JSON object per row naming the target by id: half of a 1.1 snapshot's bytes,
 *   and most of the time a device call spent parsing and hashing it. Converting between that wire
 *   form and the body the service works on is snapshot/wire.ts.
 */
import { z } from 'zod';
import { canonicalJsonBytes } from '../core/canonical-json.js';
import { sha256Hex } from '../core/hash.js';
import { weightsOf } from '../core/graph-model.js';
import type { ChunkSource } from '../core/content-model.js';
import { metadataObject } from '../core/limits.js';
import { TimeSlicer } from '../core/time-slice.js';
import { decodeInt8, encodeFloat16, isBase64, isFloat16Vector } from './vectors.js';
import type { WireMentionById } from './mentions.js';

// The codecs live beside this module; what the snapshot code imports from here stays here.
export { decodeFloat16, decodeInt8, encodeFloat16, encodeInt8 } from './vectors.js';
export {
  decodeMentions,
  decodeMentionsInSlices,
  encodeMentions,
  mentionRowBound,
  mentionRowCount,
  type WireMention,
  type WireMentionById,
} from './mentions.js';

export const SNAPSHOT_FORMAT = 'engram.graph-snapshot';
// 1.1 added the optional validity of fact mentions (valid_from / valid_to). 2.0 names a mention's
// target by index instead of id and leaves chunk 0 out: a 1.x reader would misread that, so it is
// a new major (docs/device-memory.md, "Versions").
export const SNAPSHOT_MAJOR = 2;
export const SNAPSHOT_MINOR = 0;
export const SNAPSHOT_FORMAT_VERSION = `${SNAPSHOT_MAJOR}.${SNAPSHOT_MINOR}`;
/** The newest minor of each major this reader knows: read strictly up to it, a newer one with its unknown fields dropped. */
export const KNOWN_MINORS: ReadonlyMap<number, number> = new Map([
  [1, 1],
  [2, 0],
]);

export interface SnapshotChunk {
  index: number;
  text: string;
  /** Where in the episode's content the chunk came from (as memory records keep it). */
  source: Record<string, unknown>;
  /** float16 base64; null when the chunk was never embedded. */
  vector: string | null;
}

export interface SnapshotEpisode {
  id: string;
  kind: 'document' | 'conversation';
  name: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  chunks: SnapshotChunk[];
}

/**
 * A document a device create adds: its chunks in order, each with its vector (float16). Encoding
 * runs in slices with the event loop given a turn between them (core/time-slice.ts): a
 * 2M-character text has ~1,700 chunks, which in one stretch stalled every tenant's requests.
 */
export async function documentEpisode(
  id: string,
  metadata: Record<string, unknown>,
  createdAt: Date,
  planned: readonly { text: string; source: ChunkSource }[],
  vectors: readonly Float32Array[],
  slicer = new TimeSlicer(),
): Promise<SnapshotEpisode> {
  const chunks: SnapshotChunk[] = [];
  for (const [index, chunk] of planned.entries()) {
    chunks.push({ index, text: chunk.text, source: { ...chunk.source }, vector: encodeFloat16(vectors[index]!) });
    if (slicer.due()) await slicer.pause();
  }
  return { id, kind: 'document', name: null, metadata, created_at: createdAt.toISOString(), chunks };
}

export interface SnapshotEntity {
  id: string;
  key: string;
  name: string;
  category: string;
  aliases: string[];
  alias_keys: string[];
  description: string;
  /** Sum of the entity's mention counts (derived; checked against the mentions on input). */
  weight: number;
  /** int8 base64 (4-byte float32 scale + one byte per dimension), or null. */
  name_vector: string | null;
}

export interface SnapshotFact {
  id: string;
  subject_id: string;
  predicate: string;
  object_id: string;
  description: string;
  weight: number;
  confidence: number;
}

/** Provenance: which chunk of which episode names an entity or states a fact. */
export interface SnapshotMention {
  episode_id: string;
  chunk: number;
  target_id: string;
  kind: 'entity' | 'fact';
  count: number;
  confidence: number;
  /** What the episode says about the target (on the wire, often a span of the chunk text: WireMention). */
  description: string;
  /**
   * Fact mentions only (since 1.1): when the episode says the fact held, ISO 8601 (core/fact-timeline.ts).
   * null `valid_from`: an unknown start (an ending); null `valid_to`: no end stated; absent: not recorded.
   */
  valid_from?: string | null;
  valid_to?: string | null;
}

export type WireEpisode = SnapshotEpisode & { mentions: string };

/** The body as sent and digested: mentions grouped under their episodes. */
export interface WireBody {
  episodes: WireEpisode[];
  entities: SnapshotEntity[];
  facts: SnapshotFact[];
}

/** The body with its mentions' targets named by id: a 1.x body as sent, a 2.x one once resolved. */
export interface WireBodyById {
  episodes: (SnapshotEpisode & { mentions: WireMentionById[] })[];
  entities: SnapshotEntity[];
  facts: SnapshotFact[];
}

/** The body as the service works on it: one flat list of provenance rows, descriptions spelt out. */
export interface SnapshotBody {
  episodes: SnapshotEpisode[];
  entities: SnapshotEntity[];
  facts: SnapshotFact[];
  mentions: SnapshotMention[];
}

export interface SnapshotCounts {
  episodes: number;
  chunks: number;
  entities: number;
  facts: number;
  mentions: number;
}

export interface SnapshotHeader {
  format: string;
  format_version: string;
  /** The id scope of the graph's entity and fact ids (the source collection's id, or a fresh uuid). */
  graph_id: string;
  /** Binds the snapshot to the tenant that made it, without naming the tenant. */
  tenant_binding: string;
  embedding_model: string;
  created_at: string;
  counts: SnapshotCounts;
  digest: string;
}

export interface SnapshotDocument extends SnapshotHeader {
  body: SnapshotBody;
  signature: string;
}

/** Configured caps, checked before any work on a snapshot starts. */
export interface SnapshotCaps {
  maxEpisodes: number;
  maxEntities: number;
  maxFacts: number;
  maxMentions: number;
  maxChunks: number;
}

/** Each counted cap, with the setting that configures it (named in every refusal). */
const CAPPED = [
  ['episodes', 'maxEpisodes', 'SNAPSHOT_MAX_EPISODES'],
  ['entities', 'maxEntities', 'SNAPSHOT_MAX_ENTITIES'],
  ['facts', 'maxFacts', 'SNAPSHOT_MAX_FACTS'],
  ['mentions', 'maxMentions', 'SNAPSHOT_MAX_MENTIONS'],
] as const;

export interface CapExcess {
  what: 'episodes' | 'entities' | 'facts' | 'mentions';
  count: number;
  cap: number;
  setting: string;
}

/** The first count above its cap, or null: one rule for opening, exporting and creating. */
export function capExceeded(
  counts: Pick<SnapshotCounts, 'episodes' | 'entities' | 'facts' | 'mentions'>,
  caps: SnapshotCaps,
): CapExcess | null {
  for (const [what, key, setting] of CAPPED) {
    if (counts[what] > caps[key]) return { what, count: counts[what], cap: caps[key], setting };
  }
  return null;
}

export const tenantBinding = (tenantId: string): string =>
  Buffer.from(sha256Hex(`engram-snapshot-tenant\n${tenantId}`), 'hex')
    .subarray(0, 16)
    .toString('base64url');

export const countsOf = (body: SnapshotBody): SnapshotCounts => ({
  episodes: body.episodes.length,
  chunks: body.episodes.reduce((sum, episode) => sum + episode.chunks.length, 0),
  entities: body.entities.length,
  facts: body.facts.length,
  mentions: body.mentions.length,
});

export const digestOf = (body: unknown): string => `sha256:${sha256Hex(canonicalJsonBytes(body))}`;

/** The signed part: every top-level field but `body` and `signature`. */
export function headerOf(document: Record<string, unknown>): Record<string, unknown> {
  const header: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(document)) if (key !== 'body' && key !== 'signature') header[key] = value;
  return header;
}

// ---- input validation -------------------------------------------------------------------------

const id = z.string().min(1).max(64);
const text = (max: number) => z.string().max(max);
const finite = z.number().refine(Number.isFinite, 'must be a finite number');
const base64 = z
  .string()
  .max(1 << 16)
  .refine(isBase64, 'must be base64');

/**
 * The body's shape. Our own minor (or an older one) is parsed strictly: an unknown field is an
 * error. A newer minor may add fields: they are verified by the digest as sent, then dropped here
 * (zod's default strip), so nothing this service does not understand is carried into a snapshot it
 * re-seals in its own version (docs/device-memory.md, "Versions").
 */
export const bodySchema = (caps: SnapshotCaps, strict: boolean) => bodyShape(caps, strict, z.string());

/** A 1.x body: every mention a JSON object with its chunk and its target's id. */
export const bodySchemaById = (caps: SnapshotCaps, strict: boolean) => {
  const object = <T extends z.ZodRawShape>(shape: T) => (strict ? z.strictObject(shape) : z.object(shape));
  return bodyShape(
    caps,
    strict,
    z
      .array(
        object({
          chunk: z.number().int().min(0),
          target_id: id,
          count: z.number().int().min(1).optional(),
          confidence: finite.min(0).max(1).optional(),
          description: text(10_000).optional(),
          span: z.tuple([z.number().int().min(0), z.number().int().min(0)]).optional(),
          valid_from: z.iso.datetime({ offset: true }).nullable().optional(),
          valid_to: z.iso.datetime({ offset: true }).nullable().optional(),
        }),
      )
      .max(caps.maxMentions, `at most ${caps.maxMentions} mentions`),
  );
};

/** A body schema's first issue, its path from the body, or the parsed body. */
export type BodyParse = { ok: true; data: unknown } | { ok: false; issue: z.core.$ZodIssue };

const SECTIONS = ['episodes', 'entities', 'facts'] as const;

/**
 * `schema.safeParse(body)` in slices (core/time-slice.ts): the body with its sections empty first
 * (its own fields: unknown or missing ones, a section that is not an array), then each section
 * an item at a time. The caps on section lengths were checked before (openSnapshot), so they are
 * not checked again here. A body of up to SNAPSHOT_MAX_BYTES took about 0.2 s of CPU to parse in
 * one stretch.
 */
export async function parseBodyInSlices(
  schema: ReturnType<typeof bodySchema> | ReturnType<typeof bodySchemaById>,
  body: unknown,
  slicer: TimeSlicer,
): Promise<BodyParse> {
  const whole = (): BodyParse => {
    const parsed = schema.safeParse(body);
    return parsed.success ? { ok: true, data: parsed.data } : { ok: false, issue: parsed.error.issues[0]! };
  };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return whole();
  const sections = body as Record<string, unknown>;
  if (SECTIONS.some((section) => !Array.isArray(sections[section]))) return whole();
  const shell = schema.safeParse({ ...sections, episodes: [], entities: [], facts: [] });
  if (!shell.success) return { ok: false, issue: shell.error.issues[0]! };
  const data: Record<string, unknown> = { ...shell.data };
  for (const section of SECTIONS) {
    const element = (schema.shape[section] as z.ZodArray<z.ZodType>).element;
    const items: unknown[] = [];
    for (const [index, item] of (sections[section] as unknown[]).entries()) {
      if (slicer.due()) await slicer.pause();
      const parsed = element.safeParse(item);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return { ok: false, issue: { ...issue, path: [section, index, ...issue.path] } };
      }
      items.push(parsed.data);
    }
    data[section] = items;
  }
  return { ok: true, data };
}

function bodyShape<Mentions extends z.ZodType>(caps: SnapshotCaps, strict: boolean, mentions: Mentions) {
  const object = <T extends z.ZodRawShape>(shape: T) => (strict ? z.strictObject(shape) : z.object(shape));
  return object({
    episodes: z
      .array(
        object({
          id: z.uuid(),
          kind: z.enum(['document', 'conversation']),
          name: text(256).nullable(),
          metadata: metadataObject,
          created_at: z.iso.datetime({ offset: true }),
          chunks: z
            .array(
              object({
                index: z.number().int().min(0),
                text: text(2_000_000),
                source: object({
                  type: z.enum(['text', 'chunk', 'message', 'file']),
                  role: text(64).optional(),
                  message_index: z.number().int().min(0).optional(),
                  start: z.number().int().min(0).optional(),
                  end: z.number().int().min(0).optional(),
                  file_index: z.number().int().min(0).optional(),
                  filename: text(255).optional(),
                  media_type: text(255).optional(),
                  page: z.number().int().min(0).optional(),
                  start_s: finite.optional(),
                  end_s: finite.optional(),
                  heading: text(1000).optional(),
                  method: text(32).optional(),
                }),
                vector: base64.nullable(),
              }),
            )
            .max(caps.maxChunks),
          mentions,
        }),
      )
      .max(caps.maxEpisodes, `at most ${caps.maxEpisodes} episodes`),
    entities: z
      .array(
        object({
          id,
          key: text(512).min(1),
          name: text(512).min(1),
          category: text(64).min(1),
          aliases: z.array(text(512)).max(1000),
          alias_keys: z.array(text(512).min(1)).min(1).max(1000),
          description: text(10_000),
          weight: finite.min(0),
          name_vector: base64.nullable(),
        }),
      )
      .max(caps.maxEntities, `at most ${caps.maxEntities} entities`),
    facts: z
      .array(
        object({
          id,
          subject_id: id,
          predicate: text(256).min(1),
          object_id: id,
          description: text(10_000),
          weight: finite.min(0),
          confidence: finite.min(0).max(1),
        }),
      )
      .max(caps.maxFacts, `at most ${caps.maxFacts} facts`),
  });
}

export const headerSchema = z.looseObject({
  format: z.literal(SNAPSHOT_FORMAT, { error: `format must be "${SNAPSHOT_FORMAT}"` }),
  format_version: z.string().regex(/^\d{1,4}\.\d{1,4}$/, 'format_version must be major.minor'),
  graph_id: z.uuid(),
  tenant_binding: z.string().min(1).max(64),
  embedding_model: z.string().min(1).max(256),
  created_at: z.iso.datetime({ offset: true }),
  counts: z.looseObject({
    episodes: z.number().int().min(0),
    chunks: z.number().int().min(0),
    entities: z.number().int().min(0),
    facts: z.number().int().min(0),
    mentions: z.number().int().min(0),
  }),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'digest must be sha256:<64 hex digits>'),
  body: z.looseObject({}),
  signature: z.string().min(1).max(4096),
});

export const parseVersion = (version: string): { major: number; minor: number } => {
  const [major, minor] = version.split('.').map(Number);
  return { major: major!, minor: minor! };
};

/** A problem with a snapshot's content, at a path inside it. */
export interface SnapshotIssue {
  path: string;
  issue: string;
}

/**
 * Every reference resolves, every id is unique, every vector decodes to the model's dimensions
 * with finite components, weights agree with the mentions. Returns the first problems found.
 */
export async function checkReferences(body: WireBodyById, dimensions: number, slicer = new TimeSlicer()): Promise<SnapshotIssue[]> {
  const issues: SnapshotIssue[] = [];
  const add = (path: string, issue: string): void => {
    if (issues.length < 20) issues.push({ path, issue });
  };
  const entities = new Set<string>();
  const keys = new Set<string>();
  for (const [i, entity] of body.entities.entries()) {
    if (slicer.due()) await slicer.pause();
    if (entities.has(entity.id)) add(`body.entities.${i}.id`, `duplicate entity id ${entity.id}`);
    entities.add(entity.id);
    if (keys.has(entity.key)) add(`body.entities.${i}.key`, `duplicate entity key ${entity.key}`);
    keys.add(entity.key);
    if (entity.name_vector !== null && !decodeInt8(entity.name_vector, dimensions)) {
      add(`body.entities.${i}.name_vector`, `must be a ${dimensions}-dimension int8 vector with a finite scale`);
    }
  }
  const facts = new Set<string>();
  for (const [i, fact] of body.facts.entries()) {
    if (slicer.due()) await slicer.pause();
    if (facts.has(fact.id) || entities.has(fact.id)) add(`body.facts.${i}.id`, `duplicate id ${fact.id}`);
    facts.add(fact.id);
    if (!entities.has(fact.subject_id)) add(`body.facts.${i}.subject_id`, `no entity ${fact.subject_id}`);
    if (!entities.has(fact.object_id)) add(`body.facts.${i}.object_id`, `no entity ${fact.object_id}`);
  }
  const episodes = new Set<string>();
  for (const [e, episode] of body.episodes.entries()) {
    if (slicer.due()) await slicer.pause();
    if (episodes.has(episode.id)) add(`body.episodes.${e}.id`, `duplicate episode id ${episode.id}`);
    episodes.add(episode.id);
    const lengths = new Map<number, number>();
    episode.chunks.forEach((chunk, c) => {
      if (lengths.has(chunk.index)) add(`body.episodes.${e}.chunks.${c}.index`, `duplicate chunk index ${chunk.index}`);
      lengths.set(chunk.index, chunk.text.length);
      if (chunk.vector !== null && !isFloat16Vector(chunk.vector, dimensions)) {
        add(`body.episodes.${e}.chunks.${c}.vector`, `must be ${dimensions} finite float16 values`);
      }
    });
    // Chunk → the targets its rows name (a string key per row cost more than these checks' other work).
    const named = new Map<number, Set<string>>();
    // The path is written only for a row with a problem (writing it for every row was a tenth of these checks).
    const path = (m: number, field = ''): string => `body.episodes.${e}.mentions.${m}${field}`;
    const { mentions } = episode;
    for (let m = 0; m < mentions.length; m++) {
      const mention = mentions[m]!;
      const target = mention.target_id;
      const isEntity = entities.has(target);
      const length = lengths.get(mention.chunk);
      if (length === undefined) add(path(m, '.chunk'), `episode ${episode.id} has no chunk ${mention.chunk}`);
      else if (mention.span && (mention.span[0] > mention.span[1] || mention.span[1] > length))
        add(path(m, '.span'), 'must lie within the chunk text');
      if ((mention.description === undefined) === (mention.span === undefined))
        add(path(m, '.description'), 'exactly one of description and span is required');
      if (!isEntity && !facts.has(target))
        add(path(m, '.target_id'), target ? `no entity or fact ${target}` : 'no entity or fact at that index');
      if (isEntity && (mention.valid_from !== undefined || mention.valid_to !== undefined))
        add(path(m, '.valid_from'), 'validity belongs to fact mentions only');
      if (mention.valid_from && mention.valid_to && Date.parse(mention.valid_from) > Date.parse(mention.valid_to))
        add(path(m, '.valid_to'), 'must not be before valid_from');
      let targets = named.get(mention.chunk);
      if (!targets) named.set(mention.chunk, (targets = new Set()));
      if (targets.has(target)) add(path(m), 'duplicate provenance row');
      targets.add(target);
    }
  }
  if (slicer.due()) await slicer.pause();
  const weights = weightsOf(body.episodes.flatMap((episode) => episode.mentions));
  for (const [i, target] of [...body.entities.entries(), ...body.facts.entries()]) {
    const kind = 'key' in target ? 'entities' : 'facts';
    if (!weights.has(target.id)) add(`body.${kind}.${i}`, `${target.id} has no mentions (every entity and fact needs provenance)`);
    else if (weights.get(target.id) !== target.weight) {
      add(`body.${kind}.${i}.weight`, `must equal the sum of its mentions' counts (${weights.get(target.id) ?? 0})`);
    }
  }
  return issues;
}
