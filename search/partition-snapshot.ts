/**
 * A collection's lexical partition and turn facts as bytes, so that a cold load reads them back
 * instead of re-tokenising every chunk's text (issue 25: tokenising was most of a 100k-chunk
 * load's CPU). The store keeps the bytes (store/index-snapshots.ts); search/search-index.ts
 * decides when to write and trust them.
 *
 * Layout (little-endian, as the stored vectors): a header of Uint32 counts, then sections each
 * starting on an 8-byte boundary: chunk ids, memory ids and terms (UTF-8, NUL-separated), tokens
 * per chunk, postings per term, the postings' chunk slots and term frequencies, then per chunk
 * its flags (bit 0: it asks; above: the answer kinds it can give, search/turn-answers.ts), how many dates it speaks of and its speaker (an index into the speakers' names,
 * -1 for none), then those dates and the names (UTF-8, NUL-separated).
 *
 * `SNAPSHOT_FORMAT` names the layout and fingerprints the tokenizer, the turn-date and the
 * turn-speaker and answer-kind rules on probe texts: a snapshot written by code that tokenises differently is never read, so a load from
 * a snapshot ranks exactly as a load from the chunks would.
 */
import { createHash } from 'node:crypto';
import type { LexicalState } from './lexical-index.js';
import { tokenize } from './tokenize.js';
import type { TurnFact } from './turn-facts.js';
import { turnAnswerKinds } from './turn-answers.js';
import { turnDates } from './turn-dates.js';
import { turnSpeaker, withoutSpeaker } from './turn-speakers.js';

/** 3: the per-chunk byte holds flags (asks, answer kinds), no longer only whether the turn asks. */
const LAYOUT_VERSION = 3;
const HEADER_WORDS = 10;
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
export const SNAPSHOT_FORMAT = `lexical-${LAYOUT_VERSION}-${fingerprint()}`;

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

export interface PartitionSnapshot {
  lexical: LexicalState;
  turns: TurnColumns;
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

/** The turn facts a snapshot holds, chunk by chunk in slot order (the inverse of turnColumns). */
export function* turnFactsOf(snapshot: PartitionSnapshot): Generator<{ chunkId: string; memoryId: string; fact: TurnFact }> {
  const { chunkIds, memoryIds } = snapshot.lexical;
  const { flags, dateCount, dates, speaker, speakers } = snapshot.turns;
  let at = 0;
  for (let slot = 0; slot < chunkIds.length; slot++) {
    const count = dateCount[slot]!;
    const fact = {
      question: (flags[slot]! & 1) === 1,
      answers: flags[slot]! >> 1,
      dates: dates.slice(at, at + count),
      speaker: speakers[speaker[slot]!],
    };
    yield { chunkId: chunkIds[slot]!, memoryId: memoryIds[slot]!, fact };
    at += count;
  }
}

const padded = (bytes: number): number => (bytes + 7) & ~7;

export function encodePartitionSnapshot(snapshot: PartitionSnapshot): Buffer {
  const { lexical, turns } = snapshot;
  const slots = lexical.chunkIds.length;
  if (turns.flags.length !== slots || turns.dateCount.length !== slots || turns.speaker.length !== slots)
    throw new Error('index snapshot: turn facts do not match the chunks');
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
  ]);
  const sections: ArrayBufferView[] = [header, ...strings.slice(0, 3), ...arrays, strings[3]!];
  const total = sections.reduce((sum, section) => sum + padded(section.byteLength), 0);
  const out = Buffer.alloc(total);
  let offset = 0;
  for (const section of sections) {
    out.set(new Uint8Array(section.buffer, section.byteOffset, section.byteLength), offset);
    offset += padded(section.byteLength);
  }
  return out;
}

/** Decodes what encodePartitionSnapshot wrote; throws on anything malformed. */
export function decodePartitionSnapshot(bytes: Uint8Array): PartitionSnapshot {
  // Typed-array views need aligned offsets: work on an aligned copy when the input is not.
  const data = bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
  let offset = 0;
  const take = (byteLength: number): Uint8Array => {
    if (offset + byteLength > data.byteLength) throw new Error('index snapshot: truncated');
    const view = data.subarray(offset, offset + byteLength);
    offset += padded(byteLength);
    return view;
  };
  const ints = (count: number): Int32Array => {
    const view = take(count * 4);
    return new Int32Array(view.buffer, view.byteOffset, count);
  };
  const headerBytes = take(HEADER_WORDS * 4);
  const header = new Uint32Array(headerBytes.buffer, headerBytes.byteOffset, HEADER_WORDS);
  const [version, slots, terms, postings, dates, chunkIdBytes, memoryIdBytes, termBytes, speakerCount, speakerBytes] =
    header as unknown as number[];
  if (version !== LAYOUT_VERSION) throw new Error(`index snapshot: layout ${version}, expected ${LAYOUT_VERSION}`);
  const text = (byteLength: number, count: number): string[] => {
    const view = take(byteLength);
    const list = count === 0 ? [] : Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('utf8').split(SEPARATOR);
    if (list.length !== count) throw new Error('index snapshot: string count mismatch');
    return list;
  };
  const chunkIds = text(chunkIdBytes!, slots!);
  const memoryIds = text(memoryIdBytes!, slots!);
  const termList = text(termBytes!, terms!);
  const docLength = ints(slots!);
  const termLength = ints(terms!);
  const postingSlots = ints(postings!);
  const frequencyBytes = take(postings! * 2);
  const postingFrequencies = new Uint16Array(frequencyBytes.buffer, frequencyBytes.byteOffset, postings!);
  const flags = take(slots!);
  const dateCount = ints(slots!);
  const speaker = ints(slots!);
  const dateBytes = take(dates! * 8);
  const dateValues = new Float64Array(dateBytes.buffer, dateBytes.byteOffset, dates!);
  const speakers = text(speakerBytes!, speakerCount!);
  for (const index of speaker) if (index < -1 || index >= speakers.length) throw new Error('index snapshot: speaker out of range');
  return {
    lexical: { chunkIds, memoryIds, docLength, terms: termList, termLength, postingSlots, postingFrequencies },
    turns: { flags, dateCount, dates: dateValues, speaker, speakers },
  };
}
