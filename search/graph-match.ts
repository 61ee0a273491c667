/**
 * The graph signal of search over loaded graph partitions (search/graph-index.ts): how a matched
 * entity scores (entityScore), what the entities a query names lend the chunks that mention them
 * and their neighbours (matchGraph), and what the hits of a search mention (hitGraph).
 */
import type { GraphEntityInfo, GraphFactInfo, GraphMatch, GraphPartition, Support } from './graph-index.js';

/** Share of a matched entity's score that a neighbour reached through a fact gets. */
const NEIGHBOUR_SHARE = 0.5;
const MAX_MATCHED = 50;
/** Backing memories reported per shown target; a target backed only by memories past these is not shown under filters. */
export const SUPPORT_CAP = 200;

const categoryWeight = (category: string): number => (category === 'concept' ? 0.5 : 1);

/**
 * How much the specificity of a matched entity counts (the power it is raised to). Chosen by
 * leave-one-conversation-out on LoCoMo's development half (docs/search.md): with the graph's
 * fusion weight chosen too, four folds of five chose 3; at weight 1 the folds chose 3 to 6, with
 * MRR flat across them.
 */
export const ENTITY_SPECIFICITY_POWER = 3;

/**
 * How specific an entity is to the chunks that mention it, in (0, 1]: an IDF over the chunks of
 * its partition, ln(1 + N / df) / ln(1 + N), with df the chunks that mention the entity and N the
 * chunks that mention anything. An entity one chunk names scores 1; one named in every chunk (a
 * conversation's speaker) scores ln 2 / ln(1 + N), which falls as the collection grows; the "1 +"
 * keeps it above zero, so a collection of one chunk still ranks by what it names.
 */
export function entitySpecificity(chunksMentioning: number, chunksNamingAnything: number): number {
  if (chunksMentioning <= 0) return 1;
  const n = Math.max(chunksNamingAnything, chunksMentioning);
  return Math.log1p(n / chunksMentioning) / Math.log1p(n);
}

/**
 * A matched entity's score: its category's weight (concepts half), damped by how often it is
 * mentioned (`mentions`, the sum of its provenance counts) and by how many of the partition's
 * chunks mention it (entitySpecificity, raised to `specificityPower`). The mention damping alone
 * let a speaker named in most turns of a conversation lend a quarter of what a name said once lends
 * to every one of those turns; the specificity makes it lend well under one per cent of it.
 */
export function entityScore(
  category: string,
  mentions: number,
  chunksMentioning: number,
  chunksNamingAnything: number,
  specificityPower = ENTITY_SPECIFICITY_POWER,
): number {
  const specificity = entitySpecificity(chunksMentioning, chunksNamingAnything);
  return (categoryWeight(category) * specificity ** specificityPower) / (1 + Math.log1p(mentions));
}

export interface GraphMatchOptions {
  /** The power of an entity's specificity in its score (entityScore); the bench varies it. */
  specificityPower?: number;
}

