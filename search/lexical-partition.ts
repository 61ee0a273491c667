/**
 * One collection's BM25 partition (search/lexical-index.ts holds them by collection and searches
 * across them): the term dictionary, the postings and the per-chunk statistics, their upserts and
 * removals, their scoring, and their state as a snapshot keeps it.
 *
 * Layout, chosen to hold 100k chunks of ~1 KB per partition in ~140 MB rather than many hundreds:
 * - chunks get an integer slot; per-slot data lives in typed arrays; chunk text is never kept;
 * - every term's postings (slot, term frequency) are a block in one shared arena
 *   (search/posting-arena.ts), so a term costs a dictionary entry and a few ints;
 * - deleting a chunk only marks its slot dead and updates the counts; postings of dead slots are
 *   skipped when scoring and dropped lazily: from a list whenever a query reads it, from all
 *   lists when the arena is compacted, and slots are renumbered once over 30% of them are dead.
 * Document frequency is not stored: it is the number of live postings in a term's list, counted
 * when a query reads the list, so it is exact under any sequence of upserts and removals.
 */
import { PieceTable } from './piece-table.js';
import { TopSlots } from './top-slots.js';
import { ARENA_GROWTH, grownInt32, INITIAL_ARENA, PostingArena } from './posting-arena.js';
import { detachedString, hashRun, pieceTerms, scanPlainAscii, tokenizeParts } from './tokenize.js';

export interface LexicalHit {
  chunkId: string;
  memoryId: string;
  score: number;
}

/**
 * Which of a query's terms a chunk holds: bit i of `mask` is the query's i-th term (as
 * tokenize gives them, deduped; only the first 31 are looked at), `weights[i]` that term's IDF in
 * the chunk's partition (0 when no chunk there holds it).
 */
export interface QueryTermMatch {
  mask: number;
  weights: readonly number[];
}

/** Query terms a QueryTermMatch can tell apart (the bits of a 32-bit mask, sign bit left alone). */
export const MAX_MASKED_TERMS = 31;

export interface LexicalQueryStats {
  /** Query terms after tokenize, deduped. */
  terms: string[];
  /** Terms that occur in at least one document of the searched partitions. */
  matchedTerms: number;
  /**
   * Highest IDF among matched query terms, divided by the maximum possible IDF (that of a term in
   * exactly one document) in that partition: ~1 for a term found in one doc only (a rare
   * code/name), ~0 for a term in every doc. 0 when nothing matched.
   */
  maxRarity: number;
}

/** A partition's live content (LexicalPartition.exportState / fromState). */
export interface LexicalState {
  /** Per slot, dense. */
  chunkIds: string[];
  memoryIds: string[];
  /** Tokens per slot. */
  docLength: Int32Array;
  terms: string[];
  /** Postings of each term, in `terms` order; their entries follow each other in postingSlots/postingFrequencies. */
  termLength: Int32Array;
  postingSlots: Int32Array;
  postingFrequencies: Uint16Array;
}

/**
 * A LexicalState whose postings are still bytes (little-endian), in pieces of any size and
 * alignment, as a snapshot's parts hold them (search/partition-snapshot.ts): fromState copies them
 * into the postings arena once, instead of joining them into arrays of their own first (56 MB at
 * 100,000 chunks).
 */
export type LexicalStateBytes = Omit<LexicalState, 'postingSlots' | 'postingFrequencies'> & {
  postingSlots: readonly Uint8Array[];
  postingFrequencies: readonly Uint8Array[];
};

const bytesOf = (array: Int32Array | Uint16Array): Uint8Array[] => [new Uint8Array(array.buffer, array.byteOffset, array.byteLength)];

/** Sizes and waste, for metrics and tests: nothing here changes search results. */
export interface LexicalStorageStats {
  documents: number;
  slots: number;
  deadSlots: number;
  terms: number;
  postings: number;
  deadPostings: number;
  arenaCapacity: number;
  /** Bytes of the typed arrays (postings arena, per-term and per-document arrays); maps and id strings are not counted. */
  typedArrayBytes: number;
  /** Distinct words memoised by the partition's piece cache. */
  cachedPieces: number;
}

