/**
 * Writes a synthetic search corpus straight into MongoDB through the store: complete memories
 * whose chunks carry random unit vectors of the model's dimension and text drawn from a synthetic
 * vocabulary. Random vectors do not change the cost of a brute-force scan (every vector is scored
 * either way); only the hits are meaningless. The text is there so the lexical index has real
 * work: ~150 words per chunk from a ~20k-word vocabulary with a Zipf-like frequency distribution
 * (plus the common English function words at the top, and occasional codes and names), like
 * natural text's long tail of rare terms and few very common ones.
 */
import { chunkId, ingestWorkflowId, newId } from '../core/ids.js';
import type { ChunkDoc } from '../store/chunks.js';
import { vectorToBinary } from '../store/chunks.js';
import { entityIdFor, factIdFor, type NewEntity, type NewFact, type NewMention } from '../core/graph-model.js';
import type { Store } from '../store/index.js';
import type { MemoryDoc } from '../store/memories.js';
import { MAX_ENTITY_DESCRIPTION } from '../extractors/structure/local-extractor.js';
import { clipText } from '../extractors/structure/normalize.js';
import { seededRandom } from './texts.js';

export interface SyntheticCorpusOptions {
  tenantId: string;
  collectionId: string;
  embeddingModel: string;
  dimensions: number;
  memories: number;
  chunksPerMemory: number;
  seed: number;
  /** The text generator (one per bench run is enough: building the vocabulary takes a moment). */
  text?: SyntheticText;
  /** Words per chunk, about. Default 150. */
  wordsPerChunk?: number;
  /** Chunks per insertMany: bounds the memory held at once. Default 1000. */
  batchChunks?: number;
  /** Called after each batch with the chunks written so far. */
  onProgress?: (chunksWritten: number) => void;
}

// Function words: the most frequent ranks, as in English text (the lexical tokenizer drops most).
const FUNCTION_WORDS = (
  'the of and to a in is that it for was on with as be at by this had not are but from or have an they which one you were ' +
  'all we there been if more when will would who so no'
).split(' ');
const ONSETS = ['', 'b', 'br', 'c', 'ch', 'd', 'dr', 'f', 'fl', 'g', 'gr', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'pl', 'pr', 'qu', 'r', 's'];
const MORE_ONSETS = ['sh', 'sk', 'sl', 'sp', 'st', 't', 'th', 'tr', 'v', 'w', 'z'];
const NUCLEI = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'i', 'o', 'ai', 'ea', 'ou', 'io', 'y'];
const CODAS = ['', '', '', 'n', 'r', 's', 'l', 'm', 't', 'nd', 'st', 'rk', 'x', 'ck', 'ng'];

/**
 * Word frequencies follow p(rank) ∝ 1 / (rank + 2.7)^1.05 (a Zipf–Mandelbrot law); words are
 * made of 1–4 syllables, and the frequent ranks get the short ones, as in natural languages.
 */
export class SyntheticText {
  readonly words: string[];
  private readonly cdf: Float64Array;

  constructor(seed = 7007, vocabularySize = 20_000) {
    const random = seededRandom(seed);
    const onsets = [...ONSETS, ...MORE_ONSETS];
    const syllable = () =>
      onsets[Math.floor(random() * onsets.length)]! +
      NUCLEI[Math.floor(random() * NUCLEI.length)]! +
      CODAS[Math.floor(random() * CODAS.length)]!;
    const made = new Set<string>(FUNCTION_WORDS);
    const generated: string[] = [];
    while (made.size < vocabularySize) {
      const syllables = 1 + Math.min(3, Math.floor(-Math.log(1 - random()) * 1.3));
      let word = '';
      for (let i = 0; i < syllables; i++) word += syllable();
      if (word.length < 2 || made.has(word)) continue;
      made.add(word);
      generated.push(word);
    }
    generated.sort((a, b) => a.length - b.length);
    this.words = [...FUNCTION_WORDS, ...generated];
    this.cdf = new Float64Array(this.words.length);
    let total = 0;
    for (let rank = 0; rank < this.words.length; rank++) {
      total += 1 / Math.pow(rank + 2.7, 1.05);
      this.cdf[rank] = total;
    }
    for (let rank = 0; rank < this.cdf.length; rank++) this.cdf[rank] = this.cdf[rank]! / total;
  }

