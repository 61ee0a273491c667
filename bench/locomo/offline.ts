/**
 * Offline harness for iterating on the ranking: the LoCoMo development half in this process's own
 * search indexes (the service's VectorIndex and LexicalIndex, the embedder it loads), ranked by
 * the same code the search service calls (search/turn-ranking.ts), without the stack. No graph
 * signal unless LOCOMO_GRAPH=1, which builds each conversation's graph with the service's
 * structuring code (bench/locomo/offline-graph.ts): the figures the project reports come from
 * `BENCH_ONLY=locomo`, through the API. Passage and query vectors are cached under
 * data/locomo-cache/ (outside the repository, like the data).
 *
 *   scripts/node dist/bench/locomo/offline.js [--dump file]   (LOCOMO_VARIANTS, LOCOMO_BY_CATEGORY=1)
 *
 * LOCOMO_LEADERS=cut ranks a second time over the candidates within reach of the top only, as the
 * service does before reading memory records; =lenders keeps the leaders' turn lenders, as it now does.
 *
 * LOCOMO_GRID='{"<turn or fusion weight, or specificityPower>": [values], ...}' instead chooses those by
 * leave-one-conversation-out: each conversation in turn is held out, the grid point with the best
 * MRR (then recall_all@10) on the other four is chosen, and the held-out conversation is scored
 * with it; the five held-out scores together estimate what the choice does on unseen conversations.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, projectRoot } from '../../config/index.js';
import { loadEmbedder, type Embedder } from '../../models/embedder.js';
import { LexicalIndex } from '../../search/lexical-index.js';
import { VectorIndex } from '../../search/vector-index.js';
import { TurnFacts } from '../../search/turn-facts.js';
import { type GraphPartition } from '../../search/graph-index.js';
import { ENTITY_SPECIFICITY_POWER, type GraphMatchOptions } from '../../search/graph-match.js';
import { CATEGORY_NAMES, loadLocomo, type LocomoConversation } from './dataset.js';
import { aggregateLocomo, scoreLocomo, type LocomoAggregate, type LocomoScore } from './metrics.js';
import { HARNESS_FUSION_WEIGHTS, HARNESS_TURN_WEIGHTS, rankOffline, searchedText, type OfflineCorpus } from './offline-ranking.js';
import type { TurnRankingWeights } from '../../search/turn-ranking.js';
import type { FusionWeights } from '../../search/fusion.js';
import { createLocalExtractor } from '../../extractors/structure/local-extractor.js';
import { graphKeys } from '../../services/graph-search.js';
import { conversationGraph } from './offline-graph.js';

/** Conversations the ranking may be tuned on; the others only check it. */
export const TUNE_SAMPLES = new Set(['conv-26', 'conv-41', 'conv-43']);

