/**
 * A collection's whole search partition as bytes: its lexical index, turn facts, vector rows and
 * graph, so that a cold load reads a few large documents back instead of re-tokenising every
 * chunk's text and decoding 100,000 chunk documents and the graph's rows (issue 25: a 100k-chunk
 * load). The store keeps the bytes (store/index-snapshots.ts); search/snapshot-keeper.ts decides
 * when to write and read them, and search/partition-loader.ts whether one read can be trusted.
 *
 * Layout (little-endian, as the stored vectors): a header of Uint32 counts, then sections each
 * starting on an 8-byte boundary: chunk ids, memory ids and terms (UTF-8, NUL-separated), tokens
 * per chunk, postings per term, the postings' chunk slots and term frequencies, then per chunk
 * its flags (bit 0: it asks; above: the answer kinds it can give, search/turn-answers.ts), how many dates it speaks of and its speaker (an index into the speakers' names,
 * -1 for none), then those dates and the names (UTF-8, NUL-separated). Then the vector rows: per
 * vector slot the lexical slot of its chunk, then the rows (float32, `dimensions` each). Then the
 * graph: a pool of its strings (UTF-16 lengths, then UTF-8), the entities, facts, memories and
 * provenance rows as columns of pool indexes and numbers (encodeGraph).
 *
 * `SNAPSHOT_FORMAT` names the layout and fingerprints the tokenizer, the turn-date and the
 * turn-speaker and answer-kind rules on probe texts: a snapshot written by code that tokenises differently is never read, so a load from
 * a snapshot ranks exactly as a load from the chunks would.
 */
import { createHash } from 'node:crypto';
import type { GraphState, ProvenanceRow } from './graph-index.js';
import type { LexicalState, LexicalStateBytes } from './lexical-partition.js';
import { tokenize } from './tokenize.js';
import type { TurnFact } from './turn-facts.js';
import { turnAnswerKinds } from './turn-answers.js';
import { turnDates } from './turn-dates.js';
import { turnSpeaker, withoutSpeaker } from './turn-speakers.js';

/**
 * 3: the per-chunk byte holds flags (asks, answer kinds), no longer only whether the turn asks.
 * 4: the vector rows and the graph follow the lexical partition.
 */
const LAYOUT_VERSION = 4;
const HEADER_WORDS = 13;
const SEPARATOR = '\u0000';

const PROBE_TEXT =
  "Alice's camelCaseWord moved to Lisbon on 3 March 2023, two weeks ago; HTTP-2 costs $4.50 — naïve café ÉCOLE résumé 42nd O'Brien x86_64 e-mail U.S.A. running runs ran?";
const PROBE_TIME = new Date(Date.UTC(2023, 5, 15, 12));
const SPEAKER_PROBES = [
  PROBE_TEXT,
  'Dr. Ann Lee: how was Lisbon?',
  "O'Brien-Smith Jr: fine",
  'caroline: lower case',
  'A B C D E: too long',
];

function fingerprint(): string {
  const probe = JSON.stringify([
    tokenize(PROBE_TEXT),
    turnDates(PROBE_TEXT, PROBE_TIME).map((date) => date.getTime()),
    SPEAKER_PROBES.map((text) => turnSpeaker(text) ?? null),
    SPEAKER_PROBES.map((text) => turnAnswerKinds(withoutSpeaker(text))),
  ]);
  return createHash('sha256').update(probe).digest('hex').slice(0, 16);
}

/** Identifies what wrote a snapshot: only a snapshot of this exact format is read. */
export const SNAPSHOT_FORMAT = `partition-${LAYOUT_VERSION}-${fingerprint()}`;

/** Per chunk slot of the lexical state: its flags, its dates (ms since the epoch) and its speaker. */
export interface TurnColumns {
  /** Bit 0: the turn asks; the bits above: its answer kinds (search/turn-answers.ts). */
  flags: Uint8Array;
  dateCount: Int32Array;
  dates: Float64Array;
  /** Index into `speakers`, -1 when the turn has none. */
  speaker: Int32Array;
  speakers: string[];
}

