/**
 * CPU of each step of a cold load from a snapshot, in one process, on bytes read once (issue 25):
 *   scripts/node dist/bench/cold-load-phases.js <dataDir> [rounds=3]
 * with COLD_LOAD_MONGO_URI naming a stand-in that serves the data dir of bench/cold-load.ts.
 * Each round decodes the same parts and builds the partitions again, timing each step's CPU.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/index.js';
import { openStore } from '../store/index.js';
import { GraphPartition } from '../search/graph-index.js';
import { LexicalPartition } from '../search/lexical-partition.js';
import { decodePartitionSnapshot, turnFactsOf, vectorIdsOf } from '../search/partition-snapshot.js';
import { TurnFacts } from '../search/turn-facts.js';
import { VectorIndex } from '../search/vector-index.js';
import { metric } from './stats.js';

const [dataDir, roundsText] = process.argv.slice(2);
const corpus = JSON.parse(readFileSync(path.join(path.resolve(dataDir!), 'cold-load.json'), 'utf8')) as { collectionId: string };
const config = loadConfig({ ...process.env, MONGODB_URI: 'mongodb://unused' });
const store = await openStore({ ...config, MONGODB_DB: 'coldload' }, process.env.COLD_LOAD_MONGO_URI!);
const timed = <T>(name: string, run: () => T): T => {
  const cpu = process.cpuUsage();
  const result = run();
  const used = process.cpuUsage(cpu);
  metric(`phase_${name}_cpu`, (used.user + used.system) / 1000, 'ms');
  return result;
};
try {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const stored = await store.indexSnapshots.read(corpus.collectionId, 'bench-synthetic');
  if (!stored) throw new Error('no snapshot');
  // Every part held, so that each round decodes the same bytes.
  const parts: Uint8Array[] = [];
  for await (const part of stored.parts) parts.push(part);
  const used = process.cpuUsage(cpu);
  metric('phase_read_ms', performance.now() - started, 'ms');
  metric('phase_read_cpu', (used.user + used.system) / 1000, 'ms');
  for (let round = 0; round < Number(roundsText ?? 3); round++) {
    const snapshot = timed('decode', () => decodePartitionSnapshot(parts));
    const vectors = new VectorIndex(snapshot.vectors.dimensions);
    timed('vector', () => {
      const { chunkIds, memoryIds } = vectorIdsOf(snapshot);
      vectors.setPartition('c', vectors.partitionOfRows(chunkIds, memoryIds, snapshot.vectors.rowBytes));
    });
    timed('lexical', () => LexicalPartition.fromState(snapshot.lexical));
    timed('graph', () => GraphPartition.fromState(snapshot.graph, snapshot.lexical));
    timed('turns', () => {
      const turns = new TurnFacts();
      turns.createPartition('c');
      for (const { chunkId, memoryId, fact } of turnFactsOf(snapshot)) turns.put('c', chunkId, memoryId, fact);
    });
  }
} finally {
  await store.close();
}
