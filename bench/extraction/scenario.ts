/**
 * `BENCH_ONLY=extraction`: the structure extractor (extractors/structure/) on the labelled
 * development set (bench/extraction/dev-set.ts), scored by bench/extraction/score.ts: entity
 * precision, recall, F1 and category accuracy, triple precision, recall and F1, overall and per
 * kind of text. In process; no stack.
 */
import { createLocalExtractor } from '../../extractors/structure/local-extractor.js';
import { info, metric } from '../stats.js';
import { EXTRACTION_DEV_SET } from './dev-set.js';
import { countSentence, scoreExtraction, type ExtractionCounts } from './score.js';

export async function extractionScenario(): Promise<void> {
  const extractor = createLocalExtractor();
  const counted: { kind: string; counts: ExtractionCounts }[] = [];
  for (const sentence of EXTRACTION_DEV_SET) {
    const extracted = await extractor.extract(sentence.text, sentence.speaker ? { speaker: sentence.speaker } : {});
    counted.push({ kind: sentence.kind, counts: countSentence(sentence, extracted) });
  }
  const kinds = [...new Set(counted.map((entry) => entry.kind))];
  for (const [scope, subset] of [
    ['', counted] as const,
    ...kinds.map((kind) => [`_${kind}`, counted.filter((e) => e.kind === kind)] as const),
  ]) {
    const scores = scoreExtraction(subset.map((entry) => entry.counts));
    const prefix = `extraction${scope}`;
    metric(`${prefix}_entity_precision`, scores.entityPrecision, 'ratio');
    metric(`${prefix}_entity_recall`, scores.entityRecall, 'ratio');
    metric(`${prefix}_entity_f1`, scores.entityF1, 'ratio');
    metric(`${prefix}_category_accuracy`, scores.categoryAccuracy, 'ratio');
    metric(`${prefix}_triple_precision`, scores.triplePrecision, 'ratio');
    metric(`${prefix}_triple_recall`, scores.tripleRecall, 'ratio');
    metric(`${prefix}_triple_f1`, scores.tripleF1, 'ratio');
    info(
      `   ${(scope.slice(1) || 'all').padEnd(8)} ${subset.length} sentences, ${scores.goldEntities} entities, ${scores.goldTriples} triples: ` +
        `entity P ${scores.entityPrecision.toFixed(3)} R ${scores.entityRecall.toFixed(3)} F1 ${scores.entityF1.toFixed(3)} ` +
        `category ${scores.categoryAccuracy.toFixed(3)}; triple P ${scores.triplePrecision.toFixed(3)} R ${scores.tripleRecall.toFixed(3)} F1 ${scores.tripleF1.toFixed(3)}`,
    );
  }
}