/** The vector partition's rows in its slot order; chunk and memory ids are the lexical state's at `lexicalSlot`. */
export interface VectorColumns {
  dimensions: number;
  lexicalSlot: Int32Array;
  /** `lexicalSlot.length` rows of `dimensions` floats. */
  rows: Float32Array;
}

/**
 * The vector rows of a decoded snapshot: their bytes (little-endian float32) as pieces in order,
 * views of the parts the store read, so that they are copied once, into the row store
 * (Partition.fromRows), and not first into one buffer of their own.
 */
export interface DecodedVectorColumns {
  dimensions: number;
  lexicalSlot: Int32Array;
  rowBytes: readonly Uint8Array[];
}

export interface PartitionSnapshot {
  lexical: LexicalState;
  turns: TurnColumns;
  vectors: VectorColumns;
  graph: GraphState;
}

/** What decodePartitionSnapshot gives: a PartitionSnapshot whose postings and vector rows are still bytes. */
export type DecodedPartitionSnapshot = Omit<PartitionSnapshot, 'lexical' | 'vectors'> & {
  lexical: LexicalStateBytes;
  vectors: DecodedVectorColumns;
};

/** The vector rows as a snapshot keeps them: each row's chunk named by its slot in the lexical state. */
export function vectorColumns(
  dimensions: number,
  lexicalChunkIds: readonly string[],
  vectors: { chunkIds: readonly string[]; rows: Float32Array },
): VectorColumns {
  const slotOf = new Map<string, number>();
  for (const [slot, chunkId] of lexicalChunkIds.entries()) slotOf.set(chunkId, slot);
  if (vectors.chunkIds.length !== lexicalChunkIds.length)
    throw new Error('index snapshot: the vector and lexical partitions hold different chunks');
  const lexicalSlot = new Int32Array(vectors.chunkIds.length);
  for (const [slot, chunkId] of vectors.chunkIds.entries()) {
    const at = slotOf.get(chunkId);
    if (at === undefined) throw new Error(`index snapshot: chunk ${chunkId} has a vector but no lexical entry`);
    lexicalSlot[slot] = at;
  }
  return { dimensions, lexicalSlot, rows: vectors.rows };
}

/** The lexical state's chunk and memory id of each slot. */
type ChunkSlots = Pick<LexicalState, 'chunkIds' | 'memoryIds'>;

/** The vector partition's chunk and memory ids, in its slot order (the inverse of vectorColumns). */
export function vectorIdsOf(snapshot: { lexical: ChunkSlots; vectors: { lexicalSlot: Int32Array } }): {
  chunkIds: string[];
  memoryIds: string[];
} {
  const { chunkIds, memoryIds } = snapshot.lexical;
  const slots = snapshot.vectors.lexicalSlot;
  return {
    chunkIds: Array.from(slots, (slot) => chunkIds[slot]!),
    memoryIds: Array.from(slots, (slot) => memoryIds[slot]!),
  };
}

/** The turn facts of the lexical state's chunks, in its slot order (a chunk without facts has none). */
export function turnColumns(chunkIds: readonly string[], factOf: (chunkId: string) => TurnFact | undefined): TurnColumns {
  const flags = new Uint8Array(chunkIds.length);
  const dateCount = new Int32Array(chunkIds.length);
  const speaker = new Int32Array(chunkIds.length).fill(-1);
  const speakers: string[] = [];
  const speakerIndex = new Map<string, number>();
  const facts = chunkIds.map(factOf);
  let total = 0;
  for (const fact of facts) total += fact?.dates.length ?? 0;
  const dates = new Float64Array(total);
  let at = 0;
  for (const [slot, fact] of facts.entries()) {
    if (!fact) continue;
    flags[slot] = (fact.question ? 1 : 0) | (fact.answers << 1);
    dateCount[slot] = fact.dates.length;
    dates.set(fact.dates, at);
    at += fact.dates.length;
    if (fact.speaker === undefined) continue;
    let index = speakerIndex.get(fact.speaker);
    if (index === undefined) speakerIndex.set(fact.speaker, (index = speakers.push(fact.speaker) - 1));
    speaker[slot] = index;
  }
  return { flags, dateCount, dates, speaker, speakers };
}

