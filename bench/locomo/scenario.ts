/**
 * `BENCH_ONLY=locomo`: retrieval quality on the development half of LoCoMo, through the API, as
 * its README measures it (bench/locomo/dataset.ts): each conversation into a collection of its
 * own, one conversation memory per session (session date as occurred_at and message timestamps),
 * ingest then search every question with `limit` 10, once per ranking:
 *   fused    the default ranking (no signals field)
 *   lexical  signals ["lexical"]: BM25 alone
 *   vector   signals ["vector"]: the embedding alone
 *   nograph  signals ["vector", "lexical", "activation"]: the fused ranking without the graph
 *            signal, which the offline harness (bench/locomo/offline.ts) lacks
 * and print recall_any@5, recall_any@10, recall_all@10 and MRR overall and per category
 * (`locomo_<ranking>[_<category>]_<figure>`), search p50/p95 of the fused ranking (client side),
 * and ingestion throughput (turns and sessions per second, wall clock). Per-question ranks and top
 * hits go to data/bench-logs/locomo.json for analysis (never into the repository: the data's
 * licence differs).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../config/index.js';
import type { ApiClient, SearchSignal } from '../client.js';
import { info, metric, percentile } from '../stats.js';
import { runPool, waitUntilComplete } from '../ingest-pool.js';
import { CATEGORY_NAMES, defaultLocomoFile, loadLocomo, type LocomoConversation, type LocomoQuestion } from './dataset.js';
import { aggregateLocomo, evidenceRanks, scoreLocomo, type LocomoAggregate, type LocomoScore } from './metrics.js';
import { benchNumber } from '../env.js';

const INGEST_CONCURRENCY = benchNumber('BENCH_LOCOMO_CONCURRENCY', 8);
const LIMIT = 10;
const POLL_MS = 100;
/** Under heavy machine load the whole half took over 30 minutes to ingest. */
const INGEST_TIMEOUT_MS = benchNumber('BENCH_LOCOMO_TIMEOUT_S', 7200) * 1000;
/** BENCH_LOCOMO_SAMPLES=conv-26,conv-41: only those conversations (quick runs; not the reported figure). */
const SAMPLES = (process.env.BENCH_LOCOMO_SAMPLES ?? '').split(',').filter((sample) => sample.trim() !== '');
const WARMUPS = 5;

interface Ranking {
  name: 'fused' | 'lexical' | 'vector' | 'nograph';
  signals?: SearchSignal[];
}
const RANKINGS: Ranking[] = [
  { name: 'fused' },
  { name: 'lexical', signals: ['lexical'] },
  { name: 'vector', signals: ['vector'] },
  { name: 'nograph', signals: ['vector', 'lexical', 'activation'] },
];

interface Asked {
  question: LocomoQuestion;
  scores: Map<string, LocomoScore>;
  ranks: Map<string, (number | null)[]>;
  top: Map<string, string[]>;
}

/** Ingests every session of every conversation (concurrently) and waits until each is complete. */
async function ingest(api: ApiClient, conversations: LocomoConversation[]): Promise<Map<string, string>> {
  const collections = new Map<string, string>();
  for (const conversation of conversations) {
    const collection = await api.createCollection(`locomo-${conversation.sampleId}-${Date.now().toString(36)}`, 'LoCoMo bench');
    collections.set(conversation.sampleId, collection.id);
  }
  const jobs = conversations.flatMap((conversation) => conversation.sessions.map((session) => ({ conversation, session })));
  const turns = jobs.reduce((sum, job) => sum + job.session.turns.length, 0);
  info(`   ingesting ${jobs.length} sessions (${turns} turns) of ${conversations.length} conversations, ${INGEST_CONCURRENCY} at a time`);
  const started = performance.now();
  await runPool(jobs, INGEST_CONCURRENCY, 'sessions', async ({ conversation, session }) => {
    const created = await api.createConversation(
      collections.get(conversation.sampleId)!,
      session.turns.map((turn) => ({ role: turn.role, content: turn.content, timestamp: session.occurredAt })),
      `${conversation.sampleId} session ${session.index}`,
      { bench: 'locomo', sample: conversation.sampleId, session: session.index },
      session.occurredAt,
    );
    await waitUntilComplete(api, created.id, `${conversation.sampleId} session ${session.index}`, started + INGEST_TIMEOUT_MS, POLL_MS);
  });
  const seconds = (performance.now() - started) / 1000;
  info(`   ingested in ${seconds.toFixed(1)} s`);
  metric('locomo_ingest_seconds', seconds, 's');
  metric('locomo_ingest_turns_per_second', turns / seconds, 'turns/s');
  metric('locomo_ingest_sessions_per_second', jobs.length / seconds, 'sessions/s');
  return collections;
}

