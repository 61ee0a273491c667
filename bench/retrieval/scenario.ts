/**
 * Retrieval quality of hybrid search on a conversational-memory corpus (bench/retrieval/corpus.ts):
 * ingests ~80 conversations into one collection, then asks ~200 questions whose evidence turns are
 * known, once per ranking variant, and reports recall@5, recall@10 and MRR (within the top 10) of
 *   vector          signals ["vector"]
 *   lexical         signals ["lexical"]
 *   vector+lexical  signals ["vector", "lexical"]
 *   fused           no signals field: the default ranking, all four signals
 * on the `test` half of the questions (the headline: `retrieval_<variant>_...`) and on all of them
 * (`retrieval_all_<variant>_...`), plus recall@10 per question kind. Fusion weights are tuned on
 * the `tune` half, from the per-question log written to data/bench-logs/retrieval.json (ranks of
 * the evidence per variant, and each variant's top hits with their score breakdowns).
 *
 * Interleaved variant: the same corpus goes into a second collection while a search of that
 * collection follows every completed conversation (users search while they ingest, so each
 * process's index of the collection is loaded early and must follow every later write); then the
 * fused ranking is asked every question there. Its figures (`retrieval_interleaved_fused_…`) must
 * equal the ingest-then-search ones; `retrieval_interleaved_rank_changes` counts the questions
 * whose first evidence rank differs between the two collections.
 *
 * Every search passes track_access: false, so asking the same question four times does not change
 * the memories' activation. A hit is mapped to its turn (`memory_id:message_index`); several chunks
 * of one turn count once, at the best rank.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../config/index.js';
import type { ApiClient, SearchResults, SearchSignal } from '../client.js';
import { info, metric, percentile } from '../stats.js';
import { runPool, waitUntilComplete } from '../ingest-pool.js';
import { corpusStats, DEFAULT_SEED, generateCorpus, QUESTION_KINDS, type Question, type Split } from './corpus.js';
import {
  aggregate,
  evidenceRanks,
  firstEvidenceRank,
  rankedTurns,
  scoreQuestion,
  turnKey,
  type Aggregate,
  type QuestionScore,
} from './metrics.js';
import { benchNumber } from '../env.js';

/** Conversations ingested at once, as several clients of one application would. */
const INGEST_CONCURRENCY = 8;
/** Hits asked for per question: recall@10 is the widest figure reported. */
const LIMIT = 10;
/** How often a conversation's status is polled, and how long all of them may take. */
const POLL_MS = 100;
const INGEST_TIMEOUT_MS = 900_000;
/** Questions searched before timing starts (model and index warm-up). */
const WARMUPS = 3;

interface Variant {
  name: string;
  /** The variant's part of metric names. */
  key: string;
  /** Undefined: the request carries no signals field (the server's default, fused ranking). */
  signals?: SearchSignal[];
}

const VARIANTS: Variant[] = [
  { name: 'vector', key: 'vector', signals: ['vector'] },
  { name: 'lexical', key: 'lexical', signals: ['lexical'] },
  { name: 'vector+lexical', key: 'vector_lexical', signals: ['vector', 'lexical'] },
  { name: 'fused', key: 'fused' },
];
/** Variants reported per question kind. */
const PER_KIND = ['fused', 'vector', 'lexical'];

interface VariantResult {
  score: QuestionScore;
  evidenceRanks: (number | null)[];
  firstRank: number | null;
  clientMs: number;
  serverMs: number;
  timings: Record<string, number | undefined>;
  hits: { key: string; score: number; breakdown: Record<string, number | undefined> }[];
}

interface QuestionResult {
  question: Question;
  evidenceKeys: string[];
  variants: Map<string, VariantResult>;
}

async function ingestCorpus(
  api: ApiClient,
  collectionId: string,
  conversations: ReturnType<typeof generateCorpus>['conversations'],
  /** Runs after each conversation completes (the interleaved variant searches here). */
  afterEach: (index: number) => Promise<void> = () => Promise.resolve(),
): Promise<string[]> {
  const memoryIds: string[] = new Array<string>(conversations.length);
  const deadline = performance.now() + INGEST_TIMEOUT_MS;
  await runPool(conversations, INGEST_CONCURRENCY, 'conversations', async (conversation) => {
    const created = await api.createConversation(collectionId, conversation.messages, `retrieval-conversation-${conversation.index}`, {
      bench: 'retrieval',
      conversation: conversation.index,
    });
    await waitUntilComplete(api, created.id, `retrieval conversation ${conversation.index}`, deadline, POLL_MS);
    memoryIds[conversation.index] = created.id;
    await afterEach(conversation.index);
  });
  return memoryIds;
}