  /** The rank of a Zipf-distributed draw (binary search of the cumulative distribution). */
  private rank(random: () => number): number {
    const x = random();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  word(random: () => number): string {
    return this.words[this.rank(random)]!;
  }

  /** A code like "QX-4821" or a capitalised name: the rare, precise terms of real notes. */
  private special(random: () => number): string {
    if (random() < 0.5) {
      const letter = () => String.fromCharCode(65 + Math.floor(random() * 26));
      return `${letter()}${letter()}-${1000 + Math.floor(random() * 9000)}`;
    }
    const name = this.words[FUNCTION_WORDS.length + Math.floor(random() * (this.words.length - FUNCTION_WORDS.length))]!;
    return name.charAt(0).toUpperCase() + name.slice(1);
  }

  /** About `words` words in sentences of 6–18 words. */
  chunk(random: () => number, words = 150): string {
    const sentences: string[] = [];
    let count = 0;
    while (count < words) {
      const length = Math.min(words - count, 6 + Math.floor(random() * 13));
      const parts: string[] = [];
      for (let i = 0; i < length; i++) parts.push(random() < 0.012 ? this.special(random) : this.word(random));
      const first = parts[0]!;
      parts[0] = first.charAt(0).toUpperCase() + first.slice(1);
      sentences.push(`${parts.join(' ')}.`);
      count += length;
    }
    return sentences.join(' ');
  }

  /** A query of 3–8 content words (no function words), drawn with the same frequencies. */
  query(random: () => number): string {
    const length = 3 + Math.floor(random() * 6);
    const parts: string[] = [];
    while (parts.length < length) {
      const rank = this.rank(random);
      if (rank >= FUNCTION_WORDS.length) parts.push(this.words[rank]!);
    }
    return parts.join(' ');
  }
}

function randomUnitVector(random: () => number, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i += 2) {
    // Box–Muller: two standard normals from two uniforms; normals make the direction uniform.
    const u = Math.max(random(), 1e-12);
    const v = random();
    const radius = Math.sqrt(-2 * Math.log(u));
    vector[i] = radius * Math.cos(2 * Math.PI * v);
    if (i + 1 < dimensions) vector[i + 1] = radius * Math.sin(2 * Math.PI * v);
  }
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) vector[i] = vector[i]! / norm;
  return vector;
}

/**
 * Inserts the corpus in batches (chunks first, then their memories, like the pipeline: a memory
 * is complete only once its vectors exist) and publishes the index changes; returns the memory ids.
 */