/** What GraphPartition.collect adds a query's matches to. */
export interface MatchBuilder {
  matched: Map<string, { entity: GraphEntityInfo; weight: number; score: number; partition: GraphPartition }>;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Ties are broken by what the text says (name, category; a fact's description and predicate),
 * then by id. Ids are derived per scope (a collection, an imported copy, a snapshot grown from
 * `{}`), so the same graph in two storages must not rank equal scores by id first.
 */
const entityOrder = (a: GraphEntityInfo, b: GraphEntityInfo): number =>
  compareText(a.name, b.name) || compareText(a.category, b.category) || compareText(a.id, b.id);
const factOrder = (a: GraphFactInfo, b: GraphFactInfo): number =>
  compareText(a.description, b.description) || compareText(a.predicate, b.predicate) || compareText(a.id, b.id);

/**
 * The graph signal over the given partitions:
 *   - an entity the query names scores (1 for named things, 0.5 for concepts) × specificity³ /
 *     (1 + ln(1 + weight)), its specificity an IDF over the partition's chunks (entityScore);
 *   - a neighbour through a fact scores half that times the fact's confidence;
 *   - a fact touching a named entity scores the entity's score times its confidence;
 *   - a chunk's value is 1 − e^(−Σ scores of what it mentions);
 *   - a memory that mentions a named (non-concept) matched entity lends that entity's score to
 *     every chunk of it (episode proximity: conversations rarely repeat who they are about).
 */
export function matchGraph(partitions: GraphPartition[], keys: string[], options: GraphMatchOptions = {}): GraphMatch {
  const builder: MatchBuilder = { matched: new Map() };
  for (const partition of partitions) partition.collect(keys, builder, options.specificityPower);
  // The best MAX_MATCHED, ties broken by entityOrder: the same graph gives the same answer whatever
  // order it was loaded in (a collection's partition and a snapshot's are built in different orders).
  if (builder.matched.size > MAX_MATCHED) {
    const kept = [...builder.matched].sort(([, x], [, y]) => y.score - x.score || entityOrder(x.entity, y.entity)).slice(0, MAX_MATCHED);
    builder.matched = new Map(kept);
  }
  const empty: GraphMatch = { chunks: new Map(), episodes: new Map(), entities: [], relationships: [], support: new Map() };
  if (builder.matched.size === 0) return empty;

  const targetScore = new Map<string, { score: number; partition: GraphPartition }>();
  const relationships = new Map<string, GraphFactInfo & { score: number; weight: number }>();
  const neighbours = new Map<string, { entity: GraphEntityInfo; score: number; weight: number }>();
  for (const [id, { score, partition }] of builder.matched) targetScore.set(id, { score, partition });
  for (const { entity, score, partition } of builder.matched.values()) {
    for (const fact of partition.factsTouching(entity.id)) {
      const factScore = score * fact.confidence;
      const known = relationships.get(fact.id);
      if (!known || known.score < factScore) relationships.set(fact.id, { ...fact, score: factScore, weight: partition.weightOf(fact.id) });
      if ((targetScore.get(fact.id)?.score ?? 0) < factScore) targetScore.set(fact.id, { score: factScore, partition });
      const otherId = fact.subjectId === entity.id ? fact.objectId : fact.subjectId;
      if (builder.matched.has(otherId)) continue;
      const other = partition.entity(otherId);
      if (!other) continue;
      const neighbourScore = NEIGHBOUR_SHARE * factScore;
      if ((neighbours.get(otherId)?.score ?? 0) < neighbourScore) {
        neighbours.set(otherId, { entity: other, score: neighbourScore, weight: partition.weightOf(otherId) });
        targetScore.set(otherId, { score: neighbourScore, partition });
      }
    }
  }

  // One entry per chunk, its sum turned into the value in place: a search's chunk maps are large
  // (every chunk mentioning a matched entity or a neighbour), and a second map of the same keys
  // was most of what a device search allocated (bench/device-http-phase.ts, heap sampling).
  const chunks = new Map<string, { memoryId: string; value: number }>();
  for (const [id, { score, partition }] of targetScore) {
    partition.forEachChunkMentioning(id, (chunk, memoryId) => {
      const entry = chunks.get(chunk);
      if (entry) entry.value += score;
      else chunks.set(chunk, { memoryId, value: score });
    });
  }
  for (const entry of chunks.values()) entry.value = 1 - Math.exp(-entry.value);

  const episodes = new Map<string, number>();
  for (const { entity, score, partition } of builder.matched.values()) {
    if (entity.category === 'concept') continue;
    partition.forEachChunkMentioning(entity.id, (_chunk, memoryId) => {
      episodes.set(memoryId, Math.max(episodes.get(memoryId) ?? 0, score));
    });
  }

  const best = Math.max(...[...builder.matched.values()].map((entry) => entry.score));
  const entities = [
    ...[...builder.matched.values()].map(({ entity, score, weight }) => ({ ...entity, score: score / best, weight })),
    ...[...neighbours.values()].map(({ entity, score, weight }) => ({ ...entity, score: score / best, weight })),
  ]
    .sort((a, b) => b.score - a.score || b.weight - a.weight || entityOrder(a, b))
    .slice(0, 20);
  const shownRelationships = [...relationships.values()].sort((a, b) => b.score - a.score || factOrder(a, b)).slice(0, 20);
  const support = new Map<string, Support[]>();
  for (const { id } of [...entities, ...shownRelationships]) {
    const backing = partitions.flatMap((partition) => partition.support(id, SUPPORT_CAP));
    support.set(id, backing.slice(0, SUPPORT_CAP));
  }
  return { chunks, episodes, entities, relationships: shownRelationships, support };
}

/** How much each hit lends what it mentions: 1 / rank, so the top hits decide. */
const hitWeight = (rank: number): number => 1 / (rank + 1);

/**
 * The entities and facts the hits mention, ranked by relevance: each hit (best first) lends
 * 1 / rank to everything it mentions, scores are divided by the best, ties broken by weight and
 * text. Each target's support starts with the hits' memories (described in their words), so a
 * caller that keeps only targets backed by visible memories keeps these.
 */
export function hitGraph(partitions: GraphPartition[], hits: readonly { chunkId: string; memoryId: string }[]): GraphMatch {
  const relevance = new Map<string, { score: number; partition: GraphPartition; backers: Support[] }>();
  hits.forEach((hit, rank) => {
    for (const partition of partitions) {
      for (const id of partition.targetsOf(hit.chunkId) ?? []) {
        let entry = relevance.get(id);
        if (!entry) relevance.set(id, (entry = { score: 0, partition, backers: [] }));
        entry.score += hitWeight(rank);
        if (!entry.backers.some((backer) => backer.memoryId === hit.memoryId))
          entry.backers.push({ memoryId: hit.memoryId, description: partition.descriptionIn(id, hit.chunkId) });
      }
    }
  });
  const best = Math.max(0, ...[...relevance.values()].map((entry) => entry.score));
  const entities: GraphMatch['entities'] = [];
  const relationships: GraphMatch['relationships'] = [];
  for (const [id, { score, partition }] of relevance) {
    const entity = partition.entity(id);
    if (entity) entities.push({ ...entity, score: score / best, weight: partition.weightOf(id) });
    const fact = entity ? undefined : partition.fact(id);
    if (fact) relationships.push({ ...fact, score: score / best, weight: partition.weightOf(id) });
  }
  entities.sort((a, b) => b.score - a.score || b.weight - a.weight || entityOrder(a, b));
  relationships.sort((a, b) => b.score - a.score || b.weight - a.weight || factOrder(a, b));
  const shownEntities = entities.slice(0, 20);
  const shownRelationships = relationships.slice(0, 20);
  const support = new Map<string, Support[]>();
  for (const { id } of [...shownEntities, ...shownRelationships]) support.set(id, relevance.get(id)!.backers);
  return { chunks: new Map(), episodes: new Map(), entities: shownEntities, relationships: shownRelationships, support };
}
