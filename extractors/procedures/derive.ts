/**
 * Procedure traces from text: the action events a memory reports ("I submitted the expense report
 * on Monday", "the manager approved it", "1. Open a ticket"). Pure and local: compromise tags the
 * sentence (tense, imperative, negation, phrasal particles; extractors/structure/parse.ts), the
 * lexicon (lexicon.ts) decides whether a verb is a procedure step and which one, and the entities the
 * structuring stage already put in the collection's graph are linked by their names.
 *
 * Per classified verb, one trace:
 *   - acting entities: named in the clause before the verb ("I" and "we" are the speaker's entity);
 *     affected entities: named after it ("it" and "them" continue the previous trace's subject).
 *     Passive clauses ("the ticket was closed by Dana") swap the two sides.
 *   - occurred_at: an explicit date in the sentence (ISO date, weekday, yesterday/today/tomorrow,
 *     last/next week or month, "March 3") resolved against the chunk's time (its message's timestamp,
 *     else the memory's occurred_at or creation: core/memory-time.ts), kept in conversation order; else
 *     the chunk's time. `occurredAtSource` says which.
 *   - case keys: identifiers in the subject ("order 1182", "ticket #4521"), which chain traces of
 *     different memories into one instance (chaining.ts).
 *   - after state: "<subject> <state word>" ("expense report submitted").
 * Questions, negated verbs ("didn't approve") and advice ("should approve") yield nothing.
 */
import type { OccurredAtSource } from '../../core/procedure-model.js';
import { normalizeEntityName } from '../structure/normalize.js';
import { parseSentences, prepareText, type Sentence, type Token } from '../structure/parse.js';
import { classifyVerb, STATE_WORD, type VerbClass } from './lexicon.js';

export interface DerivationChunk {
  index: number;
  text: string;
  /** Speaker of a conversation turn: its first-person pronouns are this entity. */
  role?: string | undefined;
  /** The chunk's own time (core/memory-time.ts): relative dates in it resolve against it. */
  time?: Date | undefined;
  /** `parseSentences(prepareText(text))` when the structure extractor already parsed it; parsed here otherwise. */
  sentences?: Sentence[] | null | undefined;
}

/** A graph entity of the collection that the memory mentions. */
export interface LinkableEntity {
  id: string;
  key: string;
  name: string;
  aliases: string[];
}

export interface DerivationInput {
  memoryTime: Date;
  chunks: DerivationChunk[];
  entities: LinkableEntity[];
}

export interface TraceDraft {
  chunkIndex: number;
  /** Order of the trace in the memory (0-based). */
  seq: number;
  verbClass: VerbClass;
  verbLemma: string;
  description: string;
  occurredAt: Date;
  occurredAtSource: OccurredAtSource;
  extractionConfidence: number;
  actingEntityIds: string[];
  affectedEntityIds: string[];
  /** What the step acted on, as written ("expense report"), or '' when the text does not say. */
  subject: string;
  caseKeys: string[];
  beforeState: string | null;
  afterState: string;
}

const FIRST_PERSON = new Set(['i', 'me', 'we', 'us', 'my', 'our', 'myself', 'ourselves']);
const CONTINUATION = new Set(['it', 'them', 'this', 'that', 'these', 'those']);
const DETERMINERS = new Set([
  'the',
  'a',
  'an',
  'my',
  'our',
  'your',
  'his',
  'her',
  'their',
  'its',
  'this',
  'that',
  'these',
  'those',
  'some',
  'all',
]);
const CLAUSE_STOPS = new Set(['and', 'but', 'then', 'after', 'before', 'while', 'which', 'who', 'so', 'once', 'when', 'because']);
const STEP_MARKERS = new Set([
  'first',
  'firstly',
  'then',
  'next',
  'finally',
  'lastly',
  'afterwards',
  'afterward',
  'subsequently',
  'second',
  'third',
]);
/** Two-word step markers ("after that", "after this"). */
const isAfterThat = (tokens: Token[], j: number): boolean =>
  tokens[j]?.word === 'after' && ['that', 'this'].includes(tokens[j + 1]?.word ?? '');
