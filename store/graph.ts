/**
 * The memory graph: entities, facts (subject —predicate→ object) and their provenance, one graph
 * per collection (never shared across collections or tenants).
 *
 * Provenance is the source of truth. Every entity or fact that a chunk of a memory yields gets a
 * row in `graph_mentions` keyed by (collection, memory, chunk, target), so re-running a stage
 * overwrites instead of duplicating. Weights are never stored counters: they are the sum of a
 * target's provenance rows, computed when read (the stand-in's concurrent `$inc` is not atomic,
 * and a derived weight can never drift after deletes). A target whose last provenance row goes is
 * removed, so the graph has no orphans.
 *
 * Descriptions are text of the memories that mention a target, so they follow provenance too: each
 * row keeps the description its memory gives, and when rows go, every target that keeps some takes
 * its description from a surviving row. No sentence of a deleted memory stays in the graph.
 *
 * Write order matters without transactions: the provenance row is written before the entity or
 * fact it points at is upserted. An orphan sweep that runs concurrently either sees the new row
 * (and keeps the target) or deletes the target before the upsert, which then re-creates it.
 */
import type { GraphScope, NewEntity, NewFact, NewMention } from '../core/graph-model.js';
import { tokensOf } from '../core/graph-model.js';

export { tokensOf, type GraphScope, type NewEntity, type NewFact, type NewMention };
import { type Binary, type AnyBulkWriteOperation, type Collection, type Db, type Filter } from 'mongodb';
import { sha256Hex } from '../core/hash.js';
import type { EntityCandidate, GraphStore } from '../core/graph-store.js';
import { entityMerge, entityNamesWithout, factMerge, mergeInto } from '../core/graph-merge.js';
import type { TimelineFact } from '../core/fact-timeline.js';
import { binaryToVector, vectorToBinary } from './chunks.js';

export interface EntityDoc {
  _id: string;
  tenant_id: string;
  collection_id: string;
  /** The normalised key the entity was created under. */
  key: string;
  name: string;
  category: string;
  /** Surface forms seen, as written. */
  aliases: string[];
  /** Normalised keys that resolve to this entity: its key and every merged alias. */
  alias_keys: string[];
  /** Tokens of the alias keys: narrows the candidates for fuzzy resolution. */
  tokens: string[];
  description: string;
  /** Embedding of the name (same model as chunks), for similarity-based resolution. */
  name_vector: Binary | null;
  created_at: Date;
  updated_at: Date;
}

export interface FactDoc {
  _id: string;
  tenant_id: string;
  collection_id: string;
  subject_id: string;
  object_id: string;
  predicate: string;
  description: string;
  /** The best confidence any provenance gave it. */
  confidence: number;
  created_at: Date;
  updated_at: Date;
}

export interface MentionDoc {
  _id: string;
  tenant_id: string;
  collection_id: string;
  memory_id: string;
  chunk_index: number;
  target_kind: 'entity' | 'fact';
  target_id: string;
  /** Mentions of the target in that chunk (facts: 1). */
  count: number;
  confidence: number;
  /** What this memory says about the target (rows written before descriptions were kept: absent). */
  description?: string;
  /** Facts: when this memory says the fact held (see NewMention); absent on rows written before validity existed. */
  valid_from?: Date | null;
  valid_to?: Date | null;
  /** Entities: the names this memory gave the target (rows written before names were kept, and imported ones: absent). */
  names?: string[];
}

/** An entity as the layers above the store read it: the row with `id`, without the name vector. */
export type GraphEntity = Omit<EntityDoc, '_id' | 'name_vector'> & { id: string };
/** A fact as the layers above the store read it. */
export type GraphFact = Omit<FactDoc, '_id'> & { id: string };
/** A provenance row as the layers above the store read it. */
export type GraphMention = Omit<MentionDoc, '_id'> & { id: string };

