/**
 * This process's copy of the collections' graphs, for the graph signal of search. MongoDB holds
 * the graph (store/graph.ts); this index mirrors it per loaded collection and follows the same
 * index-change feed as the vector and lexical indexes, so a search reads no graph collection at
 * all. (Reading them per query cost 50–120 ms on the stand-in at 1,200 chunks.)
 *
 * A memory's contribution is its provenance rows: replaced whole when the memory changes, removed
 * when it goes. Weights are the sums of those rows, kept as they change; a target whose weight
 * falls to zero leaves the index, as it leaves the store.
 */
import { chunkId } from '../core/ids.js';
import type { NewFact } from '../core/graph-model.js';
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import { factTimelines, type FactTimeline, type TimelineFact } from '../core/fact-timeline.js';
import { PartitionedIndex } from './partitioned-index.js';
import type { TimeSlicer } from '../core/time-slice.js';

export interface GraphEntityInfo {
  id: string;
  name: string;
  category: string;
  description: string;
  aliasKeys: string[];
}

/** A fact as the index holds it: the same shape the graph builder writes. */
export type GraphFactInfo = NewFact;

/** An entity as the index holds it, from a stored record (a collection's or a snapshot's). */
export const graphEntityInfo = (entity: {
  id: string;
  name: string;
  category: string;
  description: string;
  alias_keys: string[];
}): GraphEntityInfo => ({
  id: entity.id,
  name: entity.name,
  category: entity.category,
  description: entity.description,
  aliasKeys: entity.alias_keys,
});

/** A fact as the index holds it, from a stored record (a collection's or a snapshot's). */
export const graphFactInfo = (fact: {
  id: string;
  subject_id: string;
  object_id: string;
  predicate: string;
  description: string;
  confidence: number;
}): GraphFactInfo => ({
  id: fact.id,
  subjectId: fact.subject_id,
  objectId: fact.object_id,
  predicate: fact.predicate,
  description: fact.description,
  confidence: fact.confidence,
});

export interface ProvenanceRow {
  targetId: string;
  chunkIndex: number;
  count: number;
  /** What the row's memory says about the target ('' for rows stored before descriptions were kept). */
  description: string;
  /** Facts: when the row's memory says the fact held (absent on rows stored before validity existed). */
  validFrom?: Date | null;
  validTo?: Date | null;
}

/** One chunk's provenance of a target. */
interface ChunkProvenance {
  count: number;
  description: string;
  validFrom: Date | null;
  validTo: Date | null;
}

/** A memory that backs a target, with what it says about it. */
export interface Support {
  memoryId: string;
  description: string;
}

export interface GraphMatch {
  /** Chunk id → memory id and graph value in [0, 1). */
  chunks: Map<string, { memoryId: string; value: number }>;
  /** Memory id → the score its named entities lend every one of its chunks. */
  episodes: Map<string, number>;
  entities: (GraphEntityInfo & { score: number; weight: number })[];
  relationships: (GraphFactInfo & { score: number; weight: number })[];
  /**
   * Target id (entity or fact shown) → the memories backing it, up to SUPPORT_CAP: the caller keeps
   * only targets a visible memory backs, and describes them with that memory's words.
   */
  support: Map<string, Support[]>;
}

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

/**
 * A graph partition's content (GraphPartition.exportState / fromState): the records it holds and
 * every memory's provenance rows, memories in the order they were set.
 */
export interface GraphState {
  entities: GraphEntityInfo[];
  facts: GraphFactInfo[];
  memories: { memoryId: string; rows: ProvenanceRow[] }[];
}

export class GraphPartition {
  private readonly entities = new Map<string, GraphEntityInfo>();
  private readonly byAlias = new Map<string, Set<string>>();
  private readonly facts = new Map<string, GraphFactInfo>();
  private readonly factsOf = new Map<string, Set<string>>();
  private readonly weights = new Map<string, number>();
  /** Target id → chunk id → mentions in that chunk and what its memory says about the target. */
  private readonly provenance = new Map<string, Map<string, ChunkProvenance>>();
  private readonly byMemory = new Map<string, ProvenanceRow[]>();
  /**
   * Chunk id → the entities and facts it mentions, each once, in the order first met: what the
   * hits of a search are about. Arrays, not Sets: a chunk names a few, and a 100k-chunk load makes
   * one per chunk.
   */
  private readonly targetsOfChunk = new Map<string, string[]>();
  /** Subject id → its facts' timelines, for one classifier; dropped whenever a memory changes. */
  private timelineCache: { classifier: PredicateClassifier; bySubject: Map<string, Map<string, FactTimeline>> } | null = null;

