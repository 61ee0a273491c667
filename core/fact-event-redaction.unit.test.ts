import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { factEventRefs, redactFactPayload, type RemovedFromGraph } from './fact-event-redaction.js';

// Acme (memory m1) superseded by Globex (memory m2): the event m2's ingestion appended.
const superseded = {
  memory_id: 'm2',
  predicate_class: 'employer',
  subject_id: 'e-alice',
  subject: 'Alice Chen',
  predicate: 'work at',
  old_fact_id: 'f-acme',
  old_object_id: 'e-acme',
  old_object: 'Acme',
  new_fact_id: 'f-globex',
  new_predicate: 'join',
  new_object_id: 'e-globex',
  new_object: 'Globex',
  superseded_at: '2025-06-01T09:00:00.000Z',
};

const removal = (facts: string[], memories: string[] = []): RemovedFromGraph => ({ facts: new Set(facts), memories: new Set(memories) });
const without = (payload: Record<string, unknown>, fields: string[]) =>
  Object.fromEntries(Object.entries(payload).filter(([field]) => !fields.includes(field)));
const NEW_SIDE = ['new_fact_id', 'new_predicate', 'new_object_id', 'new_object', 'superseded_at'];
const OLD_SIDE = ['predicate', 'old_fact_id', 'old_object_id', 'old_object'];

// Deleting m2 restored Acme: the same subject and old fact, current again.
const restored = { ...without(superseded, NEW_SIDE), valid_to: null };

describe('redacting fact events when rows leave the graph', () => {
  const cases: [
    name: string,
    type: 'fact_superseded' | 'fact_restored',
    payload: Record<string, unknown>,
    removed: RemovedFromGraph,
    expected: Record<string, unknown> | null,
  ][] = [
    [
      'the superseding memory deleted: its fact, object and date go; the old fact and the subject stay',
      'fact_superseded',
      superseded,
      removal(['f-globex'], ['m2']),
      { ...without(superseded, NEW_SIDE), redacted: true },
    ],
    [
      'the superseded memory deleted (an event of another memory naming its object): the old fact goes',
      'fact_superseded',
      superseded,
      removal(['f-acme'], ['m1']),
      { ...without(superseded, OLD_SIDE), redacted: true },
    ],
    [
      'both facts gone: only the memory id, the class and the mark stay',
      'fact_superseded',
      superseded,
      removal(['f-acme', 'f-globex'], ['m1', 'm2']),
      { memory_id: 'm2', predicate_class: 'employer', redacted: true },
    ],
    [
      'the superseding memory left the collection though another memory still states its fact: its statement (and date) go',
      'fact_superseded',
      superseded,
      removal([], ['m2']),
      { ...without(superseded, NEW_SIDE), redacted: true },
    ],
    [
      'a failed append took back the newer fact (its memory stays)',
      'fact_superseded',
      superseded,
      removal(['f-globex']),
      { ...without(superseded, NEW_SIDE), redacted: true },
    ],
    ['facts of other memories removed: untouched', 'fact_superseded', superseded, removal(['f-other'], ['m9']), null],
    [
      'already redacted: untouched (idempotent)',
      'fact_superseded',
      { ...without(superseded, NEW_SIDE), redacted: true },
      removal(['f-globex'], ['m2']),
      null,
    ],
    [
      'a restoration whose restored fact is deleted later: the fact, its end and (nothing else naming one) the subject go',
      'fact_restored',
      restored,
      removal(['f-acme'], ['m1']),
      { memory_id: 'm2', predicate_class: 'employer', redacted: true },
    ],
    [
      'a restoration names nothing of its own removed memory: untouched by it',
      'fact_restored',
      restored,
      removal(['f-globex'], ['m2']),
      null,
    ],
    [
      'an older restoration that still names the newer fact: that fact and its date go',
      'fact_restored',
      { ...restored, new_fact_id: 'f-globex', superseded_at: '2025-06-01T09:00:00.000Z' },
      removal(['f-globex'], ['m2']),
      { ...restored, redacted: true },
    ],
  ];
  for (const [name, type, payload, removed, expected] of cases) {
    it(name, () => assert.deepEqual(redactFactPayload(type, payload, removed), expected));
  }

  it('a redacted payload holds none of the removed names, whatever the removal', () => {
    const redacted = redactFactPayload('fact_superseded', superseded, removal(['f-acme', 'f-globex'], ['m1', 'm2']));
    const text = JSON.stringify(redacted);
    for (const word of ['Acme', 'Globex', 'Alice', 'e-acme', 'e-globex', 'f-acme', 'f-globex', '2025'])
      assert.ok(!text.includes(word), word);
  });

  it('finds an event by the facts it names and its memory, and a redacted one only by what it still names', () => {
    assert.deepEqual(factEventRefs(superseded), ['f-acme', 'f-globex', 'm2']);
    assert.deepEqual(factEventRefs(restored), ['f-acme', 'm2']);
    assert.deepEqual(factEventRefs(redactFactPayload('fact_superseded', superseded, removal(['f-globex'], ['m2']))!), ['f-acme', 'm2']);
  });
});