const NO_DATES = new Float64Array(0);

/** The turn facts a snapshot holds, chunk by chunk in slot order (the inverse of turnColumns). */
export function* turnFactsOf(
  snapshot: Pick<PartitionSnapshot, 'turns'> & { lexical: ChunkSlots },
): Generator<{ chunkId: string; memoryId: string; fact: TurnFact }> {
  const { chunkIds, memoryIds } = snapshot.lexical;
  const { flags, dateCount, dates, speaker, speakers } = snapshot.turns;
  let at = 0;
  for (let slot = 0; slot < chunkIds.length; slot++) {
    const count = dateCount[slot]!;
    const fact = {
      question: (flags[slot]! & 1) === 1,
      answers: flags[slot]! >> 1,
      // Most turns speak of no date: they share one empty array (nothing writes to a fact's dates).
      dates: count === 0 ? NO_DATES : dates.slice(at, at + count),
      speaker: speakers[speaker[slot]!],
    };
    yield { chunkId: chunkIds[slot]!, memoryId: memoryIds[slot]!, fact };
    at += count;
  }
}

const padded = (bytes: number): number => (bytes + 7) & ~7;

const EMPTY = new Uint8Array(0);

const bytesOf = (view: ArrayBufferView): Uint8Array => new Uint8Array(view.buffer, view.byteOffset, view.byteLength);

/** Strings met while encoding, each once; rows name them by index. */
class StringPool {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();

  of(text: string): number {
    let at = this.index.get(text);
    if (at === undefined) this.index.set(text, (at = this.list.push(text) - 1));
    return at;
  }
}

/** Graph rows' validity: bit 0 set when the row carries it (rows stored before validity existed do not). */
const HAS_VALIDITY = 1;
const GRAPH_HEADER_WORDS = 8;

/**
 * The graph as sections: a header of counts, the string pool (UTF-16 length of each string, then
 * all of them as UTF-8), then columns. Lengths in UTF-16 units let the decoder slice one decoded
 * string; a string that UTF-8 cannot carry (a lone surrogate) is refused, so nothing decodes differently.
 */
function encodeGraph(graph: GraphState): ArrayBufferView[] {
  const pool = new StringPool();
  const targetIndex = new Map<string, number>();
  const entityColumns = new Int32Array(graph.entities.length * 4);
  const aliasCount = new Int32Array(graph.entities.length);
  const aliases: number[] = [];
  for (const [i, entity] of graph.entities.entries()) {
    targetIndex.set(entity.id, i);
    entityColumns.set([pool.of(entity.id), pool.of(entity.name), pool.of(entity.category), pool.of(entity.description)], i * 4);
    aliasCount[i] = entity.aliasKeys.length;
    for (const key of entity.aliasKeys) aliases.push(pool.of(key));
  }
  const factColumns = new Int32Array(graph.facts.length * 5);
  const confidence = new Float64Array(graph.facts.length);
  for (const [i, fact] of graph.facts.entries()) {
    targetIndex.set(fact.id, graph.entities.length + i);
    factColumns.set(
      [pool.of(fact.id), pool.of(fact.subjectId), pool.of(fact.objectId), pool.of(fact.predicate), pool.of(fact.description)],
      i * 5,
    );
    confidence[i] = fact.confidence;
  }
  let rowTotal = 0;
  for (const memory of graph.memories) rowTotal += memory.rows.length;
  const memoryIds = new Int32Array(graph.memories.length);
  const rowCount = new Int32Array(graph.memories.length);
  const target = new Int32Array(rowTotal);
  const chunkIndex = new Int32Array(rowTotal);
  const description = new Int32Array(rowTotal);
  const count = new Float64Array(rowTotal);
  const flags = new Uint8Array(rowTotal);
  const validFrom = new Float64Array(rowTotal);
  const validTo = new Float64Array(rowTotal);
  let at = 0;
  for (const [i, memory] of graph.memories.entries()) {
    memoryIds[i] = pool.of(memory.memoryId);
    rowCount[i] = memory.rows.length;
    for (const row of memory.rows) {
      const index = targetIndex.get(row.targetId);
      if (index === undefined)
        throw new Error(`index snapshot: a row of ${memory.memoryId} names ${row.targetId}, which the graph does not hold`);
      target[at] = index;
      chunkIndex[at] = row.chunkIndex;
      description[at] = pool.of(row.description);
      count[at] = row.count;
      if (row.validFrom !== undefined || row.validTo !== undefined) {
        flags[at] = HAS_VALIDITY;
        validFrom[at] = row.validFrom ? row.validFrom.getTime() : NaN;
        validTo[at] = row.validTo ? row.validTo.getTime() : NaN;
      }
      at++;
    }
  }
  const joined = pool.list.join('');
  const text = Buffer.from(joined, 'utf8');
  if (text.toString('utf8') !== joined) throw new Error('index snapshot: a graph string is not valid UTF-16');
  const lengths = Int32Array.from(pool.list, (entry) => entry.length);
  const header = new Uint32Array([
    pool.list.length,
    text.byteLength,
    graph.entities.length,
    aliases.length,
    graph.facts.length,
    graph.memories.length,
    rowTotal,
    0,
  ]);
  return [
    header,
    lengths,
    text,
    entityColumns,
    aliasCount,
    Int32Array.from(aliases),
    factColumns,
    confidence,
    memoryIds,
    rowCount,
    target,
    chunkIndex,
    description,
    count,
    flags,
    validFrom,
    validTo,
  ];
}

