/**
 * When a chunk says its facts held: the validity of each fact's provenance row (core/fact-timeline.ts
 * replays the rows). Pure and deterministic: no model, only the chunk's extracted structure, the
 * lexicon and the chunk's time (the memory's `occurred_at`, a message's `timestamp`, else when the
 * memory was created).
 *
 *   - Explicit dates come with the facts (ExtractedFact.dates, folded in by the extractor): "lives in
 *     Berlin since March 2024" gives "live in" → Berlin dated "since" march 2024; they count for every
 *     fact of the same subject and verb, and so does a lone fact with a date object ("expires on
 *     31 May"). since/from/in/on/as of/starting give the start;
 *     until/till/through/to give the end. A month or day without a year is the latest one at or
 *     before the chunk's time; a bare year is its 1 January (UTC).
 *   - Endings: a predicate the lexicon lists as ending its class ("leave", "move from"), a negated
 *     assertion ("not live in"), or "no longer" / "used to" / "any more" before the fact's verb.
 *     Such a row has no start: it says the fact held until the explicit date, else the chunk's time.
 *   - An explicit end without a start ("worked at Initech until 2024") is an ending too.
 *   - Anything else held from the explicit start, else from the chunk's time.
 */
import type { PredicateClassifier } from '../../core/fact-lexicon.js';
import type { ChunkStructure, ExtractedFact } from './types.js';

export interface RowValidity {
  validFrom: Date | null;
  validTo: Date | null;
}

const START_PREPOSITIONS = new Set(['since', 'from', 'in', 'on', 'starting', 'as of', 'beginning', 'effective']);
const END_PREPOSITIONS = new Set(['until', 'till', 'through', 'to', 'ending']);
const PREPOSITIONS = new Set([
  ...START_PREPOSITIONS,
  ...END_PREPOSITIONS,
  'at',
  'of',
  'for',
  'by',
  'with',
  'as',
  'into',
  'onto',
  'out',
  'about',
  'over',
  'after',
  'before',
  'during',
  'within',
]);

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const monthIndex = (word: string): number => {
  const index = MONTHS.findIndex((month) => month === word || (word.length >= 3 && month.startsWith(word.replace(/\.$/u, ''))));
  return index;
};

/**
 * An absolute date named by a date entity ("2024", "march 2024", "3 march 2024", "june 1",
 * "2024-05-01"), or null for anything relative or vague ("last week", "the summer").
 */
