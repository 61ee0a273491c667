/**
 * This process's copy of the collections' graphs, for the graph signal of search. MongoDB holds
 * the graph (store/graph.ts); this index mirrors it per loaded collection and follows the same
 * index-change feed as the vector and lexical indexes, so a search reads no graph collection at
 * all. (Reading them per query cost 50–120 ms on the stand-in at 1,200 chunks.)
 *
 * A memory's contribution is its provenance rows: replaced whole when the memory changes, removed
 * when it goes. Weights are the sums of those rows, kept as they change; a target no chunk names
 * any more leaves the index, as it leaves the store.
 */
import { chunkId, indexOfChunk, memoryOfChunk } from '../core/ids.js';
import { PairSet } from './pair-set.js';
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

/** What one chunk of a memory names: each target once, in row order, with the index of its first row there. */
interface ChunkTargets {
  targets: string[];
  firstRows: number[];
}

/** Chunk index → what these rows of one memory name in it. */
function targetsByChunk(rows: readonly ProvenanceRow[]): Map<number, ChunkTargets> {
  const byChunk = new Map<number, ChunkTargets>();
  rows.forEach((row, at) => {
    const named = byChunk.get(row.chunkIndex);
    if (!named) byChunk.set(row.chunkIndex, { targets: [row.targetId], firstRows: [at] });
    else if (!named.targets.includes(row.targetId)) {
      named.targets.push(row.targetId);
      named.firstRows.push(at);
    }
  });
  return byChunk;
}

/**
 * When the partition packs its live mentions and memories afresh (compact): once this many
 * mentions have left (their memory removed or set again) and they outnumber the live ones, or as
 * many memory slots have, so that reads never walk mostly dead entries.
 */
const COMPACT_AFTER_DEAD = 4096;

/**
 * One collection's graph as search reads it. Targets (the entities and facts rows name) and
 * memories have integer slots, and a target's mentions (one per chunk of a memory that names it:
 * the memory's slot and the index of its first row there) are integers too: those of the last
 * build in packed typed arrays (a cold load sets 138,000 rows at 100k chunks, and a map of chunk
 * ids per target was 40,000 maps and a quarter of the load's CPU), later ones in a list per
 * target. A memory set again gets a new slot, so mentions stay in the order their memories were
 * set; those of memories that left are skipped as they are read, until enough have left to pack
 * the live ones again.
 *
 * A (target, chunk) with several rows of one memory is read as one: its first row's validity, the
 * first description that says something, the counts summed into the target's weight. A target
 * leaves when no chunk names it any more (row counts are at least 1: store/graph.ts, snapshot/format.ts).
 */
export class GraphPartition {
  private readonly entities = new Map<string, GraphEntityInfo>();
  private readonly byAlias = new Map<string, Set<string>>();
  private readonly facts = new Map<string, GraphFactInfo>();
  private readonly factsOf = new Map<string, Set<string>>();

  /** Target id → slot; a target that leaves and comes back gets a new slot. */
  private readonly targetSlots = new Map<string, number>();
  private targetIds: (string | undefined)[] = [];
  /** Per target slot: the sum of its rows' counts. */
  private weights: number[] = [];
  /** Per target slot: the chunks that name it (entityScore's count). */
  private chunkCounts: number[] = [];
  /** Packed mentions: target slot t's are [packedStart[t], packedStart[t + 1]) of packedMemory and packedRow. */
  private packedStart = new Int32Array(1);
  private packedMemory = new Int32Array(0);
  private packedRow = new Int32Array(0);
  /** Per target slot: mentions added since the last pack, as memory slot, row index, memory slot, ... */
  private addedMentions: (number[] | undefined)[] = [];
  private liveMentions = 0;
  private deadMentions = 0;
  private deadMemories = 0;