async function cachedVectors(embedder: Embedder, kind: 'passage' | 'query', texts: string[]): Promise<Map<string, Float32Array>> {
  const dir = path.join(projectRoot(), 'data', 'locomo-cache');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${embedder.modelId.replace(/\W+/g, '_')}-${kind}.json`);
  const cache = new Map<string, Float32Array>();
  if (existsSync(file)) {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    for (const [text, base64] of Object.entries(stored)) {
      const bytes = Buffer.from(base64, 'base64');
      cache.set(text, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
    }
  }
  const missing = [...new Set(texts.filter((text) => !cache.has(text)))];
  for (let offset = 0; offset < missing.length; offset += 32) {
    const batch = missing.slice(offset, offset + 32);
    const vectors =
      kind === 'passage' ? await embedder.embedPassages(batch) : await Promise.all(batch.map((text) => embedder.embedQuery(text)));
    batch.forEach((text, index) => cache.set(text, vectors[index]!));
    if (offset % 640 === 0) process.stderr.write(`  embedded ${offset + batch.length}/${missing.length} ${kind}s\n`);
  }
  if (missing.length > 0) {
    const out: Record<string, string> = {};
    for (const [text, vector] of cache) out[text] = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
    writeFileSync(file, JSON.stringify(out));
  }
  return cache;
}

function buildCorpus(conversations: LocomoConversation[], passages: Map<string, Float32Array>, dimensions: number): OfflineCorpus {
  const vectors = new VectorIndex(dimensions);
  const lexical = new LexicalIndex();
  const turns = new Map<string, { text: string; time: Date; role: string }>();
  const facts = new TurnFacts();
  for (const conversation of conversations) {
    const vectorPartition = vectors.createPartition(conversation.sampleId);
    const lexicalPartition = lexical.createPartition(conversation.sampleId);
    facts.createPartition(conversation.sampleId);
    for (const session of conversation.sessions) {
      const memoryId = `${conversation.sampleId}-s${session.index}`;
      session.turns.forEach((turn, index) => {
        const chunkId = `${memoryId}:${index}`;
        vectorPartition.upsert(chunkId, memoryId, passages.get(turn.content)!);
        lexicalPartition.upsert(chunkId, memoryId, process.env.LOCOMO_STRIP ? turn.content.replace(/^[^:]{1,40}: /, '') : turn.content);
        turns.set(chunkId, { text: turn.content, time: new Date(session.occurredAt), role: turn.role });
        facts.upsert(conversation.sampleId, chunkId, memoryId, turn.content, new Date(session.occurredAt));
      });
    }
  }
  return { vectors, lexical, turns, facts };
}

const fmt = (figures: LocomoAggregate): string =>
  `R@5 ${figures.recallAny5.toFixed(3)} R@10 ${figures.recallAny10.toFixed(3)} all@10 ${figures.recallAll10.toFixed(3)} MRR ${figures.reciprocalRank.toFixed(3)} (${figures.questions})`;

type Row = { sample: string; category: number; score: LocomoScore };

interface GridPoint {
  turn: TurnRankingWeights;
  fusion: FusionWeights;
  graph: Required<GraphMatchOptions>;
}

/**
 * Every combination of the grid's values, over the harness's turn and fusion weights and the graph
 * match's options (a name is looked up in that order).
 */
function gridPoints(grid: Record<string, number[]>): GridPoint[] {
  let points: GridPoint[] = [
    { turn: HARNESS_TURN_WEIGHTS, fusion: HARNESS_FUSION_WEIGHTS, graph: { specificityPower: ENTITY_SPECIFICITY_POWER } },
  ];
  for (const [name, values] of Object.entries(grid)) {
    const part =
      name in HARNESS_TURN_WEIGHTS ? 'turn' : name in HARNESS_FUSION_WEIGHTS ? 'fusion' : name in points[0]!.graph ? 'graph' : null;
    if (!part) throw new Error(`LOCOMO_GRID: no turn weight, fusion weight or graph option named ${name}`);
    points = points.flatMap((point) => values.map((value) => ({ ...point, [part]: { ...point[part], [name]: value } })));
  }
  return points;
}

const weightOf = (point: GridPoint, name: string): number =>
  name in point.turn
    ? point.turn[name as keyof TurnRankingWeights]
    : name in point.fusion
      ? point.fusion[name as keyof FusionWeights]
      : point.graph[name as keyof GraphMatchOptions];

function leaveOneConversationOut(
  corpus: OfflineCorpus,
  questions: LocomoConversation['questions'],
  vectorOf: (text: string) => Float32Array,
  grid: Record<string, number[]>,
): void {
  const points = gridPoints(grid);
  const label = (point: GridPoint) =>
    Object.keys(grid)
      .map((name) => `${name} ${weightOf(point, name)}`)
      .join(', ');
  const rowsAt = points.map((point) =>
    questions.map((question): Row => {
      const ranked = rankOffline(
        corpus,
        'current',
        question.question,
        vectorOf,
        question.sampleId,
        10,
        point.turn,
        point.fusion,
        point.graph,
      );
      const texts = ranked.map((chunkId) => corpus.turns.get(chunkId)!.text);
      return { sample: question.sampleId, category: question.category, score: scoreLocomo(texts, question.evidence) };
    }),
  );
  const baseline = rankOfflineRows(corpus, questions, vectorOf);
  const samples = [...new Set(questions.map((question) => question.sampleId))];
  for (const [index, point] of points.entries()) {
    console.log(`grid ${label(point).padEnd(40)} ${fmt(aggregateLocomo(rowsAt[index]!.map((r) => r.score)))}`);
    if (!process.env.LOCOMO_BY_CONVERSATION) continue;
    for (const sample of new Set(questions.map((question) => question.sampleId))) {
      const rows = rowsAt[index]!.filter((row) => row.sample === sample);
      console.log(`  ${sample.padEnd(43)} ${fmt(aggregateLocomo(rows.map((r) => r.score)))}`);
    }
  }
  const heldOut: Row[] = [];
  for (const sample of samples) {
    let best = 0;
    let bestKey = [-1, -1];
    for (const [index, rows] of rowsAt.entries()) {
      const tuned = aggregateLocomo(rows.filter((row) => row.sample !== sample).map((row) => row.score));
      const key = [tuned.reciprocalRank, tuned.recallAll10];
      if (key[0]! > bestKey[0]! + 1e-9 || (Math.abs(key[0]! - bestKey[0]!) <= 1e-9 && key[1]! > bestKey[1]!))
        [best, bestKey] = [index, key];
    }
    const scored = rowsAt[best]!.filter((row) => row.sample === sample);
    heldOut.push(...scored);
    const before = baseline.filter((row) => row.sample === sample);
    console.log(`fold ${sample}: chose ${label(points[best]!)} (tune MRR ${bestKey[0]!.toFixed(3)})`);
    console.log(`  held out, before ${fmt(aggregateLocomo(before.map((r) => r.score)))}`);
    console.log(`  held out, after  ${fmt(aggregateLocomo(scored.map((r) => r.score)))}`);
  }
  const report = (name: string, rows: Row[]) => console.log(`${name.padEnd(28)} ${fmt(aggregateLocomo(rows.map((r) => r.score)))}`);
  report('all held out, before', baseline);
  report('all held out, after', heldOut);
  for (const category of [1, 2, 3, 4]) {
    report(
      `  ${CATEGORY_NAMES[category]}, before`,
      baseline.filter((row) => row.category === category),
    );
    report(
      `  ${CATEGORY_NAMES[category]}, after`,
      heldOut.filter((row) => row.category === category),
    );
  }
}

/** The harness's ranking (the service's turn weights, with LOCOMO_TURN_WEIGHTS applied) of every question. */
const rankOfflineRows = (
  corpus: OfflineCorpus,
  questions: LocomoConversation['questions'],
  vectorOf: (text: string) => Float32Array,
): Row[] =>
  questions.map((question) => {
    const ranked = rankOffline(corpus, 'current', question.question, vectorOf, question.sampleId, 10);
    const texts = ranked.map((chunkId) => corpus.turns.get(chunkId)!.text);
    return { sample: question.sampleId, category: question.category, score: scoreLocomo(texts, question.evidence) };
  });

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dumpAt = args.indexOf('--dump');
  const dumpFile = dumpAt >= 0 ? args[dumpAt + 1] : undefined;
  const config = loadConfig();
  const embedder = await loadEmbedder({ modelId: config.EMBEDDING_MODEL, modelsDir: config.MODELS_DIR, allowRemoteModels: false });
  const conversations = loadLocomo();
  const questions = conversations.flatMap((conversation) => conversation.questions);
  const passages = await cachedVectors(
    embedder,
    'passage',
    conversations.flatMap((c) => c.sessions.flatMap((s) => s.turns.map((t) => t.content))),
  );
  const corpus = buildCorpus(conversations, passages, embedder.dimensions);
  if (process.env.LOCOMO_GRAPH) {
    // The graph signal, as the service ranks it: each conversation's graph built by the service's
    // structuring code, each question's keys as the service takes them.
    const started = performance.now();
    const extractor = createLocalExtractor();
    const options = { extractor, embedder, similarityThreshold: config.ENTITY_SIMILARITY_THRESHOLD, lexicon: config.FACT_LEXICON };
    const partitions = new Map<string, GraphPartition>();
    for (const conversation of conversations) partitions.set(conversation.sampleId, await conversationGraph(conversation, options));
    const keysOf = new Map<string, string[]>();
    for (const question of questions) keysOf.set(question.question, await graphKeys(extractor, question.question));
    corpus.graph = { partitions, keysOf };
    process.stderr.write(`  graphs built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  const queries = await cachedVectors(
    embedder,
    'query',
    questions.flatMap((q) => [q.question, searchedText(corpus, q.question, q.sampleId)]),
  );

  if (process.env.LOCOMO_GRID) {
    leaveOneConversationOut(
      corpus,
      questions,
      (text) => queries.get(text)!,
      JSON.parse(process.env.LOCOMO_GRID) as Record<string, number[]>,
    );
    return;
  }
  if (process.env.LOCOMO_TRACE) {
    // Debugging aid: each question's top 40 candidates, fused score and score after the turn rules.
    const traced = questions.map((question) => {
      let row: unknown;
      rankOffline(
        corpus,
        'current',
        question.question,
        (text) => queries.get(text)!,
        question.sampleId,
        10,
        HARNESS_TURN_WEIGHTS,
        HARNESS_FUSION_WEIGHTS,
        {},
        (t) => {
          const fusedScore = new Map(t.fused.map((entry) => [entry.chunkId, entry.score]));
          row = {
            question: question.question,
            searched: searchedText(corpus, question.question, question.sampleId),
            category: question.category,
            evidence: question.evidence,
            answerKind: t.answerKind,
            fused: Object.fromEntries(fusedScore),
            top: t.reranked.slice(0, 40).map((entry) => ({
              id: entry.chunkId,
              score: entry.score,
              fused: fusedScore.get(entry.chunkId),
              ...entry.breakdown,
              asks: corpus.facts.isQuestion([question.sampleId], entry.chunkId),
              answers: corpus.facts.answersOf([question.sampleId], entry.chunkId),
            })),
          };
        },
      );
      return row;
    });
    writeFileSync(process.env.LOCOMO_TRACE, JSON.stringify(traced));
    return;
  }
  const variants = (process.env.LOCOMO_VARIANTS ?? 'vector,lexical,before,current').split(',');
  const results = new Map<string, { sample: string; category: number; score: LocomoScore; top: string[] }[]>();
  for (const variant of variants) {
    const rows = [];
    for (const question of questions) {
      const deep = /^(\w+)@(\d+)$/.exec(variant);
      const ranked = rankOffline(
        corpus,
        deep ? deep[1]! : variant,
        question.question,
        (text) => queries.get(text)!,
        question.sampleId,
        deep ? Number(deep[2]) : 10,
      );
      const texts = ranked.map((chunkId) => corpus.turns.get(chunkId)!.text);
      rows.push({ sample: question.sampleId, category: question.category, score: scoreLocomo(texts, question.evidence), top: ranked });
    }
    results.set(variant, rows);
  }
  for (const [variant, rows] of results) {
    const tune = rows.filter((row) => TUNE_SAMPLES.has(row.sample));
    const check = rows.filter((row) => !TUNE_SAMPLES.has(row.sample));
    console.log(`${variant.padEnd(12)} all   ${fmt(aggregateLocomo(rows.map((r) => r.score)))}`);
    console.log(`${''.padEnd(12)} tune  ${fmt(aggregateLocomo(tune.map((r) => r.score)))}`);
    console.log(`${''.padEnd(12)} check ${fmt(aggregateLocomo(check.map((r) => r.score)))}`);
    if (process.env.LOCOMO_BY_CONVERSATION) {
      for (const sample of [...new Set(rows.map((row) => row.sample))]) {
        const subset = rows.filter((row) => row.sample === sample);
        console.log(`${''.padEnd(12)} ${sample.padEnd(5)} ${fmt(aggregateLocomo(subset.map((r) => r.score)))}`);
      }
    }
    if (process.env.LOCOMO_BY_CATEGORY) {
      for (const category of [1, 2, 3, 4]) {
        const subset = rows.filter((row) => row.category === category);
        console.log(
          `${''.padEnd(12)} ${CATEGORY_NAMES[category]!.padEnd(5).slice(0, 5)} ${fmt(aggregateLocomo(subset.map((r) => r.score)))}`,
        );
      }
    }
  }
  if (dumpFile) {
    writeFileSync(
      dumpFile,
      JSON.stringify(
        questions.map((question, index) => ({
          ...question,
          results: Object.fromEntries(
            [...results].map(([variant, rows]) => [variant, { score: rows[index]!.score, top: rows[index]!.top }]),
          ),
        })),
      ),
    );
  }
}

await main();
