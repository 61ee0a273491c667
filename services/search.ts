/**
 * Collection-mode search: four signals fused into one ranking (see search/fusion.ts).
 *
 *   vector      e5 cosine over this process's in-memory vector index;
 *   lexical     BM25 over this process's in-memory inverted index (exact names, codes, numbers);
 *   graph       the entities the query names, their neighbours, and the chunks that mention them;
 *   activation  recency and frequency of use of each candidate's memory (search/activation.ts).
 *
 * The candidates of each retrieving signal are pooled, checked against the store (the memory must
 * still exist, be searchable, match the filters; a chunk must be within the memory's indexed
 * chunks), fused, and cut to `limit`. Weak results are flagged in the response and, as a
 * `memory_unconfident` event, on the event stream.
 */
import { observeSearch, unconfidentEventsSuppressed } from '../core/metrics.js';
import { TokenBuckets } from '../core/token-bucket.js';
import { ConcurrencyGate } from '../core/concurrency-gate.js';
import { rateLimited, serviceUnavailable, unprocessable, type AppError } from '../core/errors.js';
import { isEmptyFilter, type MemoryFilter } from '../core/memory-filter.js';
import type { StructureExtractor } from '../extractors/structure/types.js';
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import type { FactTimeline } from '../core/fact-timeline.js';
import { applyValidity, demoteStaleHits, type RelationshipValidity, type ValidityRequest } from './fact-validity.js';
import type { Logger } from '../core/logger.js';
import type { Embedder } from '../models/embedder.js';
import { activationOf } from '../search/activation.js';
import {
  ALL_SIGNALS,
  DEFAULT_FUSION_WEIGHTS,
  fuse,
  type Candidate,
  type FusionContext,
  type ScoreBreakdown,
  type SignalName,
} from '../search/fusion.js';
import {
  DEFAULT_TURN_WEIGHTS,
  expandTurnCandidates,
  followUpChunks,
  rerankTurns,
  turnLenders,
  type DateMatches,
} from '../search/turn-ranking.js';
import { querySpeakers, type QuerySpeakers } from '../search/turn-speakers.js';
import { queryAnswerKind } from '../search/turn-answers.js';
import { IndexBudgetError, type SearchIndex } from '../search/search-index.js';
import type { QueryTermMatch } from '../search/lexical-partition.js';
import type { ChunkSource } from '../store/chunks.js';
import type { ChunkRepository } from '../store/chunks.js';
import type { EventLog } from '../store/events.js';
import type { MemoryRepository } from '../store/memories.js';
import type { MemorySummary } from '../core/memory-model.js';
import { storedChunkTime } from '../core/memory-time.js';
import type { ConfidenceFigures, UnconfidentReason } from '../core/search-confidence.js';
import type { Principal } from './auth.js';
import type { CollectionService } from './collections.js';
import {
  backersToCheck,
  EMPTY_GRAPH_SIGNAL,
  collectionGraph,
  graphSignal,
  visibleGraph,
  graphValue,
  withHitGraph,
  type GraphEntityResult,
  type GraphRelationshipResult,
  type GraphSignal,
} from './graph-search.js';

export interface SearchInput {
  query: string;
  collectionIds: string[];
  limit: number;
  signals: ReadonlySet<SignalName>;
  /** Whether the returned memories count as used (activation). */
  trackAccess: boolean;
  filters: MemoryFilter;
  /** Facts as they stood at this instant (validity time), and whether to return superseded ones too: services/fact-validity.ts. */
  validity: ValidityRequest;
}

export interface SearchHit {
  memory: MemorySummary;
  chunkIndex: number;
  text: string;
  source: ChunkSource;
  /** When the chunk happened (core/memory-time.ts). */
  occurredAt: Date;
  score: number;
  scores: ScoreBreakdown;
  raw: { cosine: number | null; bm25: number | null };
}

export type { UnconfidentReason };

export interface SearchConfidence extends ConfidenceFigures {
  unconfident: boolean;
  reason: UnconfidentReason | null;
}

export interface SearchOutcome {
  hits: SearchHit[];
  entities: GraphEntityResult[];
  relationships: (GraphRelationshipResult & RelationshipValidity)[];
  confidence: SearchConfidence;
  /** What the fusion used about the query itself (see docs/search.md). */
  queryStats: { lexical_rarity: number; lexical_matched_terms: number; graph_entities: number };
  /**
   * fetch_ms runs from the end of the index searches to the response: it includes waiting for the
   * graph signal's tail, fusion and the store reads; store_ms is the store reads alone. index_ms
   * is both index searches' own time; the lexical one runs while the query is embedded, so the
   * stages can add up to more than total_ms.
   */
  timings: { embed_ms: number; index_ms: number; graph_ms: number; fetch_ms: number; store_ms: number; total_ms: number };
}

