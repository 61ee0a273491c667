/**
 * Functional predicates: relations a subject holds with one object at a time (one employer, one
 * home city, one spouse), so a later-valid fact of the same class supersedes the earlier one.
 * Everything else is multi-valued ("likes", "visited") and never supersedes anything.
 *
 * Predicates are written in the normalised verb forms the local extractor produces
 * (extractors/structure/facts.ts: lemmatised, lower case, the preposition kept: "work at",
 * "move to", "be married to"). A class lists:
 *   - `asserts`: predicates stating the relation holds ("join" Globex);
 *   - `ends`: predicates stating it stopped for their object ("leave" Acme, "move from" Berlin);
 *   - `endsWhenNegated`: predicates too vague to assert the class ("be with" Acme may be a person's
 *     company) that end it when negated or said to no longer hold ("is no longer with Acme");
 *   - `objectWords`: when set, a fact counts only if its object's key holds one of these words
 *     ("be" + "cfo of globex" is a role, "be" + "vegetarian" is not);
 *   - `endingObjects`: objects whose assertion closes the class's current fact instead of
 *     replacing it: "have status" + "closed" ends the ticket's "open" status (reason `ended`, no
 *     supersession), and holds itself from then on;
 *   - `cues`: query words that ask about the class ("Where does Alice work?");
 *   - `endsWith`: classes this one depends on: a fact of this class ends when the subject's fact of
 *     such a class that held when it began stops holding ("joined Globex as CFO", then "joined
 *     Initech": the CFO role ended with the Globex job). A fact that began while none held (or
 *     from an unknown start) is tied to nothing.
 * A negated assertion ("not live in") ends its class too. Only facts of the same subject and the
 * same class are ever compared; nothing is retired by similarity.
 *
 * The default lexicon is below (docs/search.md, "Facts that change over time"); FACT_LEXICON_FILE
 * replaces it with a JSON file of the same shape.
 */
import { z } from 'zod';

export interface PredicateClass {
  /** A stable name shown in responses and events ("employer"). */
  name: string;
  asserts: string[];
  ends: string[];
  endsWhenNegated?: string[];
  objectWords?: string[];
  endingObjects?: string[];
  cues: string[];
  endsWith?: string[];
}

export interface FactLexicon {
  classes: PredicateClass[];
}

const ROLE_WORDS = [
  'ceo',
  'cfo',
  'cto',
  'coo',
  'cio',
  'cmo',
  'vp',
  'president',
  'vice',
  'director',
  'manager',
  'head',
  'lead',
  'chief',
  'officer',
  'engineer',
  'developer',
  'designer',
  'analyst',
  'scientist',
  'architect',
  'consultant',
  'intern',
  'founder',
  'chair',
  'chairman',
  'chairwoman',
  'partner',
  'associate',
  'principal',
  'supervisor',
  'coordinator',
  'administrator',
  'accountant',
  'specialist',
];

export const DEFAULT_FACT_LEXICON: FactLexicon = {
  classes: [
    {
      name: 'employer',
      asserts: [
        'work at',
        'work for',
        'join',
        'start at',
        'start work at',
        'start work for',
        'be employed at',
        'be employed by',
        // "was hired by Initech" (the extractor keeps the person's side of these passives).
        'be hired by',
        'be recruited by',
        'rejoin',
        'return to',
      ],
      ends: [
        'leave',
        'quit',
        'quit at',
        'resign from',
        'retire from',
        'be fired from',
        'be fired by',
        'be laid off from',
        'be laid off by',
        'be dismissed from',
        'be dismissed by',
        'let go by',
        'let go from',
        'part with',
        'stop work at',
        'stop work for',
      ],
      // "is no longer with Acme", "is no longer at Initech"; "is with Bob" asserts nothing.
      endsWhenNegated: ['be with', 'be at'],
      cues: ['work', 'works', 'working', 'job', 'employer', 'employed', 'company'],
    },
    {
      name: 'residence',
      asserts: ['live in', 'move to', 'relocate to', 'reside in', 'be based in', 'settle in'],
      ends: ['move from', 'move out of', 'move away from', 'leave', 'stop live in'],
      cues: ['live', 'lives', 'living', 'reside', 'resides', 'home', 'city', 'based'],
    },
    {
      name: 'spouse',
      asserts: ['be married to', 'marry', 'wed'],
      ends: ['divorce', 'be divorced from', 'get divorced from', 'separate from', 'part with'],
      cues: ['married', 'spouse', 'wife', 'husband'],
    },
    {
      name: 'reports_to',
      asserts: ['report to', 'report directly to'],
      ends: ['stop reporting to'],
      cues: ['report', 'reports', 'boss', 'supervisor'],
    },
    {
      name: 'manager_of',
      asserts: ['be manager of', 'be the manager of'],
      ends: [],
      cues: ['manages', 'manager'],
    },
    {
      name: 'status',
      asserts: ['have status', 'be in status', 'be marked as', 'be set to', 'move to status'],
      ends: [],
      // "Ticket T-1182 was closed": the extractor reads it as "have status" closed (extractors/structure/states.ts).
      endingObjects: ['closed', 'resolved', 'cancelled', 'completed', 'done', 'archived', 'rejected', 'merged', 'fixed'],
      cues: ['status', 'state', 'open', 'closed'],
    },
    {
      name: 'role',
      asserts: [
        'be',
        'become',
        'be promoted to',
        'be appointed',
        'be named',
        'serve as',
        'work as',
        'be hired as',
        // "joined Globex as CFO": the extractor keeps the capacity beside the employer.
        'join as',
        'rejoin as',
        'start as',
        'return as',
        'be appointed as',
        'be named as',
      ],
      ends: ['step down as', 'resign as'],
      objectWords: ROLE_WORDS,
      cues: ['role', 'title', 'position'],
      // A title is held at an employer: it ends when that employment does.
      endsWith: ['employer'],
    },
  ],
};