  /** What fromState needs to build this partition again (the rows' records are current). */
  exportState(): GraphState {
    return {
      entities: [...this.entities.values()],
      facts: [...this.facts.values()],
      memories: [...this.byMemory].map(([memoryId, rows]) => ({ memoryId, rows })),
    };
  }

  /**
   * A partition as setting `state`'s memories in their order builds it: the same maps, weights and
   * provenance as the partition exportState was taken of, since each memory is set by the same
   * rule (setMemory), with the records the partition held.
   */
  static fromState(state: GraphState): GraphPartition {
    const partition = new GraphPartition();
    const entities = new Map(state.entities.map((entity) => [entity.id, entity]));
    const facts = new Map(state.facts.map((fact) => [fact.id, fact]));
    if (new Set(state.memories.map((memory) => memory.memoryId)).size === state.memories.length)
      for (const _ of partition.settingInBulk(state.memories, entities, facts));
    else for (const { memoryId, rows } of state.memories) partition.setMemory(memoryId, rows, entities, facts);
    return partition;
  }

  /**
   * The partition of these distinct memories, set in order, built as `fromState` builds it, in
   * slices (core/time-slice.ts): a device snapshot's graph (snapshot/snapshot-graph.ts). Setting
   * its memories one by one (setMemory) put every row's entity again and was half of a first
   * device search on a 1,000-memory snapshot.
   */
  static async ofMemoriesInSlices(
    memories: GraphState['memories'],
    entities: ReadonlyMap<string, GraphEntityInfo>,
    facts: ReadonlyMap<string, GraphFactInfo>,
    slicer: TimeSlicer,
  ): Promise<GraphPartition> {
    const partition = new GraphPartition();
    for (const _ of partition.settingInBulk(memories, entities, facts)) if (slicer.due()) await slicer.pause();
    return partition;
  }

  /**
   * What setMemory of each of these (distinct, new) memories in order leaves, with less work per
   * row (a cold load sets 138,000 rows at 100k chunks): one lookup of the row's target, whose
   * record is put, provenance map made and weight summed the first time it is met (the weights
   * stored at the end), and a memory's chunk ids and their target lists made once. The maps end in
   * the order setMemory leaves them: targets, chunks and weights at their first row, and an
   * entity's place among the ids of an alias key at its last row (setMemory puts it again at each
   * row, which moves it to the end). Weights are summed in row order, as setMemory sums them.
   */
  private *settingInBulk(
    memories: GraphState['memories'],
    entities: ReadonlyMap<string, GraphEntityInfo>,
    facts: ReadonlyMap<string, GraphFactInfo>,
  ): Generator<void> {
    const targets = new Map<
      string,
      { entity: GraphEntityInfo | undefined; chunks: Map<string, ChunkProvenance>; weight: number; lastRow: number }
    >();
    let entityRows = 0;
    const chunkIds: string[] = [];
    const chunkTargets: string[][] = [];
    for (const { memoryId, rows } of memories) {
      if (rows.length === 0) continue;
      chunkIds.length = 0;
      chunkTargets.length = 0;
      const kept: ProvenanceRow[] = [];
      for (const row of rows) {
        let target = targets.get(row.targetId);
        if (!target) {
          const entity = entities.get(row.targetId);
          const fact = entity ? undefined : facts.get(row.targetId);
          if (entity) this.entities.set(entity.id, entity);
          else if (fact) this.putFact(fact);
          else continue;
          target = { entity, chunks: new Map(), weight: 0, lastRow: 0 };
          targets.set(row.targetId, target);
          this.provenance.set(row.targetId, target.chunks);
        }
        if (target.entity) target.lastRow = entityRows++;
        kept.push(row);
        target.weight += row.count;
        const id = (chunkIds[row.chunkIndex] ??= chunkId(memoryId, row.chunkIndex));
        const known = target.chunks.get(id);
        if (known) {
          known.count += row.count;
          if (!known.description) known.description = row.description;
        } else
          target.chunks.set(id, {
            count: row.count,
            description: row.description,
            validFrom: row.validFrom ?? null,
            validTo: row.validTo ?? null,
          });
        const named = chunkTargets[row.chunkIndex];
        if (!named) this.targetsOfChunk.set(id, (chunkTargets[row.chunkIndex] = [row.targetId]));
        else if (!named.includes(row.targetId)) named.push(row.targetId);
      }
      this.byMemory.set(memoryId, kept);
      yield;
    }
    const named: { entity: GraphEntityInfo; lastRow: number }[] = [];
    for (const [id, target] of targets) {
      this.weights.set(id, target.weight);
      if (target.entity) named.push({ entity: target.entity, lastRow: target.lastRow });
    }
    // Alias keys' ids in the order of their entities' last rows, as repeated puts leave them.
    named.sort((a, b) => a.lastRow - b.lastRow);
    for (const { entity } of named) this.addAliases(entity);
    this.timelineCache = null;
  }

