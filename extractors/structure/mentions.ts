/**
 * Finds entity mentions in one parsed sentence: named spans read off compromise's tags (named-spans.ts: the same
 * rules its `.people()`, `.places()`, `.organizations()`, `.money()`, `.emails()`, `.urls()` and `#Date+`
 * selections use, applied in one pass), then noun phrases from compromise's chunker, which become products,
 * concepts, or point at a named span. How tokens read as written (capitals, phrase breaks, display text) is in
 * token-text.ts.
 */
import { findNamedSpans, type NamedSpan } from './named-spans.js';
import { isLexiconWord, type Token } from './parse.js';
import { breaksAfter, breaksBefore, displayText, has, hasInnerUpper, hasLatinOrDigit, hasUpperInitial } from './token-text.js';
import type { EntityCategory } from './types.js';
import {
  APPROXIMATORS,
  CLAUSE_OPENERS,
  CONDITIONALS,
  COORDINATORS,
  FEMALE_PRONOUNS,
  FIRST_PERSON,
  FIRST_PERSON_POSSESSIVE,
  GENERIC_NOUNS,
  KIN_NOUNS,
  MALE_PRONOUNS,
  MEASURE_NOUNS,
  MISTAGGED_PREPOSITIONS,
  NOUN_PHRASE_PREFIX_WORDS,
  ORGANIZATION_CUES,
  ORGANIZATION_HEADS,
  ORGANIZATION_KINDS,
  PLACE_HEADS,
  PLACE_KINDS,
  PRODUCT_KINDS,
  PLURAL_PRONOUNS,
} from './word-lists.js';

export type PronounKind = 'first-person' | 'male' | 'female' | 'plural' | 'other';

export type NounPhrase =
  | { kind: 'pronoun'; start: number; end: number; pronoun: PronounKind }
  | {
      kind: 'phrase';
      start: number;
      end: number;
      /** The entity the phrase names, or null when it is too vague to be one. */
      /** `surface`: the phrase as written when it names the entity in other words ("the Kestrel 2 router" for "Kestrel 2"). */
      entity: { name: string; category: EntityCategory; span: NamedSpan | null; surface?: string } | null;
      /** "my sister": the phrase is owned by the speaker. */
      ownedByFirstPerson: boolean;
      /** "my brother Mike": the role words in front of the person the phrase names ("brother"). */
      role: string | null;
      /** The phrase names a person or a person's role ("my sister", "our landlord"), not a thing ("my bike"). */
      personal: boolean;
      /** A name inside the phrase that is an entity of its own: "Zephyr" in "the Zephyr bike". */
      part: { name: string; category: EntityCategory } | null;
    };

// ---------------------------------------------------------------------------------------------------
// Noun phrases

// Spans that always stand alone rather than modify a noun ("Berlin last week" is a place and a date).
const STANDALONE_CATEGORIES: ReadonlySet<EntityCategory> = new Set(['email', 'url', 'money', 'quantity', 'date']);

export const isConditional = (token: Token): boolean => has(token, 'Condition') || CONDITIONALS.has(token.word);
const isPronoun = (token: Token | undefined): boolean => has(token, 'Pronoun') && !has(token, 'Possessive');
const isNounChunk = (token: Token): boolean =>
  token.chunk === 'Noun' || (token.chunk === '' && (has(token, 'Noun') || has(token, 'Value'))) || isPronoun(token);

function pronounKind(word: string): PronounKind {
  if (FIRST_PERSON.has(word)) return 'first-person';
  if (MALE_PRONOUNS.has(word)) return 'male';
  if (FEMALE_PRONOUNS.has(word)) return 'female';
  if (PLURAL_PRONOUNS.has(word)) return 'plural';
  return 'other';
}

/**
 * Proper-noun evidence for one token: compromise's #ProperNoun/#Acronym, camel case ("iPhone"), or a capital
 * that is not just the sentence's first letter. `capitalisedElsewhere` holds words seen capitalised mid-sentence
 * in the same text, which vouches for a sentence-initial "Kubernetes".
 */
