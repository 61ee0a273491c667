/**
 * The only place that talks to compromise: parses text once and hands back plain, typed tokens grouped
 * by sentence. The rest of the extractor reads compromise's tags and chunk labels from these tokens in
 * single passes instead of calling selections like `.people()` or `.nouns()`: each selection re-runs the
 * matcher over the whole document (0.2–2.5 ms per call on 1 KB), which would blow the ingestion budget.
 */
import nlp from 'compromise';
import { installFastSweep } from './compromise-speedup.js';
import { CLAUSE_TAKING_VERBS } from './word-lists.js';

type CompromiseTerm = ReturnType<typeof nlp>['docs'][number][number];
/**
 * Fields compromise sets on terms at runtime but leaves out of its published `Term` type:
 * `implicit` (the hidden word of a contraction: "doesn't" -> "does" + "not"), `machine` (cleaned form),
 * and `root` (set by `compute('root')`: "manages" -> "manage", "teams" -> "team").
 */
type TermWithRuntimeFields = CompromiseTerm & { implicit?: string; machine?: string; root?: string };

export interface Token {
  /** Surface text as written, without surrounding punctuation ('' for the hidden half of a contraction). */
  text: string;
  pre: string;
  post: string;
  /** Lower-case word used for matching word lists ("does" for the hidden half of "doesn't"). */
  word: string;
  /** compromise's root form when it has one ("manage" for "manages"), else `word`. */
  lemma: string;
  tags: ReadonlySet<string>;
  /** compromise's chunk label: 'Noun' | 'Verb' | 'Pivot' | 'Adjective', or '' when missing. */
  chunk: string;
}

export interface Sentence {
  tokens: Token[];
  /** The sentence as written, trimmed. */
  text: string;
}

const EMPTY_TAGS: ReadonlySet<string> = new Set();

function toToken(term: TermWithRuntimeFields): Token {
  const word = (term.implicit ?? term.normal ?? '').toLowerCase();
  return {
    text: term.text ?? '',
    pre: term.pre ?? '',
    post: term.post ?? '',
    word,
    lemma: term.root ?? word,
    tags: term.tags ?? EMPTY_TAGS,
    chunk: term.chunk ?? '',
  };
}

const isNounish = (token: Token | undefined): boolean => token !== undefined && token.chunk === 'Noun' && !token.tags.has('Pronoun');

/**
 * compromise's chunker puts a gerund used as a noun modifier in its own verb chunk ("my favourite
 * [programming] language", "[Billing] service"). A gerund before a noun, at the sentence start or after another
 * noun-chunk word and with no verb before it, joins the noun phrase.
 */
function mendNounModifierGerunds(tokens: Token[]): void {
  let verbSeen = false;
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i];
    if (token === undefined) continue;
    const previous = tokens[i - 1];
    const next = tokens[i + 1];
    const isModifier =
      token.chunk === 'Verb' &&
      token.tags.has('Gerund') &&
      (i === 0 || isNounish(previous)) &&
      isNounish(next) &&
      next?.tags.has('Noun') === true &&
      !next.tags.has('Determiner') &&
      !/[,;:]/u.test(previous?.post ?? '');
    if (!verbSeen && isModifier) token.chunk = 'Noun';
    else if (token.chunk === 'Verb') verbSeen = true;
  }
}

