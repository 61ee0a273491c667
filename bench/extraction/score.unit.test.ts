import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ChunkStructure } from '../../extractors/structure/types.js';
import { countSentence, scoreExtraction, type LabelledSentence } from './score.js';

const entity = (key: string, name: string, category: ChunkStructure['entities'][number]['category'], aliases: string[] = []) => ({
  key,
  name,
  category,
  aliases,
  mentions: 1,
  description: '',
});

it('scores named entities by key or alias, categories, and triples by ends and verb', () => {
  const sentence: LabelledSentence = {
    text: 'Alice Chen moved from Berlin to Lisbon in 2023.',
    kind: 'news',
    entities: [
      ['Alice Chen', 'person'],
      ['Lisbon', 'place'],
      ['Berlin', 'place'],
      ['2023', 'date'],
    ],
    triples: [
      ['Alice Chen', 'move', 'Lisbon'],
      ['Alice Chen', 'live in', 'Berlin'],
    ],
  };
  const extracted: ChunkStructure = {
    entities: [
      entity('alice', 'Alice', 'person', ['Alice Chen']),
      entity('lisbon', 'Lisbon', 'organization'),
      entity('berlin', 'Berlin', 'place'),
      entity('paris', 'Paris', 'place'),
      entity('new life', 'new life', 'concept'),
    ],
    facts: [
      { subjectKey: 'alice', predicate: 'move to', objectKey: 'lisbon', confidence: 1, description: '' },
      { subjectKey: 'alice', predicate: 'visit', objectKey: 'berlin', confidence: 1, description: '' },
    ],
  };
  const counts = countSentence(sentence, extracted);
  assert.deepEqual(
    { ...counts },
    {
      goldEntities: 4,
      foundEntities: 3, // not 2023
      extractedEntities: 4, // the concept does not count
      correctExtracted: 3, // Paris is not labelled
      rightCategory: 2, // Lisbon is no organisation
      goldTriples: 2,
      foundTriples: 1, // "move to" is "move"; "visit" is not "live in"
      extractedTriples: 2,
      correctTriples: 1,
    },
  );
  const scores = scoreExtraction([counts]);
  assert.equal(scores.entityPrecision, 0.75);
  assert.equal(scores.entityRecall, 0.75);
  assert.equal(scores.tripleF1, 0.5);
});
