/**
 * Named spans of one parsed sentence, read off compromise's tags: the same rules its `.people()`, `.places()`,
 * `.organizations()`, `.money()`, `.emails()`, `.urls()` and `#Date+` selections use, applied in one pass.
 * The noun phrases around them are found in mentions.ts.
 */
import { isLexiconPlace, type Token } from './parse.js';
import { breaksAfter, breaksBefore, displayText, has, hasLatinOrDigit, hasUpperInitial } from './token-text.js';
import type { EntityCategory } from './types.js';
import { CLAUSE_OPENERS, DEICTIC_DATES, RELATIVE_DATE_MODIFIERS } from './word-lists.js';

export type Gender = 'female' | 'male' | 'unknown';

export interface NamedSpan {
  start: number;
  /** Exclusive. */
  end: number;
  category: EntityCategory;
  name: string;
  /** Surface form including anything dropped from `name` (e.g. an honorific), when different. */
  surface: string;
  gender: Gender;
}

type SpanFinder = (tokens: readonly Token[], start: number) => { end: number; category: EntityCategory } | null;

const findEmail: SpanFinder = (tokens, start) => (has(tokens[start], 'Email') ? { end: start + 1, category: 'email' } : null);

const findUrl: SpanFinder = (tokens, start) => {
  const token = tokens[start];
  return has(token, 'Url') && /\p{L}/u.test(token?.text ?? '') ? { end: start + 1, category: 'url' } : null;
};

const findMoney: SpanFinder = (tokens, start) => {
  if (!has(tokens[start], 'Money')) return null;
  let end = start + 1;
  // "$7.5 billion", "500 dollars"
  while (end < tokens.length && !breaksAfter(tokens[end - 1])) {
    const next = tokens[end];
    if (!(has(next, 'Money') || has(next, 'Multiple') || has(next, 'Currency'))) break;
    end += 1;
  }
  return { end, category: 'money' };
};

// A run of #Date tokens is only an entity when it pins down a time ("March 3rd", "2023", "last week"),
// not for bare durations like "the year" or "a week".
const SPECIFIC_DATE_TAGS = ['Month', 'WeekDay', 'Year', 'Time', 'Holiday', 'FinancialQuarter', 'Value'];

const findDate: SpanFinder = (tokens, start) => {
  const first = tokens[start];
  let end = start;
  let specific = false;
  if (first !== undefined && RELATIVE_DATE_MODIFIERS.has(first.word) && has(tokens[start + 1], 'Date') && !breaksAfter(first)) {
    specific = true;
    end = start + 1;
  }
  while (end < tokens.length && has(tokens[end], 'Date')) {
    const token = tokens[end];
    if (token === undefined) break;
    if (SPECIFIC_DATE_TAGS.some((tag) => token.tags.has(tag)) || DEICTIC_DATES.has(token.word)) specific = true;
    end += 1;
    // Dates may contain commas ("Monday, June 5, 2024") but nothing stronger.
    if (/[;:()!?]/u.test(token.post) || (breaksAfter(token) && !has(tokens[end], 'Date'))) break;
  }
  return end > start && specific ? { end, category: 'date' } : null;
};

const findQuantity: SpanFinder = (tokens, start) => {
  const isNumber = (token: Token | undefined): boolean => has(token, 'Value') && !has(token, 'Date') && !has(token, 'Money');
  if (!isNumber(tokens[start])) return null;
  let end = start + 1;
  while (end < tokens.length && isNumber(tokens[end]) && !breaksAfter(tokens[end - 1])) end += 1;
  const unit = tokens[end];
  // "3 kg", "40 percent"; a bare "40%" carries #Percent itself.
  if (has(unit, 'Unit') && !has(unit, 'Currency') && !breaksAfter(tokens[end - 1])) return { end: end + 1, category: 'quantity' };
  for (let i = start; i < end; i += 1) if (has(tokens[i], 'Percent')) return { end, category: 'quantity' };
  return null;
};

/** `.people()`: optional honorifics then #Person words, ending at a possessive or a comma. */
const findPerson: SpanFinder = (tokens, start) => {
  if (!has(tokens[start], 'Person') || has(tokens[start], 'Pronoun')) return null;
  // "brother Mike": a lower-case role word in front of a capitalised name is not part of the name.
  if (!hasUpperInitial(tokens[start]?.text ?? '') && !has(tokens[start], 'Honorific') && hasUpperInitial(tokens[start + 1]?.text ?? ''))
    return null;
  let end = start;
  while (end < tokens.length && has(tokens[end], 'Person') && !has(tokens[end], 'Pronoun')) {
    end += 1;
    if (has(tokens[end - 1], 'Possessive') || breaksAfter(tokens[end - 1]) || breaksBefore(tokens[end])) break;
  }
  // An honorific alone ("Dr.") is not a person.
  for (let i = start; i < end; i += 1) if (!has(tokens[i], 'Honorific')) return { end, category: 'person' };
  return null;
};

