/**
 * A device snapshot's graph held in memory for one request. It implements the same GraphStore the
 * collection graph does (core/graph-store.ts), so the graph builder resolves and merges a new
 * memory into a snapshot exactly as it does into a collection, and it yields the same
 * GraphPartition that search ranks over (search/graph-index.ts): one code path, two storages.
 */
import type { EntityCandidate, GraphStore } from '../core/graph-store.js';
import { entityMerge, factMerge, mergeInto } from '../core/graph-merge.js';
import { TimeSlicer } from '../core/time-slice.js';
import {
  GraphPartition,
  graphEntityInfo,
  graphFactInfo,
  type GraphEntityInfo,
  type GraphFactInfo,
  type GraphState,
  type ProvenanceRow,
} from '../search/graph-index.js';
import { tokensOf, weightsOf, type GraphScope, type NewEntity, type NewFact, type NewMention } from '../core/graph-model.js';
import {
  decodeInt8,
  encodeInt8,
  type SnapshotBody,
  type SnapshotEntity,
  type SnapshotEpisode,
  type SnapshotFact,
  type SnapshotMention,
  type WireBody,
} from './format.js';
import { type SentMentions } from './wire.js';

type StoredEntity = Omit<SnapshotEntity, 'weight'>;
type StoredFact = Omit<SnapshotFact, 'weight'>;

/** A snapshot's provenance row as the graph index holds it (validity as dates, absent when not recorded). */
const provenanceRowOf = (mention: SnapshotMention): ProvenanceRow => ({
  targetId: mention.target_id,
  chunkIndex: mention.chunk,
  count: mention.count,
  description: mention.description,
  ...(mention.valid_from !== undefined ? { validFrom: mention.valid_from === null ? null : new Date(mention.valid_from) } : {}),
  ...(mention.valid_to !== undefined ? { validTo: mention.valid_to === null ? null : new Date(mention.valid_to) } : {}),
});

/** What a partition is built from (GraphPartition.ofMemoriesInSlices). */
interface PartitionState {
  memories: GraphState['memories'];
  entities: Map<string, GraphEntityInfo>;
  facts: Map<string, GraphFactInfo>;
}

const rowKey = (episodeId: string, chunk: number, targetId: string): string => `${episodeId}\n${chunk}\n${targetId}`;

export class SnapshotGraph implements GraphStore {
  private readonly episodes: SnapshotEpisode[];
  private readonly entities = new Map<string, StoredEntity>();
  private readonly facts = new Map<string, StoredFact>();
  /**
   * The body's rows, as they came (read-only), and the episodes they belong to: a device create
   * writes the rows of a new episode only, so they are not keyed one by one (keying the 30k rows of
   * a 1,000-memory snapshot was a quarter of a create's graph work). A write to one of these
   * episodes moves them into `mentions` first.
   */
  private baseMentions: readonly SnapshotMention[] = [];
  private baseEpisodes: Set<string> | null = null;
  private readonly mentions = new Map<string, SnapshotMention>();
  private readonly byAlias = new Map<string, string>();
  private readonly byToken = new Map<string, Set<string>>();
  private readonly vectors = new Map<string, Float32Array | null>();

  /**
   * @param sent the body's wire form, when it was read strictly in this service's version: the
   * mentions of episodes no write touched are sealed again as they came (sentMentions).
   */
  constructor(
    body: SnapshotBody,
    private readonly dimensions: number,
    private sent?: WireBody,
  ) {
    this.episodes = [...body.episodes];
    for (const _ of this.loading(body));
  }

  /**
   * The graph of a body a client sent (up to SNAPSHOT_MAX_BYTES), built in slices with the event
   * loop given a turn between them (core/time-slice.ts): at 32 MiB the build and its partition
   * took about 1 s of CPU in one stretch.
   */
  static async inSlices(body: SnapshotBody, dimensions: number, slicer: TimeSlicer, sent?: WireBody): Promise<SnapshotGraph> {
    const graph = new SnapshotGraph({ episodes: body.episodes, entities: [], facts: [], mentions: [] }, dimensions, sent);
    for (const _ of graph.loading(body)) if (slicer.due()) await slicer.pause();
    return graph;
  }

