/**
 * `BENCH_ONLY=extraction`: the structure extractor (extractors/structure/) on two labelled sets,
 * scored by bench/extraction/score.ts: the development set (bench/extraction/dev-set.ts, prefix
 * `extraction_`) and the check set written later and not tuned on (bench/extraction/check-set.ts,
 * prefix `extraction_check_`). Entity precision, recall, F1 and category accuracy, triple
 * precision, recall and F1, overall and per kind of text; and the extractor's CPU time per KB of
 * text. In process; no stack. BENCH_EXTRACTION_ERRORS=1 lists each sentence's misses and extras.
 */
import { extractChunkStructure } from '../../extractors/structure/local-extractor.js';
import { normalizeEntityName } from '../../extractors/structure/normalize.js';
import type { ChunkStructure } from '../../extractors/structure/types.js';
import { info, metric } from '../stats.js';
import { EXTRACTION_CHECK_SET } from './check-set.js';
import { EXTRACTION_DEV_SET } from './dev-set.js';
import { countSentence, scoreExtraction, type ExtractionCounts, type LabelledSentence } from './score.js';

/**
 * The CPU figure: the fastest of CPU_ROUNDS rounds of CPU_PASSES passes over both sets, after one
 * warm-up pass (the tagger's lexicon loads lazily). The fastest round, because on a shared machine
 * other jobs only ever add to a round's CPU time (cache and core contention).
 */
const CPU_ROUNDS = 7;
const CPU_PASSES = 2;

const optionsOf = (sentence: LabelledSentence) => (sentence.speaker ? { speaker: sentence.speaker } : {});

function scoreSet(label: string, prefix: string, set: readonly LabelledSentence[], listErrors: boolean): void {
  const counted: { kind: string; counts: ExtractionCounts }[] = [];
  for (const sentence of set) {
    const extracted = extractChunkStructure(sentence.text, optionsOf(sentence));
    counted.push({ kind: sentence.kind, counts: countSentence(sentence, extracted) });
    if (listErrors) printErrors(label, sentence, extracted);
  }
  const kinds = [...new Set(counted.map((entry) => entry.kind))];
  for (const [scope, subset] of [
    ['', counted] as const,
    ...kinds.map((kind) => [`_${kind}`, counted.filter((e) => e.kind === kind)] as const),
  ]) {
    const scores = scoreExtraction(subset.map((entry) => entry.counts));
    const name = `${prefix}${scope}`;
    metric(`${name}_entity_precision`, scores.entityPrecision, 'ratio');
    metric(`${name}_entity_recall`, scores.entityRecall, 'ratio');
    metric(`${name}_entity_f1`, scores.entityF1, 'ratio');
    metric(`${name}_category_accuracy`, scores.categoryAccuracy, 'ratio');
    metric(`${name}_triple_precision`, scores.triplePrecision, 'ratio');
    metric(`${name}_triple_recall`, scores.tripleRecall, 'ratio');
    metric(`${name}_triple_f1`, scores.tripleF1, 'ratio');
    info(
      `   ${label} ${(scope.slice(1) || 'all').padEnd(8)} ${subset.length} sentences, ${scores.goldEntities} entities, ${scores.goldTriples} triples: ` +
        `entity P ${scores.entityPrecision.toFixed(3)} R ${scores.entityRecall.toFixed(3)} F1 ${scores.entityF1.toFixed(3)} ` +
        `category ${scores.categoryAccuracy.toFixed(3)}; triple P ${scores.triplePrecision.toFixed(3)} R ${scores.tripleRecall.toFixed(3)} F1 ${scores.tripleF1.toFixed(3)}`,
    );
  }
}

/** One sentence's differences from its labels, for reading the error classes (not a metric). */
function printErrors(label: string, sentence: LabelledSentence, extracted: ChunkStructure): void {
  const named = extracted.entities.filter((entity) => entity.category !== 'concept');
  const keysOf = (entity: ChunkStructure['entities'][number]) => new Set([entity.key, ...entity.aliases.map(normalizeEntityName)]);
  const gold = new Map(sentence.entities.map(([name, category]) => [normalizeEntityName(name), category]));
  const lines: string[] = [];
  for (const [key, category] of gold) {
    const match = named.find((entity) => keysOf(entity).has(key));
    if (match === undefined) lines.push(`missed ${category} "${key}"`);
    else if (match.category !== category) lines.push(`category "${key}" ${match.category}, labelled ${category}`);
  }
  for (const entity of named) {
    if (![...keysOf(entity)].some((key) => gold.has(key))) lines.push(`extra ${entity.category} "${entity.key}"`);
  }
  const answersTo = (entityKey: string, name: string): boolean => {
    const entity = extracted.entities.find((candidate) => candidate.key === entityKey);
    return entity === undefined ? entityKey === normalizeEntityName(name) : keysOf(entity).has(normalizeEntityName(name));
  };
  const verb = (predicate: string): string => predicate.split(' ')[0] ?? '';
  const matches = ([subject, predicate, object]: LabelledSentence['triples'][number], fact: ChunkStructure['facts'][number]): boolean =>
    answersTo(fact.subjectKey, subject) && answersTo(fact.objectKey, object) && verb(fact.predicate) === verb(predicate);
  const missed = sentence.triples.filter((triple) => !extracted.facts.some((fact) => matches(triple, fact)));
  const extra = extracted.facts.filter((fact) => !sentence.triples.some((triple) => matches(triple, fact)));
  if (lines.length === 0 && missed.length === 0 && extra.length === 0) return;
  info(`[${label}] ${sentence.text}`);
  for (const line of lines) info(`     ${line}`);
  for (const [s, p, o] of missed) info(`     missed triple ${normalizeEntityName(s)} | ${p} | ${normalizeEntityName(o)}`);
  for (const fact of extra) info(`     extra triple ${fact.subjectKey} | ${fact.predicate} | ${fact.objectKey}`);
}

/** CPU (user + system) milliseconds per KB of UTF-8 text, over both sets, one text per sentence as ingestion gives one chunk. */
function cpuPerKilobyte(): number {
  const sentences = [...EXTRACTION_DEV_SET, ...EXTRACTION_CHECK_SET];
  const bytes = sentences.reduce((sum, sentence) => sum + Buffer.byteLength(sentence.text, 'utf8'), 0);
  for (const sentence of sentences) extractChunkStructure(sentence.text, optionsOf(sentence));
  let fastest = Number.POSITIVE_INFINITY;
  for (let round = 0; round < CPU_ROUNDS; round += 1) {
    const start = process.cpuUsage();
    for (let pass = 0; pass < CPU_PASSES; pass += 1) {
      for (const sentence of sentences) extractChunkStructure(sentence.text, optionsOf(sentence));
    }
    const used = process.cpuUsage(start);
    fastest = Math.min(fastest, used.user + used.system);
  }
  return fastest / 1000 / ((bytes * CPU_PASSES) / 1024);
}

export function extractionScenario(): void {
  const listErrors = process.env.BENCH_EXTRACTION_ERRORS === '1';
  scoreSet('dev  ', 'extraction', EXTRACTION_DEV_SET, listErrors);
  scoreSet('check', 'extraction_check', EXTRACTION_CHECK_SET, listErrors);
  const cpu = cpuPerKilobyte();
  metric('extraction_cpu_per_kb', cpu, 'ms');
  info(
    `   extraction CPU ${cpu.toFixed(2)} ms per KB of text (user + system, fastest of ${CPU_ROUNDS} rounds of ${CPU_PASSES} passes over both sets)`,
  );
}
