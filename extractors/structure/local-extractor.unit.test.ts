import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installFastSweep, uninstallFastSweep } from './compromise-speedup.js';
import { createLocalExtractor, extractChunkStructure, normalizeEntityName } from './local-extractor.js';
import type { ChunkStructure, EntityCategory, ExtractedEntity, ExtractedFact } from './types.js';

const entity = (result: ChunkStructure, key: string): ExtractedEntity => {
  const found = result.entities.find((candidate) => candidate.key === key);
  assert.ok(found, `expected entity "${key}", got: ${result.entities.map((e) => `${e.key} (${e.category})`).join(', ')}`);
  return found;
};

const triples = (result: ChunkStructure): string[] =>
  result.facts.map((fact) => `${fact.subjectKey} | ${fact.predicate} | ${fact.objectKey}`);

const fact = (result: ChunkStructure, subjectKey: string, predicate: string, objectKey: string): ExtractedFact => {
  const found = result.facts.find((f) => f.subjectKey === subjectKey && f.predicate === predicate && f.objectKey === objectKey);
  assert.ok(found, `expected fact "${subjectKey} | ${predicate} | ${objectKey}", got: ${JSON.stringify(triples(result))}`);
  return found;
};

/** Invariants every result must satisfy, whatever the input. */
const assertWellFormed = (result: ChunkStructure): void => {
  const keys = new Set(result.entities.map((e) => e.key));
  assert.equal(keys.size, result.entities.length, 'one entity per key');
  assert.ok(result.entities.length <= 200 && result.facts.length <= 200);
  for (const e of result.entities) {
    assert.equal(e.key, normalizeEntityName(e.name));
    assert.ok(e.key.length > 0 && e.mentions >= 1);
    assert.ok(!e.aliases.includes(e.name));
    assert.ok(e.description.length <= 200);
  }
  for (const f of result.facts) {
    assert.ok(keys.has(f.subjectKey) && keys.has(f.objectKey), `fact ends must be entities: ${f.subjectKey} / ${f.objectKey}`);
    assert.notEqual(f.subjectKey, f.objectKey);
    assert.ok(f.confidence >= 0 && f.confidence <= 1);
    assert.equal(f.predicate, f.predicate.toLowerCase());
    assert.ok(f.description.length > 0 && f.description.length <= 300);
  }
};

