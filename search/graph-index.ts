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
import { chunkId, indexOfChunk, isChunkOf, memoryOfChunk } from '../core/ids.js';
import { ENTITY_SPECIFICITY_POWER, entityScore, hitGraph, matchGraph, type MatchBuilder } from './graph-match.js';
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

/**
 * One chunk's provenance of a target: the memory's row itself while it is the chunk's only row of
 * that target (a cold load sets 138,000 rows at 100k chunks, and a copy of each was an object
 * more per row), or a merge of its rows. Never changed in place: the rows stay as the memory gave them.
 */
type ChunkProvenance = Pick<ProvenanceRow, 'count' | 'description' | 'validFrom' | 'validTo'>;

/** The chunk's provenance after one more row of the same target: counts summed, the first description and validity kept. */
const withRow = (known: ChunkProvenance | undefined, row: ProvenanceRow): ChunkProvenance =>
  known === undefined
    ? row
    : {
        count: known.count + row.count,
        description: known.description || row.description,
        validFrom: known.validFrom ?? null,
        validTo: known.validTo ?? null,
      };

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

/**
 * A graph partition's content (GraphPartition.exportState / fromState): the records it holds and
 * every memory's provenance rows, memories in the order they were set.
 */
export interface GraphState {
  entities: GraphEntityInfo[];
  facts: GraphFactInfo[];
  memories: { memoryId: string; rows: ProvenanceRow[] }[];
}

/**
 * The given chunk ids that are `chunkId(memoryId, index)` of their memory, by memory and index: a
 * bulk build keys its maps by these strings (already hashed by the other partitions) instead of
 * making 100,000 equal ones. An id of another form is left out (the build then makes its own).
 */
function chunkIdsByMemory(known: { chunkIds: readonly string[]; memoryIds: readonly string[] }): Map<string, string[]> {
  const byMemory = new Map<string, string[]>();
  for (let slot = 0; slot < known.chunkIds.length; slot++) {
    const id = known.chunkIds[slot]!;
    const memoryId = known.memoryIds[slot]!;
    // `${memoryId}:${index}`, the index in plain decimal digits (no sign, no leading zero).
    const from = memoryId.length + 1;
    if (id.length <= from || id.charCodeAt(from - 1) !== 58 || !id.startsWith(memoryId)) continue;
    if (id.length > from + 1 && id.charCodeAt(from) === 48) continue;
    let index = 0;
    let at = from;
    for (; at < id.length && at < from + 9; at++) {
      const digit = id.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) break;
      index = index * 10 + digit;
    }
    if (at !== id.length) continue;
    let ids = byMemory.get(memoryId);
    if (!ids) byMemory.set(memoryId, (ids = []));
    ids[index] = id;
  }
  return byMemory;
}

/** How many distinct chunks these rows of one memory name. */
function chunkCount(rows: readonly ProvenanceRow[]): number {
  return new Set(rows.map((row) => row.chunkIndex)).size;
}

