/**
 * Subject–predicate–object facts from one sentence. compromise gives no dependency parse, so this is a
 * small left-to-right reader over its chunks: noun phrase(s) before a verb group are the subject, the first
 * noun phrase after it (directly or behind a preposition) is the object; a later date says when it held
 * ("joined Acme in 2019" -> join / join in), and a later end of a path is one too ("moved from Munich to
 * Vienna"); other later phrases are adjuncts of the event and give no fact (secondaryArgument).
 */
import type { Token } from './parse.js';
import type { EntityCategory } from './types.js';
import { CLAUSE_TAKING_VERBS, DATIVE_VERBS, KEEP_PASSIVE_SIDE_VERBS, NAMING_PARTICIPLES } from './word-lists.js';

/** A resolved noun-phrase end of a fact, and how it was resolved (which drives the confidence). */
export interface Ref {
  key: string;
  category: EntityCategory;
  via: 'mention' | 'pronoun' | 'speaker' | 'relative';
}

export interface Predicate {
  /** The verb phrase without its preposition: "manage", "not like", "be born" ("move to" gets "to" from the object's phrase). */
  text: string;
  /** The active form for a passive with an agent: "was acquired by Google" -> "acquire". */
  activeText: string;
  passive: boolean;
  /** The main verb was recovered from the chunker although the tagger did not call it a verb. */
  recovered: boolean;
  /**
   * The group is one past form with no helper ("sold", "based"): after a noun phrase inside a clause it is
   * a reduced relative ("vehicles sold in Canada"), read as the passive "be sold"; null otherwise.
   */
  bareParticiple?: string | null;
}

export type ClauseUnit =
  | { kind: 'np'; ref: Ref | null }
  | { kind: 'verb'; predicate: Predicate }
  | { kind: 'prep'; word: string }
  | { kind: 'conj' }
  | { kind: 'relative' }
  /** "if", "unless": what follows up to the next comma is hypothetical. */
  | { kind: 'condition' }
  /** A predicate adjective ("is happy"): there is no object to find. */
  | { kind: 'complement' }
  /**
   * A status the clause's subject is said to be in ("T-1182 was closed", "is no longer open"):
   * "have status" <state>. `ref` is the state's entity; `endsClause` when it stood for the
   * complement (nothing after it is an object).
   */
  | { kind: 'state'; ref: Ref | null; negated: boolean; endsClause: boolean }
  | { kind: 'break'; strong: boolean };

export interface RawFact {
  subject: Ref;
  predicate: string;
  object: Ref;
  confidence: number;
}

const has = (token: Token, tag: string): boolean => token.tags.has(tag);
/** The verb a predicate is about, without its negation: "not think" -> "think", "agree to share" -> "agree". */
const mainVerb = (predicate: Predicate): string => predicate.activeText.replace(/^not /u, '').split(' ')[0] ?? '';

const MAX_PREDICATE_WORDS = 6;

/** Reads a verb group (compromise 'Verb' chunk) into a normalised predicate, or null if it holds no verb. */
export function readPredicate(group: readonly Token[]): Predicate | null {
  const negated = group.some((token) => has(token, 'Negative') || token.word === 'not' || token.word === 'never');
  const content = group.filter((token) => token.word !== '' && !has(token, 'Negative') && !has(token, 'Adverb') && !has(token, 'Pronoun'));
  const isHelper = (token: Token): boolean => has(token, 'Auxiliary') || has(token, 'Modal') || has(token, 'Copula');
  const mains = content.filter((token) => !isHelper(token) && token.word !== 'to');
  const hasCopula = content.some((token) => has(token, 'Copula'));

  let words: { word: string; token: Token }[];
  if (mains.length === 0) {
    // Only helpers: "Alice is the CEO" -> be; "Alice has a dog" (when tagged auxiliary) -> have.
    const last = content[content.length - 1];
    if (last === undefined) return null;
    words = [{ word: has(last, 'Copula') ? 'be' : last.lemma, token: last }];
  } else {
    words = [];
    for (const token of content) {
      if (isHelper(token)) continue;
      // "to" is kept only between verbs ("agree to migrate"); leading and trailing ones are dropped below.
      if (token.word === 'to') words.push({ word: 'to', token });
      else words.push({ word: has(token, 'Particle') ? token.word : token.lemma, token });
    }
    while (words[0]?.word === 'to') words.shift();
    while (words[words.length - 1]?.word === 'to') words.pop();
    // "am going to move" -> move
    if (words.length > 2 && words[0]?.token.word === 'going' && words[1]?.word === 'to') words = words.slice(2);
  }

  const lastMain = [...words].reverse().find((entry) => entry.word !== 'to' && !has(entry.token, 'Particle'));
  if (lastMain === undefined) return null;
  const participle = lastMain.token;
  const passive =
    mains.length > 0 &&
    !has(participle, 'Gerund') &&
    (group.some((token) => has(token, 'Passive')) ||
      (hasCopula && (has(participle, 'PastTense') || has(participle, 'Participle') || participle.word === 'born')));
  const recovered = words.some((entry) => !has(entry.token, 'Verb') && entry.word !== 'to');

  const active = words.map((entry) => entry.word);
  const bareParticiple =
    !negated && !passive && words.length === 1 && content.length === 1 && (has(participle, 'PastTense') || has(participle, 'Participle'))
      ? participle.word
      : null;
  // A passive keeps its participle ("be born", "be acquired"): the infinitive would change the meaning.
  const passiveWords = words.map((entry) => (entry === lastMain ? entry.token.word : entry.word));
  const core = (passive ? ['be', ...passiveWords] : active).slice(0, MAX_PREDICATE_WORDS);
  const text = (negated ? ['not', ...core] : core).join(' ').toLowerCase();
  if (!/\p{L}/u.test(text)) return null;
  return {
    text,
    activeText: (negated ? ['not', ...active] : active).join(' ').toLowerCase(),
    passive,
    recovered,
    bareParticiple,
  };
}

