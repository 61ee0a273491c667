import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../../core/fact-lexicon.js';
import { factTimelines, validityAt, type TimelineFact } from '../../core/fact-timeline.js';
import { extractChunkStructure } from './local-extractor.js';
import { factRowValidity, parseExplicitDate, saysNoLonger, verbOf } from './validity.js';

const classifier = new PredicateClassifier(DEFAULT_FACT_LEXICON);
const chunkTime = new Date('2025-05-15T00:00:00Z');
const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString().slice(0, 10));

/** The validity the sentence gives the named fact, as [from, to] (ISO days, null when open). */
const validityOf = (sentence: string, triple: string): [string | null, string | null] => {
  const structure = extractChunkStructure(sentence);
  const rows = factRowValidity(structure, chunkTime, classifier);
  const index = structure.facts.findIndex((fact) => `${fact.subjectKey} | ${fact.predicate} | ${fact.objectKey}` === triple);
  assert.ok(
    index >= 0,
    `no fact ${triple} in ${JSON.stringify(structure.facts.map((f) => `${f.subjectKey} | ${f.predicate} | ${f.objectKey}`))}`,
  );
  const row = rows[index]!;
  return [iso(row.validFrom), iso(row.validTo)];
};

describe('explicit dates', () => {
  const dates: [text: string, expected: string | null][] = [
    ['2024', '2024-01-01'],
    ['march 2024', '2024-03-01'],
    ['3 march 2024', '2024-03-03'],
    ['march 3, 2024', '2024-03-03'],
    ['june 1st', '2024-06-01'], // after the chunk's 15 May 2025: the June before
    ['march', '2025-03-01'],
    ['may', '2025-05-01'],
    ['2024-05-01', '2024-05-01'],
    ['sept 2023', '2023-09-01'],
    ['last week', null],
    ['the summer', null],
    ['february 30, 2024', null],
  ];
  for (const [text, expected] of dates) {
    it(`"${text}" → ${expected}`, () => assert.equal(iso(parseExplicitDate(text, chunkTime)), expected));
  }
});

describe('verbs and endings in the sentence', () => {
  const verbs: [predicate: string, verb: string][] = [
    ['live in', 'live'],
    ['move out of', 'move'],
    ['not live in', 'live'],
    ['be married to', 'be married'],
    ['join', 'join'],
    ['work as of', 'work'],
  ];
  for (const [predicate, verb] of verbs) it(`the verb of "${predicate}" is "${verb}"`, () => assert.equal(verbOf(predicate), verb));

  const endings: [description: string, predicate: string, expected: boolean][] = [
    ['Alice Chen no longer lives in Oslo.', 'live in', true],
    ['Alice is no longer married to Bob.', 'be married to', true],
    ['Alice used to work at Acme.', 'work at', true],
    ["Alice doesn't live in Oslo anymore.", 'not live in', true],
    // "no longer" about another verb of the sentence leaves this fact alone.
    ['Alice no longer drives; she lives in Oslo.', 'live in', false],
    ['Alice lives in Oslo.', 'live in', false],
    ['Alice lives in Oslo anymore?', 'live in', false],
  ];
  for (const [description, predicate, expected] of endings) {
    it(`"${description}" ${expected ? 'ends' : 'does not end'} "${predicate}"`, () =>
      assert.equal(saysNoLonger(description, predicate), expected));
  }
});

describe('the validity a sentence gives its facts (chunk time 2025-05-15)', () => {
  const table: [sentence: string, triple: string, from: string | null, to: string | null][] = [
    ['Alice Chen works at Acme.', 'alice chen | work at | acme', '2025-05-15', null],
    ['Alice Chen joined Globex as CFO.', 'alice chen | join | globex', '2025-05-15', null],
    ['Alice Chen joined Globex as CFO.', 'alice chen | join as | cfo', '2025-05-15', null],
    ['Alice Chen no longer works at Acme.', 'alice chen | work at | acme', null, '2025-05-15'],
    ['Bob no longer works at Initech.', 'bob | work at | initech', null, '2025-05-15'],
    ['Ticket T-1182 is open.', 'ticket t-1182 | have status | open', '2025-05-15', null],
    ['Ticket T-1182 was closed.', 'ticket t-1182 | have status | closed', '2025-05-15', null],
    ['Ticket T-1182 was closed on 3 May 2025.', 'ticket t-1182 | have status | closed', '2025-05-03', null],
    ['Ticket T-1182 is no longer open.', 'ticket t-1182 | not have status | open', null, '2025-05-15'],
    ['Alice Chen moved from Berlin to Lisbon.', 'alice chen | move from | berlin', null, '2025-05-15'],
    ['Alice Chen moved from Berlin to Lisbon.', 'alice chen | move to | lisbon', '2025-05-15', null],
    ['Alice Chen left Acme.', 'alice chen | leave | acme', null, '2025-05-15'],
    ['Alice Chen left Acme in May 2024.', 'alice chen | leave | acme', null, '2024-05-01'],
    ['Alice Chen no longer lives in Oslo.', 'alice chen | live in | oslo', null, '2025-05-15'],
    ["Alice doesn't live in Oslo anymore.", 'alice | not live in | oslo', null, '2025-05-15'],
    ['Alice has lived in Berlin since March 2024.', 'alice | live in | berlin', '2024-03-01', null],
    ['Alice Chen lives in Berlin since March.', 'alice chen | live in | berlin', '2025-03-01', null],
    ['Bob worked at Initech until 2024.', 'bob | work at | initech', null, '2024-01-01'],
    ['Alice worked at Acme from 2019 to 2023.', 'alice | work at | acme', '2019-01-01', '2023-01-01'],
    ['Bob moved to Paris in 2023.', 'bob | move to | paris', '2023-01-01', null],
    ['Alice became the CTO of Globex in 2024.', 'alice | become | cto of globex', '2024-01-01', null],
    ['Bob divorced Carol Diaz.', 'bob | divorce | carol diaz', null, '2025-05-15'],
    // Multi-valued facts get the same reading: evidence from the chunk's time, no ending.
    ['Bob likes Pizza Hut.', 'bob | like | pizza hut', '2025-05-15', null],
    ['Bob visited Paris.', 'bob | visit | paris', '2025-05-15', null],
  ];
  for (const [sentence, triple, from, to] of table) {
    it(`"${sentence}" → ${triple}: [${from}, ${to})`, () => assert.deepEqual(validityOf(sentence, triple), [from, to]));
  }
});