const NAME_TAGS = new Set(['FirstName', 'MaleName', 'FemaleName']);
let nameLexicon: Record<string, unknown> | null = null;
/** compromise's own lexicon: word -> tag (a runtime field it leaves out of its published types). */
function lexiconTag(word: string): unknown {
  nameLexicon ??= (nlp.world() as unknown as { model: { one: { lexicon: Record<string, unknown> } } }).model.one.lexicon;
  return nameLexicon[word];
}
/** Whether compromise's own lexicon lists the word as a first name ("bob", "sue", "mark"). */
function isLexiconFirstName(word: string): boolean {
  const tag = lexiconTag(word);
  return typeof tag === 'string' && NAME_TAGS.has(tag);
}
const PLACE_LEXICON_TAGS = new Set(['Country', 'City', 'Region', 'Place', 'Continent']);
/** Whether compromise's lexicon lists the word as a place ("kenya", "lyon"), whatever it tagged in context. */
export function isLexiconPlace(word: string): boolean {
  const tag = lexiconTag(word);
  return typeof tag === 'string' && PLACE_LEXICON_TAGS.has(tag);
}
/** Whether compromise's lexicon knows the word at all (as a function word, a verb, a name, a place…). */
export function isLexiconWord(word: string): boolean {
  return lexiconTag(word) !== undefined;
}

const NAME_TOKEN_TAGS: ReadonlySet<string> = new Set(['Noun', 'Singular', 'Person', 'FirstName', 'ProperNoun']);

/**
 * compromise reads a first name that is also a verb as an imperative when an adverb follows it:
 * "Bob no longer works at Initech" tags "Bob" as the verb "to bob", and the fact is lost. A
 * capitalised first name (by compromise's own lexicon) opening a clause, followed by an adverb
 * and then a verb, is the subject.
 */
function mendNamesReadAsVerbs(tokens: Token[]): void {
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    const opensClause = i === 0 || /[,;:]/u.test(tokens[i - 1]!.post) || tokens[i - 1]!.tags.has('Conjunction');
    if (!opensClause || !token.tags.has('Verb') || !/^\p{Lu}/u.test(token.text) || !isLexiconFirstName(token.word)) continue;
    let j = i + 1;
    while (j < tokens.length && ((tokens[j]!.tags.has('Adverb') && !tokens[j]!.tags.has('Verb')) || tokens[j]!.word === 'now')) j += 1;
    if (j === i + 1 || !tokens[j]?.tags.has('Verb')) continue;
    token.tags = NAME_TOKEN_TAGS;
    token.chunk = 'Noun';
    token.lemma = token.word;
  }
}

const UNKNOWN_NAME_TAGS: ReadonlySet<string> = new Set(['Noun', 'Singular', 'ProperNoun']);

/**
 * A capitalised word compromise's lexicon does not know, opening a clause and read as a verb right
 * before another verb, is the clause's subject: "Orsted cancelled two projects" (a guess from the
 * word's ending), not two verbs in a row.
 */
function mendUnknownNamesReadAsVerbs(tokens: Token[]): void {
  for (let i = 0; i + 1 < tokens.length; i += 1) {
    const token = tokens[i]!;
    const opensClause = i === 0 || /[,;:]/u.test(tokens[i - 1]!.post) || tokens[i - 1]!.tags.has('Conjunction');
    if (!opensClause || token.chunk !== 'Verb' || !/^\p{Lu}/u.test(token.text) || isLexiconWord(token.word)) continue;
    const next = tokens[i + 1]!;
    if (/[,;:]/u.test(token.post) || !next.tags.has('Verb') || next.tags.has('Gerund') || next.tags.has('Infinitive')) continue;
    if (!next.tags.has('PastTense') && !next.tags.has('PresentTense') && !next.tags.has('Copula')) continue;
    token.tags = UNKNOWN_NAME_TAGS;
    token.chunk = 'Noun';
    token.lemma = token.word;
  }
}

const PROGRESSIVE_TAGS: ReadonlySet<string> = new Set(['Verb', 'Gerund']);

/**
 * compromise tags some progressive forms as adjectives when its lexicon lists the adjective ("is
 * closing its factory"). After a copula and before an object (an article, a possessive, a name or a
 * number) the -ing word is the verb: an adjective there would need a noun after its article.
 */
