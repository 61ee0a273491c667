import type { Sentence } from './parse.js';

/**
 * Structure extracted from one chunk of text: the entities it names and the subject–predicate–object
 * facts it states between them. Produced by a local rule-based extractor today; an LLM-backed
 * extractor can implement the same `StructureExtractor` interface later.
 */

export type EntityCategory = 'person' | 'organization' | 'place' | 'product' | 'date' | 'money' | 'quantity' | 'email' | 'url' | 'concept';

export interface ExtractedEntity {
  /** normalizeEntityName(name): the resolution key. */
  key: string;
  /** Canonical display name (e.g. "Alice Smith", "Berlin office"). */
  name: string;
  category: EntityCategory;
  /** Other surface forms seen in this text (original casing), excluding `name`. */
  aliases: string[];
  /** How many times it is mentioned in this text. */
  mentions: number;
  /** Built from its mentions: the (trimmed, ≤ 200 chars) first sentence mentioning it. */
  description: string;
}

export interface ExtractedFact {
  /** Key of an entity in the same result's `entities`. */
  subjectKey: string;
  /** Normalised verb phrase, lower case, lemmatised where possible ("manage", "move to", "not like"). */
  predicate: string;
  /** Key of an entity in the same result's `entities`. */
  objectKey: string;
  /** 0..1, from how clean the parse was. */
  confidence: number;
  /** The source sentence, trimmed, ≤ 300 chars. */
  description: string;
  /**
   * When the sentence says the fact held, folded in from the date phrases beside it: "joined Acme in
   * 2019" is the fact "join" Acme with `[{ preposition: 'in', dateKey: '2019' }]`, not a second fact
   * "join in" 2019. Each `dateKey` is a date entity of the same result. Absent when none is given.
   */
  dates?: FactDate[];
}

export interface FactDate {
  /** The preposition before the date ("in", "since", "until", "as of"). */
  preposition: string;
  dateKey: string;
}

export interface ChunkStructure {
  entities: ExtractedEntity[];
  facts: ExtractedFact[];
}

export interface ExtractOptions {
  /** Conversation turns: the role of the speaker ("user", "assistant", …). First-person statements ("I", "my", "me") are attributed to an entity named after the role, category 'person'. */
  speaker?: string;
}

/** A chunk's structure with the sentences the extractor parsed it into, for later passes over the same text. */
export interface ParsedChunkStructure {
  structure: ChunkStructure;
  /**
   * `parseSentences(prepareText(text))` of the whole text (parse.ts), or null when the extractor did not
   * parse all of it: procedure derivation reuses it instead of parsing the chunk a second time.
   */
  sentences: Sentence[] | null;
}

/** Pluggable: an external LLM extractor can implement this later. */
export interface StructureExtractor {
  /** e.g. 'local-compromise-v1'. */
  readonly id: string;
  extract(text: string, options?: ExtractOptions): Promise<ChunkStructure>;
  /** Optional: the same structure, with the parse it was read from (an extractor without one hands back none). */
  extractParsed?(text: string, options?: ExtractOptions): Promise<ParsedChunkStructure>;
}