const PARTICLES = new Set(['in', 'off', 'up', 'out', 'over', 'back', 'down', 'for', 'on']);
const ADVISORY_MODALS = new Set(['should', 'could', 'would', 'might', 'may', 'can', 'must', 'shall']);
const FUTURE = new Set(['will', "'ll"]);
const BE_FORMS = new Set(['is', 'was', 'were', 'be', 'been', 'being', 'are', 'got', 'get', 'gets']);
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAY_MS = 86_400_000;
const isDateUnit = (word: string): boolean => ['week', 'month', 'year'].includes(word) || WEEKDAYS.includes(word);
const MAX_SUBJECT_WORDS = 6;

const isVerbToken = (token: Token): boolean => token.chunk === 'Verb' && token.tags.has('Verb');
const isAuxiliary = (token: Token): boolean =>
  token.tags.has('Auxiliary') || token.tags.has('Modal') || token.tags.has('Copula') || BE_FORMS.has(token.word);
const endsClause = (token: Token): boolean => /[,;:]/u.test(token.post);

interface Span {
  from: number;
  to: number; // exclusive
}

interface ResolvedDate {
  date: Date;
  weekdayBased: boolean;
}

/** Derives the traces of a memory, in narrative order. */
export function deriveTraces(input: DerivationInput): TraceDraft[] {
  const traces: TraceDraft[] = [];
  const linker = new EntityLinker(input.entities);
  let lastExplicit: Date | null = null;
  let previous: TraceDraft | null = null;
  for (const chunk of [...input.chunks].sort((a, b) => a.index - b.index)) {
    const speakerIds = chunk.role ? linker.byKey(normalizeEntityName(chunk.role)) : [];
    // List markers and Markdown go first: compromise reads "1. Review the notes" as a name otherwise.
    for (const sentence of chunk.sentences ?? parseSentences(prepareText(chunk.text))) {
      if (sentence.text.trim().endsWith('?')) continue;
      const tokens = sentence.tokens;
      const chunkTime = chunk.time ?? input.memoryTime;
      const explicit = resolveDate(tokens, chunkTime);
      let occurredAt = chunkTime;
      let source: OccurredAtSource = 'memory_time';
      if (explicit) {
        let date = explicit.date;
        // Conversation order: a weekday named after a later one is the following week's.
        while (explicit.weekdayBased && lastExplicit && date < lastExplicit) date = new Date(date.getTime() + 7 * DAY_MS);
        occurredAt = date;
        source = 'explicit';
        lastExplicit = date;
      }
      const stepMarked =
        tokens.slice(0, 3).some((token, j) => STEP_MARKERS.has(token.word) || isAfterThat(tokens, j)) ||
        /^\s*(\d{1,3}[.)]|[-*•])\s/u.test(chunk.text);
      for (let i = 0; i < tokens.length; i++) {
        const token = tokens[i]!;
        if (!isVerbToken(token) || isAuxiliary(token) || token.tags.has('Gerund')) continue;
        const next = tokens[i + 1];
        // compromise tags some particles as prepositions ("sent in the report"): the lexicon decides.
        const particle = next && (next.tags.has('Particle') || PARTICLES.has(next.word)) ? next.word : undefined;
        const classified = classifyVerb(token.lemma, particle) ?? classifyVerb(token.word, particle);
        if (!classified) continue;
        const verbEnd = classified.phrasal ? i + 2 : i + 1;
        const modifiers = verbGroupBefore(tokens, i);
        if (modifiers.some((word) => word === 'not' || word === "n't" || word === 'never')) continue;
        if (modifiers.some((word) => ADVISORY_MODALS.has(word))) continue;
        const passive = modifiers.some((word) => BE_FORMS.has(word)) && token.tags.has('PastTense');
        const future = modifiers.some((word) => FUTURE.has(word));
        const before = clauseBefore(tokens, i - modifiers.length);
        const after = clauseAfter(tokens, verbEnd);
        const [agentSpan, patientSpan] = passive ? [byAgent(tokens, after), before] : [before, after];

        const acting = linker.link(tokens, agentSpan, speakerIds, null);
        const affected = linker.link(tokens, patientSpan, speakerIds, previous);
        let subject = subjectPhrase(tokens, patientSpan);
        let caseKeys = caseKeysIn(tokens, patientSpan);
        // "The parcel arrived": an intransitive step acts on its grammatical subject.
        const pointsBack = spanHas(tokens, patientSpan, CONTINUATION) || spanHas(tokens, patientSpan, FIRST_PERSON);
        if (subject === '' && !passive && !pointsBack && !hasObject(tokens, patientSpan)) {
          subject = subjectPhrase(tokens, agentSpan);
          caseKeys = caseKeysIn(tokens, agentSpan);
        }
        // "approved it", "reimbursed me": the step continues the previous one's subject.
        if (subject === '' && previous) {
          subject = previous.subject;
          caseKeys = previous.caseKeys;
        }

        const imperative = token.tags.has('Imperative') || (before.to - before.from === 0 && token.tags.has('Infinitive'));
        let confidence = future ? 0.5 : token.tags.has('PastTense') || passive ? 0.8 : imperative ? 0.7 : 0.65;
        if (classified.phrasal) confidence += 0.05;
        if (affected.ids.length > 0 || caseKeys.length > 0 || subject !== '') confidence += 0.1;
        if (acting.ids.length > 0) confidence += 0.05;
        if (stepMarked) confidence += 0.05;

        const draft: TraceDraft = {
          chunkIndex: chunk.index,
          seq: traces.length,
          verbClass: classified.verbClass,
          verbLemma: classified.phrasal ? `${token.lemma} ${particle}` : token.lemma,
          description: clip(textOf(tokens, { from: Math.min(before.from, i), to: Math.max(after.to, verbEnd) }), 300),
          occurredAt,
          occurredAtSource: source,
          extractionConfidence: Math.min(0.99, Math.round(confidence * 100) / 100),
          actingEntityIds: acting.ids,
          affectedEntityIds: affected.ids.filter((id) => !acting.ids.includes(id)),
          subject,
          caseKeys,
          beforeState: previous?.afterState ?? null,
          afterState: subject ? `${subject} ${STATE_WORD[classified.verbClass]}` : STATE_WORD[classified.verbClass],
        };
        traces.push(draft);
        previous = draft;
        i = verbEnd - 1;
      }
    }
  }
  return traces;
}

