import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entityMerge, entityNamesWithout, factMerge, mergeInto } from './graph-merge.js';
import type { NewEntity, NewFact } from './graph-model.js';

const entity = (overrides: Partial<NewEntity>): NewEntity => ({
  id: 'e1',
  key: 'ada lovelace',
  name: 'Ada Lovelace',
  category: 'person',
  aliases: ['Ada Lovelace'],
  aliasKeys: ['ada lovelace'],
  description: 'first description',
  nameVector: null,
  ...overrides,
});

const fact = (overrides: Partial<NewFact>): NewFact => ({
  id: 'f1',
  subjectId: 'e1',
  objectId: 'e2',
  predicate: 'works_at',
  description: 'first fact description',
  confidence: 0.5,
  ...overrides,
});

describe('graph merge rules', () => {
  it('creates an entity with its aliases once each and its vector in the storage encoding', () => {
    const created = mergeInto(
      undefined,
      entityMerge(entity({ aliases: ['Ada', 'Ada'], nameVector: new Float32Array([1, 2]) }), (vector) => vector.length),
    );
    assert.deepEqual(created, {
      key: 'ada lovelace',
      name: 'Ada Lovelace',
      category: 'person',
      description: 'first description',
      name_vector: 2,
      aliases: ['Ada'],
      alias_keys: ['ada lovelace'],
    });
  });

  it('keeps the first name, category and description of an entity and accumulates its aliases', () => {
    const first = mergeInto(
      undefined,
      entityMerge(entity({}), () => null),
    );
    const merged = mergeInto(
      first,
      entityMerge(
        entity({
          name: 'Countess',
          category: 'concept',
          description: 'later',
          aliases: ['Countess', 'Ada Lovelace'],
          aliasKeys: ['countess'],
        }),
        () => null,
      ),
    );
    assert.equal(merged.name, 'Ada Lovelace');
    assert.equal(merged.category, 'person');
    assert.equal(merged.description, 'first description');
    assert.deepEqual(merged.aliases, ['Ada Lovelace', 'Countess']);
    assert.deepEqual(merged.alias_keys, ['ada lovelace', 'countess']);
  });

  for (const [name, held, incoming, expected] of [
    ['a higher confidence replaces a lower one', 0.4, 0.9, 0.9],
    ['a lower confidence leaves the higher one', 0.9, 0.4, 0.9],
  ] as const) {
    it(`keeps a fact's first description and its best confidence: ${name}`, () => {
      const first = mergeInto(undefined, factMerge(fact({ confidence: held })));
      const merged = mergeInto(first, factMerge(fact({ confidence: incoming, description: 'later' })));
      assert.equal(merged.confidence, expected);
      assert.equal(merged.description, 'first fact description');
      assert.equal(merged.predicate, 'works_at');
    });
  }
});

describe('entityNamesWithout', () => {
  const entity = {
    key: 'ingrid marit halvorsen',
    name: 'Ingrid Marit Halvorsen',
    aliases: ['Ingrid Marit Halvorsen', 'Ingrid Halvorsen', 'Dr. Halvorsen'],
    alias_keys: ['ingrid marit halvorsen', 'ingrid halvorsen', 'dr. halvorsen'],
  };
  const table: { name: string; lost: string[]; want: ReturnType<typeof entityNamesWithout> }[] = [
    { name: 'nothing lost', lost: [], want: { ...entity, renamed: false } },
    {
      name: 'its name lost: the first name kept replaces it, with its key',
      lost: ['Ingrid Marit Halvorsen'],
      want: {
        key: 'ingrid halvorsen',
        name: 'Ingrid Halvorsen',
        aliases: ['Ingrid Halvorsen', 'Dr. Halvorsen'],
        alias_keys: ['ingrid halvorsen', 'dr. halvorsen'],
        renamed: true,
      },
    },
    {
      name: 'an alias lost: its key goes, the name stays',
      lost: ['Dr. Halvorsen'],
      want: { ...entity, aliases: entity.aliases.slice(0, 2), alias_keys: entity.alias_keys.slice(0, 2), renamed: false },
    },
    {
      name: 'a lost spelling whose key a kept name shares keeps the key',
      lost: ['INGRID HALVORSEN'],
      want: { ...entity, renamed: false },
    },
  ];
  for (const { name, lost, want } of table) {
    it(name, () => assert.deepEqual(entityNamesWithout(entity, new Set(lost)), want));
  }
  it('keeps the key a name lost to the delete shares with one kept', () => {
    const twoSpellings = { ...entity, aliases: [...entity.aliases, 'INGRID HALVORSEN'] };
    const left = entityNamesWithout(twoSpellings, new Set(['INGRID HALVORSEN']));
    assert.ok(left.alias_keys.includes('ingrid halvorsen'));
    assert.ok(!left.aliases.includes('INGRID HALVORSEN'));
  });
});