  /** Memory id → slot, in the order memories were set. */
  private readonly memorySlots = new Map<string, number>();
  private memoryIds: string[] = [];
  /** Per memory slot: the rows kept (those whose target had a record); undefined once the memory left. */
  private memoryRows: (ProvenanceRow[] | undefined)[] = [];
  /** Per memory slot: its chunks' ids, made once (or given by a bulk build) and shared by every search. */
  private memoryChunkIds: (string[] | undefined)[] = [];
  /** Per memory slot: how many mentions it added. */
  private memoryMentions: number[] = [];
  private readonly seen = new PairSet();
  /**
   * Memory id → chunk index → the entities and facts the chunk mentions, each once, in the order
   * first met: what the hits of a search are about. Made from the memory's rows the first time a
   * hit asks (targetsOf) and dropped when the memory changes: a cold load would otherwise make
   * 100,000 lists and a map of them for the few dozen chunks a search shows.
   */
  private readonly targetsOfMemory = new Map<string, Map<number, ChunkTargets>>();
  /** Chunks that mention at least one target (entityScore's count of chunks), kept as memories come and go. */
  private chunksWithTargets = 0;
  /** Subject id → its facts' timelines, for one classifier; dropped whenever a memory changes. */
  private timelineCache: { classifier: PredicateClassifier; bySubject: Map<string, Map<string, FactTimeline>> } | null = null;

  /** What fromState needs to build this partition again (the rows' records are current). */
  exportState(): GraphState {
    // The map's order is the slots' (a memory set again was deleted from it first).
    const memories = [...this.memorySlots].map(([memoryId, slot]) => ({ memoryId, rows: this.memoryRows[slot]! }));
    return { entities: [...this.entities.values()], facts: [...this.facts.values()], memories };
  }

  /**
   * A partition as setting `state`'s memories in their order builds it: the same targets, weights
   * and mentions as the partition exportState was taken of, since each memory is set by the same
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
   * What setMemory of each of these (distinct, new) memories in order leaves on an empty partition,
   * with less work per row: a target's record is put the first time it is met, and the mentions
   * are packed once at the end. The maps end in the order setMemory leaves them: records at their
   * first row, and an entity's place among the ids of an alias key at its last row (setMemory puts
   * it again at each row, which moves it to the end).
   */
  private *settingInBulk(
    memories: GraphState['memories'],
    entities: ReadonlyMap<string, GraphEntityInfo>,
    facts: ReadonlyMap<string, GraphFactInfo>,
    knownChunkIds?: ReadonlyMap<string, string[]>,
  ): Generator<void> {
    /** Per entity's slot: the place of its last row among all entities' rows (other slots: holes). */
    const lastEntityRow: number[] = [];
    let entityRows = 0;
    const mentions: number[] = [];
    const held = (row: ProvenanceRow): number | undefined => {
      let slot = this.targetSlots.get(row.targetId);
      if (slot === undefined) {
        const entity = entities.get(row.targetId);
        const fact = entity ? undefined : facts.get(row.targetId);
        if (entity) this.entities.set(entity.id, entity);
        else if (fact) this.putFact(fact);
        else return undefined;
        slot = this.newTarget(row.targetId);
        if (entity) lastEntityRow[slot] = 0;
      }
      if (lastEntityRow[slot] !== undefined) lastEntityRow[slot] = entityRows++;
      return slot;
    };
    for (const { memoryId, rows } of memories) {
      if (rows.length === 0) continue;
      const memory = this.takeRows(memoryId, rows, held, (target, slot, row) => mentions.push(target, slot, row));
      const known = knownChunkIds?.get(memoryId);
      if (known) this.memoryChunkIds[memory] = known;
      yield;
    }
    this.pack(mentions);
    const named: number[] = [];
    lastEntityRow.forEach((_, slot) => named.push(slot));
    // Alias keys' ids in the order of their entities' last rows, as repeated puts leave them.
    named.sort((a, b) => lastEntityRow[a]! - lastEntityRow[b]!);
    for (const slot of named) this.addAliases(this.entities.get(this.targetIds[slot]!)!);
    this.timelineCache = null;
  }

  private newTarget(id: string): number {
    const slot = this.targetIds.push(id) - 1;
    this.targetSlots.set(id, slot);
    this.weights.push(0);
    this.chunkCounts.push(0);
    this.addedMentions.push(undefined);
    return slot;
  }

