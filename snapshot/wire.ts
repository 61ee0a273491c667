/**
 * The snapshot body's wire form (snapshot/format.ts has the document and its checks): a client's
 * body with each episode's mentions as one string of rows naming targets by index, resolved to
 * rows naming them by id for the checks, flattened to the body the service works on, and encoded
 * back, sending unchanged episodes' rows as the client sent them.
 */
import { TimeSlicer } from '../core/time-slice.js';
import type { SnapshotBody, SnapshotEpisode, SnapshotIssue, SnapshotMention, WireBody, WireBodyById, WireEpisode } from './format.js';
import { decodeMentions, decodeMentionsInSlices, encodeMentionRow, type WireMention, type WireMentionById } from './mentions.js';

/**
 * A 2.x body's mentions decoded, with their targets named by id (and chunk 0 spelt out), as the
 * checks read them. An index past the targets names no id (''), which checkReferences refuses. A
 * row that does not decode is an issue at `body.episodes.<e>.mentions.<row>`.
 */
export function resolveTargets(body: WireBody, strict = true): { body: WireBodyById; issues: SnapshotIssue[] } {
  const targets = targetIdsOf(body);
  const issues: SnapshotIssue[] = [];
  const episodes = body.episodes.map((episode, e) => resolveEpisode(episode, e, targets, strict, issues));
  return { body: { episodes, entities: body.entities, facts: body.facts }, issues };
}

/** `resolveTargets` for a body a client sent (megabytes): an episode at a time, in slices (core/time-slice.ts). */
export async function resolveTargetsInSlices(
  body: WireBody,
  strict: boolean,
  slicer: TimeSlicer,
): Promise<{ body: WireBodyById; issues: SnapshotIssue[] }> {
  const targets = targetIdsOf(body);
  const issues: SnapshotIssue[] = [];
  const episodes: WireBodyById['episodes'] = [];
  for (const [e, episode] of body.episodes.entries()) {
    if (slicer.due()) await slicer.pause();
    // Row by row too: one episode of a 2M-character text holds tens of thousands of rows.
    episodes.push(resolvedEpisode(episode, e, await decodeMentionsInSlices(episode.mentions, strict, slicer), targets, issues));
  }
  return { body: { episodes, entities: body.entities, facts: body.facts }, issues };
}

const targetIdsOf = (body: WireBody): string[] => [...body.entities.map((entity) => entity.id), ...body.facts.map((fact) => fact.id)];

function resolveEpisode(
  episode: WireEpisode,
  e: number,
  targets: readonly string[],
  strict: boolean,
  issues: SnapshotIssue[],
): WireBodyById['episodes'][number] {
  return resolvedEpisode(episode, e, decodeMentions(episode.mentions, strict), targets, issues);
}

function resolvedEpisode(
  episode: WireEpisode,
  e: number,
  decoded: ReturnType<typeof decodeMentions>,
  targets: readonly string[],
  issues: SnapshotIssue[],
): WireBodyById['episodes'][number] {
  if ('issue' in decoded) issues.push({ path: `body.episodes.${e}.mentions.${decoded.row}`, issue: decoded.issue });
  const rows = 'rows' in decoded ? decoded.rows : [];
  return {
    ...episode,
    mentions: rows.map((row) => {
      // Field by field (a rest pattern per row was a fifth of resolving them).
      const resolved: WireMentionById = { chunk: row.chunk ?? 0, target_id: targets[row.target] ?? '' };
      if (row.span !== undefined) resolved.span = row.span;
      if (row.description !== undefined) resolved.description = row.description;
      if (row.count !== undefined) resolved.count = row.count;
      if (row.confidence !== undefined) resolved.confidence = row.confidence;
      if (row.valid_from !== undefined) resolved.valid_from = row.valid_from;
      if (row.valid_to !== undefined) resolved.valid_to = row.valid_to;
      return resolved;
    }),
  };
}

/** The wire body as the service works on it (references already checked): flat rows, descriptions spelt out. */
export function fromWire(body: WireBodyById): SnapshotBody {
  const entityIds = new Set(body.entities.map((entity) => entity.id));
  const mentions: SnapshotMention[] = [];
  const episodes = body.episodes.map((episode) => flattenEpisode(episode, entityIds, mentions));
  return { episodes, entities: body.entities, facts: body.facts, mentions };
}

/**
 * Episodes' mentions strings as a client sent them, in this service's own version (read strictly,
 * so nothing unknown is in them), for episodes whose rows are unchanged since: toWire sends them as
 * they are, only renumbering targets that moved. Re-encoding the ~30k rows of a 1,000-memory
 * snapshot was most of what a device create spent on its encoding.
 */
export interface SentMentions {
  /** Episode id → its mentions string, each row's target an index into `targetIds`. */
  byEpisode: ReadonlyMap<string, string>;
  targetIds: readonly string[];
}