// Confidence: start high for a clean "Named verb Named" parse and take off for every guess we made.
const BASE_CONFIDENCE = 0.9;
const CATEGORY_PENALTY: Partial<Record<EntityCategory, number>> = { concept: 0.15, product: 0.05 };
const VIA_PENALTY: Record<Ref['via'], number> = { mention: 0, speaker: 0.05, relative: 0.1, pronoun: 0.25 };
export const PENALTY = {
  /** The subject was carried over from an earlier clause ("… and joined Acme"). */
  sharedSubject: 0.1,
  /** A prepositional phrase after the object ("in Paris" in "works at Acme in Paris"). */
  secondaryObject: 0.15,
  /** The verb was not tagged as one. */
  recoveredVerb: 0.1,
  /** Passive turned active through its "by" agent. */
  passiveFlip: 0.05,
  /** Long sentences are parsed less reliably. */
  longSentence: 0.1,
  /** "my sister" -> speaker has sister. */
  possession: 0.15,
  /** "joined Globex as CFO": the capacity, a concept after the object. */
  capacity: 0.1,
} as const;

const refPenalty = (ref: Ref): number => VIA_PENALTY[ref.via] + (CATEGORY_PENALTY[ref.category] ?? 0);

export function factConfidence(subject: Ref, object: Ref, extraPenalty: number): number {
  const value = BASE_CONFIDENCE - refPenalty(subject) - refPenalty(object) - extraPenalty;
  return Math.round(Math.min(0.95, Math.max(0.2, value)) * 100) / 100;
}

// Dates and amounts name when/how much, not who acts: they never become subjects.
const NON_AGENT_CATEGORIES: ReadonlySet<EntityCategory> = new Set(['date', 'money', 'quantity', 'url', 'email']);
const MAX_PREPOSITION_WORDS = 2;

// Prepositions of a path: "moved from Munich to Vienna" states both ends.
const PATH_PREPOSITIONS: ReadonlySet<string> = new Set(['to', 'into', 'from', 'out of']);

/**
 * Whether a prepositional phrase after the verb's first object still states a fact of the subject:
 *   - a date, always: it says when the fact held (validity.ts reads it beside its sibling fact);
 *   - after a prepositional object only ("moved from Munich to Vienna"), another end of a path.
 * Anything else after an object is an adjunct of the event, not a relation of the subject: "married
 * Grace in Accra", "opened a warehouse outside Lyon in 2023", "works for the Red Cross in Geneva",
 * "sold Fjordsoft to Cisco". "of" modifies the noun before it.
 */
function secondaryArgument(prepositions: readonly string[], object: Ref, directObject: Ref | null): boolean {
  const preposition = prepositions.join(' ');
  if (object.category === 'concept' || preposition === 'of' || prepositions[0] === 'of') return false;
  if (object.category === 'date') return true;
  return directObject === null && PATH_PREPOSITIONS.has(preposition);
}

