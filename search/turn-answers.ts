/**
 * What kind of answer a question asks for, and which kinds a turn can give, by rule (no model).
 * Pure.
 *
 * A classic of question answering without a model: the answer to "When did …?" states a time,
 * the answer to "How many …?" a number. In LoCoMo, 86 % of the evidence turns of "when"
 * questions mention a time (a date, a month, a weekday, "yesterday", "last week", "two weeks
 * ago"), while 17 % of all turns do; 63 % of the evidence turns of "how long / many / often /
 * much" questions mention a quantity, against 16 % of all turns. So a turn that can give the kind
 * of answer asked for ranks higher (search/turn-ranking.ts `answerKind`).
 */
import { MONTHS, WEEKDAYS } from './turn-dates.js';

/** Answer kinds, as bits of a turn's mask. */
export const ANSWER_TIME = 1;
export const ANSWER_QUANTITY = 2;

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

/** The answer kinds this turn's text can give (a mask of ANSWER_* bits; 0 for none). */
export function turnAnswerKinds(text: string): number {
  return (TIME.test(text) ? ANSWER_TIME : 0) | (QUANTITY.test(text) ? ANSWER_QUANTITY : 0);
}

/** The kind of answer the query asks for (an ANSWER_* bit), or 0 when it does not say. */
export function queryAnswerKind(query: string): number {
  if (ASKS_TIME.test(query)) return ANSWER_TIME;
  if (ASKS_QUANTITY.test(query)) return ANSWER_QUANTITY;
  return 0;
}
