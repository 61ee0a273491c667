import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Token } from './parse.js';
import { breaksAfter, breaksBefore, displayText, periodEndsPhrase } from './token-text.js';

/** A token as the parser hands it over, with only what these helpers read. */
const token = (text: string, post = ' ', tags: string[] = [], pre = ''): Token => ({
  text,
  pre,
  post,
  word: text.toLowerCase(),
  lemma: text.toLowerCase(),
  tags: new Set(tags),
  chunk: '',
});

describe('displayText', () => {
  const ROWS: [name: string, tokens: Token[], start: number, end: number, text: string][] = [
    ['internal punctuation kept', [token('Porto', ', '), token('Portugal', '.')], 0, 2, 'Porto, Portugal'],
    ['whitespace collapsed', [token('New', '   '), token('York', '\n')], 0, 2, 'New York'],
    ['a trailing possessive dropped', [token('Alice'), token("Smith's", ' ', ['Possessive'])], 0, 2, 'Alice Smith'],
    ['a plural possessive dropped', [token('The'), token('Smiths’', ' ', ['Possessive'])], 1, 2, 'Smiths'],
    ['a possessive inside the run kept', [token("Guy's", ' ', ['Possessive']), token('Hospital', '.')], 0, 2, "Guy's Hospital"],
    ['an opening bracket inside kept', [token('the'), token('Kestrel', ' '), token('2', ')', [], '(')], 1, 3, 'Kestrel (2'],
    ['a run past the end stops at the last token, its punctuation kept', [token('Berlin', '.')], 0, 3, 'Berlin.'],
  ];
  for (const [name, tokens, start, end, text] of ROWS) it(name, () => assert.equal(displayText(tokens, start, end), text));
});

describe('phrase breaks', () => {
  const ROWS: [name: string, token: Token, after: boolean, periodEnds: boolean][] = [
    ['a comma', token('Porto', ', '), true, false],
    ['a dash between words', token('Acme', ' - '), true, false],
    ['a hyphen inside a word is none', token('five', '-'), false, false],
    ['an abbreviation compromise did not split at', token('Corp', '. '), true, true],
    ['an honorific', token('Dr', '. ', ['Honorific']), false, false],
    ['an initial', token('F', '. '), false, false],
    ['the end of the sentence', token('joined', '.'), false, false],
  ];
  for (const [name, tok, after, periodEnds] of ROWS) {
    it(name, () => {
      assert.equal(breaksAfter(tok), after);
      assert.equal(periodEndsPhrase(tok), periodEnds);
    });
  }
  it('an opening bracket or quote before a token', () => {
    assert.equal(breaksBefore(token('Kestrel', ' ', [], '(')), true);
    assert.equal(breaksBefore(token('Kestrel', ' ', [], '“')), true);
    assert.equal(breaksBefore(token('Kestrel')), false);
    assert.equal(breaksAfter(undefined), false);
  });
});
