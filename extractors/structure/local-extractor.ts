/**
 * Local, LLM-free structure extractor: entities and subject–predicate–object facts from one chunk of
 * English text, using compromise's tagger and chunker. Fast enough to run next to the embedder in the
 * ingestion pipeline; it favours precision over recall and never throws.
 */
import {
  type ClauseUnit,
  extractClauseFacts,
  factConfidence,
  PENALTY,
  type Predicate,
  type RawFact,
  readPredicate,
  type Ref,
} from './facts.js';
import {
  collectCapitalisedWords,
  findMentions,
  isConditional,
  isMistaggedCoordinatedVerb,
  type NounPhrase,
  type PronounKind,
} from './mentions.js';
import type { Gender, NamedSpan } from './named-spans.js';
import { clipText, normalizeEntityName } from './normalize.js';
import { prepareText, parseSentences, pastTenseLemma, type Sentence, type Token } from './parse.js';
import { periodEndsPhrase } from './token-text.js';
import { prepositionOf, verbOf } from './validity.js';
import type {
  ChunkStructure,
  EntityCategory,
  ExtractedEntity,
  ExtractedFact,
  ExtractOptions,
  ParsedChunkStructure,
  StructureExtractor,
} from './types.js';
import { COORDINATORS, ENGLISH_FUNCTION_WORDS, MISTAGGED_PREPOSITIONS, RELATIVE_PRONOUNS, STATUS_OF_WORD } from './word-lists.js';

export { normalizeEntityName } from './normalize.js';

/** Longest input looked at (the service's largest chunk size); the rest of a longer text is ignored. */
const MAX_INPUT_CHARS = 20_000;
const MAX_ENTITIES = 200;
const MAX_FACTS = 200;
/** Characters of its sentence an entity keeps as its description (a mention row carries the same). */
export const MAX_ENTITY_DESCRIPTION = 200;
const MAX_FACT_DESCRIPTION = 300;
/** Run-on "sentences" (lists, tables) longer than this give no facts: the clause reader would only guess. */
const MAX_FACT_SENTENCE_TOKENS = 120;
const LONG_SENTENCE_TOKENS = 40;

// When one key is seen with several categories the most specific wins; concept is the fallback.
const CATEGORY_RANK: Record<EntityCategory, number> = {
  person: 0,
  organization: 1,
  place: 2,
  email: 3,
  url: 4,
  money: 5,
  date: 6,
  quantity: 7,
  product: 8,
  concept: 9,
};

interface EntityRecord {
  key: string;
  name: string;
  category: EntityCategory;
  aliases: Set<string>;
  mentions: number;
  description: string;
}

/** One entity per key for the whole text, in order of first mention. */
class EntityRegistry {
  readonly records = new Map<string, EntityRecord>();
  // Sentences introduce several entities in a row: clip each sentence once.
  private lastSentence = '';
  private lastDescription = '';

  private describe(sentence: string): string {
    if (sentence !== this.lastSentence) {
      this.lastSentence = sentence;
      this.lastDescription = clipText(sentence, MAX_ENTITY_DESCRIPTION);
    }
    return this.lastDescription;
  }

  /** Counts a mention and returns the entity's key, or null if the name is empty or the cap is reached. */
  note(name: string, category: EntityCategory, sentence: string, surface: string = name): string | null {
    const key = normalizeEntityName(name);
    if (key.length === 0) return null;
    let record = this.records.get(key);
    if (record === undefined) {
      if (this.records.size >= MAX_ENTITIES) return null;
      record = { key, name, category, aliases: new Set(), mentions: 0, description: this.describe(sentence) };
      this.records.set(key, record);
    } else if (CATEGORY_RANK[category] < CATEGORY_RANK[record.category]) {
      record.category = category;
    }
    record.mentions += 1;
    for (const form of [name, surface]) if (form !== record.name) record.aliases.add(form);
    return key;
  }
}

/** Recent person mentions, for resolving "she", "he" and "they". */
class PersonMemory {
  private readonly people: { key: string; gender: Gender }[] = [];

  remember(key: string, gender: Gender): void {
    this.people.push({ key, gender });
  }

  resolve(pronoun: PronounKind): string | null {
    for (let i = this.people.length - 1; i >= 0; i -= 1) {
      const person = this.people[i];
      if (person === undefined) continue;
      if (pronoun === 'female' && person.gender === 'male') continue;
      if (pronoun === 'male' && person.gender === 'female') continue;
      return person.key;
    }
    return null;
  }
}