function breakdownKeys(results: SearchResults): Set<string> {
  const keys = new Set<string>();
  for (const hit of results.hits) {
    for (const [signal, value] of Object.entries(hit.score_breakdown ?? {})) if (value !== undefined && value !== null) keys.add(signal);
  }
  return keys;
}

async function search(
  api: ApiClient,
  collectionId: string,
  query: string,
  variant: Variant,
): Promise<{ results: SearchResults; ms: number }> {
  const started = performance.now();
  try {
    const results = await api.search(query, [collectionId], {
      limit: LIMIT,
      track_access: false,
      ...(variant.signals ? { signals: variant.signals } : {}),
    });
    return { results, ms: performance.now() - started };
  } catch (error) {
    const message = (error as Error).message;
    if (/→ 400/.test(message) && /signals|track_access/.test(message)) {
      throw new Error(`the search API rejected the ${variant.name} request: it does not support signals / track_access yet (${message})`, {
        cause: error,
      });
    }
    throw error;
  }
}

function summarize(results: QuestionResult[], variant: string, filter: (q: Question) => boolean = () => true): Aggregate {
  return aggregate(results.filter((r) => filter(r.question)).map((r) => r.variants.get(variant)!.score));
}

export async function retrievalScenario(api: ApiClient, collectionId: string, interleavedCollectionId: string): Promise<void> {
  const seed = benchNumber('BENCH_RETRIEVAL_SEED', DEFAULT_SEED);
  const corpus = generateCorpus({ seed });
  const stats = corpusStats(corpus);
  info(
    `7) retrieval quality: ${stats.conversations} conversations (${stats.messages} turns) ingested with ${INGEST_CONCURRENCY} concurrent clients, ` +
      `then ${stats.questions} questions × ${VARIANTS.length} rankings (${VARIANTS.map((v) => v.name).join(', ')}), limit ${LIMIT}, track_access false`,
  );
  info(
    `   questions by kind: ${Object.entries(stats.byKind)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ')}; split: ${Object.entries(stats.bySplit)
      .map(([split, n]) => `${split} ${n}`)
      .join(', ')} (headline figures: test)`,
  );

  const ingestStarted = performance.now();
  const memoryIds = await ingestCorpus(api, collectionId, corpus.conversations);
  const ingestSeconds = (performance.now() - ingestStarted) / 1000;
  if (process.env.BENCH_RETRIEVAL_DUMP) await dumpCandidates(api, collectionId, corpus.questions, memoryIds);
  info(`   corpus ingested in ${ingestSeconds.toFixed(1)} s`);
  metric('retrieval_ingest_seconds', ingestSeconds, 's');

  for (const [i, question] of corpus.questions.slice(0, WARMUPS).entries()) {
    await search(api, collectionId, question.text, VARIANTS[i % VARIANTS.length]!);
  }

  const results: QuestionResult[] = [];
  const ignoredSignals = new Map<string, Set<string>>();
  let emptyResults = 0;
  for (const [n, question] of corpus.questions.entries()) {
    const evidenceKeys = question.evidence.map((e) => turnKey(memoryIds[e.conversation]!, e.message));
    const variants = new Map<string, VariantResult>();
    // All rankings of one question back to back: drift in machine load touches them alike.
    for (const variant of VARIANTS) {
      const { results: found, ms } = await search(api, collectionId, question.text, variant);
      if (found.hits.length === 0) emptyResults += 1;
      if (variant.signals) {
        const extra = [...breakdownKeys(found)].filter((signal) => !variant.signals!.includes(signal as SearchSignal));
        if (extra.length > 0) ignoredSignals.set(variant.name, new Set([...(ignoredSignals.get(variant.name) ?? []), ...extra]));
      }
      const ranked = rankedTurns(found.hits);
      variants.set(variant.name, {
        score: scoreQuestion(ranked, evidenceKeys),
        evidenceRanks: evidenceRanks(ranked, evidenceKeys),
        firstRank: firstEvidenceRank(ranked, evidenceKeys),
        clientMs: ms,
        serverMs: found.timings_ms.total_ms,
        timings: found.timings_ms,
        hits: found.hits.map((hit) => ({
          key:
            hit.source?.message_index === undefined
              ? `${hit.memory_id}#chunk${hit.chunk_index}`
              : turnKey(hit.memory_id, hit.source.message_index),
          score: hit.score,
          breakdown: hit.score_breakdown ?? {},
        })),
      });
    }
    results.push({ question, evidenceKeys, variants });
    if ((n + 1) % 50 === 0) info(`   ${n + 1}/${corpus.questions.length} questions asked`);
  }
  for (const [variant, signals] of ignoredSignals) {
    info(`   WARNING: ${variant} hits carry score_breakdown for ${[...signals].join(', ')}: the server may not honour the signals field`);
  }
  if (emptyResults > 0) info(`   WARNING: ${emptyResults} searches returned no hits`);

  // Headline: the test split. Then all questions, and recall@10 per kind.
  const scopes: { label: Split | 'all'; prefix: string; filter: (q: Question) => boolean }[] = [
    { label: 'test', prefix: 'retrieval_', filter: (q) => q.split === 'test' },
    { label: 'all', prefix: 'retrieval_all_', filter: () => true },
  ];
  const summary: Record<string, Record<string, Aggregate>> = {};
  for (const scope of [...scopes, { label: 'tune' as const, prefix: '', filter: (q: Question) => q.split === 'tune' }]) {
    summary[scope.label] = Object.fromEntries(VARIANTS.map((v) => [v.name, summarize(results, v.name, scope.filter)]));
  }
  for (const scope of scopes) {
    metric(`${scope.prefix}questions`, results.filter((r) => scope.filter(r.question)).length, 'count');
    for (const variant of VARIANTS) {
      const figures = summary[scope.label]![variant.name]!;
      metric(`${scope.prefix}${variant.key}_recall_at_5`, figures.recallAt5, 'ratio');
      metric(`${scope.prefix}${variant.key}_recall_at_10`, figures.recallAt10, 'ratio');
      metric(`${scope.prefix}${variant.key}_mrr`, figures.mrr, 'ratio');
    }
    for (const variant of VARIANTS.filter((v) => PER_KIND.includes(v.name))) {
      for (const kind of QUESTION_KINDS) {
        const figures = summarize(results, variant.name, (q) => scope.filter(q) && q.kind === kind);
        if (figures.questions > 0) metric(`${scope.prefix}${variant.key}_${kind}_recall_at_10`, figures.recallAt10, 'ratio');
      }
    }
  }
  for (const label of ['test', 'tune', 'all'] as const) {
    info(
      `   ${label.padEnd(4)} ${VARIANTS.map((v) => {
        const f = summary[label]![v.name]!;
        return `${v.name} R@5 ${f.recallAt5.toFixed(3)} R@10 ${f.recallAt10.toFixed(3)} MRR ${f.mrr.toFixed(3)}`;
      }).join(' | ')}`,
    );
  }

  const byNaming = (variant: string, names: boolean) => summarize(results, variant, (q) => q.namesUser === names).recallAt10.toFixed(3);
  info(
    `   all questions, R@10 when an evidence turn names the user / when none does: ${PER_KIND.map(
      (v) => `${v} ${byNaming(v, true)} / ${byNaming(v, false)}`,
    ).join(', ')}`,
  );

  await interleavedScenario(api, interleavedCollectionId, corpus, results);

  const fusedMs = results.map((r) => r.variants.get('fused')!.clientMs);
  metric('retrieval_search_p50', percentile(fusedMs, 50), 'ms');
  metric('retrieval_search_p95', percentile(fusedMs, 95), 'ms');
  info(
    `   search latency p95 (client / server, ms): ${VARIANTS.map((v) => {
      const client = results.map((r) => r.variants.get(v.name)!.clientMs);
      const server = results.map((r) => r.variants.get(v.name)!.serverMs);
      return `${v.name} ${percentile(client, 95).toFixed(1)} / ${percentile(server, 95).toFixed(1)}`;
    }).join(', ')} (retrieval_search_p95 is the fused ranking, client-side)`,
  );

  const logFile = path.join(projectRoot(), 'data', 'bench-logs', 'retrieval.json');
  mkdirSync(path.dirname(logFile), { recursive: true });
  const log = {
    generated_at: new Date().toISOString(),
    seed: corpus.seed,
    limit: LIMIT,
    stats,
    variants: VARIANTS.map((v) => ({ name: v.name, signals: v.signals ?? 'default (all)' })),
    summary,
    conversations: corpus.conversations.map((c) => ({
      index: c.index,
      user: c.user,
      memory_id: memoryIds[c.index],
      facts: c.facts,
      messages: c.messages,
    })),
    questions: results.map((r) => ({
      id: r.question.id,
      kind: r.question.kind,
      split: r.question.split,
      fact: r.question.fact,
      text: r.question.text,
      answer: r.question.answer,
      names_user: r.question.namesUser,
      evidence: r.question.evidence.map((e, i) => ({ ...e, key: r.evidenceKeys[i] })),
      results: Object.fromEntries(
        [...r.variants].map(([name, v]) => [
          name,
          {
            first_rank: v.firstRank,
            evidence_ranks: v.evidenceRanks,
            recall_at_5: v.score.recallAt5,
            recall_at_10: v.score.recallAt10,
            reciprocal_rank: v.score.reciprocalRank,
            client_ms: Math.round(v.clientMs * 10) / 10,
            server_ms: v.serverMs,
            timings_ms: v.timings,
            hits: v.hits,
          },
        ]),
      ),
    })),
  };
  writeFileSync(logFile, `${JSON.stringify(log, null, 1)}\n`);
  info(`   per-question results (evidence ranks and top hits per ranking): ${logFile}`);
}

