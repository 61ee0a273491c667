/**
 * Turns a memory's chunks into graph writes: extraction per chunk, then entity resolution inside
 * each collection the memory belongs to (a graph never spans collections or tenants).
 *
 * Resolution, cheapest first:
 *   1. exact: the normalised name is the key or a known alias of an entity of the collection;
 *   2. people by name parts: "Alice" joins "Alice Smith" when exactly one person there has that part;
 *   3. similarity: a named entity (not a concept) of the same category sharing a token whose name
 *      embedding is at least `similarityThreshold` cosine-similar ("Acme Corp" / "Acme Corporation").
 * Anything else becomes a new entity whose id is derived from (tenant, collection, key), so two
 * workers creating the same new entity at once converge on one node.
 */
import type { Sentence } from '../extractors/structure/parse.js';
import type { ChunkStructure, ExtractedEntity, ParsedChunkStructure, StructureExtractor } from '../extractors/structure/types.js';
import { factRowValidity } from '../extractors/structure/validity.js';
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import { TimeSlicer } from '../core/time-slice.js';
import type { Embedder } from '../models/embedder.js';
import type { ChunkSource } from '../store/chunks.js';
import type { EntityCandidate, GraphStore } from '../core/graph-store.js';
import { entityIdFor, factIdFor, keyTokens, type GraphScope, type NewEntity, type NewFact, type NewMention } from '../core/graph-model.js';

export interface GraphBuilderOptions {
  graph: GraphStore;
  extractor: StructureExtractor;
  embedder: Embedder;
  similarityThreshold: number;
  /** The functional-predicate lexicon facts' validity is read with; null: facts get no validity (the bench's "off"). */
  classifier: PredicateClassifier | null;
  /** How long entity-name embedding requests may wait to share a model call with other memories' (0: none). */
  nameCoalesceMs?: number;
}

interface MergedEntity {
  entity: ExtractedEntity;
  /** Mentions per chunk index. */
  chunks: Map<number, number>;
}

export interface ChunkExtraction {
  chunkIndex: number;
  structure: ChunkStructure;
  /** When the chunk's memory says it happened: the default start of its facts' validity. */
  time: Date;
  /** The extractor's parse of the chunk, kept when asked for (`keepParse`), for procedure derivation. */
  sentences?: Sentence[] | null;
}

const CATEGORY_PRIORITY = ['person', 'organization', 'place', 'email', 'url', 'money', 'date', 'quantity', 'product', 'concept'];
const priorityOf = (category: string): number => {
  const index = CATEGORY_PRIORITY.indexOf(category);
  return index < 0 ? CATEGORY_PRIORITY.length : index;
};

/** The extractor's answers for chunks handed over already, by chunk index (`startExtractions`). */
export type StartedExtractions = ReadonlyMap<number, Promise<ParsedChunkStructure>>;

/**
 * Hands the chunks to the extractor, all at once (a pooled extractor spreads them over its
 * threads), without waiting: the single pass starts them as soon as its read stage has planned the
 * chunks, so that the extraction runs while that stage writes them. `keepParse`: the answers carry
 * the extractor's parse (when it has one), for procedure derivation; it costs memory (a few hundred
 * bytes per token), so callers ask for it only for a bounded number of chunks.
 */
export function startExtractions(
  extractor: StructureExtractor,
  chunks: readonly { index: number; text: string; source: ChunkSource }[],
  { keepParse = false }: { keepParse?: boolean } = {},
): Map<number, Promise<ParsedChunkStructure>> {
  const parsing = keepParse ? extractor.extractParsed?.bind(extractor) : undefined;
  const started = new Map<number, Promise<ParsedChunkStructure>>();
  for (const chunk of chunks) {
    // The speaker of a conversation turn is its role.
    const options = chunk.source.type === 'message' ? { speaker: chunk.source.role } : {};
    const answer = parsing
      ? parsing(chunk.text, options)
      : extractor.extract(chunk.text, options).then((structure) => ({ structure, sentences: null }));
    // Awaited by extractChunks; a run that fails before then must not leave an unhandled rejection.
    answer.catch(() => undefined);
    started.set(chunk.index, answer);
  }
  return started;
}