describe('phrasings of changing jobs, moving and ending, read from sentences to what holds after', () => {
  // What the first sentence states, then the second a month later: whether the first's fact of the
  // class still holds, read by the local extractor, the rows' validity and the timeline.
  const first = new Date('2025-01-10T00:00:00Z');
  const second = new Date('2025-02-10T00:00:00Z');
  const timelineFacts = (sentences: [string, Date][]): TimelineFact[] => {
    const byId = new Map<string, TimelineFact>();
    sentences.forEach(([sentence, time], index) => {
      const structure = extractChunkStructure(sentence);
      const rows = factRowValidity(structure, time, classifier);
      structure.facts.forEach((extracted, position) => {
        const id = `${extracted.subjectKey} | ${extracted.predicate} | ${extracted.objectKey}`;
        const known = byId.get(id) ?? {
          id,
          subjectId: extracted.subjectKey,
          objectId: extracted.objectKey,
          predicate: extracted.predicate,
          objectKey: extracted.objectKey,
          rows: [],
        };
        known.rows.push({ memoryId: `m${index}`, ...rows[position]! });
        byId.set(id, known);
      });
    });
    return [...byId.values()];
  };
  const statusOf = (facts: TimelineFact[], className: string, objectKey: string): string => {
    const timelines = factTimelines(facts, classifier);
    const held = facts.find((fact) => fact.objectKey === objectKey && timelines.get(fact.id)?.className === className);
    assert.ok(held, `no ${className} fact naming ${objectKey}: ${JSON.stringify(facts.map((fact) => fact.id))}`);
    return validityAt(timelines.get(held.id)!, new Date('2025-03-01T00:00:00Z')).status;
  };

  const cases: [before: string, after: string, className: string, objectKey: string, expected: string][] = [
    ['Alice Chen lives in Berlin.', 'Alice Chen relocated to Lisbon.', 'residence', 'berlin', 'superseded'],
    ['Alice Chen lives in Berlin.', 'Alice Chen now lives in Porto.', 'residence', 'berlin', 'superseded'],
    ['Alice Chen works at Acme.', 'Alice Chen was hired by Initech.', 'employer', 'acme', 'superseded'],
    ['Alice Chen works at Acme.', 'Alice Chen started working at Initech.', 'employer', 'acme', 'superseded'],
    ['Alice Chen works at Acme.', 'Alice Chen quit Acme.', 'employer', 'acme', 'ended'],
    ['Alice Chen works at Acme.', 'Alice Chen resigned from Acme.', 'employer', 'acme', 'ended'],
    ['Alice Chen works at Acme.', 'Alice Chen retired from Acme.', 'employer', 'acme', 'ended'],
    ['Alice Chen works at Acme.', 'Alice Chen has left Acme.', 'employer', 'acme', 'ended'],
    ['Alice Chen works at Acme.', 'Alice Chen is no longer with Acme.', 'employer', 'acme', 'ended'],
    ['Alice Chen works at Acme.', 'Alice Chen is no longer at Acme.', 'employer', 'acme', 'ended'],
    ['Alice Chen works at Acme.', 'Alice Chen was laid off by Acme.', 'employer', 'acme', 'ended'],
    ['Alice Chen is married to Bob Smith.', 'Alice Chen divorced Bob Smith.', 'spouse', 'bob smith', 'ended'],
    ['Alice Chen lives in Berlin.', 'Alice Chen moved out of Berlin.', 'residence', 'berlin', 'ended'],
    // Must not supersede or end.
    ['Alice Chen works at Acme.', 'Alice Chen switched to Python.', 'employer', 'acme', 'current'],
    ['Alice Chen works at Acme.', 'Alice Chen is with Bob Smith.', 'employer', 'acme', 'current'],
    ['Alice Chen works at Acme.', 'Alice Chen is at the hospital.', 'employer', 'acme', 'current'],
    ['Alice Chen works at Acme.', 'Alice Chen took a photo at the Louvre.', 'employer', 'acme', 'current'],
    ['Alice Chen works at Acme.', 'Bob Smith was hired by Initech.', 'employer', 'acme', 'current'],
    ['Alice Chen works at Acme.', 'Alice Chen is with Acme.', 'employer', 'acme', 'current'],
    ['Alice Chen lives in Berlin.', 'Alice Chen visited Paris.', 'residence', 'berlin', 'current'],
  ];
  for (const [before, after, className, objectKey, expected] of cases) {
    it(`"${before}" then "${after}": ${objectKey} ${expected}`, () => {
      assert.equal(
        statusOf(
          timelineFacts([
            [before, first],
            [after, second],
          ]),
          className,
          objectKey,
        ),
        expected,
      );
    });
  }
});
