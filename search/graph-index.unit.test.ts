import assert from 'node:assert/strict';
import { it } from 'node:test';
import { GraphIndex, matchGraph, type GraphEntityInfo } from './graph-index.js';

it('takes the names a delete left an entity: the memory that gave the old name leaves, the match shows the new one', () => {
  const index = new GraphIndex();
  const partition = index.createPartition('c1');
  const before: GraphEntityInfo = {
    id: 'e1',
    name: 'Ingrid Marit Halvorsen',
    category: 'person',
    description: '',
    aliasKeys: ['ingrid marit halvorsen', 'ingrid halvorsen'],
  };
  const entities = new Map([[before.id, before]]);
  const row = (description: string) => ({ targetId: 'e1', chunkIndex: 0, count: 1, description });
  partition.setMemory('first', [row('the first memory')], entities, new Map());
  partition.setMemory('second', [row('the second memory')], entities, new Map());
  assert.deepEqual(index.entityIdsOf('first'), ['e1']);

  index.removeMemory('first');
  assert.ok(index.holdsEntity('e1'), 'the second memory still backs it');
  index.refreshEntities([{ ...before, name: 'Ingrid Halvorsen', aliasKeys: ['ingrid halvorsen'] }]);
  const matched = matchGraph([partition], ['ingrid halvorsen']);
  assert.deepEqual(
    matched.entities.map((entity) => entity.name),
    ['Ingrid Halvorsen'],
  );
  assert.equal(matchGraph([partition], ['ingrid marit halvorsen']).entities.length, 0, 'the lost alias no longer matches');

  index.refreshEntities([{ ...before, id: 'e2' }]);
  assert.equal(index.holdsEntity('e2'), false, 'an entity no partition holds is not added');
});
