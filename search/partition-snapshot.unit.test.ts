import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GraphPartition, type GraphState, type ProvenanceRow } from './graph-index.js';
import { hitGraph, matchGraph } from './graph-match.js';
import { LexicalIndex } from './lexical-index.js';
import { LexicalPartition, type LexicalState, type LexicalStateBytes } from './lexical-partition.js';
import {
  decodePartitionSnapshot,
  encodePartitionSnapshot,
  SNAPSHOT_FORMAT,
  streamPartitionSnapshot,
  turnColumns,
  turnFactsOf,
  vectorColumns,
  vectorIdsOf,
  type PartitionSnapshot,
} from './partition-snapshot.js';
import { TurnFacts } from './turn-facts.js';
import { VectorIndex } from './vector-index.js';
import { seededRandom } from '../bench/texts.js';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../core/fact-lexicon.js';

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

const NO_GRAPH: GraphState = { entities: [], facts: [], memories: [] };

/** A snapshot of a lexical state alone: no turn facts, vectors of 0 dimensions, no graph. */
const lexicalOnly = (lexical: LexicalState): PartitionSnapshot => ({
  lexical,
  turns: turnColumns(lexical.chunkIds, () => undefined),
  vectors: vectorColumns(0, lexical.chunkIds, { chunkIds: lexical.chunkIds, rows: new Float32Array(0) }),
  graph: NO_GRAPH,
});

/**
 * The bytes split as the store may hand them over: pieces of `size` bytes (the last shorter), each
 * at an odd offset of its own buffer, so no section is aligned for its typed array.
 */
/** A decoded lexical state with its postings joined into arrays, to compare whatever pieces they came in. */
function joinedPostings(state: LexicalStateBytes): LexicalState {
  const joined = (pieces: readonly Uint8Array[]): ArrayBuffer => Uint8Array.from(Buffer.concat(pieces)).buffer;
  return {
    ...state,
    postingSlots: new Int32Array(joined(state.postingSlots)),
    postingFrequencies: new Uint16Array(joined(state.postingFrequencies)),
  };
}

/** Pieces as a store's reads give them, one at a time. */
async function* streamOf(pieces: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) yield await Promise.resolve(piece);
}

function inPieces(bytes: Uint8Array, size: number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.byteLength; at += size) {
    const piece = bytes.subarray(at, Math.min(bytes.byteLength, at + size));
    const buffer = new Uint8Array(piece.byteLength + 3);
    buffer.set(piece, 3);
    pieces.push(buffer.subarray(3));
  }
  return pieces;
}