  /**
   * Sets a memory not held from its rows: `held` gives the slot of a row's target (putting its
   * record) or undefined to skip the row; weights and chunk counts are added, and `mention` gets
   * each (target, chunk)'s first row. Returns the memory's slot.
   */
  private takeRows(
    memoryId: string,
    rows: readonly ProvenanceRow[],
    held: (row: ProvenanceRow) => number | undefined,
    mention: (target: number, memory: number, row: number) => void,
  ): number {
    const memory = this.memoryIds.push(memoryId) - 1;
    this.memorySlots.set(memoryId, memory);
    const kept: ProvenanceRow[] = [];
    let mentions = 0;
    this.seen.clear(rows.length * 2);
    for (const row of rows) {
      const target = held(row);
      if (target === undefined) continue;
      const at = kept.push(row) - 1;
      this.weights[target]! += row.count;
      if (this.seen.add(target, row.chunkIndex)) {
        this.chunkCounts[target]!++;
        mention(target, memory, at);
        mentions++;
      }
      // Slot -1: the chunk itself, counted once among the chunks that name something.
      if (this.seen.add(-1, row.chunkIndex)) this.chunksWithTargets++;
    }
    this.memoryRows.push(kept);
    this.memoryChunkIds.push(undefined);
    this.memoryMentions.push(mentions);
    this.liveMentions += mentions;
    return memory;
  }

  /** Packs these mentions (target slot, memory slot, row index triples, in the order met) per target. */
  private pack(mentions: readonly number[]): void {
    const targets = this.targetIds.length;
    const start = new Int32Array(targets + 1);
    for (let i = 0; i < mentions.length; i += 3) start[mentions[i]! + 1]!++;
    for (let t = 0; t < targets; t++) start[t + 1]! += start[t]!;
    const next = start.slice(0, targets);
    const memory = new Int32Array(mentions.length / 3);
    const row = new Int32Array(mentions.length / 3);
    for (let i = 0; i < mentions.length; i += 3) {
      const at = next[mentions[i]!]!++;
      memory[at] = mentions[i + 1]!;
      row[at] = mentions[i + 2]!;
    }
    this.packedStart = start;
    this.packedMemory = memory;
    this.packedRow = row;
    this.addedMentions = new Array<undefined>(targets).fill(undefined);
  }

  /** Visits the target's mentions whose memory is held, in the order their memories were set; stops when `visit` returns false. */
  private eachMention(target: number, visit: (memory: number, row: number) => boolean | void): void {
    if (target + 1 < this.packedStart.length)
      for (let at = this.packedStart[target]!, end = this.packedStart[target + 1]!; at < end; at++) {
        const memory = this.packedMemory[at]!;
        if (this.memoryRows[memory] !== undefined && visit(memory, this.packedRow[at]!) === false) return;
      }
    const added = this.addedMentions[target];
    if (added)
      for (let at = 0; at < added.length; at += 2) {
        const memory = added[at]!;
        if (this.memoryRows[memory] !== undefined && visit(memory, added[at + 1]!) === false) return;
      }
  }

  /**
   * Packs the live mentions again, memories and targets renumbered in their order: when enough
   * have left that reads would mostly skip (COMPACT_AFTER_DEAD).
   */
  private compact(): void {
    const memoryMap = new Int32Array(this.memoryIds.length).fill(-1);
    const memoryIds: string[] = [];
    const memoryRows: ProvenanceRow[][] = [];
    const memoryChunkIds: (string[] | undefined)[] = [];
    const memoryMentions: number[] = [];
    this.memoryIds.forEach((memoryId, slot) => {
      const rows = this.memoryRows[slot];
      if (rows === undefined) return;
      memoryMap[slot] = memoryIds.push(memoryId) - 1;
      this.memorySlots.set(memoryId, memoryMap[slot]!);
      memoryRows.push(rows);
      memoryChunkIds.push(this.memoryChunkIds[slot]);
      memoryMentions.push(this.memoryMentions[slot]!);
    });
    const mentions: number[] = [];
    const targetIds: string[] = [];
    const weights: number[] = [];
    const chunkCounts: number[] = [];
    this.targetIds.forEach((id, slot) => {
      if (id === undefined) return;
      const target = targetIds.push(id) - 1;
      this.targetSlots.set(id, target);
      weights.push(this.weights[slot]!);
      chunkCounts.push(this.chunkCounts[slot]!);
      this.eachMention(slot, (memory, row) => {
        mentions.push(target, memoryMap[memory]!, row);
      });
    });
    this.memoryIds = memoryIds;
    this.memoryRows = memoryRows;
    this.memoryChunkIds = memoryChunkIds;
    this.memoryMentions = memoryMentions;
    this.targetIds = targetIds;
    this.weights = weights;
    this.chunkCounts = chunkCounts;
    this.liveMentions = mentions.length / 3;
    this.deadMentions = 0;
    this.deadMemories = 0;
    this.pack(mentions);
  }

