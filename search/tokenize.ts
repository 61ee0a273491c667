/**
 * Turns text into search terms for the lexical index; documents and queries go through the same
 * function, so whatever a document yields, the same words in a query yield too.
 *
 * Plain words are lower-cased, stemmed (Porter) and stripped of English stop-words. Anything
 * that looks like an identifier (joined by `-_.@/:#&`, mixing letters and digits, or camelCase)
 * is kept whole, unstemmed, so an exact code such as "ZX-4471" stays a rare, precise term, and
 * is also split into its parts so that "4471" or "acme" alone still find it.
 */
import { stemmer } from 'stemmer';

/** Longer runs (hashes, base64, minified code) are noise as terms and bloat the dictionary. */
const MAX_TERM_LENGTH = 64;

/** A run of letters/digits, optionally joined to further runs by identifier punctuation (group 1). */
const COMPOUND = /[\p{L}\p{N}\p{M}]+((?:[-_.@/:#&\u2010]+[\p{L}\p{N}\p{M}]+)*)/gu;
/** Separators between the larger pieces of an address: user@host, scheme://host/path, issue#12. */
const MAJOR_SEPARATORS = /[@/:#]+/u;
const ANY_SEPARATOR = /[-_.@/:#&\u2010]+/u;
/** Possessive 's is dropped; other apostrophes inside a word are removed ("don't" → "dont"). */
const POSSESSIVE = /(?<=[\p{L}\p{N}])['\u2019]s(?![\p{L}\p{N}])/gu;
const INNER_APOSTROPHE = /(?<=\p{L})['\u2019](?=\p{L})/gu;
const HAS_DIGIT = /\p{N}/u;
const ASCII_WORD = /^[a-z]+$/;
const DECIMAL_NUMBER = /^\p{N}+\.\p{N}+$/u;
/**
 * Boundaries inside camelCase / PascalCase: "getUser" → get|User, "JSONParser" → JSON|Parser.
 * An acronym needs two lower-case letters after it, so plurals ("IDs", "URLs") stay plain words.
 */
const CAMEL_BOUNDARY = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll}{2})/u;
const HAS_CAMEL_HUMP = /\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}{2}/u;

// A short list on purpose: only words that carry no meaning in a query. Negations and modal
// words ("not", "no", "can") are kept because they change what a memory says.
const STOP_WORDS = new Set(
  (
    'a an and are as at be been being but by did do does doing dont for from had has have having he her hers him his how i if in into ' +
    'is it its itself me my of on or our ours she so than that the their theirs them then there these they this those to too ' +
    'us was we were what when where which while who whom why will with you your yours'
  ).split(' '),
);

// Stop-word checks and Porter stemming dominate tokenising cost, and natural text reuses a
// small vocabulary heavily, so each plain word's outcome is cached ('' = dropped).
const WORD_CACHE_LIMIT = 50_000;
const wordTermCache = new Map<string, string>();

/** V8 shares the characters of substrings at least this long with the string they came from. */
const SHORTEST_SHARED_SUBSTRING = 13;

/**
 * A copy that owns its characters. V8 may represent a substring as a view into the string it
 * came from, so a term kept in a long-lived map could otherwise keep a whole chunk text alive.
 */
export function detachedString(value: string): string {
  return value.length < SHORTEST_SHARED_SUBSTRING ? value : Buffer.from(value, 'utf8').toString('utf8');
}

/** A term from a single run of letters/digits (lower-cased); undefined when it carries no meaning. */
function atomTerm(atom: string): string | undefined {
  const cached = wordTermCache.get(atom);
  if (cached !== undefined) return cached === '' ? undefined : cached;
  if (atom.length === 0 || atom.length > MAX_TERM_LENGTH) return undefined;
  // Numbers and codes are kept as written, and not cached: they are too many and rarely repeat.
  if (HAS_DIGIT.test(atom)) return atom;
  if (wordTermCache.size >= WORD_CACHE_LIMIT) wordTermCache.clear();
  const word = detachedString(atom);
  let term = '';
  // Porter rules are English-only: other scripts and accented words stay as written.
  if (word.length > 1 && !STOP_WORDS.has(word)) term = ASCII_WORD.test(word) ? stemmer(word) : word;
  wordTermCache.set(word, term);
  return term === '' ? undefined : term;
}

function pushWhole(terms: string[], whole: string): void {
  if (whole.length <= MAX_TERM_LENGTH) terms.push(whole);
}

/** One run of letters/digits, in its original case (needed to find camelCase humps). */
function pushPiece(terms: string[], piece: string): void {
  const lowered = piece.toLowerCase();
  if (lowered !== piece && HAS_CAMEL_HUMP.test(piece)) {
    pushWhole(terms, lowered);
    for (const hump of piece.split(CAMEL_BOUNDARY)) {
      const term = atomTerm(hump.toLowerCase());
      if (term !== undefined) terms.push(term);
    }
    return;
  }
  const term = atomTerm(lowered);
  if (term !== undefined) terms.push(term);
}

/** Lower-cased, NFKC, stemmed search terms, in text order, repeats kept (they are term frequencies). */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  tokenizeParts(text, (piece) => pushPiece(terms, piece), terms);
  return terms;
}

/** The terms of one single-run piece of text (what `tokenizeParts` hands to `onPiece`), in order. */
export function pieceTerms(piece: string): string[] {
  const terms: string[] = [];
  pushPiece(terms, piece);
  return terms;
}

/**
 * `tokenize` in two streams, for a caller that memoises: each single run of letters/digits (by
 * far the most tokens: plain words) goes to `onPiece` as written, since its terms depend on
 * nothing else (`pieceTerms` gives them); the terms of compounds are pushed onto `terms`. Text
 * order across the two streams is not kept, which term frequencies do not need.
 */
export function tokenizeParts(text: string, onPiece: (piece: string) => void, terms: string[]): void {
  let normalized = text.normalize('NFKC');
  if (normalized.includes("'") || normalized.includes('\u2019'))
    normalized = normalized.replace(POSSESSIVE, '').replace(INNER_APOSTROPHE, '');
  for (const match of normalized.matchAll(COMPOUND)) {
    const compound = match[0];
    if (!match[1]) {
      // A single run: a plain word, a number, or a letters+digits code like "abc123".
      onPiece(compound);
      continue;
    }
    pushCompound(terms, compound);
  }
}

/** The terms of runs joined by identifier punctuation ("ZX-4471", "alice@acme.io", "3.14"). */
function pushCompound(terms: string[], compound: string): void {
  const lowered = compound.toLowerCase();
  if (DECIMAL_NUMBER.test(compound)) {
    terms.push(lowered);
    return;
  }
  pushWhole(terms, lowered);
  // "alice@acme.io" also yields "acme.io"; "https://x.org/a-b" yields "x.org" and "a-b".
  const segments = compound.split(MAJOR_SEPARATORS);
  if (segments.length > 1) {
    for (const segment of segments) {
      if (ANY_SEPARATOR.test(segment)) pushWhole(terms, segment.toLowerCase());
    }
  }
  for (const piece of compound.split(ANY_SEPARATOR)) pushPiece(terms, piece);
}

/** ASCII without apostrophes: NFKC leaves it as it is and no possessive rule applies. */
// eslint-disable-next-line no-control-regex -- every ASCII character but the apostrophe, control ones included.
const PLAIN_ASCII = /^[\x00-\x26\x28-\x7f]*$/;
const isAsciiAlnum = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
/** The ASCII characters of COMPOUND's joiners: - _ . @ / : # & */
const isAsciiJoiner = (c: number): boolean => c === 45 || c === 95 || c === 46 || c === 64 || c === 47 || c === 58 || c === 35 || c === 38;

/** FNV-1a over the char codes of text[start, end): the key `scanPlainAscii` gives each run. */
export function hashRun(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash;
}

/**
 * `tokenizeParts` for plain ASCII text, without a regex or a string per word: each single run
 * of letters/digits goes to `onRun` as its bounds and `hashRun` hash (a memoising caller looks it
 * up without slicing), compounds' terms are pushed onto `terms`. Returns false, having done
 * nothing, for other text: the caller then uses `tokenizeParts`. Same runs and compounds as the
 * COMPOUND regex, since in ASCII \p{L}\p{N}\p{M} are exactly the letters and digits.
 */
export function scanPlainAscii(text: string, onRun: (start: number, end: number, hash: number) => void, terms: string[]): boolean {
  if (!PLAIN_ASCII.test(text)) return false;
  const length = text.length;
  let i = 0;
  while (i < length) {
    if (!isAsciiAlnum(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    let hash = 0x811c9dc5;
    let c: number;
    while (i < length && isAsciiAlnum((c = text.charCodeAt(i)))) {
      hash = Math.imul(hash ^ c, 0x01000193);
      i++;
    }
    // A compound when joiners follow and a run comes after them; it extends as far as that repeats.
    let end = i;
    for (;;) {
      let next = end;
      while (next < length && isAsciiJoiner(text.charCodeAt(next))) next++;
      if (next === end || next >= length || !isAsciiAlnum(text.charCodeAt(next))) break;
      end = next;
      while (end < length && isAsciiAlnum(text.charCodeAt(end))) end++;
    }
    if (end === i) onRun(start, i, hash);
    else pushCompound(terms, text.slice(start, end));
    i = end;
  }
  return true;
}