/** Words of the verb group right before the verb: auxiliaries, modals, negation ("did not", "will be"). */
function verbGroupBefore(tokens: Token[], index: number): string[] {
  const words: string[] = [];
  for (let j = index - 1; j >= 0 && index - j <= 3; j--) {
    const token = tokens[j]!;
    const isGroupWord =
      token.chunk === 'Verb' ||
      token.tags.has('Negative') ||
      token.tags.has('Adverb') ||
      ADVISORY_MODALS.has(token.word) ||
      FUTURE.has(token.word);
    if (!isGroupWord || endsClause(token)) break;
    if (token.tags.has('Adverb') && !token.tags.has('Negative') && token.word !== 'not') {
      words.push(token.word);
      continue;
    }
    words.push(token.word);
  }
  return words;
}

function clauseBefore(tokens: Token[], verbIndex: number): Span {
  let from = verbIndex;
  while (from > 0) {
    const previous = tokens[from - 1]!;
    if ((isVerbToken(previous) && !isAuxiliary(previous)) || CLAUSE_STOPS.has(previous.word) || endsClause(previous)) break;
    from--;
  }
  return { from, to: verbIndex };
}

function clauseAfter(tokens: Token[], start: number): Span {
  let to = start;
  while (to < tokens.length) {
    const token = tokens[to]!;
    if (CLAUSE_STOPS.has(token.word) || (isVerbToken(token) && !token.tags.has('Particle') && to > start)) break;
    to++;
    if (endsClause(token)) break;
  }
  return { from: start, to };
}

/** The agent of a passive clause: what follows "by". */
function byAgent(tokens: Token[], after: Span): Span {
  for (let j = after.from; j < after.to; j++) if (tokens[j]!.word === 'by') return { from: j + 1, to: after.to };
  return { from: after.to, to: after.to };
}

/** Whether a clause names an object before its first preposition ("reimbursed me", not "arrived on Friday"). */
function hasObject(tokens: Token[], span: Span): boolean {
  for (let j = span.from; j < span.to; j++) {
    const token = tokens[j]!;
    if (token.chunk === 'Pivot' || token.tags.has('Preposition')) return false;
    if (token.tags.has('Noun') || token.tags.has('Pronoun')) return true;
  }
  return false;
}

const spanHas = (tokens: Token[], span: Span, words: Set<string>): boolean => {
  for (let j = span.from; j < span.to; j++) if (words.has(tokens[j]!.word)) return true;
  return false;
};