function looksProper(token: Token, index: number, capitalisedElsewhere: ReadonlySet<string>, next?: Token): boolean {
  if (isRoleAcronym(token)) return false; // "CEO" is a role, not a name
  if (has(token, 'Acronym')) return true;
  if (hasInnerUpper(token.text)) return true;
  // compromise also tags some lower-case words #ProperNoun ("office" after "Google's"): a capital is required.
  if (!hasUpperInitial(token.text)) return false;
  if (has(token, 'ProperNoun')) return true;
  return index > 0 || capitalisedElsewhere.has(token.word) || isBareSingularSubject(token, next);
}

/**
 * A sentence-initial capitalised singular noun with no determiner, directly before its verb, is a name:
 * English puts an article before a common count noun ("The shell cracked"), so "Shell sold its oil
 * fields" names a company. Mass nouns ("Water flooded the road") and plurals take no article and are
 * left alone, as are words compromise knows (function words, verbs, adjectives, first names).
 */
function isBareSingularSubject(token: Token, next: Token | undefined): boolean {
  if (!has(token, 'Singular') || has(token, 'Uncountable') || has(token, 'Pronoun') || isLexiconWord(token.word)) return false;
  if (GENERIC_NOUNS.has(token.word) || CLAUSE_OPENERS.has(token.word) || /[,;:]/u.test(token.post)) return false;
  return isFiniteVerb(next) && !has(next, 'Copula') && !has(next, 'Auxiliary');
}

/**
 * compromise sometimes tags the second verb of "moved to Berlin and joined Acme" as an adjective inside a noun
 * chunk. An "-ed" adjective right after a coordinator, with a verb earlier in the sentence, is read as a verb.
 */
export function isMistaggedCoordinatedVerb(tokens: readonly Token[], index: number): boolean {
  const token = tokens[index];
  const previous = tokens[index - 1];
  if (token === undefined || previous === undefined || !has(token, 'Adjective') || !token.word.endsWith('ed')) return false;
  if (!has(previous, 'Conjunction')) return false;
  return tokens.slice(0, index - 1).some((earlier) => has(earlier, 'Verb') && earlier.chunk === 'Verb');
}

/** Splits the sentence into noun-phrase units (compromise's noun chunks, cut at commas, conjunctions and standalone spans). */
function segmentNounPhrases(tokens: readonly Token[], spanAt: readonly (NamedSpan | undefined)[]): { start: number; end: number }[] {
  const units: { start: number; end: number }[] = [];
  let start = -1;
  const close = (end: number): void => {
    if (start >= 0 && end > start) units.push({ start, end });
    start = -1;
  };
  let i = 0;
  while (i < tokens.length) {
    const token = tokens[i];
    if (token === undefined) break;
    const span = spanAt[i];
    if (span !== undefined && span.start === i && STANDALONE_CATEGORIES.has(span.category)) {
      close(i);
      units.push({ start: i, end: span.end });
      i = span.end;
      continue;
    }
    if (span !== undefined) {
      // A person/organization/place span is one block of the current phrase, commas inside it included ("Porto, Portugal").
      if (breaksBefore(token)) close(i);
      if (start < 0) start = i;
      i = span.end;
      if (breaksAfter(tokens[i - 1])) close(i);
      continue;
    }
    const coordinator = has(token, 'Conjunction') || has(token, 'QuestionWord') || isConditional(token);
    const preposition = (has(token, 'Preposition') || MISTAGGED_PREPOSITIONS.has(token.word)) && token.word !== 'of';
    if (!isNounChunk(token) || coordinator || preposition || token.text === '' || isMistaggedCoordinatedVerb(tokens, i)) {
      close(i);
      i += 1;
      continue;
    }
    if (isPronoun(token)) {
      close(i);
      units.push({ start: i, end: i + 1 });
      i += 1;
      continue;
    }
    // "gave Bob the book": a determiner after a noun starts a new phrase.
    if (start >= 0 && has(token, 'Determiner') && !has(tokens[i - 1], 'Determiner')) close(i);
    if (breaksBefore(token)) close(i);
    if (start < 0) start = i;
    i += 1;
    if (breaksAfter(token)) close(i);
  }
  close(tokens.length);
  return units;
}

