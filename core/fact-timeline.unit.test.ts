import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_FACT_LEXICON, factLexiconSchema, PredicateClassifier } from './fact-lexicon.js';
import { deletionChanges, factTimelines, newSupersessions, validityAt, type TimelineFact, type ValidityRow } from './fact-timeline.js';

const classifier = new PredicateClassifier(DEFAULT_FACT_LEXICON);
const day = (iso: string): Date => new Date(`${iso}T00:00:00Z`);
const row = (memoryId: string, from: string | null, to: string | null = null): ValidityRow => ({
  memoryId,
  validFrom: from === null ? null : day(from),
  validTo: to === null ? null : day(to),
});
const fact = (id: string, subjectId: string, predicate: string, objectId: string, rows: ValidityRow[]): TimelineFact => ({
  id,
  subjectId,
  predicate,
  objectId,
  objectKey: objectId,
  rows,
});

const statusAt = (facts: TimelineFact[], id: string, at: string): string => {
  const timeline = factTimelines(facts, classifier).get(id);
  assert.ok(timeline, `no timeline for ${id}`);
  return validityAt(timeline, day(at)).status;
};

describe('the functional-predicate lexicon', () => {
  const roles: [predicate: string, objectKey: string, expected: string][] = [
    ['work at', 'acme', 'assert employer'],
    ['work for', 'acme', 'assert employer'],
    ['join', 'globex', 'assert employer'],
    ['leave', 'acme', 'end employer'],
    ['quit', 'acme', 'end employer'],
    ['stop work at', 'acme', 'end employer'],
    ['quit at', 'acme', 'end employer'],
    ['stop live in', 'oslo', 'end residence'],
    ['not work at', 'acme', 'end employer'],
    ['live in', 'oslo', 'assert residence'],
    ['move to', 'lisbon', 'assert residence'],
    ['move from', 'berlin', 'end residence'],
    ['not live in', 'oslo', 'end residence'],
    ['be married to', 'bob', 'assert spouse'],
    ['divorce', 'bob', 'end spouse'],
    ['report to', 'dana lee', 'assert reports_to'],
    ['be manager of', 'eve stone', 'assert manager_of'],
    ['have status', 'open', 'assert status'],
    ['become', 'cto of initech', 'assert role'],
    ['be', 'cfo of globex', 'assert role'],
    ['be promoted to', 'vp of sales', 'assert role'],
    // "joined Globex as CFO": the capacity is a role, beside the employer.
    ['join as', 'cfo', 'assert role'],
    ['start as', 'senior engineer', 'assert role'],
    ['join as', 'volunteer', 'none'],
    // "Ticket T-1182 was closed" / "is no longer open".
    ['have status', 'closed', 'assert status'],
    ['not have status', 'open', 'end status'],
    // Multi-valued and unrelated predicates stand alone.
    ['like', 'pizza hut', 'none'],
    ['visit', 'paris', 'none'],
    ['not like', 'pizza hut', 'none'],
    ['manage', 'berlin office', 'none'],
    ['be', 'vegetarian', 'none'],
    ['become', 'friends', 'none'],
    ['use', 'postgresql', 'none'],
    // Common phrasings of changing jobs, moving and ending, as the extractor normalises them.
    ['relocate to', 'lisbon', 'assert residence'], // "relocated to Lisbon"
    ['live in', 'porto', 'assert residence'], // "now lives in Porto"
    ['be hired by', 'initech', 'assert employer'], // "was hired by Initech" (the person's side)
    ['start work at', 'initech', 'assert employer'], // "started working at Initech"
    ['quit', 'acme', 'end employer'], // "quit Acme"
    ['resign from', 'acme', 'end employer'], // "resigned from Acme"
    ['retire from', 'acme', 'end employer'], // "retired from Acme"
    ['leave', 'acme', 'end employer'], // "has left Acme"
    ['be laid off by', 'acme', 'end employer'], // "was laid off by Acme"
    ['be fired by', 'acme', 'end employer'],
    ['be dismissed from', 'acme', 'end employer'],
    ['let go by', 'acme', 'end employer'], // "was let go by Acme"
    ['divorce', 'bob smith', 'end spouse'], // "divorced Bob Smith"
    ['be divorced from', 'bob smith', 'end spouse'], // "got divorced from Bob Smith"
    ['move out of', 'berlin', 'end residence'], // "moved out of Berlin"
    ['move away from', 'berlin', 'end residence'],
    ['not be with', 'acme', 'end employer'], // "is not with Acme any more"
    // Must not assert or end anything: too vague to read as a job or a move.
    ['be with', 'acme', 'none'], // "is with Acme" (or with a person): only its ending counts
    ['be at', 'hospital', 'none'], // "is at the hospital"
    ['switch to', 'python', 'none'], // "switched to Python": the same words as "switched to Initech"
    ['switch to', 'initech', 'none'],
    ['take at', 'louvre', 'none'], // "took a photo at the Louvre" reads like "took a job at Initech"
    ['transfer to', 'savings', 'none'],
    ['change to', 'decaf', 'none'],
    ['hire', 'alice chen', 'none'], // the employer's side of "was hired by": Initech is no one's employee
  ];
  for (const [predicate, objectKey, expected] of roles) {
    it(`"${predicate}" ${objectKey} → ${expected}`, () => {
      const role = classifier.roleOf(predicate, objectKey);
      assert.equal(role.kind === 'none' ? 'none' : `${role.kind} ${role.className}`, expected);
    });
  }

  it('a predicate some object gives a class may have one; one no object can give a class never does', () => {
    // The ingest path reads a subject's timelines only when one of its new facts may have a class.
    for (const [predicate, objectKey] of roles) {
      if (classifier.roleOf(predicate, objectKey).kind !== 'none') assert.equal(classifier.mayHaveClass(predicate), true, predicate);
    }
    for (const predicate of ['be with', 'not be with', 'join as', 'be', 'become'])
      assert.equal(classifier.mayHaveClass(predicate), true, predicate);
    for (const predicate of ['like', 'not like', 'visit', 'use', 'hire', 'switch to', 'take at'])
      assert.equal(classifier.mayHaveClass(predicate), false, predicate);
  });

  it('"part with" may end an employer or a spouse; "be with" ends an employer only when said to be over', () => {
    assert.deepEqual(classifier.endsOf('part with', 'acme'), ['employer', 'spouse']);
    assert.deepEqual(classifier.endsWhenSaidOver('be with', 'acme'), ['employer']);
    assert.deepEqual(classifier.endsWhenSaidOver('live in', 'oslo'), []);
  });

  it('"leave" may end an employer or a home: the timeline decides by the object', () => {
    assert.deepEqual(classifier.endsOf('leave', 'berlin'), ['employer', 'residence']);
  });

  it('finds the class a question asks about from its cue words', () => {
    assert.deepEqual([...classifier.classesAskedBy('Where does Alice Chen work?')], ['employer']);
    assert.deepEqual([...classifier.classesAskedBy('Which city does Bob live in?')], ['residence']);
    assert.deepEqual([...classifier.classesAskedBy("What is Bob's role at Initech?")], ['role']);
    assert.deepEqual([...classifier.classesAskedBy('What does Bob like?')], []);
  });

  it('accepts the default lexicon as a FACT_LEXICON_FILE would be read', () => {
    assert.equal(factLexiconSchema.safeParse(DEFAULT_FACT_LEXICON).success, true);
  });

  const badLexicons: [name: string, value: unknown, path: string][] = [
    ['a duplicate class', { classes: [DEFAULT_FACT_LEXICON.classes[0], DEFAULT_FACT_LEXICON.classes[0]] }, 'classes.1.name'],
    ['a negated predicate', { classes: [{ name: 'x', asserts: ['not work at'], ends: [], cues: [] }] }, 'classes.0.asserts.0'],
    ['an empty asserts list', { classes: [{ name: 'x', asserts: [], ends: [], cues: [] }] }, 'classes.0.asserts'],
    ['a bad class name', { classes: [{ name: 'Employer!', asserts: ['work at'], ends: [], cues: [] }] }, 'classes.0.name'],
    ['an unknown field', { classes: [{ name: 'x', asserts: ['a'], ends: [], cues: [], multi: true }] }, 'classes.0'],
    [
      'one predicate asserting two classes',
      {
        classes: [
          { name: 'a', asserts: ['work at'], ends: [], cues: [] },
          { name: 'b', asserts: ['work at'], ends: [], cues: [] },
        ],
      },
      'classes.1.asserts',
    ],
  ];
  for (const [name, value, path] of badLexicons) {
    it(`refuses a lexicon with ${name}, naming ${path}`, () => {
      const parsed = factLexiconSchema.safeParse(value);
      assert.equal(parsed.success, false);
      assert.ok(
        parsed.error!.issues.some((issue) => issue.path.join('.') === path),
        JSON.stringify(parsed.error!.issues.map((issue) => issue.path.join('.'))),
      );
    });
  }
});