const phrase = z
  .string()
  .trim()
  .toLowerCase()
  .min(1, 'must not be empty')
  .max(60, 'must be at most 60 characters')
  .refine((value) => !value.startsWith('not '), 'must not be negated (a negated assertion ends its class by itself)');

/** The shape of FACT_LEXICON_FILE; every class name unique, and a predicate in one class's asserts once. */
export const factLexiconSchema = z
  .strictObject({
    classes: z
      .array(
        z.strictObject({
          name: z
            .string()
            .regex(/^[a-z][a-z0-9_]{0,39}$/u, 'name must be lower case letters, digits and _ (at most 40), starting with a letter'),
          asserts: z.array(phrase).min(1, 'asserts must name at least one predicate').max(100),
          ends: z.array(phrase).max(100),
          endsWhenNegated: z.array(phrase).max(100).optional(),
          objectWords: z.array(phrase).max(500).optional(),
          endingObjects: z.array(phrase).max(100).optional(),
          cues: z.array(phrase).max(100),
          endsWith: z.array(z.string()).max(10).optional(),
        }),
      )
      .max(50),
  })
  .superRefine((lexicon, ctx) => {
    const names = new Set<string>();
    const asserted = new Map<string, string>();
    lexicon.classes.forEach((entry, index) => {
      if (names.has(entry.name))
        ctx.addIssue({ code: 'custom', path: ['classes', index, 'name'], message: `class ${entry.name} appears twice` });
      names.add(entry.name);
      for (const predicate of entry.asserts) {
        const other = asserted.get(predicate);
        // A predicate asserting two classes would need the object to decide; only objectWords may do that.
        if (other !== undefined && !entry.objectWords)
          ctx.addIssue({ code: 'custom', path: ['classes', index, 'asserts'], message: `"${predicate}" already asserts ${other}` });
        if (other === undefined) asserted.set(predicate, entry.name);
      }
    });
    lexicon.classes.forEach((entry, index) => {
      for (const tied of entry.endsWith ?? []) {
        if (tied === entry.name || !names.has(tied))
          ctx.addIssue({
            code: 'custom',
            path: ['classes', index, 'endsWith'],
            message: `"${tied}" must name another class of the lexicon`,
          });
      }
    });
  });

/** What a fact's predicate means for validity. */
export type PredicateRole =
  | { kind: 'assert'; className: string }
  | { kind: 'end'; className: string }
  /** Multi-valued or unknown: the fact stands alone, nothing supersedes it. */
  | { kind: 'none' };

const NONE: PredicateRole = { kind: 'none' };

const wordsOf = (key: string): string[] => key.split(/[\s\-/]+/u).filter((word) => word.length > 0);

/**
 * Looks predicates up in a lexicon. `objectKey` is the normalised key of the fact's object: it
 * decides classes with `objectWords`, and an ending predicate shared by classes ("leave" a
 * company or a city) is returned for every class it may end (the timeline ends only the one
 * whose object it names).
 */
export class PredicateClassifier {
  private readonly byAssert = new Map<string, PredicateClass[]>();
  private readonly byEnd = new Map<string, PredicateClass[]>();
  private readonly byNegatedEnd = new Map<string, PredicateClass[]>();
  private readonly byCue = new Map<string, string[]>();
  private readonly endingObjectsOf = new Map<string, ReadonlySet<string>>();
  private readonly tiesOf = new Map<string, readonly string[]>();

  constructor(readonly lexicon: FactLexicon) {
    for (const entry of lexicon.classes) {
      if (entry.endsWith && entry.endsWith.length > 0) this.tiesOf.set(entry.name, entry.endsWith);
      if (entry.endingObjects && entry.endingObjects.length > 0) this.endingObjectsOf.set(entry.name, new Set(entry.endingObjects));
      for (const predicate of entry.asserts) push(this.byAssert, predicate, entry);
      for (const predicate of entry.ends) push(this.byEnd, predicate, entry);
      for (const predicate of entry.endsWhenNegated ?? []) push(this.byNegatedEnd, predicate, entry);
      for (const cue of entry.cues) push(this.byCue, cue, entry.name);
    }
  }