/** The same corpus ingested with a search after every completed conversation, then the fused ranking. */
async function interleavedScenario(
  api: ApiClient,
  collectionId: string,
  corpus: ReturnType<typeof generateCorpus>,
  baseline: QuestionResult[],
): Promise<void> {
  const fused = VARIANTS.find((variant) => variant.name === 'fused')!;
  info(`   interleaved: ingesting the corpus again, searching after each of its ${corpus.conversations.length} conversations`);
  let searchesBetween = 0;
  const memoryIds = await ingestCorpus(api, collectionId, corpus.conversations, async (index) => {
    const question = corpus.questions[index % corpus.questions.length]!;
    await search(api, collectionId, question.text, fused);
    searchesBetween += 1;
  });
  const scores: { question: Question; score: QuestionScore; firstRank: number | null }[] = [];
  for (const question of corpus.questions) {
    const evidenceKeys = question.evidence.map((e) => turnKey(memoryIds[e.conversation]!, e.message));
    const ranked = rankedTurns((await search(api, collectionId, question.text, fused)).results.hits);
    scores.push({ question, score: scoreQuestion(ranked, evidenceKeys), firstRank: firstEvidenceRank(ranked, evidenceKeys) });
  }
  metric('retrieval_interleaved_searches_between', searchesBetween, 'count');
  for (const scope of [
    { prefix: 'retrieval_interleaved_', filter: (q: Question) => q.split === 'test' },
    { prefix: 'retrieval_interleaved_all_', filter: () => true },
  ]) {
    const figures = aggregate(scores.filter((s) => scope.filter(s.question)).map((s) => s.score));
    const before = summarize(baseline, 'fused', scope.filter);
    metric(`${scope.prefix}fused_recall_at_5`, figures.recallAt5, 'ratio');
    metric(`${scope.prefix}fused_recall_at_10`, figures.recallAt10, 'ratio');
    metric(`${scope.prefix}fused_mrr`, figures.mrr, 'ratio');
    info(
      `   ${scope.prefix}: fused R@5 ${figures.recallAt5.toFixed(3)} R@10 ${figures.recallAt10.toFixed(3)} MRR ${figures.mrr.toFixed(3)}` +
        ` | ingest-then-search R@5 ${before.recallAt5.toFixed(3)} R@10 ${before.recallAt10.toFixed(3)} MRR ${before.mrr.toFixed(3)}`,
    );
  }
  const changed = scores.filter((s, i) => s.firstRank !== baseline[i]!.variants.get('fused')!.firstRank).length;
  metric('retrieval_interleaved_rank_changes', changed, 'count');
}