function mendProgressivesReadAsAdjectives(tokens: Token[]): void {
  for (let i = 1; i + 1 < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (!token.tags.has('Adjective') || token.tags.has('Verb') || !token.word.endsWith('ing') || /[,;:.!?]/u.test(token.post)) continue;
    if (!tokens[i - 1]!.tags.has('Copula')) continue;
    const next = tokens[i + 1]!;
    const object = ['Determiner', 'Possessive', 'ProperNoun', 'Value'].some((tag) => next.tags.has(tag));
    if (!object) continue;
    token.tags = PROGRESSIVE_TAGS;
    token.chunk = 'Verb';
    token.lemma = gerundLemma(token.word);
    tokens[i - 1]!.chunk = 'Verb';
  }
}

/** Infinitive of an -ing form compromise tagged as something else ("closing" -> "close"), via its own conjugation model. */
function gerundLemma(word: string): string {
  const doc = nlp(word);
  doc.tag('Gerund');
  doc.compute('root');
  const term: TermWithRuntimeFields | undefined = doc.docs[0]?.[0];
  return term?.root ?? word;
}

const OBJECT_PRONOUNS: ReadonlySet<string> = new Set(['me', 'us', 'him', 'them']);
const PLURAL_NOUN_TAGS: ReadonlySet<string> = new Set(['Noun', 'Plural']);
const SINGULAR_NOUN_TAGS: ReadonlySet<string> = new Set(['Noun', 'Singular']);
const isHelperVerb = (token: Token): boolean => ['Copula', 'Auxiliary', 'Modal', 'Negative'].some((tag) => token.tags.has(tag));

/**
 * compromise reads a plural noun after a number, an object pronoun or another noun as a present-tense
 * verb: "delivered 60 [planes] to Qantas", "sent me [photos] from Rome", "raised interest [rates] in
 * May", and a model noun after its number: "the Atlas 2 [model]". Inside the object of a verb (back
 * over noun words to a verb of the clause that does not take a clause itself: "said the team wins" is
 * left alone), and followed by a preposition or the end of the clause, such a word is a noun: a verb
 * there would have no object and no subject of its own.
 */
function mendNounsReadAsVerbs(tokens: Token[]): void {
  for (let i = 1; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    const previous = tokens[i - 1]!;
    if (token.chunk !== 'Verb' || !token.tags.has('Verb') || isHelperVerb(token) || !/^\p{Ll}/u.test(token.text)) continue;
    if (/[,;:]/u.test(previous.post)) continue;
    const afterNumber = previous.tags.has('Value') && !previous.tags.has('Date') && !previous.tags.has('Money');
    const plural = token.tags.has('PresentTense') && token.word.endsWith('s');
    const afterNoun =
      (OBJECT_PRONOUNS.has(previous.word) || (isNounish(previous) && /^\p{Ll}/u.test(previous.text))) && !previous.tags.has('Possessive');
    if (!(afterNumber && (plural || token.tags.has('Infinitive'))) && !(afterNoun && plural)) continue;
    const next = tokens[i + 1];
    const endsClause = next === undefined || /[,;:.!?]/u.test(token.post) || next.tags.has('Preposition') || next.word === 'to';
    if (!endsClause) continue;
    // Back over the object's words to the verb that takes it.
    let j = i - 1;
    while (j >= 0 && tokens[j]!.chunk !== 'Verb' && !/[,;:]/u.test(tokens[j]!.post) && !tokens[j]!.tags.has('Conjunction')) j -= 1;
    const verb = tokens[j];
    if (verb === undefined || verb.chunk !== 'Verb' || !verb.tags.has('Verb') || CLAUSE_TAKING_VERBS.has(verb.lemma)) continue;
    if (tokens.slice(j + 1, i).some((between) => between.tags.has('Preposition') || /[,;:]/u.test(between.post))) continue;
    token.tags = plural ? PLURAL_NOUN_TAGS : SINGULAR_NOUN_TAGS;
    token.chunk = 'Noun';
    token.lemma = token.word;
  }
}

let speedupTried = false;