export async function writeSyntheticCorpus(store: Store, options: SyntheticCorpusOptions): Promise<string[]> {
  const random = seededRandom(options.seed);
  const text = options.text ?? new SyntheticText();
  const wordsPerChunk = options.wordsPerChunk ?? 150;
  const batchChunks = Math.max(options.chunksPerMemory, options.batchChunks ?? 1000);
  const memoryIds: string[] = [];
  const now = new Date();
  let chunks: ChunkDoc[] = [];
  let memories: MemoryDoc[] = [];
  let written = 0;
  // A graph like the structuring stage would leave: every chunk mentions one of its own words as an
  // entity, and every fifth chunk states a fact between two, so the graph signal has real work. A
  // mention's description is what the graph builder writes: the sentence naming the entity, clipped
  // as the extractor clips it (not the chunk's whole text, which made the graph 4-5x its real size).
  const scope = { tenantId: options.tenantId, collectionId: options.collectionId };
  let entities = new Map<string, NewEntity>();
  let facts = new Map<string, NewFact>();
  let mentions: NewMention[] = [];
  const entityOf = (word: string): NewEntity => {
    const key = word.toLowerCase();
    const id = entityIdFor(scope, key);
    const entity = entities.get(id) ?? {
      id,
      key,
      name: word,
      category: key.length % 3 === 0 ? 'person' : 'concept',
      aliases: [word],
      aliasKeys: [key],
      description: `synthetic entity ${word}`,
      nameVector: null,
    };
    entities.set(id, entity);
    return entity;
  };

  const flush = async () => {
    if (memories.length === 0) return;
    await store.graph.write(scope, [...entities.values()], [...facts.values()], mentions);
    entities = new Map();
    facts = new Map();
    mentions = [];
    await store.chunks.collection.insertMany(chunks, { ordered: false });
    await store.memories.collection.insertMany(memories, { ordered: false });
    await store.indexChanges.publishUpserts(
      options.tenantId,
      memories.map((m) => ({ id: m._id, collectionIds: m.collection_ids })),
    );
    written += chunks.length;
    chunks = [];
    memories = [];
    options.onProgress?.(written);
  };

  for (let m = 0; m < options.memories; m++) {
    const memoryId = newId();
    memoryIds.push(memoryId);
    const texts = Array.from({ length: options.chunksPerMemory }, () => text.chunk(random, wordsPerChunk));
    memories.push({
      _id: memoryId,
      tenant_id: options.tenantId,
      collection_ids: [options.collectionId],
      kind: 'document',
      name: `synthetic-${m}`,
      metadata: { synthetic: true },
      content: { chunks: texts },
      status: 'complete',
      status_message: null,
      chunk_count: options.chunksPerMemory,
      embedding_model: options.embeddingModel,
      workflow_id: ingestWorkflowId(memoryId),
      created_at: now,
      updated_at: now,
      completed_at: now,
    });
    texts.forEach((chunkText, index) => {
      const words = chunkText.split(' ').filter((word) => word.length > 5);
      const sentences = chunkText.split(/(?<=\.) /u);
      const describe = (word: string): string =>
        clipText(sentences.find((sentence) => sentence.includes(word)) ?? chunkText, MAX_ENTITY_DESCRIPTION);
      const subject = words.length > 0 ? entityOf(words[Math.floor(random() * words.length)]!.replace(/\.$/, '')) : null;
      if (subject)
        mentions.push({
          memoryId,
          chunkIndex: index,
          kind: 'entity',
          targetId: subject.id,
          count: 1,
          confidence: 1,
          description: describe(subject.name),
        });
      if (subject && index % 5 === 0 && words.length > 1) {
        const object = entityOf(words[Math.floor(random() * words.length)]!.replace(/\.$/, ''));
        if (object.id !== subject.id) {
          const id = factIdFor(scope, subject.id, 'relate to', object.id);
          facts.set(id, {
            id,
            subjectId: subject.id,
            objectId: object.id,
            predicate: 'relate to',
            description: 'synthetic fact',
            confidence: 0.7,
          });
          mentions.push({
            memoryId,
            chunkIndex: index,
            kind: 'entity',
            targetId: object.id,
            count: 1,
            confidence: 1,
            description: describe(object.name),
          });
          mentions.push({
            memoryId,
            chunkIndex: index,
            kind: 'fact',
            targetId: id,
            count: 1,
            confidence: 0.7,
            description: 'synthetic fact',
          });
        }
      }
      chunks.push({
        _id: chunkId(memoryId, index),
        memory_id: memoryId,
        tenant_id: options.tenantId,
        collection_ids: [options.collectionId],
        index,
        text: chunkText,
        source: { type: 'chunk' },
        embedding: vectorToBinary(randomUnitVector(random, options.dimensions)),
        embedding_model: options.embeddingModel,
      });
    });
    if (chunks.length + options.chunksPerMemory > batchChunks) await flush();
  }
  await flush();
  return memoryIds;
}
