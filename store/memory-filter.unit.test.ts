import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NO_FILTER } from '../core/memory-filter.js';
import { memoryQuery } from './memory-filter.js';

test('an empty filter is an empty query', () => {
  assert.deepEqual(memoryQuery(NO_FILTER), {});
});

test('metadata conditions become dotted fields; two on one field share its operator object', () => {
  const after = new Date('2026-01-01T00:00:00Z');
  const before = new Date('2026-02-01T00:00:00Z');
  assert.deepEqual(
    memoryQuery({
      metadata: [
        { path: ['team'], op: 'eq', value: 'coast' },
        { path: ['score'], op: 'gt', value: 1 },
        { path: ['score'], op: 'lte', value: 5 },
        { path: ['owner', 'id'], op: 'in', values: ['a', 'b'] },
        { path: ['draft'], op: 'exists', value: false },
      ],
      kind: 'conversation',
      createdAfter: after,
      createdBefore: before,
    }),
    {
      'metadata.team': { $eq: 'coast' },
      'metadata.score': { $gt: 1, $lte: 5 },
      'metadata.owner.id': { $in: ['a', 'b'] },
      'metadata.draft': { $exists: false },
      kind: { $eq: 'conversation' },
      created_at: { $gte: after, $lt: before },
    },
  );
});