/** `.organizations()`: a #Organization run; needs a capital so stray lower-case tags ("office") are ignored. */
const findOrganization: SpanFinder = (tokens, start) => {
  if (!has(tokens[start], 'Organization')) return null;
  let end = start;
  let capitalised = false;
  while (end < tokens.length && has(tokens[end], 'Organization')) {
    const token = tokens[end];
    if (token !== undefined && (hasUpperInitial(token.text) || /^\d/u.test(token.text))) capitalised = true;
    end += 1;
    if (breaksAfter(token) || breaksBefore(tokens[end])) break;
    // "Guy's Hospital" is one name, "Google's office" is not: a possessive continues only into a capitalised word.
    if (has(token, 'Possessive') && !hasUpperInitial(tokens[end]?.text ?? '')) break;
  }
  return capitalised ? { end, category: 'organization' } : null;
};

/** `.places()`: a #Place/#Address run, split at commas except in "Porto, Portugal". */
const findPlace: SpanFinder = (tokens, start) => {
  const isPlace = (token: Token | undefined): boolean => has(token, 'Place') || has(token, 'Address');
  if (!isPlace(tokens[start])) return null;
  let end = start;
  while (end < tokens.length && isPlace(tokens[end])) {
    const token = tokens[end];
    end += 1;
    if (has(token, 'Possessive') || breaksBefore(tokens[end])) break;
    if (breaksAfter(token)) {
      const next = tokens[end];
      const cityThenCountry = token?.post.trim() === ',' && (has(next, 'Country') || has(next, 'Region'));
      if (!cityThenCountry) break;
    }
  }
  return { end, category: 'place' };
};

// Order matters: earlier finders claim tokens first (a year is a date before it is a number).
const SPAN_FINDERS: readonly SpanFinder[] = [
  findEmail,
  findUrl,
  findMoney,
  findDate,
  findQuantity,
  findPerson,
  findOrganization,
  findPlace,
];

function genderOf(tokens: readonly Token[], start: number, end: number): Gender {
  for (let i = start; i < end; i += 1) {
    const token = tokens[i];
    if (token === undefined) continue;
    if (/^(mrs|ms|miss|madam|lady)\.?$/u.test(token.word) || has(token, 'FemaleName')) return 'female';
    if (/^(mr|sir|lord)\.?$/u.test(token.word) || has(token, 'MaleName')) return 'male';
  }
  return 'unknown';
}

/** Named spans of one sentence, left to right, non-overlapping. */
export function findNamedSpans(tokens: readonly Token[]): NamedSpan[] {
  const spans: NamedSpan[] = [];
  let i = 0;
  while (i < tokens.length) {
    let found: { end: number; category: EntityCategory } | null = null;
    const opener = CLAUSE_OPENERS.has(tokens[i]?.word ?? '');
    for (const finder of opener ? [] : SPAN_FINDERS) {
      found = finder(tokens, i);
      if (found !== null) break;
    }
    if (found === null) {
      i += 1;
      continue;
    }
    if (found.category === 'place' || found.category === 'organization') {
      // "the city of Porto", "the town Arlesford", "the government of Kenya": compromise tags the common
      // words in front too; the name is the capitalised part, a place when that is all it tags.
      let first = i;
      while (first < found.end && !hasUpperInitial(tokens[first]!.text) && !/^\d/u.test(tokens[first]!.text)) first += 1;
      if (first === found.end && found.category === 'place') {
        i = found.end;
        continue;
      }
      if (first > i && first < found.end) {
        i = first;
        const placeWord = (token: Token): boolean => has(token, 'Place') || isLexiconPlace(token.word);
        if (tokens.slice(first, found.end).every(placeWord)) found = { end: found.end, category: 'place' };
      }
    }
    let nameStart = i;
    // "Dr. Jane Doe" is named "Jane Doe"; the honorific form is kept as an alias.
    if (found.category === 'person') while (nameStart < found.end - 1 && has(tokens[nameStart], 'Honorific')) nameStart += 1;
    const name = displayText(tokens, nameStart, found.end);
    // "St." alone is not a place, nor "Corp." an organization.
    const onlyAbbreviations = tokens.slice(i, found.end).every((token) => has(token, 'Abbreviation'));
    if (name.length > 0 && hasLatinOrDigit(name) && !onlyAbbreviations) {
      spans.push({
        start: i,
        end: found.end,
        category: found.category,
        name,
        surface: displayText(tokens, i, found.end),
        gender: found.category === 'person' ? genderOf(tokens, i, found.end) : 'unknown',
      });
    }
    i = found.end;
  }
  return spans;
}