export function encodePartitionSnapshot(snapshot: PartitionSnapshot): Buffer {
  const { lexical, turns, vectors } = snapshot;
  const slots = lexical.chunkIds.length;
  if (turns.flags.length !== slots || turns.dateCount.length !== slots || turns.speaker.length !== slots)
    throw new Error('index snapshot: turn facts do not match the chunks');
  if (vectors.lexicalSlot.length !== slots || vectors.rows.length !== slots * vectors.dimensions)
    throw new Error('index snapshot: vector rows do not match the chunks');
  const strings = [lexical.chunkIds, lexical.memoryIds, lexical.terms, turns.speakers].map((list) =>
    Buffer.from(list.join(SEPARATOR), 'utf8'),
  );
  const arrays: ArrayBufferView[] = [
    lexical.docLength,
    lexical.termLength,
    lexical.postingSlots,
    lexical.postingFrequencies,
    turns.flags,
    turns.dateCount,
    turns.speaker,
    turns.dates,
  ];
  const graph = encodeGraph(snapshot.graph);
  const header = new Uint32Array(HEADER_WORDS);
  header.set([
    LAYOUT_VERSION,
    lexical.chunkIds.length,
    lexical.terms.length,
    lexical.postingSlots.length,
    turns.dates.length,
    strings[0]!.length,
    strings[1]!.length,
    strings[2]!.length,
    turns.speakers.length,
    strings[3]!.length,
    vectors.dimensions,
    graph.reduce((sum, section) => sum + padded(section.byteLength), 0),
    0,
  ]);
  const sections: ArrayBufferView[] = [header, ...strings.slice(0, 3), ...arrays, strings[3]!, vectors.lexicalSlot, vectors.rows, ...graph];
  const total = sections.reduce((sum, section) => sum + padded(section.byteLength), 0);
  const out = Buffer.alloc(total);
  let offset = 0;
  for (const section of sections) {
    out.set(bytesOf(section), offset);
    offset += padded(section.byteLength);
  }
  return out;
}

/**
 * Reads sections in order from the snapshot's bytes, given as one buffer or as the pieces the store
 * read (any sizes, any alignment), all at once or appended as they arrive; throws on anything that
 * runs past what it holds. A section within one piece is a view of it; one across pieces, or not
 * aligned for its typed array, is copied.
 */