describe('fact timelines', () => {
  it('a later employer supersedes the earlier one, naming the fact and memory that did it', () => {
    const facts = [
      fact('acme', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-10')]),
      fact('globex', 'alice', 'join', 'o-globex', [row('m2', '2025-06-01')]),
    ];
    const timelines = factTimelines(facts, classifier);
    assert.deepEqual(timelines.get('acme'), {
      className: 'employer',
      intervals: [{ from: day('2025-01-10'), to: day('2025-06-01'), closedBy: { reason: 'superseded', factId: 'globex', memoryId: 'm2' } }],
    });
    assert.deepEqual(timelines.get('globex')?.intervals, [{ from: day('2025-06-01'), to: null, closedBy: null }]);
    assert.equal(statusAt(facts, 'acme', '2025-03-01'), 'current');
    assert.equal(statusAt(facts, 'acme', '2025-07-01'), 'superseded');
    assert.equal(statusAt(facts, 'globex', '2025-03-01'), 'not_yet_valid');
  });

  it('the order facts were learned in does not matter: only their validity times', () => {
    const later = fact('globex', 'alice', 'join', 'o-globex', [row('m1', '2025-06-01')]);
    const earlier = fact('acme', 'alice', 'work at', 'o-acme', [row('m2', '2025-01-10')]);
    assert.equal(statusAt([later, earlier], 'acme', '2025-07-01'), 'superseded');
    assert.equal(statusAt([later, earlier], 'globex', '2025-07-01'), 'current');
  });

  it('removing the superseding memory restores the old fact (the rows are the only state)', () => {
    const acme = fact('acme', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-10')]);
    const globex = fact('globex', 'alice', 'join', 'o-globex', [row('m2', '2025-06-01')]);
    assert.equal(statusAt([acme, globex], 'acme', '2026-01-01'), 'superseded');
    assert.equal(statusAt([acme], 'acme', '2026-01-01'), 'current');
  });

  it('an ending closes the fact with that object only, and the ending fact held until then', () => {
    const facts = [
      fact('acme', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-10')]),
      fact('left-initech', 'alice', 'leave', 'o-initech', [row('m2', null, '2025-03-01')]),
      fact('left-acme', 'alice', 'leave', 'o-acme', [row('m3', null, '2025-05-01')]),
    ];
    const timelines = factTimelines(facts, classifier);
    assert.deepEqual(timelines.get('acme')?.intervals, [
      { from: day('2025-01-10'), to: day('2025-05-01'), closedBy: { reason: 'ended', factId: 'left-acme', memoryId: 'm3' } },
    ]);
    assert.deepEqual(timelines.get('left-initech')?.intervals, [
      { from: null, to: day('2025-03-01'), closedBy: { reason: 'ended', factId: 'left-initech', memoryId: 'm2' } },
    ]);
    assert.equal(statusAt(facts, 'acme', '2025-04-01'), 'current');
    assert.equal(statusAt(facts, 'acme', '2025-06-01'), 'ended');
  });

  it('"moved from Berlin to Lisbon": one memory ending one home and asserting another supersedes it', () => {
    const facts = [
      fact('berlin', 'alice', 'move from', 'o-berlin', [row('m3', null, '2025-07-01')]),
      fact('lisbon', 'alice', 'move to', 'o-lisbon', [row('m3', '2025-07-01')]),
    ];
    assert.deepEqual(factTimelines(facts, classifier).get('berlin')?.intervals, [
      { from: null, to: day('2025-07-01'), closedBy: { reason: 'superseded', factId: 'lisbon', memoryId: 'm3' } },
    ]);
    assert.equal(statusAt(facts, 'berlin', '2025-03-01'), 'current');
    assert.deepEqual(newSupersessions(facts, 'm3', classifier), [
      { className: 'residence', oldFactId: 'berlin', newFactId: 'lisbon', memoryId: 'm3', at: day('2025-07-01') },
    ]);
    // Two memories (leaving, then settling elsewhere the same day) are an ending, then a new home.
    const apart = [facts[0]!, fact('lisbon', 'alice', 'move to', 'o-lisbon', [row('m4', '2025-07-01')])];
    assert.equal(statusAt(apart, 'berlin', '2025-08-01'), 'ended');
  });

  it('"no longer lives in Oslo" on the same fact closes it', () => {
    const oslo = fact('oslo', 'alice', 'live in', 'o-oslo', [row('m1', '2024-01-01'), row('m2', null, '2025-02-01')]);
    assert.equal(statusAt([oslo], 'oslo', '2024-06-01'), 'current');
    assert.equal(statusAt([oslo], 'oslo', '2025-06-01'), 'ended');
  });

  it('an explicit end closes the fact at that date', () => {
    const initech = fact('initech', 'bob', 'work at', 'o-initech', [row('m1', '2019-01-01', '2023-01-01')]);
    assert.equal(statusAt([initech], 'initech', '2022-01-01'), 'current');
    assert.equal(statusAt([initech], 'initech', '2023-01-01'), 'ended');
  });

  it('returning to an old employer opens a second interval', () => {
    const facts = [
      fact('acme', 'alice', 'work at', 'o-acme', [row('m1', '2020-01-01'), row('m3', '2024-01-01')]),
      fact('globex', 'alice', 'work at', 'o-globex', [row('m2', '2022-01-01')]),
    ];
    const acme = factTimelines(facts, classifier).get('acme')!;
    assert.equal(acme.intervals.length, 2);
    assert.equal(statusAt(facts, 'acme', '2023-01-01'), 'superseded');
    assert.equal(statusAt(facts, 'acme', '2025-01-01'), 'current');
    assert.equal(statusAt(facts, 'globex', '2025-01-01'), 'superseded');
  });

  it('rows stored before validity existed count from the beginning of time', () => {
    const facts = [
      fact('acme', 'alice', 'work at', 'o-acme', [row('old', null, null)]),
      fact('globex', 'alice', 'join', 'o-globex', [row('m2', '2025-06-01')]),
    ];
    assert.equal(statusAt(facts, 'acme', '2000-01-01'), 'current');
    assert.equal(statusAt(facts, 'acme', '2025-07-01'), 'superseded');
  });

  // Pairs that must not supersede each other.
  const independent: [name: string, facts: TimelineFact[], id: string][] = [
    [
      'different subjects',
      [
        fact('a', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-01')]),
        fact('b', 'bob', 'work at', 'o-globex', [row('m2', '2025-06-01')]),
      ],
      'a',
    ],
    [
      'a multi-valued predicate (likes)',
      [fact('a', 'alice', 'like', 'o-tea', [row('m1', '2025-01-01')]), fact('b', 'alice', 'like', 'o-coffee', [row('m2', '2025-06-01')])],
      'a',
    ],
    [
      'a multi-valued predicate (visited)',
      [fact('a', 'alice', 'visit', 'o-paris', [row('m1', '2025-01-01')]), fact('b', 'alice', 'visit', 'o-rome', [row('m2', '2025-06-01')])],
      'a',
    ],
    [
      'different classes of one subject',
      [
        fact('a', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-01')]),
        fact('b', 'alice', 'move to', 'o-lisbon', [row('m2', '2025-06-01')]),
      ],
      'a',
    ],
    [
      'the same object repeated',
      [fact('a', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-01')]), fact('b', 'alice', 'join', 'o-acme', [row('m2', '2025-06-01')])],
      'a',
    ],
    [
      'the same fact stated again later',
      [fact('a', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-01'), row('m2', '2025-06-01')])],
      'a',
    ],
    [
      'two objects asserted at the same instant',
      [
        fact('a', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-01')]),
        fact('b', 'alice', 'work at', 'o-globex', [row('m1', '2025-01-01')]),
      ],
      'a',
    ],
    [
      'an ending of another object',
      [
        fact('a', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-01')]),
        fact('b', 'alice', 'leave', 'o-globex', [row('m2', null, '2025-06-01')]),
      ],
      'a',
    ],
    [
      'two tickets (closing one leaves the other open)',
      [
        fact('a', 't-1182', 'have status', 'open', [row('m1', '2025-01-01')]),
        fact('b', 't-1183', 'have status', 'closed', [row('m2', '2025-06-01')]),
      ],
      'a',
    ],
    [
      'a role word that is not a role ("be" + vegetarian)',
      [
        fact('a', 'alice', 'be', 'cto of acme', [row('m1', '2025-01-01')]),
        fact('b', 'alice', 'be', 'vegetarian', [row('m2', '2025-06-01')]),
      ],
      'a',
    ],
  ];
  it('"ticket T-1182 was closed" ends its open status without a replacement, and holds itself', () => {
    const facts = [
      fact('open', 't-1182', 'have status', 'open', [row('m1', '2025-03-01')]),
      fact('closed', 't-1182', 'have status', 'closed', [row('m2', '2025-03-05')]),
    ];
    assert.deepEqual(factTimelines(facts, classifier).get('open')?.intervals, [
      { from: day('2025-03-01'), to: day('2025-03-05'), closedBy: { reason: 'ended', factId: 'closed', memoryId: 'm2' } },
    ]);
    assert.equal(statusAt(facts, 'open', '2025-03-02'), 'current');
    assert.equal(statusAt(facts, 'open', '2025-04-01'), 'ended');
    assert.equal(statusAt(facts, 'closed', '2025-04-01'), 'current');
    assert.deepEqual(newSupersessions(facts, 'm2', classifier), [], 'an ending is no supersession');
    // Reopened later: the open status supersedes the closed one.
    const reopened = [
      facts[0]!,
      facts[1]!,
      fact('open', 't-1182', 'have status', 'open', [row('m1', '2025-03-01'), row('m3', '2025-04-10')]),
    ];
    assert.equal(statusAt(reopened.slice(1), 'closed', '2025-05-01'), 'superseded');
    assert.equal(statusAt(reopened.slice(1), 'open', '2025-05-01'), 'current');
  });

  it('"ticket T-1182 is no longer open" ends the open status', () => {
    const facts = [
      fact('open', 't-1182', 'have status', 'open', [row('m1', '2025-03-01')]),
      fact('not-open', 't-1182', 'not have status', 'open', [row('m2', null, '2025-03-05')]),
    ];
    assert.equal(statusAt(facts, 'open', '2025-04-01'), 'ended');
  });

  it('"joined Globex as CFO" then "was promoted to CEO": the role is superseded, the employer stays', () => {
    const facts = [
      fact('globex', 'alice', 'join', 'o-globex', [row('m1', '2025-06-01')]),
      fact('cfo', 'alice', 'join as', 'cfo', [row('m1', '2025-06-01')]),
      fact('ceo', 'alice', 'be promoted to', 'ceo', [row('m2', '2026-01-01')]),
    ];
    assert.equal(statusAt(facts, 'cfo', '2025-07-01'), 'current');
    assert.equal(statusAt(facts, 'cfo', '2026-02-01'), 'superseded');
    assert.equal(statusAt(facts, 'globex', '2026-02-01'), 'current');
  });

  for (const [name, facts, id] of independent) {
    it(`does not supersede across ${name}`, () => assert.equal(statusAt(facts, id, '2026-01-01'), 'current'));
  }
});

describe('supersessions a memory brings about', () => {
  const acme = fact('acme', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-10')]);
  const globex = fact('globex', 'alice', 'join', 'o-globex', [row('m2', '2025-06-01')]);
  const lisbon = fact('lisbon', 'alice', 'move to', 'o-lisbon', [row('m3', '2025-07-01')]);

  it('names the old and new fact, the class, the memory and when', () => {
    assert.deepEqual(newSupersessions([acme, globex, lisbon], 'm2', classifier), [
      { className: 'employer', oldFactId: 'acme', newFactId: 'globex', memoryId: 'm2', at: day('2025-06-01') },
    ]);
  });

  it('reports nothing for a memory that supersedes nothing', () => {
    assert.deepEqual(newSupersessions([acme, globex, lisbon], 'm3', classifier), []);
    assert.deepEqual(newSupersessions([acme, globex, lisbon], 'm1', classifier).length, 1); // see the next test
  });

  it('an older fact learned late arrives superseded by the newer one already known', () => {
    assert.deepEqual(newSupersessions([acme, globex], 'm1', classifier), [
      { className: 'employer', oldFactId: 'acme', newFactId: 'globex', memoryId: 'm2', at: day('2025-06-01') },
    ]);
  });

  it('a memory re-stating a fact that was already superseded brings nothing new', () => {
    const again = fact('globex', 'alice', 'join', 'o-globex', [row('m2', '2025-06-01'), row('m4', '2025-08-01')]);
    assert.deepEqual(newSupersessions([acme, again], 'm4', classifier), []);
  });
});

describe('vague phrasings end a fact only when said to be over ("is no longer with Acme")', () => {
  const acme = fact('acme', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-10')]);
  const cases: [name: string, other: TimelineFact, acmeStatus: string][] = [
    ['"is no longer with Acme" ends it', fact('with', 'alice', 'be with', 'o-acme', [row('m2', null, '2025-05-01')]), 'ended'],
    ['"is not with Acme any more" ends it', fact('with', 'alice', 'not be with', 'o-acme', [row('m2', null, '2025-05-01')]), 'ended'],
    ['"is no longer at Acme" ends it', fact('with', 'alice', 'be at', 'o-acme', [row('m2', null, '2025-05-01')]), 'ended'],
    ['"is with Bob Smith" ends and supersedes nothing', fact('with', 'alice', 'be with', 'o-bob', [row('m2', '2025-05-01')]), 'current'],
    ['"is at the hospital" supersedes nothing', fact('with', 'alice', 'be at', 'o-hospital', [row('m2', '2025-05-01')]), 'current'],
    [
      '"is no longer at the hospital" ends nothing else',
      fact('with', 'alice', 'be at', 'o-hospital', [row('m2', null, '2025-05-01')]),
      'current',
    ],
    ['"is with Acme" (a restatement) ends nothing', fact('with', 'alice', 'be with', 'o-acme', [row('m2', '2025-05-01')]), 'current'],
    ['"switched to Python" supersedes nothing', fact('python', 'alice', 'switch to', 'o-python', [row('m2', '2025-05-01')]), 'current'],
  ];
  for (const [name, other, acmeStatus] of cases) {
    it(name, () => {
      assert.equal(statusAt([acme, other], 'acme', '2025-06-01'), acmeStatus);
      assert.deepEqual(newSupersessions([acme, other], 'm2', classifier), []);
    });
  }

  it('"was hired by Initech" (the person\'s side) supersedes the earlier employer', () => {
    const hired = fact('hired', 'alice', 'be hired by', 'o-initech', [row('m2', '2025-05-01')]);
    assert.equal(statusAt([acme, hired], 'acme', '2025-06-01'), 'superseded');
  });
});

describe("roles end with the employment they were held at (the lexicon's endsWith)", () => {
  // "Alice Chen joined Globex as CFO." (m1, June) and what follows; role objects name a role word.
  const globex = fact('globex', 'alice', 'join', 'o-globex', [row('m1', '2025-06-01')]);
  const cfo = fact('cfo', 'alice', 'join as', 'cfo', [row('m1', '2025-06-01')]);
  const initech = fact('initech', 'alice', 'join', 'o-initech', [row('m2', '2025-09-01')]);
  const cfoTimeline = (facts: TimelineFact[], lexicon = classifier) => factTimelines(facts, lexicon).get('cfo')!;

  const ending: [name: string, facts: TimelineFact[], endedAt: string, closedBy: { factId: string; memoryId: string }][] = [
    ['"joined Initech" ends the CFO role held at Globex', [globex, cfo, initech], '2025-09-01', { factId: 'initech', memoryId: 'm2' }],
    [
      '"left Globex" ends it, without a new employer',
      [globex, cfo, fact('left', 'alice', 'leave', 'o-globex', [row('m3', null, '2025-08-01')])],
      '2025-08-01',
      { factId: 'left', memoryId: 'm3' },
    ],
    [
      '"no longer works at Globex" (an ending row of the same fact) ends it',
      [fact('globex', 'alice', 'join', 'o-globex', [row('m1', '2025-06-01'), row('m3', null, '2025-08-01')]), cfo],
      '2025-08-01',
      { factId: 'globex', memoryId: 'm3' },
    ],
    [
      'a role begun later at Globex ("became CTO") ends with Globex too',
      [globex, fact('cfo', 'alice', 'become', 'cto', [row('m4', '2025-07-01')]), initech],
      '2025-09-01',
      { factId: 'initech', memoryId: 'm2' },
    ],
    [
      '"be" + "cfo of globex" (a role named with its employer) ends when the employer changes',
      [globex, fact('cfo', 'alice', 'be', 'cfo of globex', [row('m4', '2025-07-01')]), initech],
      '2025-09-01',
      { factId: 'initech', memoryId: 'm2' },
    ],
  ];
  for (const [name, facts, endedAt, closedBy] of ending) {
    it(name, () => {
      const [interval] = cfoTimeline(facts).intervals;
      assert.deepEqual(interval?.to, day(endedAt));
      assert.deepEqual(interval?.closedBy, { reason: 'ended', ...closedBy });
      assert.equal(statusAt(facts, 'cfo', endedAt), 'ended');
      assert.equal(statusAt(facts, 'cfo', '2025-07-15'), 'current');
    });
  }

  const standing: [name: string, facts: TimelineFact[]][] = [
    ['the same employer restated', [globex, cfo, fact('globex-again', 'alice', 'work at', 'o-globex', [row('m5', '2025-10-01')])]],
    ['a role begun while no employer was known', [fact('cfo', 'alice', 'become', 'cfo', [row('m0', '2025-01-01')]), globex, initech]],
    [
      'a role from an unknown start (a row stored before validity existed)',
      [globex, fact('cfo', 'alice', 'become', 'cfo', [row('m0', null)]), initech],
    ],
    [
      'a role begun after the employer change, at the new employer',
      [globex, initech, fact('cfo', 'alice', 'be promoted to', 'cfo', [row('m6', '2025-10-01')])],
    ],
    ['a move to another city', [globex, cfo, fact('lisbon', 'alice', 'move to', 'o-lisbon', [row('m7', '2025-09-01')])]],
    ['another person changing employer', [globex, cfo, fact('bob-initech', 'bob', 'join', 'o-initech', [row('m8', '2025-09-01')])]],
    ['something multi-valued ("likes Initech")', [globex, cfo, fact('likes', 'alice', 'like', 'o-initech', [row('m9', '2025-09-01')])]],
  ];
  for (const [name, facts] of standing) {
    it(`does not end the role after ${name}`, () => {
      assert.equal(statusAt(facts, 'cfo', '2025-12-01'), 'current');
    });
  }

  it('a new role stated with the new employer supersedes the old one (not an ending)', () => {
    const cto = fact('cto', 'alice', 'join as', 'cto', [row('m2', '2025-09-01')]);
    const interval = cfoTimeline([globex, cfo, initech, cto]).intervals[0];
    assert.deepEqual(interval?.closedBy, { reason: 'superseded', factId: 'cto', memoryId: 'm2' });
    assert.deepEqual(
      newSupersessions([globex, cfo, initech, cto], 'm2', classifier).map((change) => `${change.className} ${change.oldFactId}`),
      ['role cfo', 'employer globex'],
    );
  });

  it('a role ended by the employer change is not superseded by a later role', () => {
    const cto = fact('cto', 'alice', 'become', 'cto', [row('m3', '2025-11-01')]);
    assert.deepEqual(
      newSupersessions([globex, cfo, initech, cto], 'm3', classifier).map((change) => change.oldFactId),
      [],
    );
  });

  it('is configurable: a lexicon whose role class has no endsWith keeps the role', () => {
    const untied = new PredicateClassifier({
      classes: DEFAULT_FACT_LEXICON.classes.map(({ endsWith: _ignored, ...entry }) => entry),
    });
    assert.equal(validityAt(cfoTimeline([globex, cfo, initech], untied), day('2025-12-01')).status, 'current');
  });

  const badTies: [name: string, endsWith: string[]][] = [
    ['an unknown class', ['employment']],
    ['its own class', ['role']],
  ];
  for (const [name, endsWith] of badTies) {
    it(`refuses endsWith naming ${name}`, () => {
      const lexicon = { classes: DEFAULT_FACT_LEXICON.classes.map((entry) => (entry.name === 'role' ? { ...entry, endsWith } : entry)) };
      const parsed = factLexiconSchema.safeParse(lexicon);
      assert.equal(parsed.success, false);
      assert.ok(parsed.error!.issues.some((issue) => issue.path.join('.') === `classes.${lexicon.classes.length - 1}.endsWith`));
    });
  }
});

describe('what deleting memories changes', () => {
  const acme = fact('acme', 'alice', 'work at', 'o-acme', [row('m1', '2025-01-10')]);
  const globex = fact('globex', 'alice', 'join', 'o-globex', [row('m2', '2025-06-01')]);
  const initech = fact('initech', 'alice', 'join', 'o-initech', [row('m3', '2025-09-01')]);
  const supersession = (oldFactId: string, newFactId: string, memoryId: string, at: string) => ({
    className: 'employer',
    oldFactId,
    newFactId,
    memoryId,
    at: day(at),
  });

  it('deleting the superseding memory restores the old fact, current again', () => {
    assert.deepEqual(deletionChanges([acme, globex], new Set(['m2']), classifier), {
      restored: [{ ...supersession('acme', 'globex', 'm2', '2025-06-01'), validTo: null }],
      superseded: [],
      goneFacts: new Set(['globex']),
    });
  });

  it('deleting a memory between two others restores the old fact until the later one, which now supersedes it', () => {
    assert.deepEqual(deletionChanges([acme, globex, initech], new Set(['m2']), classifier), {
      restored: [{ ...supersession('acme', 'globex', 'm2', '2025-06-01'), validTo: day('2025-09-01') }],
      superseded: [supersession('acme', 'initech', 'm3', '2025-09-01')],
      goneFacts: new Set(['globex']),
    });
  });

  it("removing a failed append's rows (its chunks from 1 on) undoes the supersession they brought, and only theirs", () => {
    const chunked = (memoryId: string, chunkIndex: number, from: string): ValidityRow => ({ ...row(memoryId, from), chunkIndex });
    const conversation = [
      fact('acme', 'alice', 'work at', 'o-acme', [chunked('m1', 0, '2025-01-10')]),
      fact('globex', 'alice', 'join', 'o-globex', [chunked('m1', 1, '2025-06-01')]),
      fact('tea', 'alice', 'like', 'o-tea', [chunked('m1', 0, '2025-01-10'), chunked('m1', 1, '2025-06-01')]),
    ];
    const failedAppend = (candidate: ValidityRow) => candidate.memoryId === 'm1' && (candidate.chunkIndex ?? 0) >= 1;
    assert.deepEqual(deletionChanges(conversation, failedAppend, classifier), {
      restored: [{ ...supersession('acme', 'globex', 'm1', '2025-06-01'), validTo: null }],
      superseded: [],
      goneFacts: new Set(['globex']),
    });
  });

  const unchanged: [name: string, facts: TimelineFact[], deleted: string[]][] = [
    ['the old fact going with its memory', [acme, globex], ['m1']],
    ['both memories going', [acme, globex], ['m1', 'm2']],
    ['a memory that superseded nothing', [acme, globex, fact('like', 'alice', 'like', 'o-tea', [row('m9', '2025-07-01')])], ['m9']],
    [
      'the newer fact still stated by another memory',
      [acme, fact('globex', 'alice', 'join', 'o-globex', [row('m2', '2025-06-01'), row('m4', '2025-06-01')])],
      ['m2'],
    ],
  ];
  for (const [name, facts, deleted] of unchanged) {
    it(`restores nothing after ${name}`, () => assert.deepEqual(deletionChanges(facts, new Set(deleted), classifier).restored, []));
  }

  it('undoing an ending is no restoration event (only supersessions are announced)', () => {
    const left = fact('left', 'alice', 'leave', 'o-acme', [row('m5', null, '2025-03-01')]);
    assert.deepEqual(deletionChanges([acme, left], new Set(['m5']), classifier), {
      restored: [],
      superseded: [],
      goneFacts: new Set(['left']),
    });
  });
});

describe('which facts a supersession replay must read (PredicateClassifier.timelinePredicates)', () => {
  it('reads nothing for predicates of no class, a class for its own, and a role with the employment it is tied to', () => {
    assert.equal(classifier.timelinePredicates(['like', 'visit', 'not like']), null);
    const spouse = classifier.timelinePredicates(['be married to'])!;
    for (const predicate of ['be married to', 'not be married to', 'divorce']) assert.ok(spouse.has(predicate), predicate);
    assert.ok(!spouse.has('work at') && !spouse.has('live in'));
    // Either side of the tie brings the other: a role ends with its employment, and a new employer ends a role.
    for (const asked of [['join as'], ['join'], ['leave']]) {
      const read = classifier.timelinePredicates(asked)!;
      for (const predicate of ['join as', 'become', 'work at', 'join', 'leave', 'not work at', 'be with'])
        assert.ok(read.has(predicate), `${asked.join()} reads ${predicate}`);
    }
  });

  // One subject's history across classes; every memory's supersessions are the same whether the
  // replay reads all of the subject's facts or only those of the classes the memory's facts touch.
  const history: TimelineFact[] = [
    fact('acme', 'alice', 'work at', 'o-acme', [row('m1', '2024-01-10')]),
    fact('cfo', 'alice', 'join as', 'cfo', [row('m2', '2025-06-01')]),
    fact('globex', 'alice', 'join', 'o-globex', [row('m2', '2025-06-01')]),
    fact('berlin', 'alice', 'live in', 'o-berlin', [row('m1', '2024-01-10')]),
    fact('lisbon', 'alice', 'move to', 'o-lisbon', [row('m3', '2025-07-01')]),
    fact('left', 'alice', 'leave', 'o-globex', [row('m4', null, '2025-08-01')]),
    fact('initech', 'alice', 'join', 'o-initech', [row('m5', '2025-09-01')]),
    fact('bob', 'alice', 'be married to', 'o-bob', [row('m3', '2023-05-01')]),
    fact('pizza', 'alice', 'like', 'o-pizza', [row('m4', '2024-03-01'), row('m5', '2025-03-01')]),
    fact('paris', 'alice', 'visit', 'o-paris', [row('m6', '2025-04-01')]),
    fact('with', 'alice', 'be with', 'o-initech', [row('m6', null, '2025-10-01')]),
    // A later role: the CFO role ended with Globex in August, so it is not superseded by this one.
    fact('cto', 'alice', 'become', 'cto', [row('m7', '2025-11-01')]),
  ];
  for (const memoryId of ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']) {
    it(`${memoryId}: the same supersessions from the facts of its classes as from all`, () => {
      const predicates = history.filter((f) => f.rows.some((r) => r.memoryId === memoryId)).map((f) => f.predicate);
      const read = classifier.timelinePredicates(predicates);
      const narrowed = read === null ? [] : history.filter((f) => read.has(f.predicate));
      assert.deepEqual(newSupersessions(narrowed, memoryId, classifier), newSupersessions(history, memoryId, classifier));
    });
  }
});