/**
 * The extractions of the chunks, in chunk order: those in `started` (handed over earlier, for the
 * same text) are awaited, the others handed over now. `keepParse` as for startExtractions.
 */
export async function extractChunks<Chunk extends { index: number; text: string; source: ChunkSource }>(
  extractor: StructureExtractor,
  chunks: Chunk[],
  onProgress: (done: number) => void,
  /** When the chunk happened (core/memory-time.ts): where its facts' validity starts by default. */
  timeOf: (chunk: Chunk) => Date,
  { keepParse = false, started }: { keepParse?: boolean; started?: StartedExtractions } = {},
): Promise<ChunkExtraction[]> {
  let done = 0;
  const fresh = startExtractions(
    extractor,
    chunks.filter((chunk) => !started?.has(chunk.index)),
    { keepParse },
  );
  return Promise.all(
    chunks.map(async (chunk): Promise<ChunkExtraction> => {
      const parsed = await (started?.get(chunk.index) ?? fresh.get(chunk.index)!);
      onProgress((done += 1));
      return {
        chunkIndex: chunk.index,
        structure: parsed.structure,
        time: timeOf(chunk),
        ...(keepParse ? { sentences: parsed.sentences } : {}),
      };
    }),
  );
}

/** One entity per key over the whole memory, remembering which chunks mention it. */
async function mergeEntities(extractions: ChunkExtraction[], slicer: TimeSlicer): Promise<Map<string, MergedEntity>> {
  const merged = new Map<string, MergedEntity>();
  for (const { chunkIndex, structure } of extractions) {
    if (slicer.due()) await slicer.pause();
    for (const entity of structure.entities) {
      const existing = merged.get(entity.key);
      if (!existing) {
        merged.set(entity.key, { entity: { ...entity, aliases: [...entity.aliases] }, chunks: new Map([[chunkIndex, entity.mentions]]) });
        continue;
      }
      existing.chunks.set(chunkIndex, (existing.chunks.get(chunkIndex) ?? 0) + entity.mentions);
      for (const alias of entity.aliases) if (!existing.entity.aliases.includes(alias)) existing.entity.aliases.push(alias);
      if (priorityOf(entity.category) < priorityOf(existing.entity.category)) existing.entity.category = entity.category;
    }
  }
  return merged;
}

const cosine = (a: Float32Array, b: Float32Array): number => {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
};

export class GraphBuilder {
  constructor(private readonly options: GraphBuilderOptions) {}