class SectionReader {
  private readonly parts: Uint8Array[];
  private part = 0;
  private offset = 0;
  /** Bytes taken so far, padding included. */
  position = 0;
  /** Bytes appended and not yet taken. */
  buffered = 0;

  constructor(parts: readonly Uint8Array[]) {
    this.parts = [...parts];
    for (const part of parts) this.buffered += part.byteLength;
    this.skipEmpty();
  }

  get done(): boolean {
    return this.part === this.parts.length;
  }

  /** One more piece after those given (a snapshot read as its parts arrive). */
  append(part: Uint8Array): void {
    this.parts.push(part);
    this.buffered += part.byteLength;
    this.skipEmpty();
  }

  private skipEmpty(): void {
    while (this.part < this.parts.length && this.offset === this.parts[this.part]!.byteLength) {
      this.part++;
      this.offset = 0;
    }
  }

  /** The next `byteLength` bytes as views of the pieces they lie in, then the section's padding skipped. */
  pieces(byteLength: number): Uint8Array[] {
    if (byteLength < 0) throw new Error('index snapshot: truncated');
    const views: Uint8Array[] = [];
    for (let need = padded(byteLength), wanted = byteLength; need > 0;) {
      const current = this.parts[this.part];
      if (!current) throw new Error('index snapshot: truncated');
      const step = Math.min(need, current.byteLength - this.offset);
      const kept = Math.min(step, wanted);
      // Plain views, whatever the pieces are (a driver's Buffers): the sections decode alike.
      if (kept > 0) views.push(new Uint8Array(current.buffer, current.byteOffset + this.offset, kept));
      wanted -= kept;
      need -= step;
      this.advance(step);
    }
    return views;
  }

  /**
   * Views of the next bytes, at most `most`, of those buffered (no padding skipped): a section taken
   * as it arrives. A piece wholly taken is let go here, so that only the views keep it.
   */
  drain(most: number): Uint8Array[] {
    const views: Uint8Array[] = [];
    while (most > 0 && this.buffered > 0) {
      const current = this.parts[this.part]!;
      const step = Math.min(most, current.byteLength - this.offset);
      views.push(new Uint8Array(current.buffer, current.byteOffset + this.offset, step));
      most -= step;
      if (this.offset + step === current.byteLength) this.parts[this.part] = EMPTY;
      this.advance(step);
    }
    return views;
  }

  private advance(step: number): void {
    this.offset += step;
    this.position += step;
    this.buffered -= step;
    if (this.parts[this.part] === EMPTY) this.offset = 0;
    this.skipEmpty();
  }

  /** The next `byteLength` bytes, copied, without taking them (their padding must be buffered too). */
  peek(byteLength: number): Uint8Array {
    const saved = [this.part, this.offset, this.position, this.buffered] as const;
    const bytes = new Uint8Array(this.take(byteLength));
    [this.part, this.offset, this.position, this.buffered] = saved;
    return bytes;
  }

  take(byteLength: number): Uint8Array {
    const views = this.pieces(byteLength);
    if (views.length === 1) return views[0]!;
    const joined = new Uint8Array(byteLength);
    let at = 0;
    for (const view of views) {
      joined.set(view, at);
      at += view.byteLength;
    }
    return joined;
  }

  /** The next section, at an offset its typed array can view (copied when it is not). */
  private aligned(byteLength: number, alignment: number): Uint8Array {
    const view = this.take(byteLength);
    return view.byteOffset % alignment === 0 ? view : new Uint8Array(view);
  }

  ints(count: number): Int32Array {
    const view = this.aligned(count * 4, 4);
    return new Int32Array(view.buffer, view.byteOffset, count);
  }

  uints(count: number): Uint32Array {
    const view = this.aligned(count * 4, 4);
    return new Uint32Array(view.buffer, view.byteOffset, count);
  }

  doubles(count: number): Float64Array {
    const view = this.aligned(count * 8, 8);
    return new Float64Array(view.buffer, view.byteOffset, count);
  }