describe('partition snapshot', () => {
  it('rebuilds a lexical partition that scores every query exactly as the original', () => {
    const { index, partition } = churned();
    const bytes = encodePartitionSnapshot(lexicalOnly(partition.exportState()));
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
    const bytes = encodePartitionSnapshot(lexicalOnly(state));
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
    const decoded = decodePartitionSnapshot(encodePartitionSnapshot({ ...lexicalOnly(state), turns: columns }));
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

  /** A churned partition's whole snapshot: turn facts, `dimensions`-float rows of `value`, and a graph of one place. */
  const fullSnapshot = (dimensions: number, value: (i: number) => number, place: string, memoryId: string) => {
    const { partition, turns } = churned();
    const state = partition.exportState();
    const rows = Float32Array.from({ length: state.chunkIds.length * dimensions }, (_, i) => value(i));
    const bytes = encodePartitionSnapshot({
      ...lexicalOnly(state),
      turns: turnColumns(state.chunkIds, (chunkId) => turns.factOf('c', chunkId)),
      vectors: vectorColumns(dimensions, state.chunkIds, { chunkIds: state.chunkIds, rows }),
      graph: {
        entities: [{ id: 'e1', name: place, category: 'place', description: `naïve café in ${place}`, aliasKeys: [place.toLowerCase()] }],
        facts: [],
        memories: [{ memoryId, rows: [{ targetId: 'e1', chunkIndex: 0, count: 2, description: `it says ${place}` }] }],
      },
    });
    return { state, rows, bytes };
  };

  it('decodes the same from misaligned pieces of any size as from one buffer', () => {
    const { state, rows, bytes } = fullSnapshot(8, Math.sin, 'Lisbon', 'm1');
    const whole = decodePartitionSnapshot(bytes);
    const rowBytesOf = (pieces: readonly Uint8Array[]): Buffer => Buffer.concat(pieces);
    for (const size of [1, 3, 7, 64, 1000, bytes.byteLength]) {
      const decoded = decodePartitionSnapshot(inPieces(bytes, size));
      assert.deepEqual(joinedPostings(decoded.lexical), state, `lexical, pieces of ${size}`);
      assert.deepEqual(LexicalPartition.fromState(decoded.lexical).exportState(), state, `postings copied from pieces of ${size}`);
      assert.deepEqual(decoded.turns, whole.turns, `turns, pieces of ${size}`);
      assert.deepEqual(decoded.graph, whole.graph, `graph, pieces of ${size}`);
      assert.deepEqual(decoded.vectors.lexicalSlot, whole.vectors.lexicalSlot);
      assert.deepEqual(rowBytesOf(decoded.vectors.rowBytes), Buffer.from(rows.buffer), `vector rows, pieces of ${size}`);
    }
    assert.throws(() => decodePartitionSnapshot(inPieces(bytes.subarray(0, bytes.byteLength - 8), 1000)), /truncated/);
  });

  it('decodes the same streamed, a piece at a time, with the vector rows handed over as they arrive', async () => {
    const dimensions = 6;
    const { state, rows, bytes } = fullSnapshot(dimensions, Math.cos, 'Porto', 'm2');
    const whole = decodePartitionSnapshot(bytes);
    for (const size of [1, 5, 8, 999, bytes.byteLength]) {
      const received: Uint8Array[] = [];
      let finished = false;
      const streamed = await streamPartitionSnapshot(streamOf(inPieces(bytes, size)), bytes.byteLength, (lead) => {
        assert.deepEqual(joinedPostings(lead.lexical), state, 'the sections before the rows come first');
        return { receive: (piece) => received.push(Buffer.from(piece)), finish: () => (finished = true) };
      });
      assert.deepEqual(joinedPostings(streamed.lexical), state, `lexical, pieces of ${size}`);
      assert.deepEqual(streamed.turns, whole.turns, `turns, pieces of ${size}`);
      assert.deepEqual(streamed.graph, whole.graph, `graph, pieces of ${size}`);
      assert.deepEqual(streamed.vectors, { dimensions, lexicalSlot: whole.vectors.lexicalSlot });
      assert.deepEqual(Buffer.concat(received), Buffer.from(rows.buffer), `vector rows, pieces of ${size}`);
      assert.ok(finished, 'the sink is told the rows are complete');
    }
    const stream = (pieces: Uint8Array[], byteLength = bytes.byteLength) =>
      streamPartitionSnapshot(streamOf(pieces), byteLength, () => ({ receive: () => undefined, finish: () => undefined }));
    await assert.rejects(stream(inPieces(bytes.subarray(0, bytes.byteLength - 8), 1000)), /truncated/);
    await assert.rejects(stream(inPieces(Buffer.concat([bytes, Buffer.alloc(8)]), 1000)), /trailing/);
    await assert.rejects(stream(inPieces(bytes, 1000), bytes.byteLength + 8), /do not add up/);
    const foreign = Buffer.from(bytes);
    foreign.writeUInt32LE(99, 0);
    await assert.rejects(stream(inPieces(foreign, 1000)), /layout 99/);
  });

  it('stops reading the parts when the rows cannot be taken', async () => {
    const { partition } = churned();
    const state = partition.exportState();
    const bytes = encodePartitionSnapshot({
      ...lexicalOnly(state),
      vectors: vectorColumns(4, state.chunkIds, { chunkIds: state.chunkIds, rows: new Float32Array(state.chunkIds.length * 4) }),
    });
    const pieces = inPieces(bytes, 256);
    let read = 0;
    let closed = false;
    async function* parts(): AsyncGenerator<Uint8Array> {
      try {
        for (const piece of pieces) {
          read++;
          yield piece;
        }
      } finally {
        closed = true;
      }
    }
    await assert.rejects(
      streamPartitionSnapshot(parts(), bytes.byteLength, () => {
        throw new Error('index snapshot: 4 dimensions, index has 384');
      }),
      /4 dimensions/,
    );
    assert.ok(closed, 'the parts are closed (a store cursor is let go)');
    assert.ok(read < pieces.length, `${read} of ${pieces.length} parts read`);
  });

  it('refuses truncated or foreign bytes instead of building a wrong partition', () => {
    const { partition } = churned();
    const state = partition.exportState();
    const bytes = encodePartitionSnapshot(lexicalOnly(state));
    assert.throws(() => decodePartitionSnapshot(bytes.subarray(0, bytes.length - 64)));
    assert.throws(() => decodePartitionSnapshot(Buffer.concat([bytes, Buffer.alloc(8)])), /trailing/);
    assert.throws(() => encodePartitionSnapshot({ ...lexicalOnly(state), turns: turnColumns([], () => undefined) }), /turn facts/);
    const foreign = Buffer.from(bytes);
    foreign.writeUInt32LE(99, 0);
    assert.throws(() => decodePartitionSnapshot(foreign), /layout 99/);
    assert.throws(() => LexicalPartition.fromState({ ...state, docLength: state.docLength.subarray(1) }), /inconsistent/);
  });

  it('names the tokenizer it was written with', () => {
    assert.match(SNAPSHOT_FORMAT, /^partition-4-[0-9a-f]{16}$/);
  });

  // 20: padded to 32 floats per row, the rows are stored without the padding; 32: no padding, the
  // row bytes are copied straight from the pieces into the row store.
  for (const dimensions of [20, 32])
    it(`rebuilds a vector partition (${dimensions} dimensions) from the store's pieces that ranks every query bit for bit as the original, before and after later changes`, () => {
      const random = seededRandom(21);
      const vector = (): Float32Array => Float32Array.from({ length: dimensions }, () => random() * 2 - 1);
      const vectors = new VectorIndex(dimensions);
      const lexical = new LexicalIndex();
      const original = vectors.createPartition('c');
      const words = lexical.createPartition('c');
      const upsert = (chunkId: string, memoryId: string, text: string, row: Float32Array): void => {
        vectors.partition('c')!.upsert(chunkId, memoryId, row);
        lexical.partition('c')!.upsert(chunkId, memoryId, text);
      };
      for (const [i, text] of texts(1500, 31).entries()) upsert(`m${Math.floor(i / 5)}:${i % 5}`, `m${Math.floor(i / 5)}`, text, vector());
      // Swap-removals leave the slots in an order no insertion gives.
      for (let m = 0; m < 300; m += 7) {
        vectors.removeMemory(`m${m}`);
        lexical.removeMemory(`m${m}`);
      }
      const state = words.exportState();
      const snapshot = decodePartitionSnapshot(
        inPieces(
          encodePartitionSnapshot({ ...lexicalOnly(state), vectors: vectorColumns(dimensions, state.chunkIds, original.exportRows()) }),
          4099,
        ),
      );
      assert.ok(snapshot.vectors.rowBytes.length > 1, 'the rows span several pieces');
      const ids = vectorIdsOf(snapshot);
      const rebuilt = new VectorIndex(dimensions);
      rebuilt.setPartition('c', rebuilt.partitionOfRows(ids.chunkIds, ids.memoryIds, snapshot.vectors.rowBytes));
      assert.deepEqual([...rebuilt.entries(['c'])], [...vectors.entries(['c'])], 'the same slots in the same order');
      assert.equal(rebuilt.partition('c')!.bytes, original.bytes, 'the same room as a partition grown row by row');
      const queries = Array.from({ length: 12 }, vector);
      const same = (label: string): void => {
        for (const query of queries) assert.deepEqual(rebuilt.search(query, ['c'], 25), vectors.search(query, ['c'], 25), label);
      };
      same('as loaded');
      for (const index of [vectors, rebuilt]) {
        const changes = seededRandom(41);
        for (let i = 0; i < 200; i++)
          index.partition('c')!.upsert(
            `n${i}:0`,
            `n${i}`,
            Float32Array.from({ length: dimensions }, () => changes()),
          );
        for (let m = 1; m < 300; m += 11) index.removeMemory(`m${m}`);
      }
      same('after upserts and removals');
    });

  it('rebuilds a graph partition that matches, ranks hits and replays timelines exactly as the original', () => {
    const random = seededRandom(51);
    const names = ['Lisbon', 'Porto', 'Ghent', 'Oslo', 'Marisol', 'Quillon', 'harpsichord', 'clavichord', 'tuning', 'workshop'];
    const entities = names.map((name, i) => ({
      id: `e${i}`,
      name,
      category: i < 6 ? 'person' : 'concept',
      description: `about ${name}`,
      aliasKeys: [name.toLowerCase(), ...(i % 3 === 0 ? [`${name.toLowerCase()}-alias`] : [])],
    }));
    const facts = Array.from({ length: 12 }, (_, i) => ({
      id: `f${i}`,
      subjectId: `e${i % 6}`,
      objectId: `e${(i * 7 + 3) % 10}`,
      predicate: ['lives in', 'works at', 'moved to'][i % 3]!,
      description: `fact ${i} — naïve café`,
      confidence: 0.5 + random() / 2,
    }));
    const byId = new Map<string, (typeof entities)[number] | (typeof facts)[number]>(
      [...entities, ...facts].map((target) => [target.id, target]),
    );
    const rowsOf = (m: number): ProvenanceRow[] =>
      Array.from({ length: 1 + (m % 4) }, (_, r) => {
        const fact = r % 2 === 1;
        const targetId = fact ? `f${(m + r) % 12}` : `e${(m * 3 + r) % 10}`;
        const validity =
          !fact || m % 5 === 0
            ? {}
            : {
                validFrom: m % 3 === 0 ? null : new Date(Date.UTC(2020, m % 12, 1)),
                validTo: m % 4 === 0 ? new Date(Date.UTC(2024, 0, m)) : null,
              };
        return { targetId, chunkIndex: r, count: 1 + (m % 3), description: `memory ${m} says ${byId.get(targetId)!.id}`, ...validity };
      });
    const original = new GraphPartition();
    const entityMap = new Map(entities.map((entity) => [entity.id, entity]));
    const factMap = new Map(facts.map((fact) => [fact.id, fact]));
    for (let m = 0; m < 60; m++) original.setMemory(`m${m}`, rowsOf(m), entityMap, factMap);
    for (let m = 0; m < 60; m += 9) original.removeMemory(`m${m}`);
    original.setMemory('m4', rowsOf(5), entityMap, factMap); // replaced: moves to the end

    const state = original.exportState();
    const lexical = new LexicalIndex().createPartition('c').exportState();
    const decoded = decodePartitionSnapshot(encodePartitionSnapshot({ ...lexicalOnly(lexical), graph: state })).graph;
    assert.deepEqual(decoded, state, 'every record and row, in order, with validity kept apart from its absence');
    const rebuilt = GraphPartition.fromState(decoded);
    // The same records and rows; records may sit in another order (a removal reorders the original's maps).
    const byIdOrder = <T extends { id: string }>(list: T[]): T[] => [...list].sort((x, y) => (x.id < y.id ? -1 : 1));
    const again = rebuilt.exportState();
    assert.deepEqual(again.memories, state.memories);
    assert.deepEqual(byIdOrder(again.entities), byIdOrder(state.entities));
    assert.deepEqual(byIdOrder(again.facts), byIdOrder(state.facts));
    assert.equal(rebuilt.entityCount, original.entityCount);
    assert.equal(rebuilt.factCount, original.factCount);
    const keySets = [['lisbon'], ['porto', 'oslo'], ['harpsichord', 'marisol'], ['ghent-alias', 'quillon', 'tuning'], ['nothing']];
    for (const keys of keySets) assert.deepEqual(matchGraph([rebuilt], keys), matchGraph([original], keys), keys.join(' '));
    const hits = Array.from({ length: 15 }, (_, i) => ({ chunkId: `m${i * 3 + 1}:${i % 2}`, memoryId: `m${i * 3 + 1}` }));
    assert.deepEqual(hitGraph([rebuilt], hits), hitGraph([original], hits));
    const classifier = new PredicateClassifier(DEFAULT_FACT_LEXICON);
    const factIds = facts.map((fact) => fact.id);
    assert.deepEqual(rebuilt.timelines(factIds, classifier), original.timelines(factIds, classifier));

    // Built with the lexical partition's chunk ids to key its maps (a cold load): the same partition,
    // whatever those ids hold, ids of another form (a leading zero, no index, another memory's) included.
    const known = { chunkIds: [] as string[], memoryIds: [] as string[] };
    for (let m = 0; m < 60; m++)
      for (let index = 0; index < 4; index++) {
        known.chunkIds.push(`m${m}:${index}`);
        known.memoryIds.push(`m${m}`);
      }
    known.chunkIds.push('m1:01', 'm2:x', 'm3', 'm10:1', 'm5:2', 'm7:-1', 'm8:1e1');
    known.memoryIds.push('m1', 'm2', 'm3', 'm1', 'm6', 'm7', 'm8');
    const keyed = GraphPartition.fromState(decoded, known);
    assert.deepEqual(keyed.exportState(), again);
    for (const keys of keySets) assert.deepEqual(matchGraph([keyed], keys), matchGraph([original], keys), keys.join(' '));
    assert.deepEqual(hitGraph([keyed], hits), hitGraph([original], hits));
    assert.deepEqual(keyed.timelines(factIds, classifier), original.timelines(factIds, classifier));
    const partial = GraphPartition.fromState(decoded, { chunkIds: ['m1:1', 'm4:0'], memoryIds: ['m1', 'm4'] });
    assert.deepEqual(hitGraph([partial], hits), hitGraph([original], hits));
  });

  it('decodes the memory id of each chunk slot exactly, in runs or not, and refuses a memory id list of another length', () => {
    const partition = new LexicalIndex().createPartition('c');
    // Runs, a run broken and resumed, neighbours of equal length, multi-byte UTF-8, one-character ids.
    const memoryIds = ['m1', 'm1', 'm1', 'm2', 'm1', 'm3', 'mé', 'mé', 'm€', 'a', 'a', 'b', 'm1'];
    for (const [i, memoryId] of memoryIds.entries()) partition.upsert(`c${i}`, memoryId, `alpha ${WORDS[i]!}`);
    const state = partition.exportState();
    assert.deepEqual(state.memoryIds, memoryIds);
    const bytes = encodePartitionSnapshot(lexicalOnly(state));
    assert.deepEqual(decodePartitionSnapshot(bytes).lexical.memoryIds, memoryIds);
    assert.deepEqual(decodePartitionSnapshot(inPieces(bytes, 7)).lexical.memoryIds, memoryIds);
    // The memory ids follow the 56-byte header and the chunk ids (padded to 8 bytes).
    const start = 56 + ((bytes.readUInt32LE(20) + 7) & ~7);
    const length = bytes.readUInt32LE(24);
    const joined = bytes.subarray(start, start + length);
    const separator = joined.indexOf(0);
    const fewer = Buffer.from(bytes);
    fewer[start + separator] = 0x61; // two ids run together: one fewer
    assert.throws(() => decodePartitionSnapshot(fewer), /string count/);
    const more = Buffer.from(bytes);
    more[start] = 0; // an id split in two: one more
    assert.throws(() => decodePartitionSnapshot(more), /string count/);
  });

  it('refuses a graph string that UTF-8 cannot carry, rather than store a different one', () => {
    const lexical = new LexicalIndex().createPartition('c').exportState();
    const graph: GraphState = {
      entities: [{ id: 'e1', name: 'broken \ud800 name', category: 'person', description: '', aliasKeys: ['broken'] }],
      facts: [],
      memories: [{ memoryId: 'm1', rows: [{ targetId: 'e1', chunkIndex: 0, count: 1, description: '' }] }],
    };
    assert.throws(() => encodePartitionSnapshot({ ...lexicalOnly(lexical), graph }), /UTF-16/);
    const orphan: GraphState = { ...graph, entities: [], memories: graph.memories };
    assert.throws(() => encodePartitionSnapshot({ ...lexicalOnly(lexical), graph: orphan }), /does not hold/);
  });
});