  /**
   * Writes the memory's chunks' entities, facts and provenance into one collection's graph.
   * Idempotent: ids are deterministic, so a retry rewrites the same rows.
   */
  async writeToCollection(
    scope: GraphScope,
    memoryId: string,
    extractions: ChunkExtraction[],
  ): Promise<{ entities: number; facts: number; subjectIds: string[]; predicates: string[] }> {
    // A large memory (a 2M-character device create: ~1,700 chunks) is seconds of work here; in an API
    // process it runs on the event loop (it calls the embedder and the graph), so it gives the loop a
    // turn between slices (core/time-slice.ts).
    const slicer = new TimeSlicer();
    const merged = await mergeEntities(extractions, slicer);
    if (merged.size === 0) return { entities: 0, facts: 0, subjectIds: [], predicates: [] };
    const { idOfKey, vectors } = await this.resolve(scope, merged, slicer);

    // Several keys of this memory may resolve to one entity: one write per entity, all aliases.
    const entities = new Map<string, NewEntity>();
    const mentions: NewMention[] = [];
    for (const [key, { entity, chunks }] of merged) {
      if (slicer.due()) await slicer.pause();
      const id = idOfKey.get(key)!;
      const known = entities.get(id);
      const isPrimary = entityIdFor(scope, key) === id;
      if (known && !isPrimary) {
        known.aliases.push(entity.name, ...entity.aliases);
        known.aliasKeys.push(key);
      } else {
        entities.set(id, {
          id,
          key,
          name: entity.name,
          category: entity.category,
          aliases: [entity.name, ...entity.aliases, ...(known?.aliases ?? [])],
          aliasKeys: [key, ...(known?.aliasKeys ?? [])],
          description: entity.description,
          nameVector: vectors.get(key) ?? null,
        });
      }
      const names = [...new Set([entity.name, ...entity.aliases])];
      for (const [chunkIndex, count] of chunks) {
        mentions.push({ memoryId, chunkIndex, kind: 'entity', targetId: id, count, confidence: 1, description: entity.description, names });
      }
    }

    const facts = new Map<string, NewFact>();
    const { classifier } = this.options;
    for (const { chunkIndex, structure, time } of extractions) {
      if (slicer.due()) await slicer.pause();
      const validity = classifier ? factRowValidity(structure, time, classifier) : null;
      for (const [factIndex, fact] of structure.facts.entries()) {
        const subjectId = idOfKey.get(fact.subjectKey);
        const objectId = idOfKey.get(fact.objectKey);
        if (!subjectId || !objectId || subjectId === objectId) continue;
        const id = factIdFor(scope, subjectId, fact.predicate, objectId);
        const known = facts.get(id);
        if (!known || known.confidence < fact.confidence) {
          facts.set(id, { id, subjectId, objectId, predicate: fact.predicate, description: fact.description, confidence: fact.confidence });
        }
        mentions.push({
          memoryId,
          chunkIndex,
          kind: 'fact',
          targetId: id,
          count: 1,
          confidence: fact.confidence,
          description: fact.description,
          ...(validity ? validity[factIndex] : {}),
        });
      }
    }
    await this.options.graph.write(scope, [...entities.values()], [...facts.values()], await dedupeMentions(mentions, slicer));
    // The subjects whose facts may have superseded (or been superseded by) others: only a fact whose
    // predicate some object gives a class takes part in a timeline, so a subject this memory gave
    // none of those is not read back (on a long-lived subject that read grew with its history).
    const mayHaveClass = (predicate: string) => classifier?.mayHaveClass(predicate) ?? true;
    const classed = [...facts.values()].filter((fact) => mayHaveClass(fact.predicate));
    const subjectIds = [...new Set(classed.map((fact) => fact.subjectId))];
    return { entities: entities.size, facts: facts.size, subjectIds, predicates: [...new Set(classed.map((fact) => fact.predicate))] };
  }

  /** Maps every key to an entity id, with the name vectors computed on the way (stored with new entities). */
  private async resolve(
    scope: GraphScope,
    merged: Map<string, MergedEntity>,
    slicer: TimeSlicer,
  ): Promise<{ idOfKey: Map<string, string>; vectors: Map<string, Float32Array> }> {
    const { graph } = this.options;
    const keys = [...merged.keys()];
    const idOfKey = new Map<string, string>();
    const vectors = new Map<string, Float32Array>();

    for (const entity of await graph.findByKeys(scope, keys)) {
      for (const alias of entity.aliasKeys) if (merged.has(alias) && !idOfKey.has(alias)) idOfKey.set(alias, entity.id);
    }
    const unresolved = keys.filter((key) => !idOfKey.has(key));
    if (unresolved.length === 0) return { idOfKey, vectors };

    const candidates = await graph.findCandidates(scope, unresolved, 300);
    // Names are embedded only when a same-category candidate shares a token: most new names have none.
    // Concepts never merge by similarity ("Berlin office" and "Paris office" are close in embedding space).
    const needVectors: string[] = [];
    for (const key of unresolved) {
      if (slicer.due()) await slicer.pause();
      const { category } = merged.get(key)!.entity;
      if (category !== 'concept' && candidates.some((candidate) => candidate.category === category && sharesToken(candidate, key))) {
        needVectors.push(key);
      }
    }
    if (needVectors.length > 0) {
      const embedded = await this.options.embedder.embedPassages(
        needVectors.map((key) => merged.get(key)!.entity.name),
        { short: true, ...(this.options.nameCoalesceMs ? { coalesceMs: this.options.nameCoalesceMs } : {}) },
      );
      needVectors.forEach((key, index) => vectors.set(key, embedded[index]!));
    }

    // Longer names first, so "Alice Smith" exists before "Alice" looks for a person to join.
    const created: EntityCandidate[] = [];
    for (const key of unresolved.sort((a, b) => keyTokens(b).length - keyTokens(a).length)) {
      if (slicer.due()) await slicer.pause();
      const { entity } = merged.get(key)!;
      const match =
        this.matchPerson(key, entity, [...candidates, ...created]) ?? this.matchSimilar(vectors.get(key), entity, key, candidates);
      if (match) {
        idOfKey.set(key, match);
        continue;
      }
      const id = entityIdFor(scope, key);
      idOfKey.set(key, id);
      created.push(pseudoEntity(id, key, entity));
    }
    return { idOfKey, vectors };
  }