  /** Takes in the body's records, one step per record (the constructor runs it through, `inSlices` in slices). */
  private *loading(body: Pick<SnapshotBody, 'entities' | 'facts' | 'mentions'>): Generator<void> {
    for (const { weight: _weight, ...entity } of body.entities) {
      this.putEntity(entity);
      yield;
    }
    for (const { weight: _weight, ...fact } of body.facts) {
      this.facts.set(fact.id, fact);
      yield;
    }
    // The rows are kept as they came, not keyed (baseMentions).
    this.baseMentions = body.mentions;
  }

  /** Keys the body's rows, when a write touches an episode they belong to (never in a device create). */
  private touchBase(episodeId: string): void {
    if (this.baseMentions.length === 0) return;
    this.baseEpisodes ??= new Set(this.baseMentions.map((mention) => mention.episode_id));
    if (!this.baseEpisodes.has(episodeId)) return;
    const written = [...this.mentions.values()];
    this.mentions.clear();
    for (const mention of [...this.baseMentions, ...written])
      this.mentions.set(rowKey(mention.episode_id, mention.chunk, mention.target_id), mention);
    this.baseMentions = [];
    this.baseEpisodes = null;
    this.sent = undefined;
  }

  /** The sent mentions of the body's episodes, while no write touched them (format.ts SentMentions). */
  sentMentions(): SentMentions | undefined {
    if (!this.sent) return undefined;
    return {
      byEpisode: new Map(this.sent.episodes.map((episode) => [episode.id, episode.mentions])),
      targetIds: [...this.sent.entities.map((entity) => entity.id), ...this.sent.facts.map((fact) => fact.id)],
    };
  }

  /** Every row: the body's, then those written since. */
  private allMentions(): SnapshotMention[] {
    return [...this.baseMentions, ...this.mentions.values()];
  }

  get entityCount(): number {
    return this.entities.size;
  }

  private putEntity(entity: StoredEntity): void {
    this.entities.set(entity.id, entity);
    for (const key of entity.alias_keys) if (!this.byAlias.has(key)) this.byAlias.set(key, entity.id);
    for (const token of tokensOf(entity.alias_keys)) {
      let ids = this.byToken.get(token);
      if (!ids) this.byToken.set(token, (ids = new Set()));
      ids.add(entity.id);
    }
  }

  private candidate(entity: StoredEntity): EntityCandidate {
    let vector = this.vectors.get(entity.id);
    if (vector === undefined) {
      vector = entity.name_vector ? decodeInt8(entity.name_vector, this.dimensions) : null;
      this.vectors.set(entity.id, vector);
    }
    return {
      id: entity.id,
      key: entity.key,
      category: entity.category,
      aliasKeys: entity.alias_keys,
      tokens: tokensOf(entity.alias_keys),
      nameVector: vector,
    };
  }

  findByKeys(_scope: GraphScope, keys: string[]): Promise<EntityCandidate[]> {
    const ids = new Set(keys.map((key) => this.byAlias.get(key)).filter((id): id is string => id !== undefined));
    return Promise.resolve([...ids].map((id) => this.candidate(this.entities.get(id)!)));
  }

  findCandidates(_scope: GraphScope, keys: string[], limit: number): Promise<EntityCandidate[]> {
    const ids = new Set<string>();
    for (const token of tokensOf(keys)) {
      for (const id of this.byToken.get(token) ?? []) {
        if (ids.size >= limit) break;
        ids.add(id);
      }
    }
    return Promise.resolve([...ids].map((id) => this.candidate(this.entities.get(id)!)));
  }