export interface SearchTuning {
  /** A chunk found only by the vector signal must be at least this cosine-similar to count. */
  minSimilarity: number;
  /** memory_unconfident when the best activation among the results is below this. */
  minActivation: number;
  /** memory_unconfident when the relevant facts' mean confidence is below this. */
  minFactConfidence: number;
}

/** Candidates each signal contributes; more with filters, which are applied after retrieval. */
const POOL = 100;
const FILTERED_POOL = 2000;
/**
 * The leading chunks' texts are read beside their memories when there are at most this many times
 * the chunks a response may show (a filtered search's leaders are its whole pool: read after).
 */
const PREFETCH_FACTOR = 3;

const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * A search whose partitions do not fit the in-process index budget: 422 when its own collections
 * need more than the whole budget (retrying cannot help), else 503 with Retry-After (other
 * running searches pin the budget now).
 */
const budgetRefusal = (error: IndexBudgetError): AppError =>
  error.kind === 'exceeded'
    ? unprocessable(
        'index_budget_exceeded',
        `The collections in collection_ids need more in-process index memory (about ${error.neededBytes} bytes) than SEARCH_INDEX_MAX_BYTES (${error.maxBytes}); search fewer collections at once`,
        'collection_ids',
      )
    : serviceUnavailable(
        'index_budget_exhausted',
        'The in-process search index budget (SEARCH_INDEX_MAX_BYTES) is taken by other running searches; retry shortly',
        1,
      );

/** What a search asks of storage: the visibility check, the hits' texts, access times and the unconfident event. */
export interface SearchServiceStore {
  memories: Pick<MemoryRepository, 'searchable' | 'recordAccess'>;
  chunks: Pick<ChunkRepository, 'hitTexts'>;
  events: Pick<EventLog, 'append'>;
}

/** What a search reads of this process's in-memory indexes (unit tests hand a fake one). */
export type SearchIndexReads = Pick<
  SearchIndex,
  | 'prepare'
  | 'release'
  | 'vectorSearch'
  | 'lexicalSearch'
  | 'queryTermMatches'
  | 'turnSource'
  | 'speakers'
  | 'graphTimelines'
  | 'graphMatch'
  | 'hitGraph'
>;

