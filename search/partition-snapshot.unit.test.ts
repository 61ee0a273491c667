import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LexicalIndex, LexicalPartition } from './lexical-index.js';
import { decodePartitionSnapshot, encodePartitionSnapshot, SNAPSHOT_FORMAT, turnColumns, turnFactsOf } from './partition-snapshot.js';
import { TurnFacts } from './turn-facts.js';
import { seededRandom } from '../bench/texts.js';

const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon'.split(' ');
const EXTRA = ["Alice's", 'camelCaseWord', 'HTTP-2', 'naïve', 'café', 'x86_64', 'yesterday', 'O’Brien', 'U.S.A.', 'running'];

/** Deterministic texts with repeated words (term frequencies above 1), unicode and compound pieces. */
function texts(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const words = Array.from({ length: 5 + Math.floor(random() * 30) }, () => {
      const pool = random() < 0.15 ? EXTRA : WORDS;
      return pool[Math.floor(random() * pool.length)]!;
    });
    return `${words.join(' ')}${i % 7 === 0 ? '?' : '.'}`;
  });
}

const QUERIES = ['alpha beta', 'gamma', 'camel case word', 'naive cafe', 'http 2', 'rho sigma tau upsilon', 'obrien', 'nothing-matches'];

/** A partition with live chunks, replaced chunks and removed memories (dead slots and postings). */
function churned(): { index: LexicalIndex; partition: LexicalPartition; turns: TurnFacts } {
  const index = new LexicalIndex();
  const partition = index.createPartition('c');
  const turns = new TurnFacts();
  turns.createPartition('c');
  const time = new Date(Date.UTC(2024, 4, 10));
  for (const [i, text] of texts(400, 11).entries()) {
    const memoryId = `m${Math.floor(i / 4)}`;
    // Two speakers and turns without one.
    const turn = i % 3 === 2 ? text : `${['Caroline', 'Dr. Ann Lee'][i % 3]!}: ${text}`;
    partition.upsert(`${memoryId}:${i % 4}`, memoryId, turn);
    turns.upsert('c', `${memoryId}:${i % 4}`, memoryId, turn, time);
  }
  for (let m = 0; m < 100; m += 3) {
    partition.removeMemory(`m${m}`);
    turns.removeMemory(`m${m}`);
  }
  for (const [i, text] of texts(20, 12).entries()) partition.upsert(`m1:${i % 4}`, 'm1', text);
  return { index, partition, turns };
}

describe('partition snapshot', () => {
  it('rebuilds a lexical partition that scores every query exactly as the original', () => {
    const { index, partition } = churned();
    const bytes = encodePartitionSnapshot({
      lexical: partition.exportState(),
      turns: turnColumns(partition.exportState().chunkIds, () => undefined),
    });
    const decoded = decodePartitionSnapshot(bytes);
    const rebuilt = new LexicalIndex();
    rebuilt.setPartition('c', LexicalPartition.fromState(decoded.lexical));
    for (const query of QUERIES) {
      assert.deepEqual(rebuilt.search(query, ['c'], 50), index.search(query, ['c'], 50), query);
    }
    const before = partition.storageStats();
    const after = rebuilt.partition('c')!.storageStats();
    assert.equal(after.documents, before.documents);
    assert.equal(after.terms, before.terms);
    assert.equal(after.postings, before.postings);
    assert.equal(after.deadSlots, 0);
  });

  it('keeps scoring identically through upserts and removals after the rebuild', () => {
    const { index, partition } = churned();
    const rebuilt = new LexicalIndex();
    const state = partition.exportState();
    const bytes = encodePartitionSnapshot({ lexical: state, turns: turnColumns(state.chunkIds, () => undefined) });
    rebuilt.setPartition('c', LexicalPartition.fromState(decodePartitionSnapshot(bytes).lexical));
    const more = texts(120, 13);
    for (const target of [index, rebuilt]) {
      for (const [i, text] of more.entries()) target.partition('c')!.upsert(`n${i}:0`, `n${i}`, text);
      for (let m = 1; m < 100; m += 5) target.removeMemory(`m${m}`);
      target.partition('c')!.upsert('m2:0', 'm2', 'omicron omicron pi brand new words');
    }
    for (const query of [...QUERIES, 'brand new']) {
      assert.deepEqual(rebuilt.search(query, ['c'], 50), index.search(query, ['c'], 50), query);
    }
  });

  it('round-trips the turn facts in slot order', () => {
    const { partition, turns } = churned();
    const state = partition.exportState();
    const columns = turnColumns(state.chunkIds, (chunkId) => turns.factOf('c', chunkId));
    const decoded = decodePartitionSnapshot(encodePartitionSnapshot({ lexical: state, turns: columns }));
    const restored = new TurnFacts();
    restored.createPartition('c');
    for (const { chunkId, memoryId, fact } of turnFactsOf(decoded)) restored.put('c', chunkId, memoryId, fact);
    let questions = 0;
    let spoken = 0;
    let answering = 0;
    for (const chunkId of state.chunkIds) {
      assert.equal(restored.isQuestion(['c'], chunkId), turns.isQuestion(['c'], chunkId), chunkId);
      assert.deepEqual(restored.datesOf(['c'], chunkId), turns.datesOf(['c'], chunkId), chunkId);
      assert.equal(restored.speakerOf(['c'], chunkId), turns.speakerOf(['c'], chunkId), chunkId);
      assert.equal(restored.answersOf(['c'], chunkId), turns.answersOf(['c'], chunkId), chunkId);
      if (turns.isQuestion(['c'], chunkId)) questions++;
      if (turns.answersOf(['c'], chunkId) !== 0) answering++;
      if (turns.speakerOf(['c'], chunkId) !== undefined) spoken++;
    }
    assert.ok(questions > 0, 'the corpus has questions');
    assert.ok(answering > 0, 'the corpus has turns that mention a time or a quantity');
    assert.ok(spoken > 0 && spoken < state.chunkIds.length, 'the corpus has turns with and without a speaker');
    assert.deepEqual([...restored.speakers(['c'])].sort(), ['caroline', 'dr. ann lee']);
    assert.deepEqual(restored.bytes('c'), turns.bytes('c'));
  });

  it('refuses truncated or foreign bytes instead of building a wrong partition', () => {
    const { partition } = churned();
    const state = partition.exportState();
    const bytes = encodePartitionSnapshot({ lexical: state, turns: turnColumns(state.chunkIds, () => undefined) });
    assert.throws(() => decodePartitionSnapshot(bytes.subarray(0, bytes.length - 64)));
    assert.throws(() => encodePartitionSnapshot({ lexical: state, turns: turnColumns([], () => undefined) }), /turn facts/);
    const foreign = Buffer.from(bytes);
    foreign.writeUInt32LE(99, 0);
    assert.throws(() => decodePartitionSnapshot(foreign), /layout 99/);
    assert.throws(() => LexicalPartition.fromState({ ...state, docLength: state.docLength.subarray(1) }), /inconsistent/);
  });

  it('names the tokenizer it was written with', () => {
    assert.match(SNAPSHOT_FORMAT, /^lexical-3-[0-9a-f]{16}$/);
  });
});