const MAX_CONCEPT_WORDS = 5;
// Product and concept names are made of letters, digits and a little punctuation ("Node.js", "C#", "R&D",
// "9-to-5"); anything else (brackets, quotes, arrows, underscores) means a code or markup fragment.
const UNNAME_LIKE_CHARACTERS = /[^\p{L}\p{M}\p{N}\s.'’&+\-/#,]|--/u;

// Chief-something titles ("CFO", "CTO"): compromise tags only some of them #Actor.
const ROLE_ACRONYM = /^C[A-Z]{1,2}O$/u;
const isRoleAcronym = (token: Token): boolean => ROLE_ACRONYM.test(token.text) || (has(token, 'Acronym') && has(token, 'Actor'));
const isRoleNoun = (token: Token): boolean =>
  // Lower case is the test, not #ProperNoun: compromise tags kinship words like "brother" #Person (hence #ProperNoun).
  isRoleAcronym(token) || (has(token, 'Noun') && !has(token, 'Pronoun') && /^\p{Ll}/u.test(token.text));

/** A common noun for a person (compromise's #Actor: "sister", "landlord", "doctor"; a few kin words it misses). */
const isPersonNoun = (token: Token | undefined): boolean =>
  token !== undefined && (has(token, 'Actor') || (has(token, 'Noun') && KIN_NOUNS.has(token.lemma)));

const TITLE_CASE_WORD = /^\p{Lu}\p{Ll}+$/u;
const isFiniteVerb = (token: Token | undefined): boolean =>
  token !== undefined && token.chunk === 'Verb' && has(token, 'Verb') && !has(token, 'Gerund') && !has(token, 'Participle');

/**
 * The category of a capitalised name compromise did not recognise, tokens [start, end), from its own
 * words and its place in the sentence; product when nothing speaks for anything else:
 *   - an organisation or place head as its last word: "Harbor Foods", "Queen Street";
 *   - two or three plain title-case words compromise's lexicon knows none of: a person ("Kofi Mensah");
 *   - right after "at", "joined", "left" (works at Vexa), or the subject of a verb (Vexa hired Bob): an
 *     organisation: things are used, bought and named, organisations act and employ.
 */
function properNameCategory(tokens: readonly Token[], start: number, end: number): EntityCategory {
  const last = tokens[end - 1];
  if (last !== undefined && ORGANIZATION_HEADS.has(last.word)) return 'organization';
  if (last !== undefined && PLACE_HEADS.has(last.word) && end - start > 1) return 'place';
  const words = tokens.slice(start, end);
  const before = tokens[start - 1];
  // "Alex and Priya": a name coordinated with a person is one.
  if (before !== undefined && COORDINATORS.has(before.word) && has(tokens[start - 2], 'Person')) return 'person';
  // People take no article: "the Night Owls", "a Kindle Paperwhite" are not people.
  const articled = has(before, 'Determiner');
  const unknownWords = words.every((token) => TITLE_CASE_WORD.test(token.text) && !isLexiconWord(token.word));
  // The cue first: "joined Aperture Science" is an organisation, whatever its words.
  if (before !== undefined && ORGANIZATION_CUES.has(before.word)) return 'organization';
  if (!articled && words.length >= 2 && words.length <= 3 && unknownWords) return 'person';
  // The subject of a verb: nothing but an article before it in its clause ("The museum in Florence received" is not).
  const opensClause = before === undefined || articled || /[,;:]/u.test(before.post) || has(before, 'Conjunction');
  const acts = isFiniteVerb(tokens[end]) && !has(tokens[end], 'Copula');
  if (opensClause && acts && words.every((token) => !/\d/u.test(token.text))) return 'organization';
  return 'product';
}

const isLowerNoun = (token: Token): boolean =>
  has(token, 'Noun') && !has(token, 'Pronoun') && !has(token, 'Determiner') && !has(token, 'Possessive') && /^\p{Ll}/u.test(token.text);

/** The category a kind noun gives the name beside it ("startup" -> organization, "city" -> place, "cousin" -> person). */
function kindCategory(kind: Token): EntityCategory | null {
  if (ORGANIZATION_KINDS.has(kind.lemma) || ORGANIZATION_KINDS.has(kind.word)) return 'organization';
  if (PLACE_KINDS.has(kind.lemma) || PLACE_KINDS.has(kind.word)) return 'place';
  if (PRODUCT_KINDS.has(kind.lemma) || PRODUCT_KINDS.has(kind.word)) return 'product';
  if (isPersonNoun(kind)) return 'person';
  return null;
}

const roleOf = (words: readonly Token[]): string | null => (words.length === 0 ? null : words.map((token) => token.lemma).join(' '));

/**
 * Where a phrase of tokens [start, end) divides into lower-case common nouns and a capitalised name,
 * none of it a named span and no "of" inside:
 *   - apposition, nouns then the name: "bakery chain Crumbly" (nameStart at "Crumbly");
 *   - modifier, the name then nouns: "Pulse X2 headphones" (nameEnd after "X2").
 */
function splitAtName(
  tokens: readonly Token[],
  start: number,
  end: number,
  spanAt: readonly (NamedSpan | undefined)[],
  capitalisedElsewhere: ReadonlySet<string>,
): { kind: 'apposition'; nameStart: number } | { kind: 'modifier'; nameEnd: number } | null {
  if (end - start < 2) return null;
  // Nationalities ("the Dutch football federation"), dates ("the Q3 report") and hyphenated words are no names here.
  for (let i = start; i < end; i += 1) {
    const token = tokens[i]!;
    if (spanAt[i] !== undefined || token.word === 'of' || ['Demonym', 'Date', 'Hyphenated'].some((tag) => has(token, tag))) return null;
  }
  const proper = (i: number): boolean =>
    looksProper(tokens[i]!, i, capitalisedElsewhere, tokens[i + 1]) || (i > start && has(tokens[i], 'Value') && !isLowerNoun(tokens[i]!));
  let nameStart = end;
  while (nameStart > start && proper(nameStart - 1)) nameStart -= 1;
  if (nameStart < end && nameStart > start && !has(tokens[nameStart], 'Value')) {
    const nouns = tokens.slice(start, nameStart);
    if (nouns.every(isLowerNoun)) return { kind: 'apposition', nameStart };
    return null;
  }
  let nameEnd = start;
  while (nameEnd < end && proper(nameEnd)) nameEnd += 1;
  if (nameEnd > start && nameEnd < end && tokens.slice(nameEnd, end).every(isLowerNoun)) return { kind: 'modifier', nameEnd };
  return null;
}

/** What a noun-phrase unit refers to: a named span, a product, a concept, or nothing salient. */
function resolvePhrase(
  tokens: readonly Token[],
  start: number,
  end: number,
  spanAt: readonly (NamedSpan | undefined)[],
  capitalisedElsewhere: ReadonlySet<string>,
): NounPhrase {
  let coreStart = start;
  let ownedByFirstPerson = false;
  // Strip determiners, quantifiers, possessive pronouns, adverbs and vague adjectives ("the new policy" -> "policy").
  while (coreStart < end - 1 && spanAt[coreStart] === undefined) {
    const token = tokens[coreStart];
    if (token === undefined) break;
    const strippable =
      has(token, 'Determiner') ||
      has(token, 'Preposition') ||
      has(token, 'Adverb') ||
      (has(token, 'Pronoun') && has(token, 'Possessive')) ||
      FIRST_PERSON_POSSESSIVE.has(token.word) ||
      NOUN_PHRASE_PREFIX_WORDS.has(token.word) ||
      // "its largest store", "a faster route": a degree is an opinion of the thing, not its name.
      has(token, 'Superlative') ||
      has(token, 'Comparative') ||
      has(token, 'Value') ||
      // "over 300 patients", "about 40 stores": an approximate number says how many, not what.
      (APPROXIMATORS.has(token.word) && has(tokens[coreStart + 1], 'Value')) ||
      // "a five-year lease", "a 24-hour hotline": the measure of the thing (after its number) is no part of its name.
      (has(token, 'Hyphenated') && has(tokens[coreStart - 1], 'Value') && has(tokens[coreStart - 1], 'Hyphenated') && coreStart < end - 1);
    if (!strippable) break;
    if (FIRST_PERSON_POSSESSIVE.has(token.word)) ownedByFirstPerson = true;
    coreStart += 1;
  }
  let coreEnd = end;
  // Drop trailing words that cannot end a noun phrase ("CEO of" when the object was cut off, "Alice later").
  const cannotEndPhrase = (token: Token | undefined): boolean =>
    ['Preposition', 'Determiner', 'Adverb'].some((tag) => has(token, tag)) || (has(token, 'Adjective') && !has(token, 'Noun'));
  while (coreEnd > coreStart + 1 && cannotEndPhrase(tokens[coreEnd - 1])) coreEnd -= 1;

  let part: { name: string; category: EntityCategory } | null = null;
  const phrase = (
    entity: { name: string; category: EntityCategory; span: NamedSpan | null; surface?: string } | null,
    role: string | null = null,
  ): NounPhrase => ({
    kind: 'phrase',
    start,
    end,
    entity,
    ownedByFirstPerson,
    role,
    personal: role !== null || entity?.category === 'person' || isPersonNoun(tokens[coreEnd - 1]),
    part,
  });

  // The phrase is a named span, possibly behind descriptive words ("the famous Alice Smith").
  const lastSpan = spanAt[coreEnd - 1];
  if (lastSpan !== undefined && lastSpan.end === coreEnd) {
    let onlyModifiersBefore = true;
    for (let i = coreStart; i < lastSpan.start; i += 1) {
      if (!(has(tokens[i], 'Adjective') || has(tokens[i], 'Value') || has(tokens[i], 'Determiner'))) onlyModifiersBefore = false;
    }
    if (onlyModifiersBefore) return phrase({ name: lastSpan.name, category: lastSpan.category, span: lastSpan });
    // "my brother Mike", "our CTO Dana Lee": role nouns in apposition to a person name the person.
    const roleWords = tokens.slice(coreStart, lastSpan.start);
    // A title compromise knows as a person noun may be capitalised ("Chef Marco Pierre", "Senator Ana Ruiz").
    const isTitle = (token: Token): boolean => isRoleNoun(token) || (has(token, 'Actor') && TITLE_CASE_WORD.test(token.text));
    if (lastSpan.category === 'person' && roleWords.length > 0 && roleWords.every(isTitle)) {
      return phrase({ name: lastSpan.name, category: 'person', span: lastSpan }, roleWords.map((token) => token.lemma).join(' '));
    }
  }

  // Names and common nouns side by side, with no named span among them.
  const split = splitAtName(tokens, coreStart, coreEnd, spanAt, capitalisedElsewhere);
  if (split?.kind === 'apposition') {
    // "the bakery chain Crumbly", "startup Lumio", "my cousin Ravi": the common noun says what the name is.
    const kind = tokens[split.nameStart - 1]!;
    const category = kindCategory(kind) ?? properNameCategory(tokens, split.nameStart, coreEnd);
    const name = displayText(tokens, split.nameStart, coreEnd);
    const role = category === 'person' ? roleOf(tokens.slice(coreStart, split.nameStart)) : null;
    if (!UNNAME_LIKE_CHARACTERS.test(name)) return phrase({ name, category, span: null }, role);
  } else if (split?.kind === 'modifier') {
    // "the Zephyr bike", "the Python script": a name of its own, and the thing of its kind stays the concept.
    const head = tokens[coreEnd - 1]!;
    const name = displayText(tokens, coreStart, split.nameEnd);
    const category = kindCategory(head) ?? (ORGANIZATION_HEADS.has(head.word) ? 'organization' : 'product');
    // But a model name with its number names the thing itself: "the Pulse X2 headphones" are the Pulse X2,
    // "the Atlas 3 server" is the Atlas 3 (a tool's artefact, "the Python script", has no model number).
    const modelNumber = tokens.slice(coreStart, split.nameEnd).some((token) => /\d/u.test(token.text));
    if (!UNNAME_LIKE_CHARACTERS.test(name) && category === 'product' && modelNumber)
      return phrase({ name, category, span: null, surface: displayText(tokens, coreStart, coreEnd) });
    if (!UNNAME_LIKE_CHARACTERS.test(name)) part = { name, category };
  }

  const ofIndex = tokens.slice(coreStart, coreEnd).findIndex((token) => token.word === 'of');
  const headIndex = ofIndex > 0 ? coreStart + ofIndex - 1 : coreEnd - 1;
  const head = tokens[headIndex];
  if (head === undefined || has(head, 'Pronoun') || has(head, 'QuestionWord') || !hasLatinOrDigit(head.text)) return phrase(null);
  if (has(head, 'Adjective') && !has(head, 'Noun')) return phrase(null);

  // Product rule: a phrase made only of proper nouns (plus model numbers) that compromise did not recognise
  // as a person, organization or place: "iPhone 15", "Model S", "Kubernetes", "PostgreSQL 16".
  let properWords = 0;
  let allProper = true;
  for (let i = coreStart; i < coreEnd; i += 1) {
    const token = tokens[i];
    if (token === undefined) continue;
    if (looksProper(token, i, capitalisedElsewhere, tokens[i + 1])) properWords += 1;
    else if (!(has(token, 'Value') && i > coreStart)) allProper = false;
  }
  // A capitalised first word of the sentence counts when the rest of the phrase is proper ("Tesla Model S").
  const first = tokens[coreStart];
  if (!allProper && first !== undefined && coreStart === 0 && hasUpperInitial(first.text) && properWords >= 1) {
    allProper = tokens
      .slice(1, coreEnd)
      .every((token, offset) => looksProper(token, offset + 1, capitalisedElsewhere) || has(token, 'Value'));
    if (allProper) properWords += 1;
  }
  // "the Berlin office of Acme Corp": the named part is an entity of its own, so the concept is what precedes "of".
  let namedAfterOf = ofIndex > 0 && spanAt[coreStart + ofIndex + 1] !== undefined;
  if (!allProper && ofIndex > 0 && !namedAfterOf) {
    let nameStart = coreStart + ofIndex + 1;
    while (nameStart < coreEnd && has(tokens[nameStart], 'Determiner')) nameStart += 1;
    const named =
      nameStart < coreEnd &&
      tokens
        .slice(nameStart, coreEnd)
        .every((token, offset) => looksProper(token, nameStart + offset, capitalisedElsewhere) || has(token, 'Value'));
    if (MEASURE_NOUNS.has(head.lemma) || MEASURE_NOUNS.has(head.word)) {
      // "40 tons of plastic": the measure says how much, the thing is what follows "of".
      const measured = resolvePhrase(tokens, nameStart, end, spanAt, capitalisedElsewhere);
      return measured.kind === 'phrase' ? { ...measured, start, ownedByFirstPerson } : measured;
    }
    // A role keeps its organisation ("the CTO of Globex": roles of different employers are different
    // roles), and a capitalised name with "of" inside is one name ("VP of Sales", "Bank of England").
    // The head before "of" decides: "the Rome office of Deloitte" splits, "Bank of England" does not.
    const lowerBeforeOf = tokens
      .slice(coreStart, coreStart + ofIndex)
      .every((token, offset) => /^\p{Ll}/u.test(token.text) || (spanAt[coreStart + offset] !== undefined && offset < ofIndex - 1));
    if (named && lowerBeforeOf && !isPersonNoun(head) && !isRoleAcronym(head)) {
      // "the board of Caldera Mining": a name compromise did not recognise, an entity of its own.
      const name = displayText(tokens, nameStart, coreEnd);
      if (!UNNAME_LIKE_CHARACTERS.test(name)) part = { name, category: properNameCategory(tokens, nameStart, coreEnd) };
      namedAfterOf = true;
    }
  }
  if (namedAfterOf) coreEnd = coreStart + ofIndex;
  const name = displayText(tokens, coreStart, coreEnd);
  if (UNNAME_LIKE_CHARACTERS.test(name)) return phrase(null);
  if (allProper && properWords > 0) return phrase({ name, category: properNameCategory(tokens, coreStart, coreEnd), span: null });

  // Concept: a salient common-noun phrase ("Berlin office", "billing service").
  const headWord = head.word.replace(/['’]s$/u, '');
  const tooVague =
    GENERIC_NOUNS.has(headWord) ||
    GENERIC_NOUNS.has(head.lemma) ||
    (coreEnd - coreStart === 1 && NOUN_PHRASE_PREFIX_WORDS.has(headWord)) ||
    (headWord.length < 3 && !has(head, 'Acronym')) ||
    has(head, 'Date');
  const tooLong = coreEnd - coreStart > MAX_CONCEPT_WORDS;
  // A finite verb inside the phrase means the chunker swallowed a clause ("install needs no network").
  const swallowedVerb = tokens
    .slice(coreStart, coreEnd)
    .some((token) => has(token, 'Verb') && !['Gerund', 'Participle', 'Noun', 'Adjective'].some((tag) => has(token, tag)));
  if (tooVague || tooLong || swallowedVerb || !/\p{L}/u.test(head.text)) return phrase(null);
  return phrase({ name, category: 'concept', span: null });
}

export interface SentenceMentions {
  spans: NamedSpan[];
  /** Span covering each token index, if any. */
  spanAt: (NamedSpan | undefined)[];
  phrases: NounPhrase[];
}

/** Named spans and noun phrases of one sentence. */
export function findMentions(tokens: readonly Token[], capitalisedElsewhere: ReadonlySet<string>): SentenceMentions {
  const spans = findNamedSpans(tokens);
  const spanAt: (NamedSpan | undefined)[] = new Array<NamedSpan | undefined>(tokens.length).fill(undefined);
  for (const span of spans) for (let i = span.start; i < span.end; i += 1) spanAt[i] = span;
  const phrases: NounPhrase[] = segmentNounPhrases(tokens, spanAt).map(({ start, end }) => {
    const token = tokens[start];
    if (end - start === 1 && token !== undefined && isPronoun(token))
      return { kind: 'pronoun', start, end, pronoun: pronounKind(token.word) };
    return resolvePhrase(tokens, start, end, spanAt, capitalisedElsewhere);
  });
  return { spans, spanAt, phrases };
}

/** Lower-case words written with a capital somewhere other than a sentence start: proper-noun evidence. */
export function collectCapitalisedWords(sentences: readonly { tokens: readonly Token[] }[]): Set<string> {
  const words = new Set<string>();
  for (const { tokens } of sentences) {
    for (let i = 1; i < tokens.length; i += 1) {
      const token = tokens[i];
      if (token !== undefined && hasUpperInitial(token.text) && !has(token, 'Pronoun')) words.add(token.word);
    }
  }
  return words;
}
