import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../core/random.js';
import { hashRun, pieceTerms, scanPlainAscii, tokenize } from './tokenize.js';

describe('tokenize', () => {
  it('keeps an identifier whole and also split into its parts', () => {
    assert.deepEqual(tokenize('ZX-4471'), ['zx-4471', 'zx', '4471']);
  });

  it('splits an e-mail address into the whole, the domain and the stemmed parts', () => {
    const terms = tokenize('alice@acme.io');
    assert.equal(terms[0], 'alice@acme.io');
    for (const expected of ['acme.io', 'alic', 'acm', 'io'])
      assert.ok(terms.includes(expected), `missing ${expected} in ${terms.join(',')}`);
  });

  it('splits a URL into host, path pieces and words', () => {
    const terms = tokenize('See https://acme.io/docs/getting-started.');
    assert.equal(terms[0], 'see');
    assert.equal(terms[1], 'https://acme.io/docs/getting-started');
    for (const expected of ['acme.io', 'getting-started', 'acm', 'doc', 'get', 'start']) assert.ok(terms.includes(expected), expected);
  });

  it('keeps numbers, decimals and dated codes', () => {
    assert.deepEqual(tokenize('2024'), ['2024']);
    assert.deepEqual(tokenize('version 3.5'), ['version', '3.5']);
    assert.deepEqual(tokenize('invoice 2024-118'), ['invoic', '2024-118', '2024', '118']);
  });

  it('lower-cases, stems plain words and drops stop-words', () => {
    assert.deepEqual(tokenize('The Runner was RUNNING and runs'), ['runner', 'run', 'run']);
  });

  it('never drops an identifier or number that looks like a stop-word', () => {
    assert.deepEqual(tokenize('the-it 1 a1'), ['the-it', '1', 'a1']);
  });

  it('applies NFKC, so full-width and ligature forms match their plain spelling', () => {
    assert.deepEqual(tokenize('ＺＸ－４４７１'), tokenize('ZX-4471'));
    assert.deepEqual(tokenize('ﬁle'), tokenize('file'));
  });

  it('splits camelCase identifiers and keeps them whole', () => {
    assert.deepEqual(tokenize('getUserName'), ['getusername', 'get', 'user', 'name']);
    assert.deepEqual(tokenize('JSONParser'), ['jsonparser', 'json', 'parser']);
    assert.deepEqual(tokenize('APIs IDs'), ['api', 'id']);
  });

  it('drops possessives and inner apostrophes, and strips trailing punctuation', () => {
    assert.deepEqual(tokenize("Alice's report. Don't."), ['alic', 'report']);
  });

  it('returns nothing for empty text, punctuation or only stop-words', () => {
    assert.deepEqual(tokenize(''), []);
    assert.deepEqual(tokenize('  ,;!? -- '), []);
    assert.deepEqual(tokenize('the and of it was'), []);
  });

  it('keeps words of other scripts unstemmed', () => {
    assert.deepEqual(tokenize('Café Straße'), ['café', 'straße']);
  });

  it('skips terms longer than 64 characters but keeps their parts', () => {
    const longWhole = `${'a'.repeat(40)}-${'b'.repeat(40)}`;
    assert.deepEqual(tokenize(longWhole), [stemOf('a'.repeat(40)), stemOf('b'.repeat(40))]);
  });
});

function stemOf(word: string): string {
  const [term] = tokenize(word);
  assert.ok(term !== undefined);
  return term;
}

describe('scanPlainAscii (the cold-load fast path)', () => {
  const viaScanner = (text: string): string[] | null => {
    const terms: string[] = [];
    const ok = scanPlainAscii(
      text,
      (start, end, hash) => {
        assert.equal(hash, hashRun(text, start, end));
        terms.push(...pieceTerms(text.slice(start, end)));
      },
      terms,
    );
    return ok ? terms.sort() : null;
  };

  it('yields exactly the terms tokenize yields, on random ASCII text full of edge cases', () => {
    const random = seededRandom(2026);
    const atoms = ['Alice', 'getUserName', 'JSONParser', 'IDs', 'the', 'THE', 'running', 'x', 'ZX', '4471', '3', 'a1b2', 'URLs', 'co'];
    const glue = [' ', '  ', '-', '.', '@', '/', ':', '#', '&', '_', '--', '.-', ', ', '!', '(', ')', '\n', '"', '+', '', '...'];
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
    for (let round = 0; round < 2000; round++) {
      let text = '';
      const parts = 1 + Math.floor(random() * 12);
      for (let i = 0; i < parts; i++) text += pick(glue) + pick(atoms);
      if (random() < 0.5) text += pick(glue);
      assert.deepEqual(viaScanner(text), [...tokenize(text)].sort(), JSON.stringify(text));
    }
  });

  it('declines text it cannot read exactly like tokenize: non-ASCII and apostrophes', () => {
    for (const text of ["Alice's notes", 'café', 'ﬁne', 'a\u2010b', 'don’t']) assert.equal(viaScanner(text), null, text);
    assert.deepEqual(viaScanner(''), []);
  });
});
