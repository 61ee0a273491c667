import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entityIdFor, factIdFor, keyTokens, tokensOf, weightsOf } from './graph-model.js';

describe('graph ids', () => {
  const scope = { tenantId: 't1', collectionId: 'c1' };

  it('are stable: stored graphs and snapshots keep their ids across releases', () => {
    assert.equal(entityIdFor(scope, 'alice'), 'bbcde9bbe1c5a2a42e22034a8707492f');
    assert.equal(factIdFor(scope, 'a', 'works at', 'b'), 'e7a003659945cbbd5a220ac9f185b9aa');
  });

  it('differ per collection and per tenant, so graphs never share a node', () => {
    const ids = [scope, { ...scope, collectionId: 'c2' }, { ...scope, tenantId: 't2' }].map((each) => entityIdFor(each, 'alice'));
    assert.equal(new Set(ids).size, 3);
    assert.notEqual(factIdFor(scope, 'a', 'works at', 'b'), factIdFor(scope, 'b', 'works at', 'a'), 'a fact has a direction');
  });
});

describe('graph rules', () => {
  it('weighs a target by the sum of its provenance counts, a row without one counting 1', () => {
    const weights = weightsOf([
      { target_id: 'e1', count: 2 },
      { target_id: 'f1', count: 1 },
      { target_id: 'e1', count: 3 },
      { target_id: 'e2' },
    ]);
    assert.deepEqual(
      [...weights.entries()],
      [
        ['e1', 5],
        ['f1', 1],
        ['e2', 1],
      ],
    );
  });

  it('splits names into words of two letters or more, distinct across names for the lookup', () => {
    assert.deepEqual(keyTokens('j r r tolkien society'), ['tolkien', 'society']);
    assert.deepEqual(tokensOf(['ada lovelace', 'lovelace', 'a']), ['ada', 'lovelace']);
  });
});