/** BM25's term-frequency saturation and length normalisation, at their usual values. */
const K1 = 1.2;
const B = 0.75;
/** A posting keeps its term frequency in 16 bits; more occurrences score as this many. */
const MAX_TERM_FREQUENCY = 0xffff;
/** Per-document arrays start this small and double as chunks arrive. */
const INITIAL_SLOTS = 16;
/** Distinct pieces a partition memoises at most (a natural vocabulary with its case variants fits). */
const PIECE_CACHE_LIMIT = 100_000;
/** After a partition compaction, give memory back when less than this share of the arena is used. */
const ARENA_SHRINK_BELOW = 0.5;
const PARTITION_DEAD_FRACTION = 0.3;
/** Below this many dead slots renumbering is not worth its cost; they only cost a skip. */
const MIN_DEAD_SLOTS_TO_COMPACT = 32;

/** Per-query working memory, shared by every partition of one index (search is synchronous). */
export class ScoreScratch {
  /** Accumulated score per slot; zero between queries. */
  scores = new Float64Array(0);
  /** Slots with a non-zero score in the current query. */
  touched = new Int32Array(0);
  /** Term weights of one posting list (a list is never longer than the slot count). */
  weights = new Float64Array(0);

  ensure(slots: number): void {
    if (this.scores.length >= slots) return;
    const length = Math.max(slots, this.scores.length * 2, 1024);
    this.scores = new Float64Array(length);
    this.touched = new Int32Array(length);
    this.weights = new Float64Array(length);
  }
}

export class LexicalPartition {
  // Term dictionary: term → id; per id its postings are a block of the arena. Ids of dropped terms
  // are reused.
  private readonly termIds = new Map<string, number>();
  private termText: (string | undefined)[] = [];
  private readonly freeTermIds: number[] = [];
  private arena = new PostingArena();
  /** Scratch for upsert: occurrences per term id in the chunk being added; all zero otherwise. */
  private frequencyOfTerm = new Int32Array(64);

  private chunkIdOfSlot: (string | undefined)[] = [];
  private memoryIdOfSlot: (string | undefined)[] = [];
  private docLength = new Int32Array(INITIAL_SLOTS);
  private docTermCount = new Int32Array(INITIAL_SLOTS);
  private deadSlot = new Uint8Array(INITIAL_SLOTS);
  private slotCount = 0;
  private deadSlots = 0;
  private liveDocs = 0;
  private totalLength = 0;
  private readonly slotOf = new Map<string, number>();
  private readonly chunksOfMemory = new Map<string, string[]>();
  /** Single-run pieces of text as written → their term ids (see pieceTermIds). */
  private readonly pieceCache = new PieceTable<number | number[]>();

  get size(): number {
    return this.liveDocs;
  }

  hasMemory(memoryId: string): boolean {
    return this.chunksOfMemory.has(memoryId);
  }

  /** The memory of an indexed chunk, or undefined when the chunk is not indexed here. */
  memoryOfChunk(chunkId: string): string | undefined {
    const slot = this.slotOf.get(chunkId);
    return slot === undefined ? undefined : this.memoryIdOfSlot[slot];
  }

  /** Every indexed chunk with its memory. */
  *entries(): Generator<[string, string]> {
    for (const [chunkId, slot] of this.slotOf) yield [chunkId, this.memoryIdOfSlot[slot]!];
  }