/** Chunk index → the targets these rows of one memory name in it, each once, in row order. */
function targetsByChunk(rows: readonly ProvenanceRow[]): Map<number, string[]> {
  const byChunk = new Map<number, string[]>();
  for (const row of rows) {
    const named = byChunk.get(row.chunkIndex);
    if (!named) byChunk.set(row.chunkIndex, [row.targetId]);
    else if (!named.includes(row.targetId)) named.push(row.targetId);
  }
  return byChunk;
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
   * Memory id → chunk index → the entities and facts the chunk mentions, each once, in the order
   * first met: what the hits of a search are about. Made from the memory's rows the first time a
   * hit asks (targetsOf) and dropped when the memory changes: a cold load would otherwise make
   * 100,000 lists and a map of them for the few dozen chunks a search shows.
   */
  private readonly targetsOfMemory = new Map<string, Map<number, string[]>>();
  /** Chunks that mention at least one target (entityScore's count of chunks), kept as memories come and go. */
  private chunksWithTargets = 0;
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
  static fromState(state: GraphState, knownChunkIds?: { chunkIds: readonly string[]; memoryIds: readonly string[] }): GraphPartition {
    const partition = new GraphPartition();
    const entities = new Map(state.entities.map((entity) => [entity.id, entity]));
    const facts = new Map(state.facts.map((fact) => [fact.id, fact]));
    if (new Set(state.memories.map((memory) => memory.memoryId)).size === state.memories.length)
      for (const _ of partition.settingInBulk(state.memories, entities, facts, knownChunkIds && chunkIdsByMemory(knownChunkIds)));
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
    knownChunkIds?: ReadonlyMap<string, readonly string[]>,
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
      const knownIds = knownChunkIds?.get(memoryId);
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
        const id = (chunkIds[row.chunkIndex] ??= knownIds?.[row.chunkIndex] ?? chunkId(memoryId, row.chunkIndex));
        // A target's first row in this chunk needs no lookup of what the chunk said of it before.
        const named = chunkTargets[row.chunkIndex];
        if (!named) {
          chunkTargets[row.chunkIndex] = [row.targetId];
          this.chunksWithTargets++;
          target.chunks.set(id, row);
        } else if (!named.includes(row.targetId)) {
          named.push(row.targetId);
          target.chunks.set(id, row);
        } else target.chunks.set(id, withRow(target.chunks.get(id), row));
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

  /** A held fact's current record (its description), from the store. */
  refreshFact(fact: GraphFactInfo): void {
    if (!this.facts.has(fact.id)) return;
    this.putFact(fact);
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
    this.chunksWithTargets += chunkCount(kept);
  }

  /** Adds one row of a memory (its target put already) to the provenance and weights. */
  private addProvenance(id: string, row: ProvenanceRow): void {
    let chunks = this.provenance.get(row.targetId);
    if (!chunks) this.provenance.set(row.targetId, (chunks = new Map()));
    chunks.set(id, withRow(chunks.get(id), row));
    this.weights.set(row.targetId, (this.weights.get(row.targetId) ?? 0) + row.count);
  }

  removeMemory(memoryId: string): void {
    const rows = this.byMemory.get(memoryId);
    if (!rows) return;
    this.byMemory.delete(memoryId);
    this.targetsOfMemory.delete(memoryId);
    this.chunksWithTargets -= chunkCount(rows);
    this.timelineCache = null;
    for (const row of rows) {
      const chunks = this.provenance.get(row.targetId);
      chunks?.delete(chunkId(memoryId, row.chunkIndex));
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
        const score = entityScore(entity.category, weight, this.provenance.get(id)?.size ?? 1, this.chunksWithTargets, specificityPower);
        match.matched.set(id, { entity, weight, score, partition: this });
      }
    }
  }

  /** The entities and facts a chunk (`chunkId(memory, index)`) mentions, each once, in the order first met. */
  targetsOf(chunk: string): readonly string[] | undefined {
    const memoryId = memoryOfChunk(chunk);
    const rows = this.byMemory.get(memoryId);
    if (!rows) return undefined;
    let byChunk = this.targetsOfMemory.get(memoryId);
    if (!byChunk) this.targetsOfMemory.set(memoryId, (byChunk = targetsByChunk(rows)));
    return byChunk.get(indexOfChunk(chunk));
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
      validFrom: entry.validFrom ?? null,
      validTo: entry.validTo ?? null,
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
    const chunks = this.provenance.get(id);
    const byMemory = new Map<string, string>();
    if (!chunks) return [];
    // Keys, then a lookup: a Map's entry iterator makes an array per entry, and a widely mentioned
    // entity has thousands of chunks. A memory's chunks mostly follow each other, so its id is cut
    // out of a chunk id only when the chunk is not the previous memory's.
    let memoryId = '';
    for (const chunk of chunks.keys()) {
      if (!isChunkOf(chunk, memoryId)) memoryId = memoryOfChunk(chunk);
      if (!byMemory.get(memoryId)) byMemory.set(memoryId, chunks.get(chunk)!.description);
      if (byMemory.size >= cap) break;
    }
    const backers: Support[] = [];
    byMemory.forEach((description, memoryId) => backers.push({ memoryId, description }));
    return backers;
  }
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

  holdsFact(factId: string): boolean {
    return [...this.partitions.values()].some((partition) => partition.hasFact(factId));
  }

  /** Entities' current records into every partition that holds them. */
  refreshRecords(entities: readonly GraphEntityInfo[], facts: readonly GraphFactInfo[] = []): void {
    for (const partition of this.partitions.values()) {
      for (const entity of entities) partition.refreshEntity(entity);
      for (const fact of facts) partition.refreshFact(fact);
    }
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