const has = (token: Token | undefined, tag: string): boolean => token?.tags.has(tag) === true;
const isVerbToken = (token: Token): boolean =>
  (token.chunk === 'Verb' || (token.chunk === '' && has(token, 'Verb'))) && !(has(token, 'Pronoun') && !has(token, 'Possessive'));
const STRONG_BREAK = /[;:()!?"“”[\]]|\s[-–—]\s?/u;

// Words that may stand between a copula and the state it names: "is now closed", "is no longer open".
const STATE_ADVERBS = new Set(['not', 'no', 'longer', 'never', 'now', 'still', 'already', 'finally', 'again', 'officially', 'currently']);
const negates = (token: Token): boolean => has(token, 'Negative') || token.word === 'not' || token.word === 'never' || token.word === 'no';

/**
 * A state word after a copula ("is open", "was closed", "is no longer open", "isn't closed"): the
 * status it names and whether it is negated, or null. The passive form ("was reopened", "has been
 * resolved") is read with its verb group instead.
 */
function copularState(tokens: readonly Token[], index: number): { status: string; negated: boolean } | null {
  const token = tokens[index];
  const status = token === undefined ? undefined : STATUS_OF_WORD.get(token.word);
  if (token === undefined || status === undefined || !has(token, 'Adjective')) return null;
  // "a closed case": the state word modifies a noun, it is not the complement.
  const next = tokens[index + 1];
  if (next !== undefined && !/[,;:.!?]/u.test(token.post) && has(next, 'Noun') && !has(next, 'Date')) return null;
  let negated = false;
  let j = index - 1;
  for (; j >= 0; j -= 1) {
    const before = tokens[j]!;
    if (/[,;:.!?]/u.test(before.post)) return null;
    if (!STATE_ADVERBS.has(before.word)) break;
    if (negates(before)) negated = true;
  }
  const verb = tokens[j];
  if (verb === undefined || !has(verb, 'Copula')) return null;
  return { status, negated };
}

/** The state a passive verb group puts its subject in ("was closed", "has been reopened"), or null. */
function passiveState(group: readonly Token[], predicate: Predicate): string | null {
  const last = group[group.length - 1];
  if (last === undefined || !predicate.passive) return null;
  return STATUS_OF_WORD.get(last.word) ?? null;
}
const COMMA_BREAK = /,/u;

// Every English sentence of some length contains a few of the commonest function words; without them we
// are looking at another language, a keyword list or a table, where the English tagger's guesses are noise.
const MIN_FUNCTION_WORD_SHARE = 0.1;
function looksLikeEnglish(tokens: readonly Token[]): boolean {
  // Lower-case words only: a name-heavy English sentence ("Bob Jones founded Acme Corp.") is still English.
  const words = tokens.filter((token) => /^\p{Ll}/u.test(token.text) || token.text === 'I');
  if (words.length < 5) return true;
  // The written form, not compromise's normal form, which folds accents ("à" -> "a").
  const functionWords = words.filter((token) => ENGLISH_FUNCTION_WORDS.has(token.text.toLowerCase())).length;
  return functionWords / words.length >= MIN_FUNCTION_WORD_SHARE;
}
// Spans that compromise recognises from its lexicon or from their shape, trusted even outside English prose.
const LANGUAGE_INDEPENDENT: ReadonlySet<EntityCategory> = new Set(['email', 'url', 'money', 'person', 'place', 'organization']);

class ChunkExtraction {
  private readonly entities = new EntityRegistry();
  private readonly people = new PersonMemory();
  private readonly facts = new Map<string, ExtractedFact>();
  /** Status entities named in a sentence, noted once a fact uses them (stateRef). */
  private readonly pendingStates = new Map<string, { name: string; sentence: string }>();
  private readonly speakerName: string | null;

  constructor(options: ExtractOptions) {
    const speaker = typeof options.speaker === 'string' ? options.speaker.trim() : '';
    this.speakerName = normalizeEntityName(speaker).length > 0 ? speaker : null;
  }

  read(sentences: Sentence[]): void {
    const capitalisedElsewhere = collectCapitalisedWords(sentences);
    for (const sentence of sentences) this.readSentence(sentence, capitalisedElsewhere);
  }

  private readSentence(sentence: Sentence, capitalisedElsewhere: ReadonlySet<string>): void {
    const { tokens, text } = sentence;
    const { spans, phrases } = findMentions(tokens, capitalisedElsewhere);
    if (!looksLikeEnglish(tokens)) {
      // Keep only names and shapes; concepts and facts depend on English grammar.
      for (const span of spans) if (LANGUAGE_INDEPENDENT.has(span.category)) this.noteSpan(span, text);
      return;
    }

    const spanKeys = new Map<NamedSpan, Ref | null>();
    const refOfSpan = (span: NamedSpan): Ref | null => {
      if (!spanKeys.has(span)) spanKeys.set(span, this.noteSpan(span, text));
      return spanKeys.get(span) ?? null;
    };
    const phraseAt = new Map<number, NounPhrase>();
    for (const phrase of phrases) phraseAt.set(phrase.start, phrase);
    const spanStartingAt = new Map<number, NamedSpan>();
    for (const span of spans) spanStartingAt.set(span.start, span);

    const units: ClauseUnit[] = [];
    const possessions: { owned: Ref; role: string | null }[] = [];
    let i = 0;
    while (i < tokens.length) {
      const token = tokens[i];
      if (token === undefined) break;
      let end = i + 1;
      const phrase = phraseAt.get(i);
      const span = spanStartingAt.get(i);
      const state = span === undefined ? copularState(tokens, i) : null;
      if (state !== null) {
        units.push({ kind: 'state', ref: this.stateRef(state.status, text), negated: state.negated, endsClause: true });
      } else if (phrase !== undefined) {
        // Register named spans inside the phrase first, in reading order ("Berlin" in "the Berlin office").
        for (const inner of spans) if (inner.start >= phrase.start && inner.start < phrase.end) refOfSpan(inner);
        const ref = this.refOfPhrase(phrase, text, refOfSpan);
        units.push({ kind: 'np', ref });
        // "my sister", "my brother Mike": the speaker's people are facts about the speaker; "my bike" is not worth one.
        if (phrase.kind === 'phrase' && phrase.ownedByFirstPerson && phrase.personal && ref !== null)
          possessions.push({ owned: ref, role: phrase.role });
        end = phrase.end;
      } else if (span !== undefined) {
        units.push({ kind: 'np', ref: refOfSpan(span) });
        end = span.end;
      } else if (isMistaggedCoordinatedVerb(tokens, i)) {
        const lemma = pastTenseLemma(token.word);
        units.push({ kind: 'verb', predicate: { text: lemma, activeText: lemma, passive: false, recovered: true } });
      } else if (isVerbToken(token)) {
        while (end < tokens.length && !COMMA_BREAK.test(tokens[end - 1]?.post ?? '') && !STRONG_BREAK.test(tokens[end - 1]?.post ?? '')) {
          const next = tokens[end];
          if (next === undefined || !isVerbToken(next) || phraseAt.has(end) || spanStartingAt.has(end)) break;
          end += 1;
        }
        const group = tokens.slice(i, end);
        const predicate = readPredicate(group);
        if (predicate !== null) {
          units.push({ kind: 'verb', predicate });
          const status = passiveState(group, predicate);
          if (status !== null) {
            const negated = predicate.text.startsWith('not ');
            units.push({ kind: 'state', ref: this.stateRef(status, text), negated, endsClause: false });
          }
        }
      } else if (isConditional(token)) {
        units.push({ kind: 'condition' });
      } else if (COORDINATORS.has(token.word)) {
        units.push({ kind: 'conj' });
      } else if (RELATIVE_PRONOUNS.has(token.word)) {
        units.push({ kind: 'relative' });
      } else if (has(token, 'Preposition') || token.word === 'to' || MISTAGGED_PREPOSITIONS.has(token.word)) {
        units.push({ kind: 'prep', word: token.word });
      } else if (token.chunk === 'Adjective' || has(token, 'Adjective')) {
        units.push({ kind: 'complement' });
      }
      const last = tokens[end - 1];
      const post = last?.post ?? '';
      if (STRONG_BREAK.test(post) || (last !== undefined && periodEndsPhrase(last))) units.push({ kind: 'break', strong: true });
      else if (COMMA_BREAK.test(post)) units.push({ kind: 'break', strong: false });
      i = end;
    }

    // Questions state nothing ("Does Alice like Bob?").
    if (tokens.length > MAX_FACT_SENTENCE_TOKENS || /\?["')\]]*$/u.test(text)) return;
    const description = clipText(text, MAX_FACT_DESCRIPTION);
    const addFact = (fact: RawFact): void => this.addFact(fact, description);
    extractClauseFacts(units, tokens.length > LONG_SENTENCE_TOKENS ? PENALTY.longSentence : 0, addFact);
    const owner = possessions.length > 0 ? this.speakerRef(text) : null;
    for (const { owned, role } of possessions) {
      if (owner === null) break;
      // "my brother Mike" -> speaker have brother Mike; "my sister" -> speaker have sister.
      const predicate = role === null ? 'have' : `have ${role}`;
      addFact({ subject: owner, predicate, object: owned, confidence: factConfidence(owner, owned, PENALTY.possession) });
    }
  }

  private noteSpan(span: NamedSpan, sentence: string): Ref | null {
    const key = this.entities.note(span.name, span.category, sentence, span.surface);
    if (key === null) return null;
    if (span.category === 'person') this.people.remember(key, span.gender);
    return { key, category: span.category, via: 'mention' };
  }

  /**
   * The entity of a status ("closed"): a concept shared by everything said to be in it, noted
   * only when a fact uses it ("Alice is done" states no status and names no entity).
   */
  private stateRef(status: string, sentence: string): Ref | null {
    const key = normalizeEntityName(status);
    if (key.length === 0) return null;
    this.pendingStates.set(key, { name: status, sentence });
    return { key, category: 'concept', via: 'mention' };
  }

  private speakerRef(sentence: string): Ref | null {
    if (this.speakerName === null) return null;
    const key = this.entities.note(this.speakerName, 'person', sentence);
    return key === null ? null : { key, category: 'person', via: 'speaker' };
  }

  private refOfPhrase(phrase: NounPhrase, sentence: string, refOfSpan: (span: NamedSpan) => Ref | null): Ref | null {
    if (phrase.kind === 'pronoun') {
      if (phrase.pronoun === 'first-person') return this.speakerRef(sentence);
      if (phrase.pronoun === 'other') return null;
      const key = this.people.resolve(phrase.pronoun);
      return key === null ? null : { key, category: 'person', via: 'pronoun' };
    }
    if (phrase.part !== null) this.entities.note(phrase.part.name, phrase.part.category, sentence);
    const entity = phrase.entity;
    if (entity === null) return null;
    if (entity.span !== null) return refOfSpan(entity.span);
    const key = this.entities.note(entity.name, entity.category, sentence, entity.surface ?? entity.name);
    if (key === null) return null;
    return { key, category: this.entities.records.get(key)?.category ?? entity.category, via: 'mention' };
  }

  private addFact(fact: RawFact, description: string): void {
    if (fact.subject.key === fact.object.key) return;
    const state = this.pendingStates.get(fact.object.key);
    if (state !== undefined) {
      this.pendingStates.delete(fact.object.key);
      if (this.entities.note(state.name, 'concept', state.sentence) === null) return;
    }
    const id = `${fact.subject.key}\u0000${fact.predicate}\u0000${fact.object.key}`;
    const existing = this.facts.get(id);
    if (existing !== undefined) {
      existing.confidence = Math.max(existing.confidence, fact.confidence);
      return;
    }
    if (this.facts.size >= MAX_FACTS) return;
    this.facts.set(id, {
      subjectKey: fact.subject.key,
      predicate: fact.predicate,
      objectKey: fact.object.key,
      confidence: fact.confidence,
      description,
    });
  }

  /** Final entities and facts, after folding short names into full ones ("Alice" into "Alice Smith"). */
  result(): ChunkStructure {
    const redirect = mergeShortNames(this.entities.records);
    const entities: ExtractedEntity[] = [...this.entities.records.values()].map((record) => ({
      key: record.key,
      name: record.name,
      category: record.category,
      aliases: [...record.aliases].filter((alias) => alias !== record.name),
      mentions: record.mentions,
      description: record.description,
    }));
    const facts = new Map<string, ExtractedFact>();
    for (const fact of this.facts.values()) {
      const subjectKey = redirect.get(fact.subjectKey) ?? fact.subjectKey;
      const objectKey = redirect.get(fact.objectKey) ?? fact.objectKey;
      if (subjectKey === objectKey || !this.entities.records.has(subjectKey) || !this.entities.records.has(objectKey)) continue;
      const id = `${subjectKey}\u0000${fact.predicate}\u0000${objectKey}`;
      const existing = facts.get(id);
      if (existing === undefined) facts.set(id, { ...fact, subjectKey, objectKey });
      else existing.confidence = Math.max(existing.confidence, fact.confidence);
    }
    return { entities, facts: foldDates([...facts.values()], this.entities.records) };
  }
}

/**
 * Date phrases become the dates of the facts beside them: "Priya joined Infosys in 2019" reads as
 * the fact "join" Infosys in 2019, not also as a relation "join in" between Priya and a year. A date
 * fact folds into the facts of the same sentence, subject and verb with a non-date object; one with
 * no such sibling ("the lease expires on 31 May") stays a fact.
 */
function foldDates(facts: ExtractedFact[], records: ReadonlyMap<string, EntityRecord>): ExtractedFact[] {
  const isDate = (key: string): boolean => records.get(key)?.category === 'date';
  const siblingKey = (fact: ExtractedFact): string => `${fact.description}\u0000${fact.subjectKey}\u0000${verbOf(fact.predicate)}`;
  const siblings = new Map<string, ExtractedFact[]>();
  for (const fact of facts) {
    if (isDate(fact.objectKey)) continue;
    const key = siblingKey(fact);
    siblings.set(key, [...(siblings.get(key) ?? []), fact]);
  }
  return facts.filter((fact) => {
    const preposition = isDate(fact.objectKey) ? prepositionOf(fact.predicate) : null;
    const targets = preposition === null ? undefined : siblings.get(siblingKey(fact));
    if (preposition === null || targets === undefined) return true;
    for (const target of targets) {
      target.dates ??= [];
      if (!target.dates.some((when) => when.dateKey === fact.objectKey && when.preposition === preposition))
        target.dates.push({ preposition, dateKey: fact.objectKey });
    }
    return false;
  });
}

/**
 * Folds a one-word person ("Alice", "Smith") into the only multi-word person it starts or ends ("Alice
 * Smith"), and a one-word organization/product/capitalised concept into the only organization it starts
 * ("Acme" -> "Acme Corp"). Ambiguous short names stay separate. Returns old key -> new key.
 */
function mergeShortNames(records: Map<string, EntityRecord>): Map<string, string> {
  const redirect = new Map<string, string>();
  const all = [...records.values()];
  for (const short of all) {
    if (short.key.includes(' ')) continue;
    const asPerson = short.category === 'person';
    const asOrganization =
      short.category === 'organization' || short.category === 'product' || (short.category === 'concept' && /^\p{Lu}/u.test(short.name));
    if (!asPerson && !asOrganization) continue;
    const targets = all.filter((full) => {
      if (full === short || !full.key.includes(' ')) return false;
      const words = full.key.split(' ');
      if (asPerson && full.category === 'person') return words[0] === short.key || words[words.length - 1] === short.key;
      return asOrganization && full.category === 'organization' && words[0] === short.key;
    });
    const target = targets.length === 1 ? targets[0] : undefined;
    if (target === undefined) continue;
    target.mentions += short.mentions;
    for (const alias of [short.name, ...short.aliases]) if (alias !== target.name) target.aliases.add(alias);
    records.delete(short.key);
    redirect.set(short.key, target.key);
  }
  return redirect;
}

/** Extracts entities and facts from one chunk of text. Synchronous; never throws. */
export function extractChunkStructure(text: string, options: ExtractOptions = {}): ChunkStructure {
  return extractParsedChunk(text, options).structure;
}

/**
 * The same extraction, handing back the sentences it parsed when they cover the whole text (the
 * parse is most of the cost: procedure derivation reads the same sentences instead of parsing again).
 */
export function extractParsedChunk(text: string, options: ExtractOptions = {}): ParsedChunkStructure {
  const extraction = new ChunkExtraction(options ?? {});
  let sentences: Sentence[] | null = null;
  try {
    if (typeof text === 'string') {
      const parsed = parseSentences(prepareText(text.slice(0, MAX_INPUT_CHARS)));
      if (text.length <= MAX_INPUT_CHARS) sentences = parsed;
      extraction.read(parsed);
    }
  } catch {
    // A tagger failure on odd input must not fail ingestion: keep whatever was read before it.
  }
  return { structure: extraction.result(), sentences };
}

export const LOCAL_EXTRACTOR_ID = 'local-compromise-v1';

/** The local extractor behind the pluggable `StructureExtractor` interface. */
export function createLocalExtractor(): StructureExtractor {
  return {
    id: LOCAL_EXTRACTOR_ID,
    extract: (text: string, options?: ExtractOptions): Promise<ChunkStructure> => Promise.resolve(extractChunkStructure(text, options)),
    extractParsed: (text: string, options?: ExtractOptions): Promise<ParsedChunkStructure> =>
      Promise.resolve(extractParsedChunk(text, options)),
  };
}
