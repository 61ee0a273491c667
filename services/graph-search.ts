/**
 * The graph signal of a search: the query's candidate entity keys, matched against this
 * process's graph index (search/graph-index.ts, which documents the scoring), and the entities
 * and relationships the response shows beside the hits.
 */
import { normalizeEntityName } from '../extractors/structure/normalize.js';
import type { StructureExtractor } from '../extractors/structure/types.js';
import type { GraphMatch, Support } from '../search/graph-index.js';
import type { SearchIndex } from '../search/search-index.js';

const MAX_NGRAM = 4;

/** Query words that never name anything on their own. */
const QUERY_STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could did do does for from had has have how i if in into is it its me my of on or our ' +
    'she he her his him they them their the this that these those to was we were what when where which who whom whose why ' +
    'will with would you your about tell know any some there here than then so not no yes'
  ).split(' '),
);

export interface GraphEntityResult {
  /** In a collection search: whether the query names it (or a neighbour of it) or only the hits mention it. */
  found_by?: 'query' | 'hits';
  id: string;
  name: string;
  category: string;
  description: string;
  score: number;
  weight: number;
}

export interface GraphRelationshipResult {
  found_by?: 'query' | 'hits';
  id: string;
  subject_id: string;
  object_id: string;
  predicate: string;
  description: string;
  weight: number;
  confidence: number;
}

export type GraphSignal = Pick<GraphMatch, 'chunks' | 'episodes' | 'support'> & {
  entities: GraphEntityResult[];
  relationships: GraphRelationshipResult[];
};

export const EMPTY_GRAPH_SIGNAL: GraphSignal = {
  chunks: new Map(),
  episodes: new Map(),
  entities: [],
  relationships: [],
  support: new Map(),
};

/** Backing memories checked per shown target when none of those already known is visible. */
const CHECKED_PER_TARGET = 20;

/**
 * Memory ids whose visibility decides what the graph part of a response may show: for each shown
 * target that no memory known to be visible backs, up to CHECKED_PER_TARGET of its backers whose
 * visibility is not known yet.
 */
export function backersToCheck(signal: GraphSignal, known: (memoryId: string) => boolean | undefined): string[] {
  const wanted = new Set<string>();
  for (const { id } of [...signal.entities, ...signal.relationships]) {
    const backers = signal.support.get(id) ?? [];
    if (backers.some((backer) => known(backer.memoryId) === true)) continue;
    backers
      .filter((backer) => known(backer.memoryId) === undefined)
      .slice(0, CHECKED_PER_TARGET)
      .forEach((backer) => wanted.add(backer.memoryId));
  }
  return [...wanted];
}

/**
 * The entities and relationships a response may show: those backed by at least one visible memory
 * (searchable, the tenant's, matching the request's filters), described in that memory's words.
 * A target known only from deleted, unfinished or filtered-out memories is left out, so no text
 * of such a memory reaches the response.
 */
export function visibleGraph(signal: GraphSignal, visible: (memoryId: string) => boolean): GraphSignal {
  const describe = (id: string): string | null => {
    const backers = (signal.support.get(id) ?? []).filter((backer: Support) => visible(backer.memoryId));
    if (backers.length === 0) return null;
    return backers.find((backer) => backer.description)?.description ?? '';
  };
  const entities: GraphEntityResult[] = [];
  for (const entity of signal.entities) {
    const description = describe(entity.id);
    if (description !== null) entities.push({ ...entity, description: description || entity.description });
  }
  const relationships: GraphRelationshipResult[] = [];
  for (const fact of signal.relationships) {
    const description = describe(fact.id);
    if (description !== null) relationships.push({ ...fact, description: description || fact.description });
  }
  return { ...signal, entities, relationships };
}

/** Share of a named entity's score that every chunk of a memory mentioning it receives. */
export const EPISODE_SHARE = 0.5;

/** A chunk's graph value from its own evidence and its memory's episode score. */
export const graphValue = (signal: Pick<GraphSignal, 'chunks' | 'episodes'>, chunkId: string, memoryId: string): number => {
  const direct = signal.chunks.get(chunkId)?.value ?? 0;
  const episode = signal.episodes.get(memoryId) ?? 0;
  return 1 - (1 - direct) * Math.exp(-EPISODE_SHARE * episode);
};