  /**
   * NUL-separated UTF-8 strings of which neighbours are often equal (the memory id of each chunk
   * slot: a memory's chunks are mostly in a run): an entry equal to the one before shares its
   * string, so 100,000 slots of 1,000 memories decode 1,000 strings, and maps keyed by them hash
   * each once. Decodes as `text` does (a NUL never falls inside a UTF-8 sequence).
   */
  repeatedText(byteLength: number, count: number): string[] {
    const view = this.take(byteLength);
    if (count === 0) return [];
    const bytes = Buffer.from(view.buffer, view.byteOffset, view.byteLength);
    const list = new Array<string>(count);
    let start = 0;
    let previous = -1;
    for (let n = 0; n < count; n++) {
      let end = bytes.indexOf(0, start);
      if (end < 0) end = bytes.byteLength;
      if (n === count - 1 ? end !== bytes.byteLength : end === bytes.byteLength) throw new Error('index snapshot: string count mismatch');
      const same = previous >= 0 && end - start === start - 1 - previous && bytes.compare(bytes, previous, start - 1, start, end) === 0;
      list[n] = same ? list[n - 1]! : bytes.toString('utf8', start, end);
      previous = start;
      start = end + 1;
    }
    return list;
  }

  /** NUL-separated UTF-8 strings. */
  text(byteLength: number, count: number): string[] {
    const view = this.take(byteLength);
    const list = count === 0 ? [] : Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('utf8').split(SEPARATOR);
    if (list.length !== count) throw new Error('index snapshot: string count mismatch');
    return list;
  }
}

function decodeGraph(reader: SectionReader): GraphState {
  const [poolCount, textBytes, entityCount, aliasTotal, factCount, memoryCount, rowTotal] = reader.uints(
    GRAPH_HEADER_WORDS,
  ) as unknown as number[];
  const lengths = reader.ints(poolCount!);
  const textView = reader.take(textBytes!);
  const joined = Buffer.from(textView.buffer, textView.byteOffset, textView.byteLength).toString('utf8');
  const pool = new Array<string>(poolCount!);
  let at = 0;
  for (let i = 0; i < poolCount!; i++) {
    pool[i] = joined.slice(at, at + lengths[i]!);
    at += lengths[i]!;
  }
  if (at !== joined.length) throw new Error('index snapshot: graph strings do not add up');
  const str = (index: number): string => {
    const value = pool[index];
    if (value === undefined) throw new Error('index snapshot: graph string out of range');
    return value;
  };
  const entityColumns = reader.ints(entityCount! * 4);
  const aliasCount = reader.ints(entityCount!);
  const aliases = reader.ints(aliasTotal!);
  const entities: GraphState['entities'] = [];
  let alias = 0;
  for (let i = 0; i < entityCount!; i++) {
    const keys: string[] = [];
    for (let k = 0; k < aliasCount[i]!; k++) keys.push(str(aliases[alias++]!));
    entities.push({
      id: str(entityColumns[i * 4]!),
      name: str(entityColumns[i * 4 + 1]!),
      category: str(entityColumns[i * 4 + 2]!),
      description: str(entityColumns[i * 4 + 3]!),
      aliasKeys: keys,
    });
  }
  if (alias !== aliasTotal) throw new Error('index snapshot: alias keys do not add up');
  const factColumns = reader.ints(factCount! * 5);
  const confidence = reader.doubles(factCount!);
  const facts: GraphState['facts'] = [];
  for (let i = 0; i < factCount!; i++) {
    facts.push({
      id: str(factColumns[i * 5]!),
      subjectId: str(factColumns[i * 5 + 1]!),
      objectId: str(factColumns[i * 5 + 2]!),
      predicate: str(factColumns[i * 5 + 3]!),
      description: str(factColumns[i * 5 + 4]!),
      confidence: confidence[i]!,
    });
  }
  const targetIds = [...entities.map((entity) => entity.id), ...facts.map((fact) => fact.id)];
  const memoryIds = reader.ints(memoryCount!);
  const rowCount = reader.ints(memoryCount!);
  const target = reader.ints(rowTotal!);
  const chunkIndex = reader.ints(rowTotal!);
  const description = reader.ints(rowTotal!);
  const count = reader.doubles(rowTotal!);
  const flags = reader.take(rowTotal!);
  const validFrom = reader.doubles(rowTotal!);
  const validTo = reader.doubles(rowTotal!);
  const date = (ms: number): Date | null => (Number.isNaN(ms) ? null : new Date(ms));
  const memories: GraphState['memories'] = [];
  let row = 0;
  for (let i = 0; i < memoryCount!; i++) {
    const rows: ProvenanceRow[] = [];
    const end = row + rowCount[i]!;
    if (end > rowTotal!) throw new Error('index snapshot: graph rows do not add up');
    for (; row < end; row++) {
      const targetId = targetIds[target[row]!];
      if (targetId === undefined) throw new Error('index snapshot: graph row target out of range');
      const at = chunkIndex[row]!;
      // As an integer when it is one (counts are): a double field is a heap number per row, 138,000 at 100k chunks.
      const stored = count[row]!;
      const times = Number.isInteger(stored) && Math.abs(stored) < 2 ** 30 ? stored | 0 : stored;
      const said = str(description[row]!);
      // Literals, not a spread of the validity: 138,000 rows at 100k chunks, each copied by a spread.
      rows.push(
        flags[row]! & HAS_VALIDITY
          ? { targetId, chunkIndex: at, count: times, description: said, validFrom: date(validFrom[row]!), validTo: date(validTo[row]!) }
          : { targetId, chunkIndex: at, count: times, description: said },
      );
    }
    memories.push({ memoryId: str(memoryIds[i]!), rows });
  }
  if (row !== rowTotal) throw new Error('index snapshot: graph rows do not add up');
  return { entities, facts, memories };
}

