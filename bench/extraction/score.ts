/**
 * Scores a structure extractor against a labelled set (bench/extraction/dev-set.ts). Pure.
 *
 *   - Entities: the named ones (every category but `concept`: salient noun phrases are not
 *     labelled). A labelled entity is found when an extracted named entity's key or one of its
 *     aliases normalises (normalizeEntityName) to the labelled name's key. Precision counts the
 *     extracted named entities that match a label; category accuracy is over the found ones.
 *   - Triples: (subject, predicate, object). Found when an extracted fact's subject and object
 *     keys are the labelled ends' keys (or an alias of the entity they name) and its predicate
 *     is the labelled one or starts with the same verb ("work at" for "work", "move to" for
 *     "move"): the label says what is stated, not the extractor's exact particle.
 */
import { normalizeEntityName } from '../../extractors/structure/normalize.js';
import type { ChunkStructure, EntityCategory } from '../../extractors/structure/types.js';

export interface LabelledSentence {
  text: string;
  kind: 'news' | 'chat' | 'document';
  /** The speaker's role for a chat turn: "I" is an entity named after it. */
  speaker?: string;
  entities: [name: string, category: Exclude<EntityCategory, 'concept'>][];
  triples: [subject: string, predicate: string, object: string][];
}

/** The labelled sets' builders, one per kind of text (bench/extraction/dev-set.ts, check-set.ts). */
type Entities = LabelledSentence['entities'];
type Triples = LabelledSentence['triples'];
export const news = (text: string, entities: Entities, triples: Triples = []): LabelledSentence => ({
  text,
  kind: 'news',
  entities,
  triples,
});
export const doc = (text: string, entities: Entities, triples: Triples = []): LabelledSentence => ({
  text,
  kind: 'document',
  entities,
  triples,
});
export const chat = (speaker: string, text: string, entities: Entities, triples: Triples = []): LabelledSentence => ({
  text,
  kind: 'chat',
  speaker,
  entities,
  triples,
});

export interface ExtractionCounts {
  goldEntities: number;
  foundEntities: number;
  extractedEntities: number;
  correctExtracted: number;
  rightCategory: number;
  goldTriples: number;
  foundTriples: number;
  extractedTriples: number;
  correctTriples: number;
}

export interface ExtractionScores {
  entityPrecision: number;
  entityRecall: number;
  entityF1: number;
  categoryAccuracy: number;
  triplePrecision: number;
  tripleRecall: number;
  tripleF1: number;
}

const verb = (predicate: string): string => predicate.trim().toLowerCase().split(/\s+/)[0] ?? '';
const samePredicate = (gold: string, extracted: string): boolean =>
  gold.trim().toLowerCase() === extracted.trim().toLowerCase() || verb(gold) === verb(extracted);

export function countSentence(sentence: LabelledSentence, extracted: ChunkStructure): ExtractionCounts {
  const named = extracted.entities.filter((entity) => entity.category !== 'concept');
  // Every key an extracted entity answers to, and the entity key it stands for.
  const keysOf = new Map<string, Set<string>>();
  for (const entity of extracted.entities) {
    keysOf.set(entity.key, new Set([entity.key, ...entity.aliases.map((alias) => normalizeEntityName(alias))]));
  }
  const answersTo = (entityKey: string, goldKey: string): boolean => keysOf.get(entityKey)?.has(goldKey) ?? entityKey === goldKey;
  const goldKeys = sentence.entities.map(([name, category]) => ({ key: normalizeEntityName(name), category }));

  let foundEntities = 0;
  let rightCategory = 0;
  for (const gold of goldKeys) {
    const match = named.find((entity) => answersTo(entity.key, gold.key));
    if (!match) continue;
    foundEntities += 1;
    if (match.category === gold.category) rightCategory += 1;
  }
  const correctExtracted = named.filter((entity) => goldKeys.some((gold) => answersTo(entity.key, gold.key))).length;

  const tripleMatches = (triple: LabelledSentence['triples'][number], fact: ChunkStructure['facts'][number]): boolean =>
    answersTo(fact.subjectKey, normalizeEntityName(triple[0])) &&
    answersTo(fact.objectKey, normalizeEntityName(triple[2])) &&
    samePredicate(triple[1], fact.predicate);
  const foundTriples = sentence.triples.filter((triple) => extracted.facts.some((fact) => tripleMatches(triple, fact))).length;
  const correctTriples = extracted.facts.filter((fact) => sentence.triples.some((triple) => tripleMatches(triple, fact))).length;

  return {
    goldEntities: goldKeys.length,
    foundEntities,
    extractedEntities: named.length,
    correctExtracted,
    rightCategory,
    goldTriples: sentence.triples.length,
    foundTriples,
    extractedTriples: extracted.facts.length,
    correctTriples,
  };
}

const ratio = (part: number, whole: number): number => (whole === 0 ? 0 : part / whole);
const f1 = (precision: number, recall: number): number => (precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall));

export function scoreExtraction(counts: readonly ExtractionCounts[]): ExtractionScores & ExtractionCounts {
  const total = counts.reduce<ExtractionCounts>(
    (sum, one) => {
      for (const key of Object.keys(sum) as (keyof ExtractionCounts)[]) sum[key] += one[key];
      return sum;
    },
    {
      goldEntities: 0,
      foundEntities: 0,
      extractedEntities: 0,
      correctExtracted: 0,
      rightCategory: 0,
      goldTriples: 0,
      foundTriples: 0,
      extractedTriples: 0,
      correctTriples: 0,
    },
  );
  const entityPrecision = ratio(total.correctExtracted, total.extractedEntities);
  const entityRecall = ratio(total.foundEntities, total.goldEntities);
  const triplePrecision = ratio(total.correctTriples, total.extractedTriples);
  const tripleRecall = ratio(total.foundTriples, total.goldTriples);
  return {
    ...total,
    entityPrecision,
    entityRecall,
    entityF1: f1(entityPrecision, entityRecall),
    categoryAccuracy: ratio(total.rightCategory, total.foundEntities),
    triplePrecision,
    tripleRecall,
    tripleF1: f1(triplePrecision, tripleRecall),
  };
}
