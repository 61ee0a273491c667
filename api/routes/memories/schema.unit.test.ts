import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listMemoriesQuery } from './schema.js';

const filtersOf = (filters: unknown) => listMemoriesQuery.safeParse({ metadata_filters: JSON.stringify(filters) });

test('metadata_filters are read into database-neutral conditions', () => {
  const parsed = filtersOf({
    'metadata.team': 'coast',
    'metadata.score': { $gt: 1, $lte: 5 },
    'metadata.owner.id': { $in: ['a', 'b'] },
    'metadata.draft': { $exists: false },
  });
  assert.ok(parsed.success);
  assert.deepEqual(parsed.data.metadata_filters, [
    { path: ['team'], op: 'eq', value: 'coast' },
    { path: ['score'], op: 'gt', value: 1 },
    { path: ['score'], op: 'lte', value: 5 },
    { path: ['owner', 'id'], op: 'in', values: ['a', 'b'] },
    { path: ['draft'], op: 'exists', value: false },
  ]);
});

// What a client might send to reach past the filter language into the database's own.
const refused: [string, unknown, RegExp][] = [
  ['a server-side script', { 'metadata.a': { $where: 'sleep(1000)' } }, /unknown operator \$where/],
  ['a regular expression', { 'metadata.a': { $regex: '.*' } }, /unknown operator \$regex/],
  ['an operator without its $', { 'metadata.a': { eq: 1 } }, /unknown operator eq/],
  ['an operator nested in a value', { 'metadata.a': { $eq: { $gt: '' } } }, /\$eq takes a string, number, boolean or null/],
  ['an operator object as a bare value of $in', { 'metadata.a': { $in: [{ $gt: '' }] } }, /\$in takes an array of scalars/],
  ['$in with a non-array', { 'metadata.a': { $in: 'x' } }, /\$in takes an array of scalars/],
  ['$exists with a non-boolean', { 'metadata.a': { $exists: 1 } }, /\$exists takes a boolean/],
  ['an array as a bare value', { 'metadata.a': [1, 2] }, /\$eq takes a string, number, boolean or null/],
  ['an empty operator object', { 'metadata.a': {} }, /must not be empty/],
  ['a field outside metadata', { tenant_id: 'other' }, /must look like metadata\.<field>/],
  ['a top-level operator', { $or: [{ tenant_id: 'other' }] }, /must look like metadata\.<field>/],
  ['an operator in the field path', { 'metadata.$where': 1 }, /must look like metadata\.<field>/],
  ['an empty path segment', { 'metadata..a': 1 }, /must look like metadata\.<field>/],
  ['a prototype key as operator', JSON.parse('{"metadata.a": {"__proto__": 1}}'), /unknown operator __proto__/],
  ['a prototype key as field', JSON.parse('{"__proto__": {"tenant_id": "other"}}'), /must look like metadata\.<field>/],
  ['a list instead of an object', [{ 'metadata.a': 1 }], /must be a JSON object/],
  ['null', null, /must be a JSON object/],
];

for (const [name, filters, message] of refused) {
  test(`metadata_filters refuses ${name}, naming the field`, () => {
    const parsed = filtersOf(filters);
    assert.equal(parsed.success, false);
    const issues = parsed.error!.issues;
    assert.ok(
      issues.some((issue) => issue.path[0] === 'metadata_filters' && message.test(issue.message)),
      JSON.stringify(issues),
    );
  });
}
