/**
 * Offline harness for iterating on the ranking: the LoCoMo development half in this process's own
 * search indexes (the service's VectorIndex and LexicalIndex, the embedder it loads), ranked by
 * the same code the search service calls (search/turn-ranking.ts), without the stack. No graph
 * signal (that needs the structuring stage): the figures the project reports come from
 * `BENCH_ONLY=locomo`, through the API. Passage and query vectors are cached under
 * data/locomo-cache/ (outside the repository, like the data).
 *
 *   scripts/node dist/bench/locomo/offline.js [--dump file]   (LOCOMO_VARIANTS, LOCOMO_BY_CATEGORY=1)
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, projectRoot } from '../../config/index.js';
import { loadEmbedder, type Embedder } from '../../models/embedder.js';
import { LexicalIndex } from '../../search/lexical-index.js';
import { VectorIndex } from '../../search/vector-index.js';
import { TurnFacts } from '../../search/turn-facts.js';
import { CATEGORY_NAMES, loadLocomo, type LocomoConversation } from './dataset.js';
import { aggregateLocomo, scoreLocomo, type LocomoAggregate, type LocomoScore } from './metrics.js';
import { rankOffline, searchedText, type OfflineCorpus } from './offline-ranking.js';

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
  const queries = await cachedVectors(
    embedder,
    'query',
    questions.flatMap((q) => [q.question, searchedText(corpus, q.question, q.sampleId)]),
  );

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