/** Parses `text` with compromise (tagger, chunker and root forms) into sentences of tokens. */
export function parseSentences(text: string): Sentence[] {
  if (text.trim().length === 0) return [];
  if (!speedupTried) {
    speedupTried = true; // once per process: the install self-check parses a sample twice
    installFastSweep();
  }
  const doc = nlp(text);
  doc.compute('root');
  const sentences: Sentence[] = [];
  for (const terms of doc.docs) {
    const tokens = terms.map((term) => toToken(term));
    if (tokens.length === 0) continue;
    mendNounModifierGerunds(tokens);
    mendNamesReadAsVerbs(tokens);
    mendUnknownNamesReadAsVerbs(tokens);
    mendProgressivesReadAsAdjectives(tokens);
    mendNounsReadAsVerbs(tokens);
    const sentenceText = tokens.map((token) => token.pre + token.text + token.post).join('');
    sentences.push({ tokens, text: sentenceText.trim() });
  }
  return sentences;
}

/** Infinitive of a past-tense verb compromise mis-tagged in context ("joined" -> "join"), via its own conjugation model. */
export function pastTenseLemma(word: string): string {
  const doc = nlp(word);
  doc.tag('PastTense');
  doc.compute('root');
  const term: TermWithRuntimeFields | undefined = doc.docs[0]?.[0];
  return term?.root ?? word;
}

// Characters that are common in code and rare in prose (Markdown's # * [ ] ( ) are left out on purpose).
const CODE_SYMBOLS = /[{};=<>|&`\\]/gu;
// Calls ("run(x") and command-line flags ("--name") count as symbols too.
const CODE_PATTERNS = /\w\(|(?:^|\s)--?[a-z]/gu;
const CODE_SYMBOL_SHARE = 0.05;
// Statement ends and block braces: a line ending or starting like this is code even with few symbols.
const CODE_LINE_EDGE = /[;{}]\s*$|^\s*[}\])]/u;
const FENCE = /^\s*(```|~~~)/u;
// Markdown block markers: a heading or list item is a unit of its own, so it gets a sentence end.
const BLOCK_MARKER = /^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d{1,3}[.)]\s+)/u;
const ENDS_SENTENCE = /[.!?:;…]["')\]]*\s*$/u;

function looksLikeCode(line: string): boolean {
  const visible = line.replace(/\s+/gu, '').length;
  const symbols = (line.match(CODE_SYMBOLS)?.length ?? 0) + (line.match(CODE_PATTERNS)?.length ?? 0);
  // Two symbols at least, so a lone "R&D" or "a > b" in prose is not mistaken for code.
  return (symbols >= 2 && symbols / Math.max(visible, 1) >= CODE_SYMBOL_SHARE) || CODE_LINE_EDGE.test(line);
}

/** Markdown decoration that would otherwise end up inside entity names ("# Engram", "**memories**", "[docs](url)"). */
function stripMarkdown(line: string): string {
  const marker = BLOCK_MARKER.exec(line);
  let text = marker === null ? line : line.slice(marker[0].length);
  text = text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/gu, '$1')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/gu, '$2')
    .replace(/`([^`]*)`/gu, '$1');
  if (marker !== null && text.trim().length > 0 && !ENDS_SENTENCE.test(text)) text = `${text.trimEnd()}.`;
  return text;
}

/**
 * Prepares mixed text for the tagger: drops code (fenced blocks and symbol-dense lines) and strips Markdown
 * decoration. Code produces no useful entities (identifiers look like proper nouns) and is the slowest input
 * for the tagger.
 */
export function prepareText(text: string): string {
  const kept: string[] = [];
  let inFence = false;
  for (const line of text.split('\n')) {
    if (FENCE.test(line)) {
      inFence = !inFence;
      kept.push('');
    } else if (!inFence) {
      kept.push(looksLikeCode(line) ? '' : stripMarkdown(line));
    }
  }
  return kept.join('\n');
}
