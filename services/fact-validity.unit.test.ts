import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../core/fact-lexicon.js';
import { factTimelines, type TimelineFact } from '../core/fact-timeline.js';
import { applyValidity, demoteStaleHits } from './fact-validity.js';
import type { GraphRelationshipResult, GraphSignal } from './graph-search.js';

const classifier = new PredicateClassifier(DEFAULT_FACT_LEXICON);
const day = (iso: string): Date => new Date(`${iso}T00:00:00Z`);

/** Alice: Acme (m1, January), Globex (m2, June), moved from Berlin to Lisbon (m3, July); likes tea (m4). */
const facts: TimelineFact[] = [
  {
    id: 'acme',
    subjectId: 'alice',
    objectId: 'o-acme',
    predicate: 'work at',
    objectKey: 'acme',
    rows: [{ memoryId: 'm1', validFrom: day('2025-01-10'), validTo: null }],
  },
  {
    id: 'globex',
    subjectId: 'alice',
    objectId: 'o-globex',
    predicate: 'join',
    objectKey: 'globex',
    rows: [{ memoryId: 'm2', validFrom: day('2025-06-01'), validTo: null }],
  },
  {
    id: 'berlin',
    subjectId: 'alice',
    objectId: 'o-berlin',
    predicate: 'move from',
    objectKey: 'berlin',
    rows: [{ memoryId: 'm3', validFrom: null, validTo: day('2025-07-01') }],
  },
  {
    id: 'lisbon',
    subjectId: 'alice',
    objectId: 'o-lisbon',
    predicate: 'move to',
    objectKey: 'lisbon',
    rows: [{ memoryId: 'm3', validFrom: day('2025-07-01'), validTo: null }],
  },
  {
    id: 'tea',
    subjectId: 'alice',
    objectId: 'o-tea',
    predicate: 'like',
    objectKey: 'tea',
    rows: [{ memoryId: 'm4', validFrom: day('2025-02-01'), validTo: null }],
  },
];
const timelines = factTimelines(facts, classifier);
const relationship = (fact: TimelineFact): GraphRelationshipResult => ({
  id: fact.id,
  subject_id: fact.subjectId,
  object_id: fact.objectId,
  predicate: fact.predicate,
  description: fact.id,
  weight: 1,
  confidence: 0.9,
});
// The graph's own order (by score) puts the old employer first.
const signal: Pick<GraphSignal, 'relationships' | 'support'> = {
  relationships: ['tea', 'acme', 'berlin', 'lisbon', 'globex'].map((id) => relationship(facts.find((fact) => fact.id === id)!)),
  support: new Map(facts.map((fact) => [fact.id, fact.rows.map((row) => ({ memoryId: row.memoryId, description: fact.id }))])),
};
const now = day('2026-01-01');
const shown = (query: string, asOf: string | null, includeHistory: boolean) =>
  applyValidity(signal, timelines, query, classifier, { asOf: asOf === null ? null : day(asOf), includeHistory }, now).relationships.map(
    (entry) => `${entry.id}:${entry.status}`,
  );

describe('the validity step of search', () => {
  it('keeps only current facts, those of the class asked about first', () => {
    assert.deepEqual(shown('Where does Alice work?', null, false), ['globex:current', 'tea:current', 'lisbon:current']);
  });

  it('with include_history returns the rest too, after every current one', () => {
    assert.deepEqual(shown('Where does Alice work?', null, true), [
      'globex:current',
      'tea:current',
      'lisbon:current',
      'acme:superseded',
      'berlin:superseded',
    ]);
  });

  it('as_of answers as the facts stood then', () => {
    assert.deepEqual(shown('Where does Alice work and live?', '2025-03-01', false), ['acme:current', 'berlin:current', 'tea:current']);
    assert.deepEqual(shown('Where does Alice work?', '2025-03-01', true), [
      'acme:current',
      'tea:current',
      'berlin:current',
      'globex:not_yet_valid',
      'lisbon:not_yet_valid',
    ]);
  });

  it('describes each relationship with its interval and what closed it', () => {
    const { relationships } = applyValidity(signal, timelines, 'Alice', classifier, { asOf: null, includeHistory: true }, now);
    const acme = relationships.find((entry) => entry.id === 'acme');
    assert.deepEqual(
      { ...acme },
      {
        ...relationship(facts[0]!),
        predicate_class: 'employer',
        status: 'superseded',
        valid_from: '2025-01-10T00:00:00.000Z',
        valid_to: '2025-06-01T00:00:00.000Z',
        closed_by: { reason: 'superseded', fact_id: 'globex', memory_id: 'm2' },
      },
    );
    const tea = relationships.find((entry) => entry.id === 'tea');
    assert.equal(tea?.predicate_class, null);
    assert.equal(tea?.valid_from, '2025-02-01T00:00:00.000Z');
  });

  it('demotes hits of memories stating only facts that no longer hold below those stating current ones', () => {
    const outcome = applyValidity(signal, timelines, 'Where does Alice work?', classifier, { asOf: null, includeHistory: false }, now);
    assert.deepEqual([...outcome.staleMemories], ['m1']);
    const fused = [
      { memoryId: 'm1', score: 2.2 },
      { memoryId: 'm4', score: 1.5 },
      { memoryId: 'm2', score: 1.0 },
      { memoryId: 'm9', score: 0.3 },
    ];
    assert.deepEqual(
      demoteStaleHits(fused, outcome).map((entry) => entry.memoryId),
      ['m4', 'm2', 'm1', 'm9'],
    );
    // As of March, Acme is current: nothing is stale.
    const march = applyValidity(
      signal,
      timelines,
      'Where does Alice work?',
      classifier,
      { asOf: day('2025-03-01'), includeHistory: false },
      now,
    );
    assert.deepEqual(
      demoteStaleHits(fused, march).map((entry) => entry.memoryId),
      ['m1', 'm4', 'm2', 'm9'],
    );
  });
});