export function createSearchService(deps: {
  store: SearchServiceStore;
  collections: Pick<CollectionService, 'assertReadable'>;
  searchIndex: SearchIndexReads;
  embedder: () => Promise<Embedder>;
  extractor: StructureExtractor;
  /** The functional-predicate lexicon the validity step reads facts with. */
  classifier: PredicateClassifier;
  tuning: SearchTuning;
  /** memory_unconfident events per API key: sustained per minute, and burst. */
  unconfidentRate: { perMinute: number; burst: number };
  /** Searches of one tenant running at once in this process, and waiting beyond that (then 429). */
  tenantConcurrency: { limit: number; maxWaiting: number };
  logger: Logger;
}) {
  const { store, tuning } = deps;

  function assess(hits: SearchHit[], graph: GraphSignal, activations: Map<string, number>): SearchConfidence {
    const memoryIds = [...new Set(hits.map((hit) => hit.memory.id))];
    const hitActivations = memoryIds.map((id) => activations.get(id) ?? 0);
    const factConfidences = graph.relationships.map((fact) => fact.confidence);
    const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
    const stats = {
      entity_count: graph.entities.length,
      fact_count: graph.relationships.length,
      episode_count: memoryIds.length,
      source_count: hits.length,
      avg_activation: round(mean(hitActivations), 4),
      max_activation: round(Math.max(0, ...hitActivations), 4),
      avg_fact_confidence: round(mean(factConfidences), 4),
    };
    let reason: UnconfidentReason | null = null;
    if (hits.length === 0) reason = 'no_results';
    else if (stats.max_activation < tuning.minActivation) reason = 'low_activation';
    else if (factConfidences.length > 0 && stats.avg_fact_confidence < tuning.minFactConfidence) reason = 'low_fact_confidence';
    return { unconfident: reason !== null, reason, ...stats };
  }

  /**
   * One memory_unconfident event per weak search, naming every searched collection (the frame's
   * collection_id is the first; payload.collection_ids all of them, and a subscriber to any of
   * them receives it), and at most the key's event rate: a key looping weak searches cannot fill
   * the log. Beyond the rate the search still answers with its confidence; only the event is
   * dropped (counted in engram_unconfident_events_suppressed_total).
   */
  const unconfidentBudget = new TokenBuckets(deps.unconfidentRate.perMinute / 60, deps.unconfidentRate.burst);
  async function announceUnconfident(principal: Principal, collectionIds: string[], query: string, confidence: SearchConfidence) {
    if (unconfidentBudget.take(principal.keyId) > 0) {
      unconfidentEventsSuppressed.inc();
      return;
    }
    const { unconfident: _unconfident, reason, ...counts } = confidence;
    const ids = [...new Set(collectionIds)];
    await store.events.append('memory_unconfident', principal.tenantId, ids, { query, reason, ...counts, collection_ids: ids });
  }

  const ungated = {
    async search(principal: Principal, input: SearchInput): Promise<SearchOutcome> {
      const { tenantId } = principal;
      const started = performance.now();
      const { signals } = input;
      await deps.collections.assertReadable(tenantId, input.collectionIds, 'collection_ids');
      const pool = isEmptyFilter(input.filters) ? Math.max(POOL, input.limit * 5) : FILTERED_POOL;
      // With one retrieving signal the ranking stays exactly that signal's order.
      const turnRanking = [...signals].filter((signal) => signal !== 'activation').length > 1;

      // The partitions are held from prepare to release, so the memory budget never evicts them mid-search.
      const prepared = deps.searchIndex.prepare(input.collectionIds, tenantId).catch((error: unknown) => {
        throw error instanceof IndexBudgetError ? budgetRefusal(error) : error;
      });
      // Awaited below; this only keeps a failed load from being reported as unhandled when the
      // query embedding fails first.
      prepared.catch(() => undefined);
      const graphTask = signals.has('graph')
        ? (async () => {
            const graphStarted = performance.now();
            await prepared;
            const result = await graphSignal(collectionGraph(deps.searchIndex, input.collectionIds), deps.extractor, input.query);
            // Read while the partitions are held, like the signal itself.
            const timelines = deps.searchIndex.graphTimelines(
              input.collectionIds,
              result.relationships.map((relationship) => relationship.id),
              deps.classifier,
            );
            return { result, timelines, ms: performance.now() - graphStarted };
          })()
        : Promise.resolve({ result: EMPTY_GRAPH_SIGNAL, timelines: new Map<string, FactTimeline>(), ms: 0 });
      const signalsDone = (async () => {
        // With the turn ranking, a query naming some of the conversation's speakers is searched
        // without their names (search/turn-speakers.ts), which needs the partitions' speakers
        // first; otherwise the query is embedded while the partitions load.
        let speakers: QuerySpeakers | null = null;
        if (turnRanking) {
          await prepared;
          speakers = querySpeakers(input.query, deps.searchIndex.speakers(input.collectionIds));
        }
        const searchedText = speakers?.text ?? input.query;
        const embedding = signals.has('vector') ? deps.embedder().then((embedder) => embedder.embedQuery(searchedText)) : null;
        // Awaited below; a failure while the lexical search runs must not surface as unhandled.
        embedding?.catch(() => undefined);
        await prepared;
        // The lexical search needs no vector: it runs while the model thread embeds the query.
        const lexicalStarted = performance.now();
        const lexical = signals.has('lexical') ? deps.searchIndex.lexicalSearch(searchedText, input.collectionIds, pool) : null;
        const lexicalMs = performance.now() - lexicalStarted;
        const queryVector = embedding ? await embedding : null;
        const embedded = performance.now();
        const vectorHits = queryVector ? deps.searchIndex.vectorSearch(queryVector, input.collectionIds, pool) : [];
        const searched = performance.now();
        const { result: rawGraph, timelines, ms: graphMs } = await graphTask;
        return { queryVector, speakers, embedded, lexicalMs, vectorHits, lexical, searched, rawGraph, timelines, graphMs };
      })();
      // Both tasks settle before the partitions are used again below and released.
      await Promise.allSettled([signalsDone, graphTask]);
      let signalsResult: Awaited<typeof signalsDone>;
      const candidates = new Map<string, Candidate>();
      let dated: DateMatches = new Map();
      const questions = new Set<string>();
      const speakersOf = new Map<string, string>();
      const answersOf = new Map<string, number>();
      let queryTerms: ReadonlyMap<string, QueryTermMatch> | undefined;
      try {
        signalsResult = await signalsDone;
        const { vectorHits, lexical, rawGraph } = signalsResult;
        const candidate = (chunkId: string, memoryId: string): Candidate => {
          let entry = candidates.get(chunkId);
          if (!entry) candidates.set(chunkId, (entry = { chunkId, memoryId }));
          return entry;
        };
        for (const hit of vectorHits) candidate(hit.chunkId, hit.memoryId).cosine = hit.score;
        for (const hit of lexical?.hits ?? []) candidate(hit.chunkId, hit.memoryId).bm25 = hit.score;
        // The graph retrieves its best chunks only: an entity mentioned everywhere must not flood the pool.
        const graphBest = [...rawGraph.chunks].sort((a, b) => b[1].value - a[1].value).slice(0, pool);
        for (const [chunkId, { memoryId }] of graphBest) candidate(chunkId, memoryId);
        // Relevance floor: a chunk with no lexical or graph evidence must be semantically close.
        for (const [chunkId, entry] of candidates) {
          if (!entry.bm25 && !graphValue(rawGraph, chunkId, entry.memoryId) && (entry.cosine ?? 0) < tuning.minSimilarity)
            candidates.delete(chunkId);
        }
        // Conversation structure and dates (search/turn-ranking.ts), when signals are fused: the
        // neighbours of the candidates and the turns of the period the query names join them.
        if (turnRanking) {
          const source = deps.searchIndex.turnSource(signalsResult.queryVector, input.collectionIds);
          dated = expandTurnCandidates(candidates, input.query, source);
          for (const chunkId of candidates.keys()) {
            if (source.isQuestion(chunkId)) questions.add(chunkId);
            const speaker = source.speakerOf(chunkId);
            if (speaker !== undefined) speakersOf.set(chunkId, speaker);
            const answers = source.answersOf(chunkId);
            if (answers !== 0) answersOf.set(chunkId, answers);
          }
          // Follow-ups (search/turn-ranking.ts liftThreads): the query's terms in the turns that ask
          // and in the turns they follow, read against the same text the lexical signal searched.
          if (signals.has('lexical'))
            queryTerms = deps.searchIndex.queryTermMatches(
              signalsResult.speakers?.text ?? input.query,
              input.collectionIds,
              followUpChunks(candidates.keys(), (chunkId) => questions.has(chunkId)),
            );
        }
        // Episode proximity lifts the candidates; it retrieves nothing by itself.
        for (const entry of candidates.values()) {
          const value = graphValue(rawGraph, entry.chunkId, entry.memoryId);
          if (value > 0) entry.graph = value;
        }
      } finally {
        deps.searchIndex.release(input.collectionIds);
      }
      const { embedded, lexicalMs, vectorHits, lexical, searched, rawGraph, timelines, graphMs, speakers } = signalsResult;
      // What the turn ranking read while the partitions were held.
      const turnsRead = {
        isQuestion: (chunkId: string) => questions.has(chunkId),
        speakerOf: (chunkId: string) => speakersOf.get(chunkId),
        answersOf: (chunkId: string) => answersOf.get(chunkId) ?? 0,
      };
      const answerKind = queryAnswerKind(input.query);
      const rank = (entries: Candidate[], context: FusionContext) => {
        const fused = fuse(entries, context, DEFAULT_FUSION_WEIGHTS);
        return turnRanking ? rerankTurns(fused, dated, turnsRead, { speakers, answerKind, queryTerms }) : fused;
      };

      const fusionContext: FusionContext = {
        signals,
        cosineFloor: vectorHits.length > 0 ? Math.min(...vectorHits.map((hit) => hit.score)) : 0,
        cosineMax: vectorHits.length > 0 ? Math.max(...vectorHits.map((hit) => hit.score)) : 0,
        bm25Max: lexical?.hits[0]?.score ?? 0,
        lexicalRarity: lexical?.stats.maxRarity ?? 0,
      };
      const wanted = input.limit * 2 + 5;
      // Memory records are read only for candidates that can still reach the top: activation adds
      // at most its weight to a chunk's score, and the turn ranking's episode rule as much again
      // times its weight, so anything further below the `wanted`-th score cannot. (The turn
      // ranking's threads lend within a memory, whose turns share its activation: they add nothing
      // here.) Reading a few hundred memory records per search was most of its time at 100k
      // chunks. Filters need the whole pool, since they may remove any of the leaders.
      let leaders = [...candidates.values()];
      // The turn rules of the second ranking read the scores of a leader's turns one and two away
      // (the question it answers, its thread): those candidates rank again beside the leaders,
      // or a leader would lose what they lent it in the first. They are turns of a leader's
      // memory, so no memory record more is read, and their texts are read only if they lead.
      let lenders: Candidate[] = [];
      if (isEmptyFilter(input.filters) && leaders.length > wanted) {
        const preliminary = rank(leaders, fusionContext);
        const activationGain = DEFAULT_FUSION_WEIGHTS.activation * (turnRanking ? 1 + DEFAULT_TURN_WEIGHTS.episode : 1);
        const headroom = signals.has('activation') && signals.size > 1 ? activationGain + 0.001 : 0.001;
        const bar = preliminary[wanted - 1]!.score - headroom;
        leaders = preliminary.filter((entry) => entry.score >= bar).map(({ score: _score, breakdown: _breakdown, ...entry }) => entry);
        if (turnRanking)
          lenders = turnLenders(new Set(leaders.map((entry) => entry.chunkId)), candidates).map((chunkId) => ({
            ...candidates.get(chunkId)!,
          }));
      }
      const memoryIds = [...new Set(leaders.map((entry) => entry.memoryId))];
      const leaderIds = new Set(memoryIds);
      // One round trip instead of three in series (issue 28: the fetch was most of a 100k search):
      // the leaders' memories together with the graph's backers the response would check if the
      // leaders are visible, and, beside them, the texts of the leading chunks.
      const likelyBackers = backersToCheck(rawGraph, (id) => (leaderIds.has(id) ? true : undefined));
      const prefetch = leaders.length <= wanted * PREFETCH_FACTOR ? leaders.map((entry) => entry.chunkId) : [];
      let storeStarted = performance.now();
      const [fetched, prefetched] = await Promise.all([
        store.memories.searchable(tenantId, [...memoryIds, ...likelyBackers], input.filters),
        store.chunks.hitTexts(prefetch),
      ]);
      let storeMs = performance.now() - storeStarted;
      const memories = new Map([...fetched].filter(([id]) => leaderIds.has(id)));
      const now = Date.now();
      const activations = new Map<string, number>();
      for (const [id, memory] of memories) activations.set(id, activationOf(memory.created_at, memory.accessed_at, now));
      const visible = [...leaders, ...lenders].filter((entry) => memories.has(entry.memoryId));
      // The graph shown beside the hits follows the same rule: only what visible memories say.
      // Exactly the backers checked as before (a leader that is not visible makes others count):
      // those read above answer from there, any others are read now.
      const known = (id: string): boolean | undefined => (memories.has(id) ? true : leaderIds.has(id) ? false : undefined);
      const toCheck = backersToCheck(rawGraph, known);
      const unread = toCheck.filter((id) => !likelyBackers.includes(id));
      storeStarted = performance.now();
      const moreVisible = unread.length > 0 ? await store.memories.searchable(tenantId, unread, input.filters) : new Map();
      storeMs += performance.now() - storeStarted;
      const backerVisible = new Set(toCheck.filter((id) => fetched.has(id) || moreVisible.has(id)));
      const graph = visibleGraph(rawGraph, (id) => memories.has(id) || backerVisible.has(id));
      for (const entry of visible) entry.activation = activations.get(entry.memoryId);
      // The validity step (services/fact-validity.ts): facts as they stand at as_of, current first,
      // and hits stating only facts that no longer hold below the others.
      const validity = applyValidity(graph, timelines, input.query, deps.classifier, input.validity, new Date());
      const fused = demoteStaleHits(rank(visible, fusionContext), validity);

      // Fetch a little more than asked: a chunk past its memory's indexed range is skipped.
      const top = fused.slice(0, wanted);
      const chunks = new Map(prefetched.map((chunk) => [chunk.id, chunk]));
      const missing = top.filter((entry) => !chunks.has(entry.chunkId)).map((entry) => entry.chunkId);
      storeStarted = performance.now();
      for (const chunk of await store.chunks.hitTexts(missing)) chunks.set(chunk.id, chunk);
      storeMs += performance.now() - storeStarted;
      const hits: SearchHit[] = [];
      for (const entry of top) {
        const chunk = chunks.get(entry.chunkId);
        const memory = memories.get(entry.memoryId);
        if (!chunk || !memory) continue;
        const indexed = memory.indexed_chunk_count ?? (memory.status === 'complete' ? memory.chunk_count : 0);
        if (chunk.index >= indexed) continue;
        hits.push({
          memory,
          chunkIndex: chunk.index,
          text: chunk.text,
          source: chunk.source,
          occurredAt: storedChunkTime(chunk, memory),
          score: entry.score,
          scores: entry.breakdown,
          raw: {
            cosine: entry.cosine === undefined ? null : round(entry.cosine, 4),
            bm25: entry.bm25 === undefined ? null : round(entry.bm25, 4),
          },
        });
        if (hits.length >= input.limit) break;
      }
      const finished = performance.now();

      // Beside what the query names, what the hits mention (only what visible memories back).
      const hitMatch = signals.has('graph')
        ? deps.searchIndex.hitGraph(
            input.collectionIds,
            hits.map((hit) => ({ chunkId: `${hit.memory.id}:${hit.chunkIndex}`, memoryId: hit.memory.id })),
          )
        : null;
      const shownGraph = hitMatch
        ? withHitGraph({ ...graph, relationships: validity.relationships }, hitMatch, (id) => memories.has(id))
        : graph;
      // The hits' facts go through the same validity step as the query's: read their timelines
      // (what `prepare` loaded; a partition evicted since gives none, and they count as current),
      // mark them, and keep only the current ones unless include_history.
      const hitFacts = shownGraph.relationships.filter((fact) => fact.found_by === 'hits');
      const hitValidity = hitMatch
        ? applyValidity(
            { relationships: hitFacts, support: hitMatch.support },
            deps.searchIndex.graphTimelines(
              input.collectionIds,
              hitFacts.map((fact) => fact.id),
              deps.classifier,
            ),
            input.query,
            deps.classifier,
            input.validity,
            new Date(),
          ).relationships
        : [];
      const relationships = [
        ...validity.relationships.map((fact) => (hitMatch ? { found_by: 'query' as const, ...fact } : fact)),
        ...hitValidity,
      ];
      const confidence = assess(hits, graph, activations);
      const sideEffects: Promise<void>[] = [];
      if (confidence.unconfident) sideEffects.push(announceUnconfident(principal, input.collectionIds, input.query, confidence));
      if (input.trackAccess) sideEffects.push(store.memories.recordAccess([...new Set(hits.map((hit) => hit.memory.id))]));
      // Neither may fail the search it describes; both are logged.
      await Promise.all(
        sideEffects.map((effect) => effect.catch((error: unknown) => deps.logger.warn({ err: error }, 'search side effect failed'))),
      );

      observeSearch({
        embed: embedded - started,
        index: lexicalMs + searched - embedded,
        graph: graphMs,
        fetch: finished - searched,
        total: finished - started,
      });
      return {
        hits,
        entities: shownGraph.entities,
        // The query's facts, then the hits', each with its validity (services/fact-validity.ts).
        relationships,
        confidence,
        queryStats: {
          lexical_rarity: round(lexical?.stats.maxRarity ?? 0, 4),
          lexical_matched_terms: lexical?.stats.matchedTerms ?? 0,
          graph_entities: graph.entities.length,
        },
        timings: {
          embed_ms: round(embedded - started),
          index_ms: round(lexicalMs + searched - embedded),
          graph_ms: round(graphMs),
          fetch_ms: round(finished - searched),
          store_ms: round(storeMs),
          total_ms: round(finished - started),
        },
      };
    },
  };

  /**
   * At most `tenantConcurrency.limit` searches of one tenant run at once in this process (the
   * rest wait their turn, up to `maxWaiting`, then 429): a tenant looping searches gets its share
   * of the CPU, not all of it, and other tenants' searches do not queue behind its backlog.
   */
  const gate = new ConcurrencyGate(deps.tenantConcurrency.limit, deps.tenantConcurrency.maxWaiting);
  return {
    async search(principal: Principal, input: SearchInput): Promise<SearchOutcome> {
      const release = await gate.acquire(principal.tenantId);
      if (!release) throw rateLimited(1);
      try {
        return await ungated.search(principal, input);
      } finally {
        release();
      }
    },
  };
}

export const parseSignals = (signals: readonly SignalName[] | undefined): ReadonlySet<SignalName> => new Set(signals ?? ALL_SIGNALS);

export type SearchService = ReturnType<typeof createSearchService>;