  /** The collection store's merge rules (core/graph-merge.ts): first name, category and description stay; aliases accumulate; facts keep their best confidence. */
  async write(_scope: GraphScope, entities: NewEntity[], facts: NewFact[], mentions: NewMention[]): Promise<void> {
    // A 2M-character episode writes tens of thousands of rows: the event loop gets a turn between slices.
    const slicer = new TimeSlicer();
    for (const mention of mentions) {
      if (slicer.due()) await slicer.pause();
      this.touchBase(mention.memoryId);
      this.mentions.set(rowKey(mention.memoryId, mention.chunkIndex, mention.targetId), {
        episode_id: mention.memoryId,
        chunk: mention.chunkIndex,
        target_id: mention.targetId,
        kind: mention.kind,
        count: mention.count,
        confidence: mention.confidence,
        description: mention.description,
        ...(mention.validFrom !== undefined ? { valid_from: mention.validFrom?.toISOString() ?? null } : {}),
        ...(mention.validTo !== undefined ? { valid_to: mention.validTo?.toISOString() ?? null } : {}),
      });
    }
    for (const entity of entities) {
      if (slicer.due()) await slicer.pause();
      this.putEntity({ ...mergeInto(this.entities.get(entity.id), entityMerge(entity, encodeInt8)), id: entity.id });
    }
    for (const fact of facts) {
      if (slicer.due()) await slicer.pause();
      this.facts.set(fact.id, { ...mergeInto(this.facts.get(fact.id), factMerge(fact)), id: fact.id });
    }
  }

  addEpisode(episode: SnapshotEpisode): void {
    this.episodes.push(episode);
  }

  /** The graph as search ranks it: the same partition a collection's graph loads into. */
  partition(): GraphPartition {
    const state: PartitionState = { memories: [], entities: new Map(), facts: new Map() };
    for (const _ of this.partitionState(state));
    return GraphPartition.fromState({ entities: [...state.entities.values()], facts: [...state.facts.values()], memories: state.memories });
  }

  /** `partition()` in slices (core/time-slice.ts), for a graph of a body a client sent. */
  async partitionInSlices(slicer: TimeSlicer): Promise<GraphPartition> {
    const state: PartitionState = { memories: [], entities: new Map(), facts: new Map() };
    for (const _ of this.partitionState(state)) if (slicer.due()) await slicer.pause();
    // Each episode's rows set at once, episodes in the order of their first row: GraphPartition's
    // bulk load, which gives what setting them one by one gives (that put every row's entity again,
    // half of a first device search on a 1,000-memory snapshot).
    return GraphPartition.ofMemoriesInSlices(state.memories, state.entities, state.facts, slicer);
  }

  /** Fills `state` with the records and each episode's provenance rows: a step per record, per 64 rows. */
  private *partitionState(state: PartitionState): Generator<void> {
    for (const entity of this.entities.values()) {
      state.entities.set(entity.id, graphEntityInfo(entity));
      yield;
    }
    for (const fact of this.facts.values()) {
      state.facts.set(fact.id, graphFactInfo(fact));
      yield;
    }
    const rows = new Map<string, ProvenanceRow[]>();
    const mentions = this.allMentions();
    for (let index = 0; index < mentions.length; index += 1) {
      const mention = mentions[index]!;
      let list = rows.get(mention.episode_id);
      if (!list) {
        rows.set(mention.episode_id, (list = []));
        state.memories.push({ memoryId: mention.episode_id, rows: list });
      }
      list.push(provenanceRowOf(mention));
      if ((index & 63) === 63) yield;
    }
  }

  /** The body to seal, weights derived from the mentions (sealing compacts it: format.ts toWire), made in slices. */
  async toBody(slicer = new TimeSlicer()): Promise<SnapshotBody> {
    const mentions = this.allMentions();
    const weights = weightsOf(mentions);
    if (slicer.due()) await slicer.pause();
    const entities: SnapshotEntity[] = [];
    for (const entity of this.entities.values()) {
      entities.push({ ...entity, weight: weights.get(entity.id) ?? 0 });
      if (slicer.due()) await slicer.pause();
    }
    const facts: SnapshotFact[] = [];
    for (const fact of this.facts.values()) {
      facts.push({ ...fact, weight: weights.get(fact.id) ?? 0 });
      if (slicer.due()) await slicer.pause();
    }
    return { episodes: this.episodes, entities, facts, mentions };
  }
}