/** What a snapshot holds before its vector rows: its lexical state, turn columns and the rows' chunk slots. */
export type SnapshotLead = Pick<DecodedPartitionSnapshot, 'lexical' | 'turns'> & { vectors: Omit<VectorColumns, 'rows'> };

/** The header's counts (the first HEADER_WORDS words). */
function headerOf(words: Uint32Array) {
  const [
    version,
    slots,
    terms,
    postings,
    dates,
    chunkIdBytes,
    memoryIdBytes,
    termBytes,
    speakerCount,
    speakerBytes,
    dimensions,
    graphBytes,
  ] = words as unknown as number[];
  if (version !== LAYOUT_VERSION) throw new Error(`index snapshot: layout ${version}, expected ${LAYOUT_VERSION}`);
  return {
    slots: slots!,
    terms: terms!,
    postings: postings!,
    dates: dates!,
    chunkIdBytes: chunkIdBytes!,
    memoryIdBytes: memoryIdBytes!,
    termBytes: termBytes!,
    speakerCount: speakerCount!,
    speakerBytes: speakerBytes!,
    dimensions: dimensions!,
    /** The graph's sections, padding included: the snapshot's tail. */
    graphBytes: graphBytes!,
    /** The vector rows' bytes (padding not included). */
    rowBytes: slots! * dimensions! * 4,
  };
}

/** The sections before the vector rows, from the header on. */
function decodeLead(reader: SectionReader): SnapshotLead {
  const header = headerOf(reader.uints(HEADER_WORDS));
  const { slots, terms, postings, dates, speakerCount, dimensions } = header;
  const chunkIds = reader.text(header.chunkIdBytes, slots);
  const memoryIds = reader.repeatedText(header.memoryIdBytes, slots);
  const termList = reader.text(header.termBytes, terms);
  const docLength = reader.ints(slots);
  const termLength = reader.ints(terms);
  // Left as the parts' bytes: the lexical partition copies them into its arena once.
  const postingSlots = reader.pieces(postings * 4);
  const postingFrequencies = reader.pieces(postings * 2);
  const flags = reader.take(slots);
  const dateCount = reader.ints(slots);
  const speaker = reader.ints(slots);
  const dateValues = reader.doubles(dates);
  const speakers = reader.text(header.speakerBytes, speakerCount);
  for (const index of speaker) if (index < -1 || index >= speakers.length) throw new Error('index snapshot: speaker out of range');
  const lexicalSlot = reader.ints(slots);
  for (const slot of lexicalSlot) if (slot < 0 || slot >= slots) throw new Error('index snapshot: vector slot out of range');
  return {
    lexical: { chunkIds, memoryIds, docLength, terms: termList, termLength, postingSlots, postingFrequencies },
    turns: { flags, dateCount, dates: dateValues, speaker, speakers },
    vectors: { dimensions, lexicalSlot },
  };
}