const withId = <T extends { _id: string }>({ _id, ...rest }: T): Omit<T, '_id'> & { id: string } => ({ id: _id, ...rest });
const withoutId = <T extends { _id?: string }>({ _id: _ignored, ...rest }: T): Omit<T, '_id'> => rest;

const mentionIdFor = (scope: GraphScope, mention: NewMention): string =>
  sha256Hex(`${scope.collectionId}\n${mention.memoryId}\n${mention.chunkIndex}\n${mention.kind}\n${mention.targetId}`).slice(0, 32);

const scopeFields = (scope: GraphScope) => ({ tenant_id: scope.tenantId, collection_id: scope.collectionId });

const mentionDoc = (scope: GraphScope, mention: NewMention): MentionDoc => ({
  _id: mentionIdFor(scope, mention),
  ...mentionRow(scope, mention),
});

/** A provenance row as stored, without its id (the in-memory fakes keep the same rows). */
export const mentionRow = (scope: GraphScope, mention: NewMention): Omit<MentionDoc, '_id'> => ({
  tenant_id: scope.tenantId,
  collection_id: scope.collectionId,
  memory_id: mention.memoryId,
  chunk_index: mention.chunkIndex,
  target_kind: mention.kind,
  target_id: mention.targetId,
  count: mention.count,
  confidence: mention.confidence,
  description: mention.description,
  ...(mention.kind === 'fact' ? { valid_from: mention.validFrom ?? null, valid_to: mention.validTo ?? null } : {}),
  ...(mention.kind === 'entity' && mention.names ? { names: mention.names } : {}),
});

export class GraphRepository implements GraphStore {
  readonly entities: Collection<EntityDoc>;
  readonly facts: Collection<FactDoc>;
  readonly mentions: Collection<MentionDoc>;

