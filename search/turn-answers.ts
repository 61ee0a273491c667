/**
 * What kind of answer a question asks for, and which kinds a turn can give, by rule (no model).
 * Pure.
 *
 * A classic of question answering without a model: the answer to "When did …?" states a time,
 * the answer to "How many …?" a number. In LoCoMo, 86 % of the evidence turns of "when"
 * questions mention a time (a date, a month, a weekday, "yesterday", "last week", "two weeks
 * ago"), while 17 % of all turns do; 63 % of the evidence turns of "how long / many / often /
 * much" questions mention a quantity, against 16 % of all turns. So a turn that can give the kind
 * of answer asked for ranks higher (search/turn-ranking.ts `answerKind`). Likewise a question
 * asking "who / where / which", or for a name, is answered by a turn that names someone or
 * something: 55 % of such evidence turns do, against 8 % of all turns.
 */
import { MONTHS, WEEKDAYS } from './turn-dates.js';

/** Answer kinds, as bits of a turn's mask. */
export const ANSWER_TIME = 1;
export const ANSWER_QUANTITY = 2;
export const ANSWER_NAME = 4;

/**
 * A time a turn speaks of: a relative day or period ("yesterday", "last week", "next month",
 * "two weeks ago"), a weekday, a month (not "may", a verb as often as not, unless a day number
 * is beside it), or a year.
 */
const TIME = new RegExp(
  [
    '\\b(?:yesterday|today|tonight|tomorrow|ago)\\b',
    `\\b(?:last|next|this past) (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|${WEEKDAYS.join('|')})\\b`,
    `\\b(?:${WEEKDAYS.join('|')})s?\\b`,
    `\\b(?:${MONTHS.filter((month) => month !== 'may').join('|')})\\b`,
    '\\b\\d{1,2}(?:st|nd|rd|th)? may\\b|\\bmay \\d{1,2}\\b',
    '\\b(?:19|20)\\d{2}\\b',
  ].join('|'),
  'i',
);

/** A number, a count word, a frequency or a unit of time: what "how many / long / often" is answered with. */
const QUANTITY =
  /\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|hundred|thousand|dozen|couple|few|several|once|twice|every|daily|weekly|monthly|yearly|years?|months?|weeks?|days?|hours?)\b/i;

const ASKS_TIME = /^\s*when\b|\bwhen (?:did|was|were|is|are|will|do|does|has|had)\b|\bwhat (?:year|month|date|day)\b|\bhow long ago\b/i;
const ASKS_QUANTITY = /^\s*how (?:long|many|often|much)\b/i;
/**
 * Questions that ask to identify someone or something: who, where, which, a name, or "what" with
 * a kind of thing that is usually named (a book, a band, a city, a company …).
 */
const ASKS_NAME =
  /^\s*(?:who|whom|whose|where|which)\b|\bnam(?:e|es|ed)\b|^\s*what (?:book|band|song|movie|film|city|country|game|show|team|restaurant|store|shop|company|artist|author|place|state|brand)s?\b/i;

/**
 * Capitalised words that are no answer to "who / where / which": "I", greetings and exclamations
 * that open a clause, and the days and months (a time, ANSWER_TIME).
 */
const NOT_NAMES = new Set([
  ...(
    'i im ive ill id hey hi hello wow thanks thank yeah yes no oh ah aw awesome great sure congrats haha lol ok okay cool nice ' +
    'love glad sorry sounds really that this it what how why when where who which me my mom dad omg yay yup nope'
  ).split(' '),
  ...WEEKDAYS,
  ...MONTHS,
]);

/**
 * Whether the text names someone or something: a capitalised word inside a sentence (not at its
 * start, where every word is capitalised) that is not a greeting or a vocative ("Thanks,
 * Caroline!", "Hey Mel!": a name between a clause boundary or a greeting and a comma or the end
 * of a sentence addresses the listener, it names no answer).
 */
export function mentionsName(text: string): boolean {
  const words = text.split(/\s+/).filter((word) => word.length > 0);
  for (let index = 1; index < words.length; index++) {
    const word = words[index]!;
    const bare = word.replace(/^[^\p{L}]+|[^\p{L}]+$/gu, '');
    if (!/^\p{Lu}\p{Ll}/u.test(bare)) continue;
    if (NOT_NAMES.has(bare.toLowerCase().replace(/['’]/g, ''))) continue;
    const before = words[index - 1]!;
    if (/[.!?:;]["')\]]*$/.test(before) || /^[^\p{L}\p{N}]/u.test(word)) continue;
    const opens = /,$/.test(before) || NOT_NAMES.has(before.toLowerCase().replace(/[^a-z]/g, ''));
    if (opens && /[,!?.]["')]*$/.test(word)) continue;
    return true;
  }
  return false;
}

/** The answer kinds this turn's text can give (a mask of ANSWER_* bits; 0 for none). */
export function turnAnswerKinds(text: string): number {
  return (TIME.test(text) ? ANSWER_TIME : 0) | (QUANTITY.test(text) ? ANSWER_QUANTITY : 0) | (mentionsName(text) ? ANSWER_NAME : 0);
}

/** The kind of answer the query asks for (an ANSWER_* bit), or 0 when it does not say. */
export function queryAnswerKind(query: string): number {
  if (ASKS_TIME.test(query)) return ANSWER_TIME;
  if (ASKS_QUANTITY.test(query)) return ANSWER_QUANTITY;
  if (ASKS_NAME.test(query)) return ANSWER_NAME;
  return 0;
}