const FIGURES: [keyof LocomoScore, string][] = [
  ['recallAny5', 'recall_any_at_5'],
  ['recallAny10', 'recall_any_at_10'],
  ['recallAll10', 'recall_all_at_10'],
  ['reciprocalRank', 'mrr'],
];

const line = (figures: LocomoAggregate): string =>
  `R@5 ${figures.recallAny5.toFixed(3)} R@10 ${figures.recallAny10.toFixed(3)} all@10 ${figures.recallAll10.toFixed(3)} MRR ${figures.reciprocalRank.toFixed(3)}`;

export async function locomoScenario(api: ApiClient): Promise<void> {
  const file = defaultLocomoFile();
  if (!existsSync(file)) {
    info(`locomo) skipped: ${file} is not there (set BENCH_LOCOMO_FILE)`);
    return;
  }
  const conversations = loadLocomo(file).filter((conversation) => SAMPLES.length === 0 || SAMPLES.includes(conversation.sampleId));
  const questions = conversations.flatMap((conversation) => conversation.questions);
  info(
    `locomo) LoCoMo development half: ${conversations.length} conversations, ${questions.length} questions (categories 1-4 with evidence)`,
  );
  const collections = await ingest(api, conversations);

  for (const question of questions.slice(0, WARMUPS)) await api.search(question.question, [collections.get(question.sampleId)!], LIMIT);
  const asked: Asked[] = [];
  const fusedMs: number[] = [];
  for (const [n, question] of questions.entries()) {
    const entry: Asked = { question, scores: new Map(), ranks: new Map(), top: new Map() };
    for (const ranking of RANKINGS) {
      const started = performance.now();
      const found = await api.search(question.question, [collections.get(question.sampleId)!], {
        limit: LIMIT,
        track_access: false,
        ...(ranking.signals ? { signals: ranking.signals } : {}),
      });
      if (ranking.name === 'fused') fusedMs.push(performance.now() - started);
      const texts = found.hits.map((hit) => hit.text);
      entry.scores.set(ranking.name, scoreLocomo(texts, question.evidence));
      entry.ranks.set(ranking.name, evidenceRanks(texts, question.evidence));
      entry.top.set(ranking.name, texts);
    }
    asked.push(entry);
    if ((n + 1) % 200 === 0) info(`   ${n + 1}/${questions.length} questions asked`);
  }

  metric('locomo_questions', asked.length, 'count');
  const categories = [...new Set(questions.map((question) => question.category))].sort();
  for (const ranking of RANKINGS) {
    const scopes: [string, Asked[]][] = [
      ['', asked],
      ...categories.map((category): [string, Asked[]] => [
        `_${CATEGORY_NAMES[category]}`,
        asked.filter((entry) => entry.question.category === category),
      ]),
    ];
    for (const [suffix, subset] of scopes) {
      const figures = aggregateLocomo(subset.map((entry) => entry.scores.get(ranking.name)!));
      for (const [key, name] of FIGURES) metric(`locomo_${ranking.name}${suffix}_${name}`, figures[key], 'ratio');
      info(
        `   ${ranking.name.padEnd(7)} ${(suffix.slice(1) || 'all').padEnd(11)} (${String(subset.length).padStart(3)} q) ${line(figures)}`,
      );
    }
  }
  for (const conversation of conversations) {
    const subset = asked.filter((entry) => entry.question.sampleId === conversation.sampleId);
    for (const name of ['fused', 'nograph'])
      info(
        `   ${name} by conversation ${conversation.sampleId} (${subset.length} q): ${line(aggregateLocomo(subset.map((e) => e.scores.get(name)!)))}`,
      );
  }
  metric('locomo_search_p50', percentile(fusedMs, 50), 'ms');
  metric('locomo_search_p95', percentile(fusedMs, 95), 'ms');

  const logFile = path.join(projectRoot(), 'data', 'bench-logs', 'locomo.json');
  mkdirSync(path.dirname(logFile), { recursive: true });
  writeFileSync(
    logFile,
    JSON.stringify(
      asked.map((entry) => ({
        sample: entry.question.sampleId,
        category: entry.question.category,
        question: entry.question.question,
        evidence: entry.question.evidence,
        ranks: Object.fromEntries(entry.ranks),
        top: Object.fromEntries(entry.top),
      })),
    ),
  );
  info(`   per-question ranks and top hits: ${logFile}`);
}