  constructor(db: Db) {
    this.entities = db.collection<EntityDoc>('graph_entities');
    this.facts = db.collection<FactDoc>('graph_facts');
    this.mentions = db.collection<MentionDoc>('graph_mentions');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.entities.createIndex({ collection_id: 1, alias_keys: 1 }),
      this.entities.createIndex({ collection_id: 1, tokens: 1 }),
      this.facts.createIndex({ collection_id: 1, subject_id: 1 }),
      this.facts.createIndex({ collection_id: 1, object_id: 1 }),
      this.mentions.createIndex({ memory_id: 1, collection_id: 1 }),
      this.mentions.createIndex({ collection_id: 1, memory_id: 1 }),
      // A target's rows, and whether any of them still gives it a name (dropRows).
      this.mentions.createIndex({ target_id: 1, names: 1 }),
    ]);
  }

  /** Entities of the collection that any of `keys` resolves to (exact alias match). */
  async findByKeys(scope: GraphScope, keys: string[]): Promise<EntityCandidate[]> {
    if (keys.length === 0) return [];
    const docs = await this.entities
      .find({ tenant_id: scope.tenantId, collection_id: scope.collectionId, alias_keys: { $in: keys } }, { limit: 500 })
      .toArray();
    return docs.map(toCandidate);
  }

  /** Entities sharing a token with `keys`: candidates for fuzzy (token or embedding) resolution. */
  async findCandidates(scope: GraphScope, keys: string[], limit: number): Promise<EntityCandidate[]> {
    const tokens = tokensOf(keys);
    if (tokens.length === 0) return [];
    const docs = await this.entities
      .find({ tenant_id: scope.tenantId, collection_id: scope.collectionId, tokens: { $in: tokens } }, { limit })
      .toArray();
    return docs.map(toCandidate);
  }

  /** Records provenance first, then the targets (see the module comment for why this order). */
  async write(scope: GraphScope, entities: NewEntity[], facts: NewFact[], mentions: NewMention[]): Promise<void> {
    if (mentions.length > 0) {
      await this.mentions.bulkWrite(
        mentions.map((mention) => {
          const doc = mentionDoc(scope, mention);
          return { replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } };
        }),
        { ordered: false },
      );
    }
    const now = new Date();
    await Promise.all([this.upsertEntities(scope, entities, now), this.upsertFacts(scope, facts, now)]);
  }

  /**
   * A whole graph into a collection that has none yet (an imported snapshot): plain inserts, no
   * upserts (upserts cost a lookup each; on the stand-in, 80 s per 1,000 memories against about 3).
   */
  async insertNew(scope: GraphScope, entities: NewEntity[], facts: NewFact[], mentions: NewMention[]): Promise<void> {
    const now = new Date();
    for (let offset = 0; offset < mentions.length; offset += 5000) {
      await this.mentions.insertMany(
        mentions.slice(offset, offset + 5000).map((mention) => mentionDoc(scope, mention)),
        { ordered: false },
      );
    }
    if (entities.length > 0) {
      await this.entities.insertMany(
        entities.map((entity) => ({
          _id: entity.id,
          ...scopeFields(scope),
          ...mergeInto(undefined, entityMerge(entity, vectorToBinary)),
          tokens: tokensOf(entity.aliasKeys),
          created_at: now,
          updated_at: now,
        })),
        { ordered: false },
      );
    }
    if (facts.length > 0) {
      await this.facts.insertMany(
        facts.map((fact) => ({
          _id: fact.id,
          ...scopeFields(scope),
          ...mergeInto(undefined, factMerge(fact)),
          created_at: now,
          updated_at: now,
        })),
        { ordered: false },
      );
    }
  }

  /** core/graph-merge.ts's rules as one atomic upsert per row: kept on insert, accumulated with $addToSet, highest with $max. */
  private async upsertEntities(scope: GraphScope, entities: NewEntity[], now: Date): Promise<void> {
    if (entities.length > 0) {
      const operations: AnyBulkWriteOperation<EntityDoc>[] = entities.map((entity) => {
        const { kept, accumulated } = entityMerge(entity, vectorToBinary);
        return {
          updateOne: {
            filter: { _id: entity.id },
            update: {
              $setOnInsert: { ...scopeFields(scope), ...kept, created_at: now },
              $addToSet: {
                aliases: { $each: accumulated.aliases },
                alias_keys: { $each: accumulated.alias_keys },
                tokens: { $each: tokensOf(entity.aliasKeys) },
              },
              $set: { updated_at: now },
            },
            upsert: true,
          },
        };
      });
      await this.entities.bulkWrite(operations, { ordered: false });
    }
  }

  private async upsertFacts(scope: GraphScope, facts: NewFact[], now: Date): Promise<void> {
    if (facts.length > 0) {
      const operations: AnyBulkWriteOperation<FactDoc>[] = facts.map((fact) => {
        const { kept, highest } = factMerge(fact);
        return {
          updateOne: {
            filter: { _id: fact.id },
            update: { $setOnInsert: { ...scopeFields(scope), ...kept, created_at: now }, $max: highest, $set: { updated_at: now } },
            upsert: true,
          },
        };
      });
      await this.facts.bulkWrite(operations, { ordered: false });
    }
  }

  /**
   * Provenance rows of a memory's chunks from `fromChunk` on: a retried stage rewrites them.
   * Returns the targets that kept other rows, whose records it rewrote (dropRows).
   */
  async removeChunkProvenance(memoryId: string, collectionIds: string[], fromChunk: number): Promise<string[]> {
    const rows = await this.mentions
      .find(
        { memory_id: memoryId, collection_id: { $in: collectionIds }, chunk_index: { $gte: fromChunk } },
        { projection: { _id: 1, target_id: 1, names: 1 } },
      )
      .toArray();
    return this.dropRows(rows);
  }

  /**
   * Removes a memory's provenance (from every collection, or only from the named ones), then every
   * entity and fact left without provenance. Facts about a removed entity always go with it: a
   * fact's chunk also mentions both of its entities. Returns the entities and facts that other
   * memories still mention, whose description and names it rewrote: what a search process holding
   * them must read again.
   */
  async removeMemories(memoryIds: string[], onlyCollections?: string[]): Promise<string[]> {
    if (memoryIds.length === 0) return [];
    const filter: Record<string, unknown> = { memory_id: { $in: memoryIds } };
    if (onlyCollections) filter.collection_id = { $in: onlyCollections };
    const rows = await this.mentions.find(filter, { projection: { _id: 1, target_id: 1, names: 1 } }).toArray();
    return this.dropRows(rows);
  }

  /**
   * Drops provenance rows, then every target left without any, and gives every target that keeps
   * some a description from a surviving row (the dropped rows' memory may have written it), and
   * only the names surviving rows gave it (entityNamesWithout). Returns those surviving targets.
   */
  private async dropRows(rows: Pick<MentionDoc, '_id' | 'target_id' | 'names'>[]): Promise<string[]> {
    if (rows.length === 0) return [];
    await this.mentions.deleteMany({ _id: { $in: rows.map((row) => row._id) } });
    const droppedNames = new Map<string, Set<string>>();
    for (const row of rows) {
      if (!row.names?.length) continue;
      let names = droppedNames.get(row.target_id);
      if (!names) droppedNames.set(row.target_id, (names = new Set()));
      for (const name of row.names) names.add(name);
    }
    const targets = [...new Set(rows.map((row) => row.target_id))];
    const rewritten: string[] = [];
    // One surviving row per target, not all of them: deleting memories one by one around an
    // entity that thousands of memories mention would otherwise re-read its mentions every time.
    for (let offset = 0; offset < targets.length; offset += 100) {
      const batch = targets.slice(offset, offset + 100);
      const survivors = await Promise.all(batch.map((id) => this.survivingDescription(id)));
      const surviving = new Map<string, string>();
      batch.forEach((id, index) => {
        const description = survivors[index];
        if (description !== null && description !== undefined) surviving.set(id, description);
      });
      const orphans = batch.filter((id) => !surviving.has(id));
      if (orphans.length > 0) {
        await this.facts.deleteMany({ _id: { $in: orphans } });
        await this.entities.deleteMany({ _id: { $in: orphans } });
      }
      if (surviving.size === 0) continue;
      rewritten.push(...surviving.keys());
      const redescribe = <T extends EntityDoc | FactDoc>(): AnyBulkWriteOperation<T>[] =>
        [...surviving].map(([id, description]) => ({
          updateOne: { filter: { _id: id } as Filter<T>, update: { $set: { description } as Partial<T> } },
        }));
      await this.entities.bulkWrite(redescribe<EntityDoc>(), { ordered: false });
      await this.facts.bulkWrite(redescribe<FactDoc>(), { ordered: false });
      await this.forgetNames(
        batch.filter((id) => surviving.has(id) && droppedNames.has(id)),
        droppedNames,
      );
    }
    return rewritten;
  }

  /**
   * Takes from each entity the names only the dropped rows gave it. Each name is looked up once in
   * the target's rows (the {target_id, names} index), so the cost follows what was dropped, not how
   * often the entity is mentioned. A target with a surviving row that records no names (written
   * before names were kept, or imported from a snapshot) keeps all its names: nothing says which
   * of them that row's memory gave it.
   */
  private async forgetNames(targets: string[], droppedNames: ReadonlyMap<string, ReadonlySet<string>>): Promise<void> {
    const operations: AnyBulkWriteOperation<EntityDoc>[] = [];
    await Promise.all(
      targets.map(async (targetId) => {
        // `names: null` matches a row without the field, and the index serves it (the driver's types know only arrays here).
        const unrecorded = await this.mentions.findOne({ target_id: targetId, names: null } as unknown as Filter<MentionDoc>, {
          projection: { _id: 1 },
        });
        if (unrecorded) return;
        const lost = new Set<string>();
        await Promise.all(
          [...droppedNames.get(targetId)!].map(async (name) => {
            const kept = await this.mentions.findOne({ target_id: targetId, names: name }, { projection: { _id: 1 } });
            if (!kept) lost.add(name);
          }),
        );
        if (lost.size === 0) return;
        const entity = await this.entities.findOne({ _id: targetId }, { projection: { key: 1, name: 1, aliases: 1, alias_keys: 1 } });
        if (!entity) return;
        const { renamed, ...names } = entityNamesWithout(entity, lost);
        operations.push({
          updateOne: {
            filter: { _id: targetId },
            update: {
              $set: { ...names, tokens: tokensOf(names.alias_keys), ...(renamed ? { name_vector: null } : {}), updated_at: new Date() },
            },
          },
        });
      }),
    );
    if (operations.length > 0) await this.entities.bulkWrite(operations, { ordered: false });
  }

  /** A target's description from one surviving provenance row ('' when none gives one), or null when none survives. */
  private async survivingDescription(targetId: string): Promise<string | null> {
    const described = await this.mentions.findOne(
      { target_id: targetId, description: { $type: 'string', $ne: '' } },
      { projection: { _id: 0, description: 1 } },
    );
    if (described?.description) return described.description;
    const any = await this.mentions.findOne({ target_id: targetId }, { projection: { _id: 1 } });
    return any ? '' : null;
  }

  async entitiesByIds(ids: string[]): Promise<GraphEntity[]> {
    if (ids.length === 0) return [];
    return (await this.entities.find({ _id: { $in: ids } }, { projection: { name_vector: 0 } }).toArray()).map(withId);
  }

  /** A collection's whole graph, streamed: what a search process loads into its graph index. */
  entitiesOfCollection(collectionId: string): AsyncIterable<Omit<GraphEntity, 'tokens' | 'aliases'>> {
    return this.entities.find({ collection_id: collectionId }, { projection: { name_vector: 0, tokens: 0, aliases: 0 } }).map(withId);
  }

  factsOfCollection(collectionId: string): AsyncIterable<GraphFact> {
    return this.facts.find({ collection_id: collectionId }).map(withId);
  }

  mentionsOfCollection(
    collectionId: string,
  ): AsyncIterable<Pick<GraphMention, 'memory_id' | 'chunk_index' | 'target_id' | 'count' | 'description' | 'valid_from' | 'valid_to'>> {
    return this.mentions
      .find(
        { collection_id: collectionId },
        { projection: { memory_id: 1, chunk_index: 1, target_id: 1, count: 1, description: 1, valid_from: 1, valid_to: 1 } },
      )
      .map(withoutId);
  }

  /** The provenance of some memories in every collection: what an index follower applies. */
  async mentionsOfMemories(memoryIds: string[]): Promise<GraphMention[]> {
    if (memoryIds.length === 0) return [];
    return (await this.mentions.find({ memory_id: { $in: memoryIds } }).toArray()).map(withId);
  }

  /**
   * The subjects of the facts these memories' rows back, per collection (only `onlyCollections`
   * when given, only rows of chunks from `fromChunk` on when given): whose timelines removing
   * those rows may change.
   */
  async subjectsBackedBy(
    memoryIds: string[],
    onlyCollections?: string[],
    fromChunk?: number,
  ): Promise<{ scope: GraphScope; subjectIds: string[] }[]> {
    if (memoryIds.length === 0) return [];
    const filter: Filter<MentionDoc> = { memory_id: { $in: memoryIds }, target_kind: 'fact' };
    if (onlyCollections) filter.collection_id = { $in: onlyCollections };
    if (fromChunk !== undefined) filter.chunk_index = { $gte: fromChunk };
    const rows = await this.mentions.find(filter, { projection: { target_id: 1 } }).toArray();
    if (rows.length === 0) return [];
    const facts = await this.facts
      .find(
        { _id: { $in: [...new Set(rows.map((row) => row.target_id))] } },
        { projection: { tenant_id: 1, collection_id: 1, subject_id: 1 } },
      )
      .toArray();
    const byScope = new Map<string, { scope: GraphScope; subjectIds: Set<string> }>();
    for (const fact of facts) {
      const key = `${fact.tenant_id}\n${fact.collection_id}`;
      const entry = byScope.get(key) ?? {
        scope: { tenantId: fact.tenant_id, collectionId: fact.collection_id },
        subjectIds: new Set<string>(),
      };
      entry.subjectIds.add(fact.subject_id);
      byScope.set(key, entry);
    }
    return [...byScope.values()].map(({ scope, subjectIds }) => ({ scope, subjectIds: [...subjectIds] }));
  }

  /**
   * Every fact of these subjects in one collection, with its provenance rows' validity, and the
   * names of the entities they link: what a supersession check replays (core/fact-timeline.ts).
   */
  async subjectTimelines(
    scope: GraphScope,
    subjectIds: string[],
    /** Only facts of these predicates (PredicateClassifier.timelinePredicates): every fact when absent. */
    predicates?: ReadonlySet<string>,
  ): Promise<{ facts: TimelineFact[]; names: Map<string, string> }> {
    if (subjectIds.length === 0 || predicates?.size === 0) return { facts: [], names: new Map() };
    const facts = await this.facts
      .find(
        {
          tenant_id: scope.tenantId,
          collection_id: scope.collectionId,
          subject_id: { $in: subjectIds },
          ...(predicates ? { predicate: { $in: [...predicates] } } : {}),
        },
        { projection: { subject_id: 1, object_id: 1, predicate: 1 } },
      )
      .toArray();
    if (facts.length === 0) return { facts: [], names: new Map() };
    const [rows, entities] = await Promise.all([
      this.mentions
        .find(
          { target_id: { $in: facts.map((fact) => fact._id) }, collection_id: scope.collectionId },
          { projection: { target_id: 1, memory_id: 1, chunk_index: 1, valid_from: 1, valid_to: 1 } },
        )
        .toArray(),
      this.entities
        .find(
          { _id: { $in: [...new Set(facts.flatMap((fact) => [fact.subject_id, fact.object_id]))] } },
          { projection: { name: 1, alias_keys: 1 } },
        )
        .toArray(),
    ]);
    const rowsOf = new Map<string, TimelineFact['rows']>();
    for (const row of rows) {
      const list = rowsOf.get(row.target_id) ?? [];
      list.push({ memoryId: row.memory_id, chunkIndex: row.chunk_index, validFrom: row.valid_from ?? null, validTo: row.valid_to ?? null });
      rowsOf.set(row.target_id, list);
    }
    const keysOf = new Map(entities.map((entity) => [entity._id, entity.alias_keys.join(' ')]));
    return {
      facts: facts
        .filter((fact) => rowsOf.has(fact._id))
        .map((fact) => ({
          id: fact._id,
          subjectId: fact.subject_id,
          objectId: fact.object_id,
          predicate: fact.predicate,
          objectKey: keysOf.get(fact.object_id) ?? '',
          rows: rowsOf.get(fact._id)!,
        })),
      names: new Map(entities.map((entity) => [entity._id, entity.name])),
    };
  }

  async factsByIds(ids: string[]): Promise<GraphFact[]> {
    if (ids.length === 0) return [];
    return (await this.facts.find({ _id: { $in: ids } }).toArray()).map(withId);
  }
}

export const nameVectorOf = (entity: Pick<EntityDoc, 'name_vector'>): Float32Array | null =>
  entity.name_vector ? binaryToVector(entity.name_vector) : null;

const toCandidate = (doc: EntityDoc): EntityCandidate => ({
  id: doc._id,
  key: doc.key,
  category: doc.category,
  aliasKeys: doc.alias_keys,
  tokens: doc.tokens,
  nameVector: nameVectorOf(doc),
});
