import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assignToNearest,
  chainMoves,
  fullMineDue,
  instanceOf,
  isCommonCaseKey,
  orderKeyOf,
  traceIdFor,
  traceRecord,
  type ChainMember,
  type NewTrace,
} from './rules.js';

const scope = { tenantId: 't1', collectionId: 'c1' };

function member(id: string, orderKey: string, verbClass: string, extra: Partial<ChainMember> = {}): ChainMember {
  return {
    id,
    memory_id: 'm1',
    order_key: orderKey,
    verb_class: verbClass,
    occurred_at: new Date('2026-11-01T00:00:00Z'),
    after_state: `${verbClass}ed`,
    acting_entity_ids: [],
    affected_entity_ids: [],
    case_keys: [],
    ...extra,
  };
}

describe('procedure rules: trace records', () => {
  const draft: NewTrace = {
    chunkIndex: 2,
    seq: 7,
    verbClass: 'submit',
    verbLemma: 'file',
    description: 'filed the claim',
    occurredAt: new Date('2026-11-02T10:00:00Z'),
    occurredAtSource: 'explicit',
    extractionConfidence: 0.7,
    actingEntityIds: ['e1'],
    affectedEntityIds: [],
    subject: 'claim',
    caseKeys: ['claim 4'],
    beforeState: null,
    afterState: 'claim submitted',
    factIds: ['f1'],
  };

  it('derives ids from scope, memory and position, and keeps the instance it is given', () => {
    const at = new Date('2026-11-02T00:00:00Z');
    const row = traceRecord(scope, 'm1', at, draft, 'i9');
    assert.equal(row.id, traceIdFor(scope, 'm1', 7));
    assert.notEqual(row.id, traceIdFor({ ...scope, collectionId: 'c2' }, 'm1', 7), 'another collection, another trace');
    assert.equal(row.order_key, '2026-11-02T00:00:00.000Z|m1|000007');
    assert.equal(row.order_key, orderKeyOf(at, 'm1', 7));
    assert.notEqual(row.state_id, row.id);
    assert.equal(row.instance_id, 'i9');
    assert.deepEqual([row.verb_class, row.case_keys, row.fact_ids, row.chunk_index], ['submit', ['claim 4'], ['f1'], 2]);
  });

  it('order keys sort by memory time, then memory, then position', () => {
    const at = new Date('2026-11-02T00:00:00Z');
    const keys = [orderKeyOf(at, 'm2', 0), orderKeyOf(at, 'm1', 10), orderKeyOf(at, 'm1', 9), orderKeyOf(new Date(0), 'm9', 1)];
    assert.deepEqual([...keys].sort(), [keys[3], keys[2], keys[1], keys[0]]);
  });
});

describe('procedure rules: case keys', () => {
  it('a key is common past the memory cap or at the read limit', () => {
    assert.equal(isCommonCaseKey(['a', 'b', 'a'], 10, 2), false);
    assert.equal(isCommonCaseKey(['a', 'b', 'c'], 10, 2), true, 'more memories than the cap');
    assert.equal(isCommonCaseKey(['a', 'a', 'a', 'a'], 4, 2), true, 'the bounded read came back full');
  });
});

describe('procedure rules: chaining moves', () => {
  it('moves only traces whose instance changed, and rewrites the instances on both sides and the settled chains', () => {
    const rows = [
      { id: 't1', instance_id: 'old' },
      { id: 't2', instance_id: 't1' },
      { id: 't3', instance_id: 't3' },
      { id: 't4', instance_id: null },
    ];
    const chains = [
      { id: 't1', traceIds: ['t1', 't2'] },
      { id: 't3', traceIds: ['t3'] },
      { id: 't4', traceIds: ['t4'] },
    ];
    const { moves, dirty } = chainMoves(rows, chains, new Set(['t3']));
    assert.deepEqual(moves, [
      { traceId: 't1', instanceId: 't1' },
      { traceId: 't4', instanceId: 't4' },
    ]);
    assert.deepEqual([...dirty].sort(), ['old', 't1', 't3', 't4']);
  });

  it('nothing moved and nothing settled: nothing to rewrite', () => {
    const { moves, dirty } = chainMoves([{ id: 't1', instance_id: 't1' }], [{ id: 't1', traceIds: ['t1'] }], new Set());
    assert.deepEqual(moves, []);
    assert.equal(dirty.size, 0);
  });
});