  get entityCount(): number {
    return this.entities.size;
  }

  get factCount(): number {
    return this.facts.size;
  }

  hasMemory(memoryId: string): boolean {
    return this.byMemory.has(memoryId);
  }

  /** The entities the memory's provenance names here. */
  entityIdsOf(memoryId: string): string[] {
    return (this.byMemory.get(memoryId) ?? []).map((row) => row.targetId).filter((id) => this.entities.has(id));
  }

  /** Takes an entity's current record (its names may have changed), if this partition holds it. */
  refreshEntity(entity: GraphEntityInfo): void {
    if (!this.entities.has(entity.id)) return;
    this.putEntity(entity);
    this.timelineCache = null;
  }

  /**
   * Replaces the memory's provenance. `entities` and `facts` hold the current records of what the
   * rows name (and may hold more); a row whose record is missing (deleted meanwhile) is skipped.
   */
  setMemory(
    memoryId: string,
    rows: ProvenanceRow[],
    entities: ReadonlyMap<string, GraphEntityInfo>,
    facts: ReadonlyMap<string, GraphFactInfo>,
  ): void {
    this.removeMemory(memoryId);
    this.timelineCache = null;
    if (rows.length === 0) return;
    const kept: ProvenanceRow[] = [];
    for (const row of rows) {
      const entity = entities.get(row.targetId);
      const fact = entity ? undefined : facts.get(row.targetId);
      if (entity) this.putEntity(entity);
      else if (fact) this.putFact(fact);
      else continue;
      kept.push(row);
      this.addProvenance(chunkId(memoryId, row.chunkIndex), row);
    }
    this.byMemory.set(memoryId, kept);
  }

  /** Adds one row of a memory (its target put already) to the provenance, chunk targets and weights. */
  private addProvenance(id: string, row: ProvenanceRow): void {
    let chunks = this.provenance.get(row.targetId);
    if (!chunks) this.provenance.set(row.targetId, (chunks = new Map()));
    const known = chunks.get(id);
    if (known) known.count += row.count;
    else chunks.set(id, { count: row.count, description: row.description, validFrom: row.validFrom ?? null, validTo: row.validTo ?? null });
    if (known && !known.description) known.description = row.description;
    const targets = this.targetsOfChunk.get(id);
    if (!targets) this.targetsOfChunk.set(id, [row.targetId]);
    else if (!targets.includes(row.targetId)) targets.push(row.targetId);
    this.weights.set(row.targetId, (this.weights.get(row.targetId) ?? 0) + row.count);
  }

  removeMemory(memoryId: string): void {
    const rows = this.byMemory.get(memoryId);
    if (!rows) return;
    this.byMemory.delete(memoryId);
    this.timelineCache = null;
    for (const row of rows) {
      const chunks = this.provenance.get(row.targetId);
      chunks?.delete(chunkId(memoryId, row.chunkIndex));
      this.targetsOfChunk.delete(chunkId(memoryId, row.chunkIndex));
      const weight = (this.weights.get(row.targetId) ?? 0) - row.count;
      if (weight > 0 && chunks && chunks.size > 0) {
        this.weights.set(row.targetId, weight);
        continue;
      }
      this.weights.delete(row.targetId);
      this.provenance.delete(row.targetId);
      this.dropTarget(row.targetId);
    }
  }