  private matchPerson(key: string, entity: ExtractedEntity, candidates: EntityCandidate[]): string | null {
    if (entity.category !== 'person') return null;
    const parts = keyTokens(key);
    const matches = candidates.filter((candidate) => {
      if (candidate.category !== 'person' || candidate.key === key) return false;
      const theirs = new Set(keyTokens(candidate.key));
      return parts.length < theirs.size && parts.every((part) => theirs.has(part));
    });
    const ids = new Set(matches.map((candidate) => candidate.id));
    return ids.size === 1 ? matches[0]!.id : null;
  }

  private matchSimilar(
    vector: Float32Array | undefined,
    entity: ExtractedEntity,
    key: string,
    candidates: EntityCandidate[],
  ): string | null {
    if (!vector) return null;
    let best: { id: string; similarity: number } | null = null;
    for (const candidate of candidates) {
      if (candidate.category !== entity.category || !sharesToken(candidate, key)) continue;
      const theirs = candidate.nameVector;
      if (!theirs || theirs.length !== vector.length) continue;
      const similarity = cosine(vector, theirs);
      if (similarity >= this.options.similarityThreshold && (!best || similarity > best.similarity))
        best = { id: candidate.id, similarity };
    }
    return best?.id ?? null;
  }
}

function sharesToken(candidate: Pick<EntityCandidate, 'tokens'>, key: string): boolean {
  const theirs = new Set(candidate.tokens);
  return keyTokens(key).some((token) => theirs.has(token));
}

function pseudoEntity(id: string, key: string, entity: ExtractedEntity): EntityCandidate {
  return { id, key, category: entity.category, aliasKeys: [key], tokens: keyTokens(key), nameVector: null };
}

/** Two keys of one memory resolved to the same entity: one provenance row per chunk, counts summed. */
async function dedupeMentions(mentions: NewMention[], slicer: TimeSlicer): Promise<NewMention[]> {
  const byKey = new Map<string, NewMention>();
  for (const mention of mentions) {
    if (slicer.due()) await slicer.pause();
    const key = `${mention.chunkIndex}\n${mention.kind}\n${mention.targetId}`;
    const known = byKey.get(key);
    if (!known) byKey.set(key, { ...mention });
    else {
      known.count += mention.count;
      known.confidence = Math.max(known.confidence, mention.confidence);
      // One fact stated twice in a chunk ("lived in Oslo since 2020 … no longer lives there"): one span.
      if (mention.validFrom !== undefined) {
        known.validFrom = earliest(known.validFrom ?? null, mention.validFrom);
        known.validTo = latest(known.validTo ?? null, mention.validTo ?? null);
      }
    }
  }
  return [...byKey.values()];
}

const earliest = (a: Date | null, b: Date | null): Date | null => (a === null ? b : b === null || a <= b ? a : b);
const latest = (a: Date | null, b: Date | null): Date | null => (a === null ? b : b === null || a >= b ? a : b);