  /** The classes a predicate may end (its own ending forms, or a negated assertion or `endsWhenNegated` form). */
  endsOf(predicate: string, objectKey: string): string[] {
    const negated = predicate.startsWith('not ');
    const base = negated ? predicate.slice(4) : predicate;
    const entries = negated ? [...(this.byAssert.get(base) ?? []), ...(this.byNegatedEnd.get(base) ?? [])] : (this.byEnd.get(base) ?? []);
    return [...new Set(entries.filter((entry) => objectFits(entry, objectKey)).map((entry) => entry.name))];
  }

  /**
   * The classes an un-negated `endsWhenNegated` predicate ends when its row says the fact no
   * longer holds ("is no longer with Acme": "be with" with an ending row). Otherwise it is no
   * class's: "is with Bob" asserts nothing.
   */
  endsWhenSaidOver(predicate: string, objectKey: string): string[] {
    if (predicate.startsWith('not ')) return [];
    return (this.byNegatedEnd.get(predicate) ?? []).filter((entry) => objectFits(entry, objectKey)).map((entry) => entry.name);
  }

  /**
   * Whether some object could give the predicate a class (assert, end, or end when said over).
   * A fact whose predicate has none stands alone in every timeline: its rows can neither
   * supersede nor be superseded, whatever its object turns out to be named.
   */
  mayHaveClass(predicate: string): boolean {
    return this.possibleClasses(predicate).length > 0;
  }

  /** The classes some object could give the predicate (asserts, endsOf and endsWhenSaidOver together). */
  private possibleClasses(predicate: string): PredicateClass[] {
    const base = predicate.startsWith('not ') ? predicate.slice(4) : predicate;
    return [this.byAssert, this.byEnd, this.byNegatedEnd].flatMap((map) => map.get(base) ?? []);
  }

  /**
   * The predicates whose facts a replay of `predicates`' timelines must read: every predicate of
   * the classes they may have (whatever the object), and of the classes tied to those either way
   * (`endsWith` cuts one class's intervals where the other's end). A fact of any other predicate
   * sits in no timeline these touch. Null when none of them may have a class.
   */
  timelinePredicates(predicates: Iterable<string>): Set<string> | null {
    const classes = new Set<string>();
    for (const predicate of predicates) for (const entry of this.possibleClasses(predicate)) classes.add(entry.name);
    if (classes.size === 0) return null;
    // Tied classes, both ways, until nothing is added.
    for (let grew = true; grew;) {
      grew = false;
      for (const [name, ties] of this.tiesOf) {
        const linked = classes.has(name) || ties.some((tied) => classes.has(tied));
        for (const other of linked ? [name, ...ties] : []) {
          if (!classes.has(other)) {
            classes.add(other);
            grew = true;
          }
        }
      }
    }
    const result = new Set<string>();
    for (const entry of this.lexicon.classes) {
      if (!classes.has(entry.name)) continue;
      for (const predicate of [...entry.asserts, ...(entry.endsWhenNegated ?? [])]) result.add(predicate).add(`not ${predicate}`);
      for (const predicate of entry.ends) result.add(predicate);
    }
    return result;
  }

  /** The class a predicate asserts for this object, or null. */
  assertsOf(predicate: string, objectKey: string): string | null {
    if (predicate.startsWith('not ')) return null;
    // A class that names its objects wins over one that does not ("be" + "cfo" is a role).
    const entries = (this.byAssert.get(predicate) ?? []).filter((entry) => objectFits(entry, objectKey));
    return (entries.find((entry) => entry.objectWords) ?? entries[0])?.name ?? null;
  }

  roleOf(predicate: string, objectKey: string): PredicateRole {
    const asserted = this.assertsOf(predicate, objectKey);
    if (asserted !== null) return { kind: 'assert', className: asserted };
    const ended = this.endsOf(predicate, objectKey);
    return ended.length > 0 ? { kind: 'end', className: ended[0]! } : NONE;
  }

  /** Whether asserting `objectKey` in `className` ends the class's current fact ("have status" closed). */
  endsClassByObject(className: string, objectKey: string): boolean {
    const endings = this.endingObjectsOf.get(className);
    return endings !== undefined && wordsOf(objectKey).some((word) => endings.has(word));
  }

  /** The classes whose fact, holding when a fact of `className` began, ends it when it stops (`endsWith`). */
  endsWithOf(className: string): readonly string[] {
    return this.tiesOf.get(className) ?? [];
  }

  /** Classes whose cue words the query contains ("Where does Alice work?" → employer). */
  classesAskedBy(query: string): Set<string> {
    const asked = new Set<string>();
    for (const word of query.toLowerCase().split(/[^\p{L}\p{N}]+/u)) for (const name of this.byCue.get(word) ?? []) asked.add(name);
    return asked;
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function objectFits(entry: PredicateClass, objectKey: string): boolean {
  if (!entry.objectWords) return true;
  const words = new Set(wordsOf(objectKey));
  return entry.objectWords.some((word) => words.has(word));
}