  get entityCount(): number {
    return this.entities.size;
  }

  get factCount(): number {
    return this.facts.size;
  }

  hasMemory(memoryId: string): boolean {
    return this.memorySlots.has(memoryId);
  }

  private rowsOf(memoryId: string): readonly ProvenanceRow[] | undefined {
    const slot = this.memorySlots.get(memoryId);
    return slot === undefined ? undefined : this.memoryRows[slot];
  }

  /** The entities the memory's provenance names here. */
  entityIdsOf(memoryId: string): string[] {
    return (this.rowsOf(memoryId) ?? []).map((row) => row.targetId).filter((id) => this.entities.has(id));
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
    const held = (row: ProvenanceRow): number | undefined => {
      const entity = entities.get(row.targetId);
      const fact = entity ? undefined : facts.get(row.targetId);
      if (entity) this.putEntity(entity);
      else if (fact) this.putFact(fact);
      else return undefined;
      return this.targetSlots.get(row.targetId) ?? this.newTarget(row.targetId);
    };
    this.takeRows(memoryId, rows, held, (target, memory, row) => {
      const added = this.addedMentions[target];
      if (added) added.push(memory, row);
      else this.addedMentions[target] = [memory, row];
    });
  }

  removeMemory(memoryId: string): void {
    const memory = this.memorySlots.get(memoryId);
    if (memory === undefined) return;
    const rows = this.memoryRows[memory]!;
    this.memorySlots.delete(memoryId);
    this.memoryRows[memory] = undefined;
    this.memoryChunkIds[memory] = undefined;
    this.memoryIds[memory] = '';
    this.targetsOfMemory.delete(memoryId);
    this.timelineCache = null;
    this.seen.clear(rows.length * 2);
    const emptied: number[] = [];
    for (const row of rows) {
      // Every kept row's target is held while its memory is: a target leaves only when no chunk names it.
      const target = this.targetSlots.get(row.targetId)!;
      this.weights[target]! -= row.count;
      if (this.seen.add(target, row.chunkIndex) && --this.chunkCounts[target]! === 0) emptied.push(target);
      if (this.seen.add(-1, row.chunkIndex)) this.chunksWithTargets--;
    }
    for (const target of emptied) this.dropTarget(target);
    this.liveMentions -= this.memoryMentions[memory]!;
    this.deadMentions += this.memoryMentions[memory]!;
    this.deadMemories++;
    if (
      (this.deadMentions > COMPACT_AFTER_DEAD && this.deadMentions > this.liveMentions) ||
      (this.deadMemories > COMPACT_AFTER_DEAD && this.deadMemories > this.memorySlots.size)
    )
      this.compact();
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

  /** A target no chunk names any more leaves: its slot, record and lookups. */
  private dropTarget(target: number): void {
    const id = this.targetIds[target]!;
    this.targetIds[target] = undefined;
    this.targetSlots.delete(id);
    this.addedMentions[target] = undefined;
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
   * reads are kept as memories come and go (chunks per target, chunks with targets), so they are
   * current after every add and delete and cost nothing to read.
   */
  collect(keys: string[], match: MatchBuilder, specificityPower = ENTITY_SPECIFICITY_POWER): void {
    for (const key of keys) {
      for (const id of this.byAlias.get(key) ?? []) {
        const entity = this.entities.get(id);
        if (!entity) continue;
        const target = this.targetSlots.get(id);
        const weight = target === undefined ? 1 : this.weights[target]!;
        const chunks = target === undefined ? 1 : this.chunkCounts[target]!;
        const score = entityScore(entity.category, weight, chunks, this.chunksWithTargets, specificityPower);
        match.matched.set(id, { entity, weight, score, partition: this });
      }
    }
  }

  /** What a chunk (`chunkId(memory, index)`) names, with its memory's rows, if the memory is held. */
  private chunkTargets(chunk: string): { rows: readonly ProvenanceRow[]; named: ChunkTargets | undefined } | undefined {
    const memoryId = memoryOfChunk(chunk);
    const rows = this.rowsOf(memoryId);
    if (!rows) return undefined;
    let byChunk = this.targetsOfMemory.get(memoryId);
    if (!byChunk) this.targetsOfMemory.set(memoryId, (byChunk = targetsByChunk(rows)));
    return { rows, named: byChunk.get(indexOfChunk(chunk)) };
  }

  /** The entities and facts a chunk (`chunkId(memory, index)`) mentions, each once, in the order first met. */
  targetsOf(chunk: string): readonly string[] | undefined {
    return this.chunkTargets(chunk)?.named?.targets;
  }

  fact(id: string): GraphFactInfo | undefined {
    return this.facts.get(id);
  }

  /** The first description a (target, chunk)'s rows give, from its first row on, or ''. */
  private descriptionAt(rows: readonly ProvenanceRow[], first: number): string {
    const { targetId, chunkIndex, description } = rows[first]!;
    if (description) return description;
    for (let at = first + 1; at < rows.length; at++) {
      const row = rows[at]!;
      if (row.targetId === targetId && row.chunkIndex === chunkIndex && row.description) return row.description;
    }
    return '';
  }

  /** What this partition's provenance of `chunk` says about a target (its sentence), or ''. */
  descriptionIn(id: string, chunk: string): string {
    const found = this.chunkTargets(chunk);
    const at = found?.named?.targets.indexOf(id) ?? -1;
    return at < 0 ? '' : this.descriptionAt(found!.rows, found!.named!.firstRows[at]!);
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
    const target = this.targetSlots.get(id);
    return target === undefined ? 0 : this.weights[target]!;
  }

  /** The chunk ids of a memory slot, made once. */
  private chunkIdOf(memory: number, index: number): string {
    let ids = this.memoryChunkIds[memory];
    if (!ids) this.memoryChunkIds[memory] = ids = [];
    return (ids[index] ??= chunkId(this.memoryIds[memory]!, index));
  }

  /** Visits every chunk that mentions the target, with its memory, in the order their memories were set. */
  forEachChunkMentioning(id: string, visit: (chunk: string, memoryId: string) => void): void {
    const target = this.targetSlots.get(id);
    if (target === undefined) return;
    this.eachMention(target, (memory, row) => {
      visit(this.chunkIdOf(memory, this.memoryRows[memory]![row]!.chunkIndex), this.memoryIds[memory]!);
    });
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
    const rows: TimelineFact['rows'] = [];
    const target = this.targetSlots.get(fact.id);
    if (target !== undefined)
      this.eachMention(target, (memory, at) => {
        const row = this.memoryRows[memory]![at]!;
        rows.push({ memoryId: this.memoryIds[memory]!, validFrom: row.validFrom ?? null, validTo: row.validTo ?? null });
      });
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
    const target = this.targetSlots.get(id);
    if (target === undefined) return [];
    const byMemory = new Map<string, string>();
    this.eachMention(target, (memory, row) => {
      const memoryId = this.memoryIds[memory]!;
      if (!byMemory.get(memoryId)) byMemory.set(memoryId, this.descriptionAt(this.memoryRows[memory]!, row));
      return byMemory.size < cap;
    });
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