  private putEntity(entity: GraphEntityInfo): void {
    const previous = this.entities.get(entity.id);
    if (previous) for (const key of previous.aliasKeys) this.byAlias.get(key)?.delete(entity.id);
    this.entities.set(entity.id, entity);
    this.addAliases(entity);
  }

  private addAliases(entity: GraphEntityInfo): void {
    for (const key of entity.aliasKeys) {
      let ids = this.byAlias.get(key);
      if (!ids) this.byAlias.set(key, (ids = new Set()));
      ids.add(entity.id);
    }
  }

  private putFact(fact: GraphFactInfo): void {
    this.facts.set(fact.id, fact);
    for (const end of [fact.subjectId, fact.objectId]) {
      let ids = this.factsOf.get(end);
      if (!ids) this.factsOf.set(end, (ids = new Set()));
      ids.add(fact.id);
    }
  }

  private dropTarget(id: string): void {
    const entity = this.entities.get(id);
    if (entity) {
      this.entities.delete(id);
      for (const key of entity.aliasKeys) {
        const ids = this.byAlias.get(key);
        ids?.delete(id);
        if (ids?.size === 0) this.byAlias.delete(key);
      }
      return;
    }
    const fact = this.facts.get(id);
    if (!fact) return;
    this.facts.delete(id);
    for (const end of [fact.subjectId, fact.objectId]) {
      const ids = this.factsOf.get(end);
      ids?.delete(id);
      if (ids?.size === 0) this.factsOf.delete(end);
    }
  }

  /**
   * Adds what this partition knows about the query's keys into `match`. The counts entityScore
   * reads are the sizes of maps kept as memories come and go (provenance per target, targets per
   * chunk), so they are current after every add and delete and cost nothing to read.
   */
  collect(keys: string[], match: MatchBuilder, specificityPower = ENTITY_SPECIFICITY_POWER): void {
    for (const key of keys) {
      for (const id of this.byAlias.get(key) ?? []) {
        const entity = this.entities.get(id);
        if (!entity) continue;
        const weight = this.weights.get(id) ?? 1;
        const score = entityScore(entity.category, weight, this.provenance.get(id)?.size ?? 1, this.targetsOfChunk.size, specificityPower);
        match.matched.set(id, { entity, weight, score, partition: this });
      }
    }
  }

  /** The entities and facts a chunk mentions. */
  targetsOf(chunk: string): readonly string[] | undefined {
    return this.targetsOfChunk.get(chunk);
  }

  fact(id: string): GraphFactInfo | undefined {
    return this.facts.get(id);
  }

  /** What this partition's provenance of `chunk` says about a target (its sentence), or ''. */
  descriptionIn(id: string, chunk: string): string {
    return this.provenance.get(id)?.get(chunk)?.description ?? '';
  }

  factsTouching(entityId: string): GraphFactInfo[] {
    const ids = this.factsOf.get(entityId);
    if (!ids) return [];
    return [...ids].map((id) => this.facts.get(id)).filter((fact): fact is GraphFactInfo => fact !== undefined);
  }

  entity(id: string): GraphEntityInfo | undefined {
    return this.entities.get(id);
  }

  weightOf(id: string): number {
    return this.weights.get(id) ?? 0;
  }

  chunksMentioning(id: string): ReadonlyMap<string, unknown> | undefined {
    return this.provenance.get(id);
  }

  hasFact(id: string): boolean {
    return this.facts.has(id);
  }

  /**
   * Validity timelines of these facts (core/fact-timeline.ts), each replayed over every fact its
   * subject has here. Cached per subject until a memory of the partition changes.
   */
  timelines(factIds: readonly string[], classifier: PredicateClassifier): Map<string, FactTimeline> {
    if (this.timelineCache?.classifier !== classifier) this.timelineCache = { classifier, bySubject: new Map() };
    const cache = this.timelineCache.bySubject;
    const result = new Map<string, FactTimeline>();
    for (const id of factIds) {
      const fact = this.facts.get(id);
      if (!fact) continue;
      let subjectTimelines = cache.get(fact.subjectId);
      if (!subjectTimelines) {
        subjectTimelines = factTimelines(this.timelineFactsOf(fact.subjectId), classifier);
        cache.set(fact.subjectId, subjectTimelines);
      }
      const timeline = subjectTimelines.get(id);
      if (timeline) result.set(id, timeline);
    }
    return result;
  }