/** The noun phrase a step acts on: nouns and values after determiners, up to a preposition or date. */
function subjectPhrase(tokens: Token[], span: Span): string {
  const words: string[] = [];
  for (let j = span.from; j < span.to && words.length < MAX_SUBJECT_WORDS; j++) {
    const token = tokens[j]!;
    if (token.text === '') continue;
    if (token.tags.has('Date') && !token.tags.has('Value')) break;
    if (token.chunk === 'Pivot' || token.tags.has('Preposition')) {
      if (words.length > 0) break;
      continue;
    }
    // "escalate it to the engineer": the object is the pronoun, not what follows it.
    if (token.tags.has('Pronoun') && !DETERMINERS.has(token.word)) break;
    if (DETERMINERS.has(token.word)) {
      if (words.length > 0) break;
      continue;
    }
    if (!(token.tags.has('Noun') || token.tags.has('Value') || token.tags.has('Adjective'))) {
      if (words.length > 0) break;
      continue;
    }
    words.push(token.text.replace(/^[#"'(]+|[,;:.!?"')]+$/gu, ''));
  }
  while (words.length > 0 && /^[-–]*$/u.test(words[words.length - 1]!)) words.pop();
  return words.join(' ').toLowerCase().trim();
}

/**
 * Nouns that name a case when a number follows them ("order 1182", "ticket #4521"). Closed on
 * purpose: "page 3", "step 2" or "room 4" are not cases, and a bare number never is ("2 pm",
 * "$100", "approved 2 requests" would otherwise chain unrelated memories into one instance).
 */
const CASE_NOUNS = new Set([
  'order',
  'ticket',
  'invoice',
  'case',
  'request',
  'claim',
  'issue',
  'incident',
  'bug',
  'job',
  'shipment',
  'parcel',
  'package',
  'delivery',
  'application',
  'account',
  'contract',
  'booking',
  'reservation',
  'project',
  'task',
  'report',
  'form',
  'requisition',
  'refund',
  'return',
  'payment',
  'transaction',
  'policy',
  'quote',
  'loan',
  'subscription',
  'appointment',
  'po',
  'pr',
  'rma',
  'reference',
  'ref',
  'tracking',
]);
const NUMBER_AFTER_CASE_NOUN = /^\d[\d-]*[a-z]?$/u;
const VERSION = /^v\d+(\.\d+)*$/u;

/** A code that identifies by itself: starts with a letter and mixes in at least two digits ("inv-2231", "po77a"; not "v2", "mp3"). */
const isCode = (text: string): boolean =>
  /^[a-z][a-z0-9]*(?:[-_/.][a-z0-9]+)*$/u.test(text) && (text.match(/\d/gu)?.length ?? 0) >= 2 && !VERSION.test(text);

/**
 * Identifiers of a case: a case noun followed by a number ("order 1182", "ticket #4521"), a code
 * mixing letters and digits ("INV-2231", "PO77A"), or a number marked with '#'. Never a bare
 * number, an amount, a time, an ordinal or a version.
 */
function caseKeysIn(tokens: Token[], span: Span): string[] {
  const keys = new Set<string>();
  for (let j = span.from; j < span.to; j++) {
    const token = tokens[j]!;
    if (token.tags.has('Date') || !/\d/u.test(token.text)) continue;
    let text = token.text.toLowerCase().replace(/^#+|[.,;:!?)"']+$/gu, '');
    let headIndex = j - 1;
    // compromise splits "INV-2231" in two: the letters (post "-") and the number.
    const previous = j > span.from ? tokens[j - 1]! : null;
    if (previous && previous.post === '-' && token.pre === '' && /^[a-z]+$/iu.test(previous.text)) {
      text = `${previous.text.toLowerCase()}-${text}`;
      headIndex = j - 2;
    }
    const head = headIndex >= span.from ? tokens[headIndex]!.word : '';
    if (isCode(text)) keys.add(text);
    else if (NUMBER_AFTER_CASE_NOUN.test(text) && CASE_NOUNS.has(head)) keys.add(`${head} ${text}`);
    else if (token.pre.includes('#') && /^\d{2,}$/u.test(text)) keys.add(`#${text}`);
  }
  return [...keys];
}

function textOf(tokens: Token[], span: Span): string {
  let text = '';
  for (let j = span.from; j < span.to; j++) {
    const token = tokens[j]!;
    text += (j === span.from ? '' : token.pre) + token.text + (j === span.to - 1 ? '' : token.post);
  }
  return text.trim();
}

function clip(text: string, max: number): string {
  const clean = text.replace(/\s+/gu, ' ').trim();
  return clean.length <= max ? clean : `${clean.slice(0, max - 1)}…`;
}

/** The explicit date of a sentence, if it names one. */
export function resolveDate(tokens: Token[], memoryTime: Date): ResolvedDate | null {
  // "next week", "next Monday" look ahead; "Next, the manager approved it" is a step marker.
  const future = tokens.some(
    (token, j) => FUTURE.has(token.word) || (token.word === 'next' && isDateUnit(tokens[j + 1]?.word.replace(/s$/u, '') ?? '')),
  );
  for (let j = 0; j < tokens.length; j++) {
    const word = tokens[j]!.word;
    const iso = /^(\d{4})-(\d{2})-(\d{2})$/u.exec(tokens[j]!.text);
    if (iso) {
      const date = new Date(
        Date.UTC(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3]), memoryTime.getUTCHours(), memoryTime.getUTCMinutes()),
      );
      if (!Number.isNaN(date.getTime())) return { date, weekdayBased: false };
    }
    const unit = tokens[j + 1]?.word;
    if ((word === 'last' || word === 'next') && (unit === 'week' || unit === 'month')) {
      const days = (unit === 'week' ? 7 : 30) * (word === 'last' ? -1 : 1);
      return { date: new Date(memoryTime.getTime() + days * DAY_MS), weekdayBased: false };
    }
    if (word === 'yesterday') return { date: new Date(memoryTime.getTime() - DAY_MS), weekdayBased: false };
    if (word === 'today') return { date: memoryTime, weekdayBased: false };
    if (word === 'tomorrow') return { date: new Date(memoryTime.getTime() + DAY_MS), weekdayBased: false };
    const weekday = WEEKDAYS.indexOf(word.replace(/s$/u, ''));
    if (weekday >= 0 && tokens[j]!.tags.has('Date')) {
      const today = memoryTime.getUTCDay();
      const back = (today - weekday + 7) % 7;
      const offset = future ? (weekday - today + 7) % 7 || 7 : -back;
      return { date: new Date(memoryTime.getTime() + offset * DAY_MS), weekdayBased: true };
    }
    const month = MONTHS.indexOf(word);
    const day = tokens[j + 1] ? /^(\d{1,2})(st|nd|rd|th)?$/u.exec(tokens[j + 1]!.word) : null;
    if (month >= 0 && day && tokens[j]!.tags.has('Date')) {
      let date = new Date(
        Date.UTC(memoryTime.getUTCFullYear(), month, Number(day[1]), memoryTime.getUTCHours(), memoryTime.getUTCMinutes()),
      );
      if (!future && date.getTime() > memoryTime.getTime() + DAY_MS)
        date = new Date(Date.UTC(date.getUTCFullYear() - 1, month, Number(day[1])));
      return { date, weekdayBased: false };
    }
  }
  return null;
}

/** Finds the collection's entities named in a span of a sentence, by name or alias (whole words). */
class EntityLinker {
  private readonly forms: { form: string; id: string }[] = [];
  private readonly keys = new Map<string, string[]>();

  constructor(entities: LinkableEntity[]) {
    for (const entity of entities) {
      const list = this.keys.get(entity.key) ?? [];
      list.push(entity.id);
      this.keys.set(entity.key, list);
      for (const form of new Set([entity.name, ...entity.aliases].map((name) => normalizeEntityName(name)))) {
        if (form.length >= 2) this.forms.push({ form, id: entity.id });
      }
    }
    // Longest first, so "Alice Smith" wins over "Alice".
    this.forms.sort((a, b) => b.form.length - a.form.length);
  }

  byKey(key: string): string[] {
    return this.keys.get(key) ?? [];
  }

  link(tokens: Token[], span: Span, speakerIds: string[], previous: TraceDraft | null): { ids: string[] } {
    const ids = new Set<string>();
    if (span.to > span.from) {
      let text = ` ${tokens
        .slice(span.from, span.to)
        .map((token) => normalizeEntityName(token.text))
        .filter((word) => word.length > 0)
        .join(' ')} `;
      for (const { form, id } of this.forms) {
        const needle = ` ${form} `;
        if (text.includes(needle)) {
          ids.add(id);
          text = text.replace(needle, ' ');
        }
      }
      if (spanHas(tokens, span, FIRST_PERSON)) for (const id of speakerIds) ids.add(id);
      if (previous && spanHas(tokens, span, CONTINUATION)) for (const id of previous.affectedEntityIds) ids.add(id);
    }
    return { ids: [...ids] };
  }
}
