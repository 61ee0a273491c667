/**
 * How the tokens of a sentence read as written, for the mention finders (named-spans.ts, mentions.ts) and the
 * extractor's clause units (local-extractor.ts): their tags, their capitals, the punctuation that ends a name or
 * noun phrase, and the display text of a run.
 */
import type { Token } from './parse.js';

export const has = (token: Token | undefined, tag: string): boolean => token?.tags.has(tag) === true;

// Punctuation after a token that ends a name or noun phrase.
const PHRASE_BREAK = /[,;:()"“”!?[\]]|\s[-–—]\s?/u;
/**
 * A period inside a compromise sentence: an abbreviation it did not split at ("Acme Corp. Alice Smith joined")
 * or an initial/honorific ("John F. Kennedy", "Dr. Watson", "St. Mary's"). Only the first kind ends a phrase.
 */
export const periodEndsPhrase = (token: Token): boolean => /^\.\s/u.test(token.post) && !has(token, 'Honorific') && token.text.length > 2;
export const breaksAfter = (token: Token | undefined): boolean =>
  token !== undefined && (PHRASE_BREAK.test(token.post) || periodEndsPhrase(token));
export const breaksBefore = (token: Token | undefined): boolean => token !== undefined && /[("“[]/u.test(token.pre);

export const hasUpperInitial = (text: string): boolean => /^\p{Lu}/u.test(text);
export const hasInnerUpper = (text: string): boolean => /^.+\p{Lu}/u.test(text) && /\p{Ll}/u.test(text);
export const hasLatinOrDigit = (text: string): boolean => /[\p{Script=Latin}\d]/u.test(text);

function stripPossessive(text: string): string {
  return text.replace(/['’]s$/u, '').replace(/(?<=s)['’]$/u, '');
}

/** Display text of tokens [start, end): internal punctuation kept, whitespace collapsed, trailing possessive dropped. */
export function displayText(tokens: readonly Token[], start: number, end: number): string {
  let text = '';
  for (let i = start; i < end; i += 1) {
    const token = tokens[i];
    if (token === undefined) break;
    const isLast = i === end - 1;
    const body = isLast && has(token, 'Possessive') ? stripPossessive(token.text) : token.text;
    text += (i === start ? '' : token.pre) + body + (isLast ? '' : token.post);
  }
  return text.replace(/\s+/gu, ' ').trim();
}