/** Every 1..4-word run of the query that is not only stop words, normalised like entity keys. */
export function queryKeys(query: string): string[] {
  const words = query
    .normalize('NFKC')
    .split(/\s+/u)
    .map((word) => word.replace(/^[^\p{L}\p{N}@$]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter((word) => word.length > 0);
  const keys = new Set<string>();
  for (let start = 0; start < words.length; start++) {
    for (let length = 1; length <= MAX_NGRAM && start + length <= words.length; length++) {
      const gram = words.slice(start, start + length);
      if (gram.every((word) => QUERY_STOP_WORDS.has(word.toLowerCase()))) continue;
      const key = normalizeEntityName(gram.join(' '));
      if (key.length > 1) keys.add(key);
    }
  }
  return [...keys];
}

const round = (value: number): number => Math.round(value * 10_000) / 10_000;

/** Graph ranking over whatever holds the graph: a collection's loaded partitions, or a snapshot's. */
export type GraphMatcher = (keys: string[]) => GraphMatch;

export const collectionGraph =
  (searchIndex: Pick<SearchIndex, 'graphMatch'>, collectionIds: string[]): GraphMatcher =>
  (keys) =>
    searchIndex.graphMatch(collectionIds, keys);

/** The keys a query looks entities up by: its word runs and the entities the extractor finds in it. */
export async function graphKeys(extractor: StructureExtractor, query: string): Promise<string[]> {
  const extracted = await extractor.extract(query);
  return [...new Set([...queryKeys(query), ...extracted.entities.map((entity) => entity.key)])];
}

/** The query's keys (graphKeys), ranked against the graph. */
export async function graphSignal(match: GraphMatcher, extractor: StructureExtractor, query: string): Promise<GraphSignal> {
  return resultsOf(match(await graphKeys(extractor, query)));
}

/** A graph match as the response shows it. */
function resultsOf(matched: GraphMatch): GraphSignal {
  return {
    chunks: matched.chunks,
    episodes: matched.episodes,
    support: matched.support,
    entities: matched.entities.map((entity) => ({
      id: entity.id,
      name: entity.name,
      category: entity.category,
      description: entity.description,
      score: round(entity.score),
      weight: entity.weight,
    })),
    relationships: matched.relationships.map((fact) => ({
      id: fact.id,
      subject_id: fact.subjectId,
      object_id: fact.objectId,
      predicate: fact.predicate,
      description: fact.description,
      weight: fact.weight,
      confidence: fact.confidence,
    })),
  };
}

/** At most this many entities and relationships are shown. */
const SHOWN = 20;

/**
 * The entities and relationships a response shows: those the query names (already visible) and
 * those the hits mention (search/graph-index.ts hitGraph), kept only when a visible memory backs
 * them, merged by id with the higher score, best first.
 */
export function withHitGraph(named: GraphSignal, fromHits: GraphMatch, visible: (memoryId: string) => boolean): GraphSignal {
  const hits = visibleGraph(resultsOf(fromHits), visible);
  // What the query names keeps its order (device-mode search shows the same); what only the hits
  // mention follows, by relevance.
  const shownEntities = new Set(named.entities.map((entity) => entity.id));
  const shownFacts = new Set(named.relationships.map((fact) => fact.id));
  return {
    ...named,
    entities: [
      ...named.entities.map((entity) => ({ found_by: 'query' as const, ...entity })),
      ...hits.entities.filter((entity) => !shownEntities.has(entity.id)).map((entity) => ({ found_by: 'hits' as const, ...entity })),
    ].slice(0, SHOWN),
    relationships: [
      ...named.relationships.map((fact) => ({ found_by: 'query' as const, ...fact })),
      ...hits.relationships.filter((fact) => !shownFacts.has(fact.id)).map((fact) => ({ found_by: 'hits' as const, ...fact })),
    ].slice(0, SHOWN),
  };
}