describe('procedure rules: an instance from its traces', () => {
  it('orders by order key, collapses repeats into the signature and ends at the last trace', () => {
    const now = new Date('2026-11-05T00:00:00Z');
    const instance = instanceOf(
      scope,
      'chain',
      [
        member('b', 'k2', 'approve', { memory_id: 'm2', case_keys: ['x'], occurred_at: new Date('2026-11-03T00:00:00Z') }),
        member('c', 'k3', 'approve', { memory_id: 'm2', occurred_at: new Date('2026-11-02T00:00:00Z') }),
        member('a', 'k1', 'submit', { acting_entity_ids: ['e'] }),
      ],
      now,
    );
    assert.ok(instance);
    assert.deepEqual(instance.signature, ['submit', 'approve']);
    assert.deepEqual(instance.memory_ids, ['m1', 'm2']);
    assert.equal(instance.trace_count, 3);
    assert.equal(instance.current_trace_id, 'c');
    assert.equal(instance.current_state_description, 'approveed');
    assert.equal(instance.last_activity_at.toISOString(), '2026-11-03T00:00:00.000Z', 'the latest occurrence, not the last in order');
    assert.equal(instance.evidence, 2 / 3);
    assert.equal(instance.updated_at, now);
    assert.equal(instance.id, 'chain');
  });

  it('a chain without traces yields no instance', () => {
    assert.equal(instanceOf(scope, 'chain', [], new Date()), null);
  });
});

describe('procedure rules: assignment to the nearest pattern', () => {
  const patterns = [
    { id: 'p-expense', signature: ['submit', 'review', 'approve'] },
    { id: 'p-ticket', signature: ['create', 'assign', 'complete'] },
  ];

  it('links each instance to its nearest pattern with distance and position, or to none', () => {
    const { links } = assignToNearest(
      patterns,
      [
        { id: 'i1', signature: ['submit', 'review', 'approve'], pattern_id: null },
        { id: 'i2', signature: ['create', 'assign'], pattern_id: null },
        { id: 'i3', signature: ['pay', 'cancel'], pattern_id: null },
      ],
      [],
    );
    assert.deepEqual(links[0], { instanceId: 'i1', patternId: 'p-expense', distance: 0, position: { step: 3, of: 3 } });
    assert.equal(links[1]!.patternId, 'p-ticket');
    assert.deepEqual(links[1]!.position, { step: 2, of: 3 }, 'a running instance stands part-way');
    assert.deepEqual(links[2], { instanceId: 'i3', patternId: null, distance: null, position: null });
  });

  it('touches the patterns instances left or joined, and those that lost a vanished member', () => {
    const { touched } = assignToNearest(
      patterns,
      [
        { id: 'i1', signature: ['create', 'assign', 'complete'], pattern_id: 'p-expense' },
        { id: 'i2', signature: ['pay', 'cancel'], pattern_id: 'p-gone' },
      ],
      ['p-vanished'],
    );
    assert.deepEqual([...touched].sort(), ['p-expense', 'p-gone', 'p-ticket', 'p-vanished']);
  });

  it('with no patterns every instance is unlinked', () => {
    const { links, touched } = assignToNearest([], [{ id: 'i1', signature: ['submit', 'review'], pattern_id: 'p' }], []);
    assert.deepEqual(links, [{ instanceId: 'i1', patternId: null, distance: null, position: null }]);
    assert.deepEqual([...touched], ['p']);
  });
});

describe('procedure rules: when a full re-mine is due', () => {
  it('always without a mining record, then after 10 % of the instances changed (at least one change)', () => {
    assert.equal(fullMineDue(null), true);
    assert.equal(fullMineDue({ instancesAtMine: 0, changesSince: 1 }), true);
    assert.equal(fullMineDue({ instancesAtMine: 0, changesSince: 0 }), false);
    assert.equal(fullMineDue({ instancesAtMine: 100, changesSince: 9 }), false);
    assert.equal(fullMineDue({ instancesAtMine: 100, changesSince: 10 }), true);
    assert.equal(fullMineDue({ instancesAtMine: 19, changesSince: 1 }), true, 'the threshold rounds down, to at least 1');
  });
});
