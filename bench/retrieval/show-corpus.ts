/**
 * Prints the retrieval corpus: `node dist/bench/retrieval/show-corpus.js [samples] [--json]`.
 * Counts and a few questions with their evidence turns by default; `--json` dumps everything
 * (conversations and questions) for reading or for tuning offline. Seed: BENCH_RETRIEVAL_SEED.
 */
import { corpusStats, DEFAULT_SEED, generateCorpus } from './corpus.js';
import { benchNumber } from '../env.js';

const args = process.argv.slice(2);
const corpus = generateCorpus({ seed: benchNumber('BENCH_RETRIEVAL_SEED', DEFAULT_SEED) });
if (args.includes('--json')) {
  process.stdout.write(`${JSON.stringify(corpus, null, 2)}\n`);
} else {
  const samples = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 3);
  const stats = corpusStats(corpus);
  const lines = [
    `seed ${corpus.seed}: ${stats.conversations} conversations, ${stats.messages} messages (${(stats.messages / stats.conversations).toFixed(1)} per conversation)`,
    `${stats.questions} questions (${stats.multiEvidence} with two or more evidence turns, ${stats.namingUser} with the user's name in an evidence turn)`,
    `  by kind:  ${Object.entries(stats.byKind)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ')}`,
    `  by split: ${Object.entries(stats.bySplit)
      .map(([split, n]) => `${split} ${n}`)
      .join(', ')}`,
  ];
  const facts = new Map<string, number>();
  for (const c of corpus.conversations) for (const fact of c.facts) facts.set(fact, (facts.get(fact) ?? 0) + 1);
  lines.push(
    `  facts:    ${[...facts.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([fact, n]) => `${fact} ${n}`)
      .join(', ')}`,
  );
  // Spread the samples over the question list (different kinds and conversations).
  const step = Math.max(1, Math.floor(corpus.questions.length / samples));
  for (let i = 0; i < samples && i * step < corpus.questions.length; i++) {
    const q = corpus.questions[i * step]!;
    lines.push('', `[${q.id}] ${q.kind}, ${q.split}: ${q.text}   (answer: ${q.answer})`);
    const user = corpus.conversations[q.conversation]!;
    lines.push(`   conversation ${q.conversation} (${user.user}), message 0: ${user.messages[0]!.content}`);
    for (const e of q.evidence) lines.push(`   evidence message ${e.message}: ${user.messages[e.message]!.content}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