/** `fromWire` for a body a client sent: an episode at a time, in slices (core/time-slice.ts). */
export async function fromWireInSlices(body: WireBodyById, slicer: TimeSlicer): Promise<SnapshotBody> {
  const entityIds = new Set(body.entities.map((entity) => entity.id));
  const mentions: SnapshotMention[] = [];
  const episodes: SnapshotEpisode[] = [];
  for (const episode of body.episodes) {
    if (slicer.due()) await slicer.pause();
    episodes.push(flattenEpisode(episode, entityIds, mentions));
  }
  return { episodes, entities: body.entities, facts: body.facts, mentions };
}

/** One episode without its rows, which go to `mentions` flat, descriptions spelt out. */
function flattenEpisode(
  { mentions: rows, ...episode }: WireBodyById['episodes'][number],
  entityIds: ReadonlySet<string>,
  mentions: SnapshotMention[],
): SnapshotEpisode {
  const texts = new Map(episode.chunks.map((chunk) => [chunk.index, chunk.text]));
  for (const row of rows) {
    const mention: SnapshotMention = {
      episode_id: episode.id,
      chunk: row.chunk,
      target_id: row.target_id,
      kind: entityIds.has(row.target_id) ? 'entity' : 'fact',
      count: row.count ?? 1,
      confidence: row.confidence ?? 1,
      description: row.span ? texts.get(row.chunk)!.slice(row.span[0], row.span[1]) : (row.description ?? ''),
    };
    // Only those it has (absent stays absent: "not recorded"), set, not spread: this runs per row.
    if (row.valid_from !== undefined) mention.valid_from = row.valid_from;
    if (row.valid_to !== undefined) mention.valid_to = row.valid_to;
    mentions.push(mention);
  }
  return episode;
}

/** The compact form that is sealed and sent (see WireMention). */
export async function toWire(body: SnapshotBody, slicer = new TimeSlicer(), sent?: SentMentions): Promise<WireBody> {
  const targets = new Map<string, number>();
  const ids = [...body.entities.map((entity) => entity.id), ...body.facts.map((fact) => fact.id)];
  ids.forEach((id, index) => targets.set(id, targets.get(id) ?? index));
  // Each episode's rows, encoded as they are made (a 2M-character episode has tens of thousands),
  // with the event loop given a turn whenever a slice is spent (core/time-slice.ts).
  const byEpisode = new Map<string, string[]>();
  const texts = new Map<string, Map<number, string>>();
  for (const episode of body.episodes) texts.set(episode.id, new Map(episode.chunks.map((chunk) => [chunk.index, chunk.text])));
  // Rows come grouped by episode: its texts and rows are looked up once per run of its rows.
  let episodeId: string | undefined;
  let episodeTexts: Map<number, string> | undefined;
  let rows: string[] = [];
  let reused = false;
  const { mentions } = body;
  for (let index = 0; index < mentions.length; index += 1) {
    // The clock is read every 256 rows: read per row, it was a tenth of a device create's CPU.
    if ((index & 255) === 0 && slicer.due()) await slicer.pause();
    const mention = mentions[index]!;
    if (mention.episode_id !== episodeId) {
      episodeId = mention.episode_id;
      reused = sent?.byEpisode.has(episodeId) ?? false;
      episodeTexts = texts.get(episodeId);
      const known = byEpisode.get(episodeId);
      if (known) rows = known;
      else byEpisode.set(episodeId, (rows = []));
    }
    if (reused) continue;
    const text = episodeTexts?.get(mention.chunk) ?? '';
    const description = mention.description ?? '';
    const at = description ? text.indexOf(description) : -1;
    // A dangling target (never in a body this service built) is sent past the targets, which no reader accepts.
    const row: WireMention = { target: targets.get(mention.target_id) ?? ids.length };
    if (mention.chunk !== 0) row.chunk = mention.chunk;
    if (mention.count !== 1) row.count = mention.count;
    if (mention.confidence !== 1) row.confidence = mention.confidence;
    if (at >= 0) row.span = [at, at + description.length];
    else row.description = description;
    if (mention.valid_from !== undefined) row.valid_from = mention.valid_from;
    if (mention.valid_to !== undefined) row.valid_to = mention.valid_to;
    rows.push(encodeMentionRow(row));
  }
  const renumber = sent ? renumbering(sent.targetIds, targets, ids.length) : null;
  return {
    episodes: body.episodes.map((episode) => {
      const sentRows = sent?.byEpisode.get(episode.id);
      const encoded = sentRows !== undefined ? renumber!(sentRows) : (byEpisode.get(episode.id) ?? []).join(';');
      return { ...episode, mentions: encoded };
    }),
    entities: body.entities,
    facts: body.facts,
  };
}

/** Rewrites a mentions string's targets from the indexes of `before` to those of `after` (as they are when none moved). */
function renumbering(before: readonly string[], after: ReadonlyMap<string, number>, dangling: number): (rows: string) => string {
  const moved = before.map((id) => after.get(id) ?? dangling);
  if (moved.every((index, old) => index === old)) return (rows) => rows;
  return (rows) =>
    rows === ''
      ? rows
      : rows
          .split(';')
          .map((row) => {
            // A row starts with its target; descriptions escape "," and ";" (mentions.ts).
            const comma = row.indexOf(',');
            const end = comma < 0 ? row.length : comma;
            return `${moved[Number(row.slice(0, end))] ?? dangling}${row.slice(end)}`;
          })
          .join(';');
}