describe('normalizeEntityName', () => {
  const cases: [string, string][] = [
    ['The Berlin Office.', 'berlin office'],
    ['  Acme   Corp  ', 'acme corp'],
    ["Alice's", 'alice'],
    ['Alice’s', 'alice'],
    ["the Smiths'", 'smiths'],
    ['an apple', 'apple'],
    ['A Team', 'team'],
    ['“Kubernetes”', 'kubernetes'],
    ['(Node.js)', 'node.js'],
    ['$500', '$500'],
    ['C++', 'c++'],
    ['ＡＢＣ', 'abc'], // full-width letters, NFKC
    ['ﬁle server', 'file server'], // ligature, NFKC
    ['theatre', 'theatre'], // an article only when it is a separate word
    ['', ''],
    ['...', ''],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} -> ${JSON.stringify(expected)}`, () => {
      assert.equal(normalizeEntityName(input), expected);
    });
  }
});

describe('extractChunkStructure: entities', () => {
  const text =
    'Alice Smith manages the Berlin office. Bob works at Acme Corp in Paris. ' +
    'She paid $500 for the iPhone 15 on March 3rd, 2024. The package weighs 3 kg and sales grew 40 percent. ' +
    'Contact bob@example.com or read https://example.com/docs for the billing service.';
  const result = extractChunkStructure(text);

  const expected: [string, EntityCategory][] = [
    ['alice smith', 'person'],
    ['bob', 'person'],
    ['acme corp', 'organization'],
    ['paris', 'place'],
    ['berlin', 'place'],
    ['march 3rd, 2024', 'date'],
    ['$500', 'money'],
    ['3 kg', 'quantity'],
    ['40 percent', 'quantity'],
    ['bob@example.com', 'email'],
    ['https://example.com/docs', 'url'],
    ['iphone 15', 'product'],
    ['berlin office', 'concept'],
    ['billing service', 'concept'],
  ];
  for (const [key, category] of expected) {
    it(`finds ${key} as ${category}`, () => {
      assert.equal(entity(result, key).category, category);
    });
  }

  it('keeps display names without determiners and describes entities by their first sentence', () => {
    const office = entity(result, 'berlin office');
    assert.equal(office.name, 'Berlin office');
    assert.equal(office.description, 'Alice Smith manages the Berlin office.');
    assert.equal(entity(result, 'alice smith').name, 'Alice Smith');
  });

  it('skips pronouns and vague nouns', () => {
    const keys = result.entities.map((e) => e.key);
    for (const vague of ['she', 'it', 'thing', 'way', 'the']) assert.ok(!keys.includes(vague), vague);
    assert.ok(!extractChunkStructure('The thing is, it works that way.').entities.some((e) => e.key === 'thing' || e.key === 'way'));
  });

  it('is well formed', () => assertWellFormed(result));
});

describe('extractChunkStructure: facts', () => {
  it('reads subject, verb and direct object, lemmatising the verb', () => {
    const result = extractChunkStructure('Alice Smith manages the Berlin office.');
    const manages = fact(result, 'alice smith', 'manage', 'berlin office');
    assert.equal(manages.description, 'Alice Smith manages the Berlin office.');
    assert.ok(manages.confidence >= 0.6 && manages.confidence < 0.9, 'a concept object lowers confidence');
    assertWellFormed(result);
  });

  it('attaches prepositions to the verb and keeps a later date, not a later place (rules.unit.test.ts)', () => {
    const result = extractChunkStructure('Bob works at Acme Corp in Paris in 2020.');
    assert.ok(fact(result, 'bob', 'work at', 'acme corp').confidence >= 0.85, 'named ends and an explicit verb are high confidence');
    assert.deepEqual(fact(result, 'bob', 'work at', 'acme corp').dates, [{ preposition: 'in', dateKey: '2020' }]);
    assert.ok(!triples(result).includes('bob | work in | paris'));
  });

  it('handles phrasal verbs, negation, passives and coordinated verbs', () => {
    const result = extractChunkStructure(
      "Alice doesn't like the new policy. DeepMind was acquired by Google in 2014. Carol moved to Berlin and joined Acme Corp.",
    );
    fact(result, 'alice', 'not like', 'policy');
    fact(result, 'google', 'acquire', 'deepmind');
    fact(result, 'carol', 'move to', 'berlin');
    fact(result, 'carol', 'join', 'acme corp');
    assertWellFormed(result);
  });

  it('gives every coordinated subject and object its fact', () => {
    const result = extractChunkStructure('Mr. John Smith and Mary Jones met Dr. Watson. We use PostgreSQL and Redis.', { speaker: 'user' });
    fact(result, 'john smith', 'meet', 'watson');
    fact(result, 'mary jones', 'meet', 'watson');
    fact(result, 'user', 'use', 'postgresql');
    fact(result, 'user', 'use', 'redis');
  });

  it('resolves a relative clause to its antecedent and returns to the main clause', () => {
    const result = extractChunkStructure('Alice Smith, who lives in Paris, manages Bob.');
    fact(result, 'alice smith', 'live in', 'paris');
    fact(result, 'alice smith', 'manage', 'bob');
  });

  it('resolves she/he/they to the most recent person, with lower confidence', () => {
    const result = extractChunkStructure('Bob Jones founded Acme Corp. Alice Smith joined Acme Corp in 2020. She moved to Lisbon.');
    const moved = fact(result, 'alice smith', 'move to', 'lisbon');
    const joined = fact(result, 'alice smith', 'join', 'acme corp');
    assert.ok(moved.confidence < joined.confidence);
    assert.ok(moved.confidence >= 0.5 && moved.confidence <= 0.7);
    // "he" skips the female name and finds Bob.
    fact(extractChunkStructure('Bob Jones met Alice Smith. He moved to Rome.'), 'bob jones', 'move to', 'rome');
  });

  it('attributes first-person statements to the speaker', () => {
    const result = extractChunkStructure('I moved to Lisbon in 2023. My sister lives in Porto.', { speaker: 'user' });
    fact(result, 'user', 'move to', 'lisbon');
    fact(result, 'sister', 'live in', 'porto');
    fact(result, 'user', 'have', 'sister');
    const user = entity(result, 'user');
    assert.equal(user.category, 'person');
    assert.equal(user.name, 'user');
    assert.equal(entity(result, '2023').category, 'date');
    assertWellFormed(result);
  });

  it('names a person introduced by a role and records the relation to the speaker', () => {
    const result = extractChunkStructure('We visited Japan with my brother Mike. He lives in Seattle.', { speaker: 'user' });
    assert.equal(entity(result, 'mike').category, 'person');
    fact(result, 'user', 'have brother', 'mike');
    fact(result, 'mike', 'live in', 'seattle');
    assert.ok(!result.entities.some((e) => e.key === 'brother mike'));
  });

  it('states no facts from questions or conditions', () => {
    const question = extractChunkStructure('Does Alice like Bob?');
    assert.deepEqual(question.facts, []);
    assert.equal(entity(question, 'alice').category, 'person');
    const condition = extractChunkStructure('If Alice moves to Paris, the team will be sad.');
    assert.ok(!condition.facts.some((f) => f.subjectKey === 'alice'), JSON.stringify(triples(condition)));
  });

  it('drops first-person facts when there is no speaker', () => {
    const result = extractChunkStructure('I moved to Lisbon in 2023.');
    assert.deepEqual(result.facts, []);
    assert.ok(!result.entities.some((e) => e.key === 'user' || e.key === 'i'));
    assert.equal(entity(result, 'lisbon').category, 'place');
  });

  it('does not make a subject of a sentence-opening prepositional phrase or an unresolved pronoun', () => {
    assert.deepEqual(triples(extractChunkStructure('In Berlin, it rains a lot.')), []);
    assert.deepEqual(triples(extractChunkStructure('It costs $500.')), []);
  });
});

describe('extractChunkStructure: dedupe', () => {
  it('keeps one entity per key and counts every mention', () => {
    const result = extractChunkStructure('Alice met Bob. Alice called Bob. Bob thanked Alice.');
    assert.equal(result.entities.filter((e) => e.key === 'alice').length, 1);
    assert.equal(entity(result, 'alice').mentions, 3);
    assert.equal(entity(result, 'bob').mentions, 3);
  });

  it('merges surface forms of one key and folds short names into the full name', () => {
    const result = extractChunkStructure(
      'Alice Smith joined Acme Corp. Later, Smith said Acme was growing. The Berlin office and the berlin office are one.',
    );
    const alice = entity(result, 'alice smith');
    assert.ok(alice.aliases.includes('Smith'));
    assert.equal(alice.mentions, 2);
    assert.ok(!result.entities.some((e) => e.key === 'smith'));
    const office = entity(result, 'berlin office');
    assert.equal(office.mentions, 2);
    assert.deepEqual(office.aliases, ['berlin office']);
    assertWellFormed(result);
  });

  it('prefers a specific category over concept for the same key', () => {
    // Sentence-initial "Kubernetes" alone looks like a common noun; the mid-sentence mention says it is a name.
    const result = extractChunkStructure('Kubernetes is hard. We moved the billing service to Kubernetes.');
    assert.equal(entity(result, 'kubernetes').category, 'product');
    assert.equal(entity(result, 'kubernetes').mentions, 2);
  });

  it('reports a repeated fact once', () => {
    const result = extractChunkStructure('Alice manages Bob. Alice manages Bob.');
    assert.deepEqual(triples(result), ['alice | manage | bob']);
  });
});

describe('extractChunkStructure: robustness', () => {
  const code = Array.from(
    { length: 250 },
    (_, i) => `export function handler${i}(req: Request): Promise<void> { const x = req.body?.items ?? []; return run(x, ${i}); }`,
  ).join('\n');
  const junk: [string, string][] = [
    ['empty', ''],
    ['whitespace', ' \n\t '],
    ['emoji', '🎉🎉🚀 ✨ 👍🏽'],
    ['punctuation', '!!! ??? ... --- ,,, ;;; (((( ))))'],
    ['code', code.slice(0, 10_000)],
    ['non-English', '東京は日本の首都です。Мы переехали в Москву. Ça va très bien, merci! Wir sind nach Berlin umgezogen.'],
    ['control characters', 'Alice\u0000met\u0007Bob\uFFFD\uD800 in Paris.'],
    ['one long word', 'x'.repeat(20_000)],
    ['numbers', '1 2 3 4 5 6 7 8 9 10 % $ € £ 3.14 1e10 0x1F'],
  ];
  for (const [label, input] of junk) {
    it(`does not throw on ${label}`, () => {
      const result = extractChunkStructure(input, { speaker: 'user' });
      assertWellFormed(result);
    });
  }

  it('keeps Markdown decoration out of names', () => {
    const result = extractChunkStructure('# Billing service\n\nThe **billing service** runs on [Kubernetes](https://kubernetes.io).');
    assert.equal(entity(result, 'billing service').name, 'Billing service');
    assert.equal(entity(result, 'billing service').mentions, 2);
    assert.ok(result.entities.every((e) => !/[#*[\]]/u.test(e.name)));
  });

  it('keeps only names from text in other languages', () => {
    const result = extractChunkStructure('Wir sind letzte Woche nach Berlin umgezogen, weil meine Frau dort eine neue Stelle hat.');
    assert.deepEqual(
      result.entities.map((e) => `${e.key}:${e.category}`),
      ['berlin:place'],
    );
    assert.deepEqual(result.facts, []);
  });

  it('finds nothing in pure code', () => {
    const result = extractChunkStructure(code.slice(0, 10_000));
    assert.deepEqual(result, { entities: [], facts: [] });
  });

  it('survives inputs that are not strings', () => {
    for (const input of [null, undefined, 42, {}]) {
      assert.deepEqual(extractChunkStructure(input as unknown as string, null as unknown as undefined), { entities: [], facts: [] });
    }
  });

  it('caps entities and facts on pathological input', () => {
    const names = Array.from({ length: 400 }, (_, i) => `Alice Smith manages project${i}x. Bob bought widget${i}y.`).join(' ');
    const result = extractChunkStructure(names);
    assert.ok(result.entities.length <= 200);
    assert.ok(result.facts.length <= 200);
    assertWellFormed(result);
  });

  it('is deterministic and keeps no state between calls', () => {
    const text = 'Alice Smith manages the Berlin office. She moved to Lisbon in 2023 and joined Acme Corp.';
    const first = extractChunkStructure(text, { speaker: 'user' });
    extractChunkStructure('Bob Jones works at Globex in Rome. He likes it.', { speaker: 'assistant' });
    assert.deepEqual(extractChunkStructure(text, { speaker: 'user' }), first);
  });
});

describe('createLocalExtractor', () => {
  it('wraps the synchronous extractor', async () => {
    const extractor = createLocalExtractor();
    assert.equal(extractor.id, 'local-compromise-v1');
    const text = 'I moved to Lisbon in 2023.';
    assert.deepEqual(await extractor.extract(text, { speaker: 'user' }), extractChunkStructure(text, { speaker: 'user' }));
  });

  it('reports its throughput (information only, never asserted)', (t) => {
    const paragraph =
      'Alice Smith manages the Berlin office and reports to the board. Bob works at Acme Corp in Paris, where the team ships the billing service. ' +
      'In March 2024 the company paid $2 million for a warehouse of 3,000 square metres. Contact ops@acme.example or see https://acme.example/status. ' +
      'She moved to Lisbon last year and now leads the data platform, which runs Kubernetes and PostgreSQL 16. ' +
      'The engineers agreed to migrate the search cluster before the end of the quarter. ';
    const chunk = paragraph.repeat(3).slice(0, 1024);
    for (let i = 0; i < 20; i += 1) extractChunkStructure(chunk);
    const runs = 100;
    const started = performance.now();
    for (let i = 0; i < runs; i += 1) extractChunkStructure(chunk, { speaker: 'user' });
    const perSecond = runs / ((performance.now() - started) / 1000);
    t.diagnostic(`local structure extractor: ${perSecond.toFixed(0)} chunks/s on 1 KB English text`);
  });
});

describe('compromise speed-up', () => {
  it('tags exactly like stock compromise', () => {
    const corpus = [
      'Dr. Jane Doe works at St. Mary’s Hospital in Boston, MA. She joined in June 2019 and earns $120,000 a year.',
      "We're moving the API to AWS next quarter; Bob thinks it'll cost 40% less. Can you email bob@example.com?",
      'The Smiths bought a 3-bedroom house for £450k. Their kids, Tom and Ann, go to Lincoln High School.',
      'Apple released the iPhone 15 on September 22, 2023. Tim Cook presented it in Cupertino, California.',
      'Alice Smith manages the Berlin office. Bob works at Acme Corp in Paris. I moved to Lisbon in 2023.',
    ];
    assert.equal(installFastSweep(), true);
    const fast = corpus.map((text) => extractChunkStructure(text, { speaker: 'user' }));
    uninstallFastSweep();
    try {
      const stock = corpus.map((text) => extractChunkStructure(text, { speaker: 'user' }));
      assert.deepEqual(fast, stock);
    } finally {
      installFastSweep();
    }
  });
});

describe('statuses and capacities (facts that change over time)', () => {
  const cases: [sentence: string, expected: string[], absent: string[]][] = [
    ['Ticket T-1182 was closed.', ['ticket t-1182 | have status | closed'], []],
    ['Ticket T-1182 is open.', ['ticket t-1182 | have status | open'], []],
    ['Ticket T-1182 was reopened.', ['ticket t-1182 | have status | open'], []],
    ['Ticket T-1182 is no longer open.', ['ticket t-1182 | not have status | open'], ['ticket t-1182 | have status | open']],
    ["Ticket T-1182 isn't closed.", ['ticket t-1182 | not have status | closed'], []],
    ['The order was cancelled.', ['order | have status | cancelled'], []],
    [
      'Ticket T-1182 has been resolved by Bob on 3 May 2025.',
      ['ticket t-1182 | have status | resolved', 'bob | resolve | ticket t-1182'],
      // The date is the status's date (ExtractedFact.dates), not a fact of its own.
      ['ticket t-1182 | have status on | 3 may 2025'],
    ],
    ['Ticket T-1182 was opened by Dana Lee.', ['ticket t-1182 | have status | open', 'dana lee | open | ticket t-1182'], []],
    ['Alice Chen joined Globex as CFO.', ['alice chen | join | globex', 'alice chen | join as | cfo'], []],
    ['Alice Chen joined Globex as the new CFO.', ['alice chen | join as | cfo'], []],
    // People are not in a status, and a state word before a noun is no complement.
    ['Alice is done.', [], ['alice | have status | done']],
    ['Bob reviewed a closed ticket.', [], ['bob | have status | closed']],
    ['Omar Ortega joined Cyberdyne as Engineering Manager.', ['omar ortega | join as | engineering manager'], []],
    // A first name that is also a verb ("to bob"), before an adverb: still the subject.
    ['Bob no longer works at Initech.', ['bob | work at | initech'], []],
    ['Bob no longer lives in Oslo.', ['bob | live in | oslo'], []],
    ['Bob now lives in Lisbon.', ['bob | live in | lisbon'], []],
    ['Sue no longer works at Acme.', ['sue | work at | acme'], []],
    // An imperative stays one.
    ['Mark the ticket as done.', [], ['mark | have status | done']],
  ];
  for (const [sentence, expected, absent] of cases) {
    it(`"${sentence}"`, () => {
      const result = extractChunkStructure(sentence);
      assertWellFormed(result);
      for (const triple of expected) {
        const [subjectKey, predicate, objectKey] = triple.split(' | ') as [string, string, string];
        fact(result, subjectKey, predicate, objectKey);
      }
      for (const triple of absent) assert.ok(!triples(result).includes(triple), `unexpected ${triple}: ${JSON.stringify(triples(result))}`);
    });
  }

  it('names no status entity when no fact uses it', () => {
    assert.deepEqual(
      extractChunkStructure('Alice is done.').entities.map((found) => found.key),
      ['alice'],
    );
  });
});