/**
 * Decodes what encodePartitionSnapshot wrote, from one buffer or from its bytes in pieces (the
 * parts the store read, in order); throws on anything malformed. The result may view the input:
 * it holds the input's memory until it is built into partitions.
 */
export function decodePartitionSnapshot(bytes: Uint8Array | readonly Uint8Array[]): DecodedPartitionSnapshot {
  const reader = new SectionReader(bytes instanceof Uint8Array ? [bytes] : bytes);
  const lead = decodeLead(reader);
  const { dimensions, lexicalSlot } = lead.vectors;
  const rowBytes = reader.pieces(lexicalSlot.length * dimensions * 4);
  const graph = decodeGraph(reader);
  if (!reader.done) throw new Error('index snapshot: trailing bytes');
  return { ...lead, vectors: { dimensions, lexicalSlot, rowBytes }, graph };
}

/** Where a streamed decode puts the vector rows' bytes as they arrive (search/vector-index.ts RowsReceiver). */
export interface RowsSink {
  receive(piece: Uint8Array): void;
  finish(): void;
}

/**
 * decodePartitionSnapshot of a snapshot read as its parts arrive (`byteLength` in all): the vector
 * rows, two thirds of a large snapshot's bytes, go to the sink `openRows` makes once the sections
 * before them are decoded, a part at a time, so that each part of rows is let go as soon as it is
 * copied instead of all of them being held until the last one is read; the sink is returned as
 * `rows`. Throws as decodePartitionSnapshot does, or what `parts` or the sink throw; stops reading
 * the parts then.
 */
export async function streamPartitionSnapshot<Sink extends RowsSink>(
  parts: AsyncIterable<Uint8Array>,
  byteLength: number,
  openRows: (lead: SnapshotLead) => Sink,
): Promise<SnapshotLead & Pick<PartitionSnapshot, 'graph'> & { rows: Sink }> {
  const reader = new SectionReader([]);
  const iterator = parts[Symbol.asyncIterator]();
  const more = async (): Promise<boolean> => {
    const next = await iterator.next();
    if (!next.done) reader.append(next.value);
    return !next.done;
  };
  const fill = async (bytes: number): Promise<void> => {
    while (reader.buffered < bytes) if (!(await more())) throw new Error('index snapshot: truncated');
  };
  try {
    await fill(padded(HEADER_WORDS * 4));
    const { rowBytes, graphBytes } = headerOf(new Uint32Array(reader.peek(HEADER_WORDS * 4).buffer));
    // The sections before the rows, whose sizes the header gives, end where the rows and graph begin.
    const leadBytes = byteLength - padded(rowBytes) - graphBytes;
    await fill(leadBytes);
    const lead = decodeLead(reader);
    if (reader.position !== leadBytes) throw new Error('index snapshot: sections do not add up');
    const sink = openRows(lead);
    for (let left = rowBytes; left > 0;) {
      await fill(1);
      for (const piece of reader.drain(left)) {
        sink.receive(piece);
        left -= piece.byteLength;
      }
    }
    sink.finish();
    // The rows' padding (the next section starts on an 8-byte boundary).
    await fill(padded(rowBytes) - rowBytes);
    reader.drain(padded(rowBytes) - rowBytes);
    while (await more());
    const graph = decodeGraph(reader);
    if (!reader.done) throw new Error('index snapshot: trailing bytes');
    return { ...lead, graph, rows: sink };
  } finally {
    await iterator.return?.();
  }
}