/** Reads the clause units of one sentence and reports each fact through `emit`. */
export function extractClauseFacts(units: readonly ClauseUnit[], sentencePenalty: number, emit: (fact: RawFact) => void): void {
  let subjects: Ref[] = [];
  let sharedSubject = false;
  let firstSubjects: Ref[] = [];
  // Noun phrases seen since the last verb; null marks a phrase we could not resolve (it still takes the subject slot).
  let candidates: (Ref | null)[] = [];
  let predicate: Predicate | null = null;
  let objectSeen = false;
  // The clause's named direct object ("opened [a warehouse] in Lyon"), which makes later phrases adjuncts.
  let directObject: Ref | null = null;
  let prepositions: string[] = [];
  let afterPrepositionBeforeVerb = false;
  let lastNounPhrase: Ref | null = null;
  let relativeSubject: Ref | null = null;
  let previous: ClauseUnit['kind'] | null = null;
  let hypothetical = false;
  // The status just stated ("T-1182 was closed"): a date after it says when ("… on 3 May").
  let statusStated = false;

  // Facts are held to the end of the sentence: a name in apposition takes the place of the description
  // before it ("reports to the chief financial officer, Ines Moreau" is a fact about Ines Moreau).
  const facts: (RawFact & { penalty: number })[] = [];
  const report = (subject: Ref, text: string, object: Ref, penalty: number): void => {
    if (subject.key === object.key || hypothetical) return;
    const extra =
      penalty + sentencePenalty + (sharedSubject ? PENALTY.sharedSubject : 0) + (predicate?.recovered ? PENALTY.recoveredVerb : 0);
    facts.push({ subject, predicate: text, object, confidence: factConfidence(subject, object, extra), penalty: extra });
  };
  /** The object facts of `description` become facts of `person`, its name given in apposition. */
  const renameObject = (description: Ref, person: Ref): void => {
    for (const fact of facts) {
      if (fact.object.key !== description.key) continue;
      fact.object = person;
      fact.confidence = factConfidence(fact.subject, person, fact.penalty);
    }
  };
  let lastObject: Ref | null = null;
  // How the last object phrase was attached (before it was), for a phrase coordinated with it.
  let lastAttachment: { prepositions: string[]; objectSeen: boolean; directObject: Ref | null } | null = null;
  const withdraw = (matches: (fact: RawFact) => boolean): void => {
    for (let at = facts.length - 1; at >= 0; at -= 1) if (matches(facts[at]!)) facts.splice(at, 1);
  };
  let passiveBeforeConjunction = false;
  // Read through a closure: inside the loop the compiler's narrowing of `predicate` loses its non-null assignments.
  const predicateIsPassive = (): boolean => predicate?.passive === true;
  /**
   * Whether the phrase at `at` is an item of a list ("Alice, the team and Bob"), not a description in
   * apposition to the one before it ("Kofi Mensah, the chief executive of Akwaaba Bank,").
   */
  const listGoesOn = (at: number): boolean => {
    const next = units[at + 1];
    return next?.kind === 'conj' || (next?.kind === 'break' && units[at + 2]?.kind === 'conj');
  };

  /**
   * The passive reading of a bare past form at `at` when it modifies the noun phrase before it instead of
   * opening a clause: "recalled [vehicles] sold in Canada", "works for [a startup] based in Berlin". The
   * phrase is an object (after a verb, or a preposition once the clause has its verb) and the form is followed by a preposition or
   * nothing, or names it ("opened a restaurant called Sal"); after a verb that takes a clause ("said Bob
   * moved to Rome") it is that clause's verb.
   */
  const reducedRelativeAt = (at: number): Predicate | null => {
    const unit = units[at];
    const participle = unit?.kind === 'verb' ? unit.predicate.bareParticiple : null;
    if (unit?.kind !== 'verb' || !participle || units[at - 1]?.kind !== 'np') return null;
    const after = units[at + 1];
    const naming = NAMING_PARTICIPLES.has(participle) && after?.kind === 'np';
    if (after !== undefined && after.kind !== 'prep' && after.kind !== 'break' && !naming) return null;
    const before = units[at - 2];
    const afterVerb = before?.kind === 'verb' && !CLAUSE_TAKING_VERBS.has(mainVerb(before.predicate));
    // Only a phrase inside a clause that has its verb: in "Farmers in Punjab protested" the form is that verb.
    const afterPreposition = before?.kind === 'prep' && predicate !== null;
    if (!afterVerb && !afterPreposition) return null;
    return { ...unit.predicate, text: `be ${participle}`, passive: true, bareParticiple: null };
  };

  const attachObject = (object: Ref): void => {
    if (statusStated && object.category === 'date' && prepositions.length > 0) {
      for (const subject of subjects) {
        if (subject.category !== 'person') report(subject, `have status ${prepositions.join(' ')}`, object, PENALTY.secondaryObject);
      }
    }
    if (predicate === null) return;
    if (prepositions.length > 0) {
      if (predicate.passive && prepositions.join(' ') === 'by' && !NON_AGENT_CATEGORIES.has(object.category)) {
        // "DeepMind was acquired by Google" -> Google acquire DeepMind
        for (const subject of subjects) report(object, predicate.activeText, subject, PENALTY.passiveFlip);
        // "Alice was hired by Initech" -> also Alice "be hired by" Initech, for the employer class.
        if (KEEP_PASSIVE_SIDE_VERBS.has(predicate.text.split(' ')[1] ?? '')) {
          for (const subject of subjects) report(subject, `${predicate.text} by`, object, PENALTY.passiveFlip);
        }
      } else if (!objectSeen || secondaryArgument(prepositions, object, directObject)) {
        const text = `${predicate.text} ${prepositions.join(' ')}`;
        for (const subject of subjects) report(subject, text, object, objectSeen ? PENALTY.secondaryObject : 0);
      } else if (
        prepositions.join(' ') === 'as' &&
        (object.category === 'concept' || object.category === 'product') &&
        directObject?.category !== 'person'
      ) {
        // "hired Jamal Carter as director": the capacity is the person's, not the subject's, so it is left out.
        // "joined Globex as CFO": the capacity it is held in (a role when the lexicon knows the word;
        // the tagger calls some titles products, "Engineering Manager", and some people too).
        for (const subject of subjects) report(subject, `${predicate.text} as`, object, PENALTY.capacity);
      }
    } else if (object.category === 'date') {
      // A bare date after a verb is an adverbial ("opened last week"), not an object.
      return;
    } else if (!objectSeen || previous === 'conj' || previous === 'break') {
      // A first direct object, or one coordinated with it ("uses PostgreSQL and Redis").
      for (const subject of subjects) report(subject, predicate.text, object, 0);
    } else if (previous === 'np' && directObject?.category === 'person' && DATIVE_VERBS.has(mainVerb(predicate))) {
      // "gave me a copy", "sent Alice the photos": the first object is who received, the second what was given.
      const recipient = directObject;
      const text = predicate.text;
      withdraw((fact) => fact.object.key === recipient.key && fact.predicate === text);
      for (const subject of subjects) report(subject, text, object, 0);
    }
    // Any other second bare noun phrase ("named Alice chair") is left out.
  };

  for (let index = 0; index < units.length; index += 1) {
    const unit = units[index];
    if (unit === undefined) break;
    switch (unit.kind) {
      case 'np': {
        const startsClause = units[index + 1]?.kind === 'verb' && reducedRelativeAt(index + 1) === null;
        if (predicate === null || startsClause) {
          if (!afterPrepositionBeforeVerb) {
            const subjectLike = unit.ref === null || !NON_AGENT_CATEGORIES.has(unit.ref.category) ? unit.ref : null;
            // Coordinated or appositive subjects accumulate ("Alice and Bob", "Alice's manager, Carol,"),
            // but a role beside a name is that person ("Kofi Mensah, the chief executive of Akwaaba Bank,").
            const last = candidates[candidates.length - 1];
            const apposition = previous === 'break' && !listGoesOn(index);
            if (apposition && last?.category === 'person' && subjectLike?.category === 'concept') {
              // the description adds no one
            } else if (apposition && last?.category === 'concept' && subjectLike?.category === 'person') {
              candidates[candidates.length - 1] = subjectLike;
            } else if (previous === 'conj' || previous === 'break') candidates.push(subjectLike);
            else candidates = [subjectLike];
          }
          if (startsClause) predicate = null;
        } else if (previous === 'break' && lastObject?.category === 'concept' && unit.ref?.category === 'person' && !listGoesOn(index)) {
          renameObject(lastObject, unit.ref);
          lastObject = unit.ref;
        } else {
          // A phrase coordinated with an object is read as that object was: "moved to Berlin and Paris",
          // "was bought by Acme and Initech", "serves clients across Spain and Portugal" (adjuncts both).
          if ((previous === 'conj' || previous === 'break') && prepositions.length === 0 && lastAttachment !== null) {
            prepositions = [...lastAttachment.prepositions];
            objectSeen = lastAttachment.objectSeen;
            directObject = lastAttachment.directObject;
          }
          lastAttachment = { prepositions: [...prepositions], objectSeen, directObject };
          if (unit.ref !== null) attachObject(unit.ref);
          lastObject = unit.ref;
          if (unit.ref !== null && unit.ref.category !== 'date' && prepositions.length === 0 && !objectSeen) directObject = unit.ref;
          // A companion ("works with me at Acme") leaves the verb's argument still to come.
          const companion = prepositions[0] === 'with' && directObject === null;
          if ((unit.ref?.category !== 'date' || prepositions.length > 0) && !companion) objectSeen = true;
          prepositions = [];
        }
        lastNounPhrase = unit.ref;
        break;
      }
      case 'prep':
        if (predicate !== null) {
          if (prepositions.length < MAX_PREPOSITION_WORDS) prepositions.push(unit.word);
        } else {
          afterPrepositionBeforeVerb = true;
        }
        break;
      case 'relative':
        relativeSubject =
          lastNounPhrase === null ? null : { ...lastNounPhrase, via: lastNounPhrase.via === 'mention' ? 'relative' : lastNounPhrase.via };
        break;
      case 'verb': {
        const named = candidates.filter((ref): ref is Ref => ref !== null);
        const reduced = reducedRelativeAt(index);
        if (reduced !== null) {
          // Only a named phrase is worth a fact of its own: "the Zephyr sold in Canada", not "vehicles sold in Canada".
          subjects = lastNounPhrase === null || lastNounPhrase.category === 'concept' ? [] : [{ ...lastNounPhrase, via: 'relative' }];
          sharedSubject = false;
        } else if (candidates.length > 0) {
          subjects = named;
          sharedSubject = false;
        } else if (previous === 'relative') {
          subjects = relativeSubject === null ? [] : [relativeSubject];
          sharedSubject = false;
        } else if (previous === 'conj' && subjects.length > 0) {
          sharedSubject = true; // "moved to Berlin and joined Acme"
        } else if (previous === 'break' && firstSubjects.length > 0) {
          subjects = firstSubjects; // back in the main clause after "Alice, who lives in Paris, manages Bob"
          sharedSubject = true;
        } else if (predicate !== null && prepositions.length === 0 && previous === 'verb') {
          // Two verb groups in a row keep their subject.
        } else {
          subjects = [];
        }
        if (firstSubjects.length === 0) firstSubjects = subjects;
        statusStated = false;
        // "was led by Arjun and funded by the Trust": a past form coordinated with a passive is passive too.
        const participle = unit.predicate.bareParticiple;
        const coordinatedPassive: Predicate | null =
          previous === 'conj' && passiveBeforeConjunction && participle
            ? { ...unit.predicate, text: `be ${participle}`, passive: true, bareParticiple: null }
            : null;
        predicate = reduced ?? coordinatedPassive ?? unit.predicate;
        objectSeen = false;
        directObject = null;
        lastAttachment = null;
        prepositions = [];
        candidates = [];
        afterPrepositionBeforeVerb = false;
        break;
      }
      case 'complement':
        predicate = null;
        break;
      case 'state':
        if (unit.ref !== null) {
          // Tickets, orders and requests have a status; people are not "closed" or "pending".
          const text = unit.negated ? 'not have status' : 'have status';
          for (const subject of subjects) if (subject.category !== 'person') report(subject, text, unit.ref, 0);
          statusStated = true;
        }
        if (unit.endsClause) predicate = null;
        break;
      case 'conj':
        passiveBeforeConjunction = predicateIsPassive();
        prepositions = [];
        break;
      case 'condition':
        hypothetical = true;
        break;
      case 'break':
        prepositions = [];
        hypothetical = false;
        // "In 2023, I moved": the comma ends an opening prepositional phrase. But in "The meeting with
        // Acme's CFO, Dana Lee, is …" the subject is known and Dana Lee is still inside the phrase.
        if (candidates.length === 0) afterPrepositionBeforeVerb = false;
        if (unit.strong) {
          lastAttachment = null;
          statusStated = false;
          predicate = null;
          subjects = [];
          candidates = [];
          firstSubjects = [];
        }
        break;
    }
    previous = unit.kind;
  }
  for (const { penalty: _penalty, ...fact } of facts) emit(fact);
}