  /** Indexes `text` as chunk `chunkId`, replacing whatever that chunk held before. */
  upsert(chunkId: string, memoryId: string, text: string): void {
    const previousSlot = this.slotOf.get(chunkId);
    if (previousSlot !== undefined) {
      const previousMemoryId = this.memoryIdOfSlot[previousSlot]!;
      this.killSlot(previousSlot);
      if (previousMemoryId !== memoryId) this.detachChunk(previousMemoryId, chunkId);
    }

    // Count term frequencies by term id in a reusable array: cheaper than a Map per chunk. Plain
    // words go through the piece cache (one lookup instead of lower-casing, stemming, and two).
    const distinctTermIds: number[] = [];
    let tokenCount = 0;
    const count = (termId: number): void => {
      if (this.frequencyOfTerm[termId] === 0) distinctTermIds.push(termId);
      this.frequencyOfTerm[termId]!++;
      tokenCount++;
    };
    const countPiece = (termIds: number | number[]): void => {
      if (typeof termIds === 'number') {
        if (termIds >= 0) count(termIds);
      } else for (const termId of termIds) count(termId);
    };
    const compoundTerms: string[] = [];
    const scanned = scanPlainAscii(text, (start, end, hash) => countPiece(this.pieceTermIds(text, start, end, hash)), compoundTerms);
    if (!scanned)
      tokenizeParts(text, (piece) => countPiece(this.pieceTermIds(piece, 0, piece.length, hashRun(piece, 0, piece.length))), compoundTerms);
    for (const term of compoundTerms) count(this.termIdFor(term));

    const slot = this.allocateSlot();
    this.chunkIdOfSlot[slot] = chunkId;
    this.memoryIdOfSlot[slot] = memoryId;
    this.docLength[slot] = tokenCount;
    this.docTermCount[slot] = distinctTermIds.length;
    // Compactions triggered while appending never renumber slots nor free term ids.
    for (const termId of distinctTermIds) {
      this.arena.append(termId, slot, Math.min(this.frequencyOfTerm[termId]!, MAX_TERM_FREQUENCY), this.deadSlot);
      this.frequencyOfTerm[termId] = 0;
    }
    this.liveDocs++;
    this.totalLength += tokenCount;
    this.slotOf.set(chunkId, slot);

    let chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) this.chunksOfMemory.set(memoryId, (chunks = []));
    if (previousSlot === undefined || !chunks.includes(chunkId)) chunks.push(chunkId);