/**
 * BENCH_RETRIEVAL_DUMP=1: the fused ranking's top 100 per question, with each hit's normalised
 * signals and the query's lexical rarity, to data/bench-logs/retrieval-candidates.json. Fusion
 * weights are tuned on these (tune split) offline, since re-scoring needs no new search.
 */
async function dumpCandidates(api: ApiClient, collectionId: string, questions: Question[], memoryIds: string[]): Promise<void> {
  const rows = [];
  for (const question of questions) {
    const found = (await api.search(question.text, [collectionId], { limit: 100, track_access: false })) as SearchResults & {
      query_stats?: Record<string, number>;
    };
    rows.push({
      id: question.id,
      kind: question.kind,
      split: question.split,
      evidence: question.evidence.map((e) => turnKey(memoryIds[e.conversation]!, e.message)),
      query_stats: found.query_stats ?? {},
      hits: found.hits.map((hit) => ({
        key:
          hit.source?.message_index === undefined
            ? `${hit.memory_id}#chunk${hit.chunk_index}`
            : turnKey(hit.memory_id, hit.source.message_index),
        breakdown: hit.score_breakdown ?? {},
      })),
    });
  }
  const file = path.join(projectRoot(), 'data', 'bench-logs', 'retrieval-candidates.json');
  writeFileSync(file, JSON.stringify(rows));
  info(`   candidates for tuning written to ${file}`);
}