  /** Every fact of a subject here, with its rows' validity: what a timeline replays. */
  timelineFactsOf(subjectId: string): TimelineFact[] {
    return this.factsTouching(subjectId)
      .filter((fact) => fact.subjectId === subjectId)
      .map((fact) => this.timelineFact(fact));
  }

  private timelineFact(fact: GraphFactInfo): TimelineFact {
    const rows = [...(this.provenance.get(fact.id) ?? [])].map(([chunk, entry]) => ({
      memoryId: memoryOfChunk(chunk),
      validFrom: entry.validFrom,
      validTo: entry.validTo,
    }));
    return {
      id: fact.id,
      subjectId: fact.subjectId,
      objectId: fact.objectId,
      predicate: fact.predicate,
      objectKey: this.entities.get(fact.objectId)?.aliasKeys.join(' ') ?? '',
      rows,
    };
  }

  /** The memories backing a target (one entry per memory, up to `cap`), with their descriptions of it. */
  support(id: string, cap: number): Support[] {
    const byMemory = new Map<string, string>();
    for (const [chunk, { description }] of this.provenance.get(id) ?? []) {
      const memoryId = memoryOfChunk(chunk);
      if (!byMemory.get(memoryId)) byMemory.set(memoryId, description);
      if (byMemory.size >= cap) break;
    }
    return [...byMemory].map(([memoryId, description]) => ({ memoryId, description }));
  }
}

interface MatchBuilder {
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

const memoryOfChunk = (id: string): string => id.slice(0, id.lastIndexOf(':'));

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

  const sums = new Map<string, number>();
  for (const [id, { score, partition }] of targetScore) {
    for (const [chunk] of partition.chunksMentioning(id) ?? []) sums.set(chunk, (sums.get(chunk) ?? 0) + score);
  }
  const chunks = new Map<string, { memoryId: string; value: number }>();
  for (const [chunk, sum] of sums) chunks.set(chunk, { memoryId: memoryOfChunk(chunk), value: 1 - Math.exp(-sum) });

  const episodes = new Map<string, number>();
  for (const { entity, score, partition } of builder.matched.values()) {
    if (entity.category === 'concept') continue;
    for (const [chunk] of partition.chunksMentioning(entity.id) ?? []) {
      const memoryId = memoryOfChunk(chunk);
      episodes.set(memoryId, Math.max(episodes.get(memoryId) ?? 0, score));
    }
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

export class GraphIndex extends PartitionedIndex<GraphPartition> {
  createPartition(collectionId: string): GraphPartition {
    const partition = new GraphPartition();
    this.partitions.set(collectionId, partition);
    return partition;
  }

  /** The entities the memory's provenance names in any partition. */
  entityIdsOf(memoryId: string): string[] {
    return [...new Set([...this.partitions.values()].flatMap((partition) => partition.entityIdsOf(memoryId)))];
  }

  holdsEntity(entityId: string): boolean {
    return [...this.partitions.values()].some((partition) => partition.entity(entityId) !== undefined);
  }

  /** Entities' current records into every partition that holds them. */
  refreshEntities(entities: readonly GraphEntityInfo[]): void {
    for (const partition of this.partitions.values()) for (const entity of entities) partition.refreshEntity(entity);
  }

  /** Puts a partition built elsewhere (GraphPartition.fromState) in place of any the collection had. */
  setPartition(collectionId: string, partition: GraphPartition): void {
    this.partitions.set(collectionId, partition);
  }

  /** Validity timelines of facts in these collections' partitions (see GraphPartition.timelines). */
  timelines(collectionIds: string[], factIds: readonly string[], classifier: PredicateClassifier): Map<string, FactTimeline> {
    const result = new Map<string, FactTimeline>();
    for (const partition of this.partitionsOf(collectionIds)) {
      const own = factIds.filter((factId) => !result.has(factId) && partition.hasFact(factId));
      for (const [factId, timeline] of partition.timelines(own, classifier)) result.set(factId, timeline);
    }
    return result;
  }

  match(collectionIds: string[], keys: string[]): GraphMatch {
    return matchGraph(this.partitionsOf(collectionIds), keys);
  }

  /** What the hits mention (hitGraph), from the loaded partitions. */
  hits(collectionIds: string[], hits: readonly { chunkId: string; memoryId: string }[]): GraphMatch {
    return hitGraph(this.partitionsOf(collectionIds), hits);
  }
}