    if (previousSlot !== undefined) this.compactIfMostlyDead();
  }

  removeMemory(memoryId: string): void {
    const chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) return;
    for (const chunkId of chunks) {
      const slot = this.slotOf.get(chunkId);
      if (slot !== undefined) this.killSlot(slot);
    }
    this.chunksOfMemory.delete(memoryId);
    this.compactIfMostlyDead();
  }

  /**
   * The partition's live content, densely renumbered: what a load needs to rebuild it without
   * re-tokenising (search/partition-snapshot.ts persists it). Postings are grouped by term, in
   * term order; scores of the rebuilt partition are bit-identical to this one's.
   */
  exportState(): LexicalState {
    const remap = new Int32Array(this.slotCount);
    let slots = 0;
    for (let slot = 0; slot < this.slotCount; slot++) remap[slot] = this.deadSlot[slot] === 1 ? -1 : slots++;
    const chunkIds = new Array<string>(slots);
    const memoryIds = new Array<string>(slots);
    const docLength = new Int32Array(slots);
    for (let slot = 0; slot < this.slotCount; slot++) {
      const target = remap[slot]!;
      if (target < 0) continue;
      chunkIds[target] = this.chunkIdOfSlot[slot]!;
      memoryIds[target] = this.memoryIdOfSlot[slot]!;
      docLength[target] = this.docLength[slot]!;
    }
    const arena = this.arena;
    const postings = arena.postingCount();
    const terms: string[] = [];
    const termLengths: number[] = [];
    const postingSlots = new Int32Array(postings);
    const postingFrequencies = new Uint16Array(postings);
    let write = 0;
    for (let termId = 0; termId < arena.termCount; termId++) {
      const term = this.termText[termId];
      if (term === undefined) continue;
      const start = arena.start[termId]!;
      const before = write;
      for (let at = start; at < start + arena.length[termId]!; at++) {
        const slot = arena.slots[at]!;
        if (this.deadSlot[slot] === 1) continue;
        postingSlots[write] = remap[slot]!;
        postingFrequencies[write] = arena.frequencies[at]!;
        write++;
      }
      if (write === before) continue;
      terms.push(term);
      termLengths.push(write - before);
    }
    return {
      chunkIds,
      memoryIds,
      docLength,
      terms,
      termLength: Int32Array.from(termLengths),
      postingSlots: postingSlots.subarray(0, write),
      postingFrequencies: postingFrequencies.subarray(0, write),
    };
  }

  /** A partition holding exactly `state` (from exportState), built without tokenising anything. */
  static fromState(state: LexicalState | LexicalStateBytes): LexicalPartition {
    const partition = new LexicalPartition();
    const slots = state.chunkIds.length;
    const termCount = state.terms.length;
    if (state.memoryIds.length !== slots || state.docLength.length !== slots || state.termLength.length !== termCount)
      throw new Error('lexical state: inconsistent lengths');
    partition.docLength = new Int32Array(Math.max(INITIAL_SLOTS, slots));
    partition.docLength.set(state.docLength);
    partition.docTermCount = new Int32Array(partition.docLength.length);
    partition.deadSlot = new Uint8Array(partition.docLength.length);
    partition.chunkIdOfSlot = state.chunkIds.slice();
    partition.memoryIdOfSlot = state.memoryIds.slice();
    partition.slotCount = slots;
    partition.liveDocs = slots;
    for (let slot = 0; slot < slots; slot++) {
      const chunkId = state.chunkIds[slot]!;
      const memoryId = state.memoryIds[slot]!;
      partition.totalLength += state.docLength[slot]!;
      partition.slotOf.set(chunkId, slot);
      let chunks = partition.chunksOfMemory.get(memoryId);
      if (!chunks) partition.chunksOfMemory.set(memoryId, (chunks = []));
      chunks.push(chunkId);
    }
    const arena = PostingArena.fromLists(
      state.termLength,
      state.postingSlots instanceof Int32Array ? bytesOf(state.postingSlots) : state.postingSlots,
      state.postingFrequencies instanceof Uint16Array ? bytesOf(state.postingFrequencies) : state.postingFrequencies,
    );
    partition.arena = arena;
    partition.frequencyOfTerm = new Int32Array(arena.start.length);
    partition.termText = state.terms.slice();
    for (let termId = 0; termId < termCount; termId++) partition.termIds.set(state.terms[termId]!, termId);
    if (partition.termIds.size !== termCount) throw new Error('lexical state: bad posting lists');
    for (let termId = 0; termId < termCount; termId++) {
      for (let at = arena.start[termId]!, end = at + arena.length[termId]!; at < end; at++) {
        const slot = arena.slots[at]!;
        if (slot < 0 || slot >= slots) throw new Error('lexical state: posting of a missing slot');
        partition.docTermCount[slot]!++;
      }
    }
    return partition;
  }

  storageStats(): LexicalStorageStats {
    const postings = this.arena.postingCount();
    return {
      documents: this.liveDocs,
      slots: this.slotCount,
      deadSlots: this.deadSlots,
      terms: this.termIds.size,
      postings: postings - this.arena.deadPostings,
      deadPostings: this.arena.deadPostings,
      arenaCapacity: this.arena.slots.length,
      typedArrayBytes:
        this.arena.byteLength() +
        [this.frequencyOfTerm, this.docLength, this.docTermCount, this.deadSlot].reduce((sum, array) => sum + array.byteLength, 0),
      cachedPieces: this.pieceCache.size,
    };
  }

  /**
   * Scores this partition with its own N, document frequencies and average length, and returns
   * its best `k` (ties by chunk id), unordered: the caller merges partitions and sorts once.
   * Marks which query terms occur here and returns the rarity of the rarest one.
   */
  collectTop(
    queryTerms: readonly string[],
    k: number,
    scratch: ScoreScratch,
    matched: boolean[],
  ): { hits: LexicalHit[]; maxRarity: number } {
    const documentCount = this.liveDocs;
    if (documentCount === 0) return { hits: [], maxRarity: 0 };
    scratch.ensure(this.slotCount);
    const { scores, touched } = scratch;
    const lengthNormBase = K1 * (1 - B);
    const lengthNormPerToken = (K1 * B * documentCount) / Math.max(this.totalLength, 1);
    const highestIdf = inverseDocumentFrequency(1, documentCount);
    const arena = this.arena;
    const docLength = this.docLength;
    let maxIdf = 0;
    let touchedCount = 0;

    for (let index = 0; index < queryTerms.length; index++) {
      const termId = this.termIds.get(queryTerms[index]!);
      if (termId === undefined) continue;
      const start = arena.start[termId]!;
      let length = arena.length[termId]!;
      // With tombstones around, one pass drops this list's dead postings in place, counts the
      // live ones (the exact document frequency, needed for the IDF) and keeps their BM25 term
      // weights, which a second pass scales by the IDF. Without tombstones, df is the length.
      const weighed = arena.deadPostings > 0;
      if (weighed) {
        length = this.dropDeadAndWeigh(termId, scratch, lengthNormBase, lengthNormPerToken);
        if (length === 0) continue;
      } else if (length === 0) continue;
      matched[index] = true;
      const idf = inverseDocumentFrequency(length, documentCount);
      if (idf > maxIdf) maxIdf = idf;
      if (k <= 0) continue;

      const weights = scratch.weights;
      const postingSlots = arena.slots;
      const postingFrequencies = arena.frequencies;
      for (let offset = 0; offset < length; offset++) {
        const slot = postingSlots[start + offset]!;
        let weight: number;
        if (weighed) weight = weights[offset]!;
        else {
          const frequency = postingFrequencies[start + offset]!;
          weight = termWeight(frequency, lengthNormBase + lengthNormPerToken * docLength[slot]!);
        }
        const previous = scores[slot]!;
        if (previous === 0) touched[touchedCount++] = slot;
        scores[slot] = previous + idf * weight;
      }
    }

    const hits = touchedCount === 0 ? [] : this.selectTop(scores, touched, touchedCount, k);
    for (let index = 0; index < touchedCount; index++) scores[touched[index]!] = 0;
    return { hits, maxRarity: maxIdf === 0 ? 0 : maxIdf / highestIdf };
  }

  /**
   * Which of `queryTerms` (at most MAX_MASKED_TERMS) each of `chunkIds` holds, with each term's
   * IDF here: one walk over the terms' posting lists, marking the wanted slots in the scratch,
   * so its cost is that of reading the postings, whatever the number of chunks asked about.
   * Chunks not indexed here are left out.
   */
  termMatches(queryTerms: readonly string[], chunkIds: Iterable<string>, scratch: ScoreScratch, into: Map<string, QueryTermMatch>): void {
    const documentCount = this.liveDocs;
    if (documentCount === 0) return;
    scratch.ensure(this.slotCount);
    // The scores array is all zero between queries: it marks the wanted slots (with 1) and
    // collects their masks (+ 2 × mask), and is zeroed again before returning.
    const marks = scratch.scores;
    const wanted: number[] = [];
    for (const chunkId of chunkIds) {
      const slot = this.slotOf.get(chunkId);
      if (slot === undefined || this.deadSlot[slot] === 1 || marks[slot] !== 0) continue;
      marks[slot] = 1;
      wanted.push(slot);
    }
    if (wanted.length === 0) return;
    const terms = queryTerms.slice(0, MAX_MASKED_TERMS);
    const weights = terms.map(() => 0);
    const arena = this.arena;
    for (let index = 0; index < terms.length; index++) {
      const termId = this.termIds.get(terms[index]!);
      if (termId === undefined) continue;
      const start = arena.start[termId]!;
      const end = start + arena.length[termId]!;
      let documentFrequency = 0;
      const bit = 2 ** (index + 1);
      for (let at = start; at < end; at++) {
        const slot = arena.slots[at]!;
        if (this.deadSlot[slot] === 1) continue;
        documentFrequency++;
        // Bit `index` of the mask, carried above the wanted mark; the term is read once per slot.
        const mark = marks[slot]!;
        if (mark !== 0) marks[slot] = mark + bit;
      }
      if (documentFrequency > 0) weights[index] = inverseDocumentFrequency(documentFrequency, documentCount);
    }
    for (const slot of wanted) {
      into.set(this.chunkIdOfSlot[slot]!, { mask: (marks[slot]! - 1) / 2, weights });
      marks[slot] = 0;
    }
  }

  /** The best `k` of the touched slots (ties by chunk id), unordered. */
  private selectTop(scores: Float64Array, touched: Int32Array, touchedCount: number, k: number): LexicalHit[] {
    const chunkIdOfSlot = this.chunkIdOfSlot;
    const top = new TopSlots(Math.min(k, touchedCount), (slotA, slotB) => chunkIdOfSlot[slotA]! > chunkIdOfSlot[slotB]!);
    for (let index = 0; index < touchedCount; index++) {
      const slot = touched[index]!;
      top.offer(scores[slot]!, slot);
    }
    return Array.from(top.slots.subarray(0, top.size), (slot) => ({
      chunkId: chunkIdOfSlot[slot]!,
      memoryId: this.memoryIdOfSlot[slot]!,
      score: scores[slot]!,
    }));
  }

  /**
   * Removes the term's postings of dead slots (keeping order), stores each remaining posting's
   * BM25 term weight in `scratch.weights`, and returns the new length: the live document frequency.
   */
  private dropDeadAndWeigh(termId: number, scratch: ScoreScratch, lengthNormBase: number, lengthNormPerToken: number): number {
    const arena = this.arena;
    const start = arena.start[termId]!;
    const end = start + arena.length[termId]!;
    const weights = scratch.weights;
    let write = start;
    for (let read = start; read < end; read++) {
      const slot = arena.slots[read]!;
      if (this.deadSlot[slot] === 1) continue;
      const frequency = arena.frequencies[read]!;
      if (write !== read) {
        arena.slots[write] = slot;
        arena.frequencies[write] = frequency;
      }
      weights[write - start] = termWeight(frequency, lengthNormBase + lengthNormPerToken * this.docLength[slot]!);
      write++;
    }
    const live = write - start;
    arena.deadPostings -= end - write;
    arena.length[termId] = live;
    return live;
  }

  private killSlot(slot: number): void {
    if (this.deadSlot[slot] === 1) return;
    this.deadSlot[slot] = 1;
    this.deadSlots++;
    this.liveDocs--;
    this.totalLength -= this.docLength[slot]!;
    this.arena.deadPostings += this.docTermCount[slot]!;
    this.slotOf.delete(this.chunkIdOfSlot[slot]!);
    this.chunkIdOfSlot[slot] = undefined;
    this.memoryIdOfSlot[slot] = undefined;
  }

  private detachChunk(memoryId: string, chunkId: string): void {
    const chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) return;
    const position = chunks.indexOf(chunkId);
    if (position >= 0) chunks.splice(position, 1);
    if (chunks.length === 0) this.chunksOfMemory.delete(memoryId);
  }

  private allocateSlot(): number {
    const slot = this.slotCount++;
    if (slot >= this.docLength.length) {
      this.docLength = grownInt32(this.docLength, slot + 1);
      this.docTermCount = grownInt32(this.docTermCount, slot + 1);
      const grownDead = new Uint8Array(this.docLength.length);
      grownDead.set(this.deadSlot);
      this.deadSlot = grownDead;
    }
    this.chunkIdOfSlot.push(undefined);
    this.memoryIdOfSlot.push(undefined);
    return slot;
  }

  /**
   * The term ids of a single-run piece of text, memoised per partition: a number (-1 when the
   * piece yields no term, e.g. a stop-word) or, for a camelCase piece, a list. Entries hold term
   * ids, so the cache is emptied whenever a term id is freed; it is bounded by clearing.
   */
  private pieceTermIds(text: string, start: number, end: number, hash: number): number | number[] {
    const cached = this.pieceCache.get(text, start, end, hash);
    if (cached !== undefined) return cached;
    const piece = text.slice(start, end);
    const termIds = pieceTerms(piece).map((term) => this.termIdFor(term));
    const entry = termIds.length === 0 ? -1 : termIds.length === 1 ? termIds[0]! : termIds;
    if (this.pieceCache.size >= PIECE_CACHE_LIMIT) this.pieceCache.clear();
    this.pieceCache.set(detachedString(piece), hash, entry);
    return entry;
  }

  private termIdFor(term: string): number {
    const existing = this.termIds.get(term);
    if (existing !== undefined) return existing;
    let termId = this.freeTermIds.pop();
    if (termId === undefined) {
      termId = this.arena.newTerm();
      if (termId >= this.frequencyOfTerm.length) this.frequencyOfTerm = grownInt32(this.frequencyOfTerm, termId + 1);
      this.termText.push(undefined);
    } else this.arena.clearTerm(termId);
    const ownedTerm = detachedString(term);
    this.termIds.set(ownedTerm, termId);
    this.termText[termId] = ownedTerm;
    return termId;
  }

  private freeTerm(termId: number): void {
    const term = this.termText[termId];
    if (term === undefined) return;
    this.pieceCache.clear();
    this.termIds.delete(term);
    this.termText[termId] = undefined;
    this.freeTermIds.push(termId);
    this.arena.clearTerm(termId);
  }

  /** Renumbers live slots densely and rebuilds the arena once dead slots are a large share. */
  private compactIfMostlyDead(): void {
    if (this.deadSlots < MIN_DEAD_SLOTS_TO_COMPACT || this.deadSlots <= this.slotCount * PARTITION_DEAD_FRACTION) return;
    const remap = new Int32Array(this.slotCount);
    let liveSlots = 0;
    for (let slot = 0; slot < this.slotCount; slot++) remap[slot] = this.deadSlot[slot] === 1 ? -1 : liveSlots++;
    const arena = this.arena;
    arena.compact(this.deadSlot, remap, (termId) => this.freeTerm(termId));
    // Terms that never got a block (or lost it earlier) are not met by the walk.
    for (let termId = 0; termId < arena.termCount; termId++) {
      if (arena.capacity[termId] === 0 && this.termText[termId] !== undefined) this.freeTerm(termId);
    }
    if (arena.used < arena.slots.length * ARENA_SHRINK_BELOW) arena.resize(Math.max(INITIAL_ARENA, Math.ceil(arena.used * ARENA_GROWTH)));

    const capacity = Math.max(INITIAL_SLOTS, Math.ceil(liveSlots * 1.25));
    const docLength = new Int32Array(capacity);
    const docTermCount = new Int32Array(capacity);
    const chunkIdOfSlot: (string | undefined)[] = new Array<string | undefined>(liveSlots);
    const memoryIdOfSlot: (string | undefined)[] = new Array<string | undefined>(liveSlots);
    for (let slot = 0; slot < this.slotCount; slot++) {
      const target = remap[slot]!;
      if (target < 0) continue;
      const chunkId = this.chunkIdOfSlot[slot]!;
      docLength[target] = this.docLength[slot]!;
      docTermCount[target] = this.docTermCount[slot]!;
      chunkIdOfSlot[target] = chunkId;
      memoryIdOfSlot[target] = this.memoryIdOfSlot[slot];
      if (target !== slot) this.slotOf.set(chunkId, target);
    }
    this.docLength = docLength;
    this.docTermCount = docTermCount;
    this.deadSlot = new Uint8Array(capacity);
    this.chunkIdOfSlot = chunkIdOfSlot;
    this.memoryIdOfSlot = memoryIdOfSlot;
    this.slotCount = liveSlots;
    this.deadSlots = 0;
  }
}

/** BM25's saturating term-frequency part; one formula for both scoring paths keeps scores bit-identical. */
function termWeight(frequency: number, lengthNorm: number): number {
  return (frequency * (K1 + 1)) / (frequency + lengthNorm);
}

/** Lucene's BM25 IDF: never negative, even for a term present in every document. */
function inverseDocumentFrequency(documentFrequency: number, documentCount: number): number {
  return Math.log(1 + (documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5));
}