export function parseExplicitDate(text: string, reference: Date): Date | null {
  const clean = text
    .toLowerCase()
    .replace(/^(?:the|of)\s+/u, '')
    .replace(/(\d)(?:st|nd|rd|th)\b/gu, '$1')
    .replace(/,/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  const iso = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/u.exec(clean);
  if (iso) return utc(Number(iso[1]), Number(iso[2]) - 1, iso[3] ? Number(iso[3]) : 1);
  if (/^(1[89]|20)\d{2}$/u.test(clean)) return utc(Number(clean), 0, 1);
  const words = clean.split(' ');
  let month = -1;
  let day: number | null = null;
  let year: number | null = null;
  for (const word of words) {
    if (/^\d{4}$/u.test(word) && year === null) year = Number(word);
    else if (/^\d{1,2}$/u.test(word) && day === null) day = Number(word);
    else if (monthIndex(word) >= 0 && month < 0) month = monthIndex(word);
    else return null;
  }
  if (month < 0 || (day !== null && (day < 1 || day > 31))) return null;
  if (year !== null) return utc(year, month, day ?? 1);
  // No year: the latest such day at or before the reference ("since March", said in May 2025: 2025-03-01).
  const thisYear = utc(reference.getUTCFullYear(), month, day ?? 1);
  return thisYear && thisYear.getTime() <= reference.getTime() ? thisYear : utc(reference.getUTCFullYear() - 1, month, day ?? 1);
}

function utc(year: number, month: number, day: number): Date | null {
  if (month < 0 || month > 11) return null;
  const date = new Date(Date.UTC(year, month, day));
  return date.getUTCMonth() === month ? date : null;
}

/** The verb of a predicate without its trailing prepositions or negation: "move out of" → "move". */
export function verbOf(predicate: string): string {
  const words = predicate.replace(/^not /u, '').split(' ');
  while (words.length > 1) {
    const last = words[words.length - 1]!;
    const lastTwo = words.slice(-2).join(' ');
    if (PREPOSITIONS.has(lastTwo) && words.length > 2) words.splice(-2);
    else if (PREPOSITIONS.has(last)) words.pop();
    else break;
  }
  return words.join(' ');
}

/** The preposition a predicate ends with ("live since" → "since"), or null. */
export function prepositionOf(predicate: string): string | null {
  const words = predicate.split(' ');
  if (words.length < 2) return null;
  const lastTwo = words.slice(-2).join(' ');
  if (words.length > 2 && PREPOSITIONS.has(lastTwo)) return lastTwo;
  const last = words[words.length - 1]!;
  return PREPOSITIONS.has(last) ? last : null;
}

const ENDING_PHRASE = /\b(?:no longer|not any (?:more|longer)|used to|formerly)\s+(?:be\s+|is\s+|was\s+)?([\p{L}'-]+)/gu;
const TRAILING_ENDING = /\b(?:any ?more|any longer)\b/u;

/** Whether the sentence says the fact's verb no longer holds ("no longer lives in", "used to work at"). */
export function saysNoLonger(description: string, predicate: string): boolean {
  const sentence = description.toLowerCase().replace(/[’‘]/gu, "'");
  const verbWords = verbOf(predicate)
    .split(' ')
    .filter((word) => word !== 'be' && word !== 'have');
  const matches = (word: string): boolean =>
    verbWords.length === 0 || verbWords.some((verb) => word === verb || word.startsWith(verb.length > 3 ? verb.replace(/e$/u, '') : verb));
  for (const match of sentence.matchAll(ENDING_PHRASE)) if (matches(match[1]!)) return true;
  // "doesn't live in Oslo anymore": the extractor already negated the predicate; a positive one is left alone.
  return predicate.startsWith('not ') && TRAILING_ENDING.test(sentence);
}

/**
 * The validity of each of the chunk's facts (same order as `structure.facts`), read from the
 * sentence and the lexicon; `chunkTime` is when the chunk's memory says it happened.
 */
export function factRowValidity(structure: ChunkStructure, chunkTime: Date, classifier: PredicateClassifier): RowValidity[] {
  const dates = new Map<string, string>();
  for (const entity of structure.entities) if (entity.category === 'date') dates.set(entity.key, entity.name);
  // Explicit dates per subject and verb: the dates folded into a fact ("joined Acme in 2019"), and a
  // fact whose object is a date itself when it stood alone ("the contract expires on 31 May").
  const explicit = new Map<string, { start: Date | null; end: Date | null }>();
  const noteDate = (fact: ExtractedFact, preposition: string | null, dateKey: string): void => {
    const name = dates.get(dateKey);
    if (name === undefined || preposition === null) return;
    const date = parseExplicitDate(name, chunkTime);
    if (date === null) return;
    const key = `${fact.subjectKey}\n${verbOf(fact.predicate)}`;
    const known = explicit.get(key) ?? { start: null, end: null };
    if (END_PREPOSITIONS.has(preposition)) known.end ??= date;
    else if (START_PREPOSITIONS.has(preposition)) known.start ??= date;
    explicit.set(key, known);
  };
  for (const fact of structure.facts) {
    for (const when of fact.dates ?? []) noteDate(fact, when.preposition, when.dateKey);
    noteDate(fact, prepositionOf(fact.predicate), fact.objectKey);
  }
  return structure.facts.map((fact) =>
    rowValidity(fact, explicit.get(`${fact.subjectKey}\n${verbOf(fact.predicate)}`), chunkTime, classifier),
  );
}

function rowValidity(
  fact: ExtractedFact,
  dates: { start: Date | null; end: Date | null } | undefined,
  chunkTime: Date,
  classifier: PredicateClassifier,
): RowValidity {
  const start = dates?.start ?? null;
  const end = dates?.end ?? null;
  const functionalNegation = fact.predicate.startsWith('not ') && classifier.endsOf(fact.predicate, fact.objectKey).length > 0;
  const ending =
    classifier.roleOf(fact.predicate, fact.objectKey).kind === 'end' ||
    functionalNegation ||
    saysNoLonger(fact.description, fact.predicate);
  // "left Acme in May": the date is when it ended.
  if (ending) return { validFrom: null, validTo: end ?? start ?? chunkTime };
  if (end !== null && start === null) return { validFrom: null, validTo: end };
  const validFrom = start ?? chunkTime;
  return { validFrom, validTo: end !== null && end.getTime() > validFrom.getTime() ? end : null };
}
