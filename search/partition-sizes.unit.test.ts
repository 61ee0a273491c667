import assert from 'node:assert/strict';
import { it } from 'node:test';
import { GraphIndex, type GraphEntityInfo } from './graph-index.js';
import { LexicalIndex } from './lexical-index.js';
import type { PartitionedIndexes } from './partition-loader.js';
import {
  BYTES_PER_CHUNK_IDS,
  BYTES_PER_GRAPH_ENTRY,
  BYTES_PER_TERM,
  indexSizes,
  loadedChunkCount,
  partitionBytes,
} from './partition-sizes.js';
import { TurnFacts } from './turn-facts.js';
import { VectorIndex } from './vector-index.js';

const DIMENSIONS = 4;

/** Per collection: its chunks' texts, and how many entities its one memory names. */
type Layout = Record<string, { texts: string[]; entities: number }>;

const entity = (id: string): GraphEntityInfo => ({ id, name: id, category: 'thing', description: '', aliasKeys: [id] });

function indexesOf(layout: Layout): PartitionedIndexes {
  const indexes: PartitionedIndexes = {
    vector: new VectorIndex(DIMENSIONS),
    lexical: new LexicalIndex(),
    turns: new TurnFacts(),
    graph: new GraphIndex(),
  };
  for (const [collectionId, { texts, entities }] of Object.entries(layout)) {
    const vector = indexes.vector.createPartition(collectionId);
    const lexical = indexes.lexical.createPartition(collectionId);
    indexes.turns.createPartition(collectionId);
    texts.forEach((text, at) => {
      const chunkId = `${collectionId}-chunk-${at}`;
      vector.upsert(chunkId, `${collectionId}-memory`, new Float32Array(DIMENSIONS).fill(at + 1));
      lexical.upsert(chunkId, `${collectionId}-memory`, text);
      indexes.turns.upsert(collectionId, chunkId, `${collectionId}-memory`, text, new Date('2024-05-01T00:00:00Z'));
    });
    const infos = new Map(
      Array.from({ length: entities }, (_, at) => entity(`${collectionId}-entity-${at}`)).map((info) => [info.id, info]),
    );
    const rows = [...infos.keys()].map((targetId) => ({ targetId, chunkIndex: 0, count: 1, description: '' }));
    indexes.graph.createPartition(collectionId).setMemory(`${collectionId}-memory`, rows, infos, new Map());
  }
  return indexes;
}

const cases: { name: string; layout: Layout; chunks: number; graphEntries: number }[] = [
  { name: 'nothing loaded', layout: {}, chunks: 0, graphEntries: 0 },
  {
    name: 'one collection of chunks, no graph',
    layout: { c1: { texts: ['alpha beta', 'beta gamma delta'], entities: 0 } },
    chunks: 2,
    graphEntries: 0,
  },
  {
    name: 'two collections with entities',
    layout: { c1: { texts: ['alpha'], entities: 2 }, c2: { texts: ['one two', 'two three', 'three four'], entities: 3 } },
    chunks: 4,
    graphEntries: 5,
  },
];

for (const { name, layout, chunks, graphEntries } of cases) {
  it(`sizes of the loaded partitions: ${name}`, () => {
    const indexes = indexesOf(layout);
    let vectorBytes = 0;
    let lexicalBytes = 0;
    let postings = 0;
    for (const collectionId of Object.keys(layout)) {
      const vector = indexes.vector.partition(collectionId)!;
      const lexical = indexes.lexical.partition(collectionId)!.storageStats();
      const graph = indexes.graph.partition(collectionId)!;
      vectorBytes += vector.bytes;
      lexicalBytes += lexical.typedArrayBytes;
      postings += lexical.postings;
      assert.equal(
        partitionBytes(indexes, collectionId),
        vector.bytes +
          vector.size * BYTES_PER_CHUNK_IDS +
          lexical.typedArrayBytes +
          (lexical.terms + lexical.cachedPieces) * BYTES_PER_TERM +
          indexes.turns.bytes(collectionId) +
          (graph.entityCount + graph.factCount) * BYTES_PER_GRAPH_ENTRY,
        collectionId,
      );
    }
    assert.equal(partitionBytes(indexes, 'not-loaded'), 0, 'a collection not loaded weighs nothing');
    assert.equal(loadedChunkCount(indexes.vector), chunks);
    assert.deepEqual(indexSizes(indexes), [
      { index: 'vector', entries: chunks, bytes: vectorBytes },
      { index: 'lexical', entries: postings, bytes: lexicalBytes },
      { index: 'graph', entries: graphEntries, bytes: null },
    ]);
  });
}

it('each graph entity a partition holds adds its estimate, and no other collection changes', () => {
  const small = indexesOf({ c1: { texts: ['alpha beta'], entities: 1 }, c2: { texts: ['gamma'], entities: 0 } });
  const larger = indexesOf({ c1: { texts: ['alpha beta'], entities: 4 }, c2: { texts: ['gamma'], entities: 0 } });
  assert.equal(partitionBytes(larger, 'c1') - partitionBytes(small, 'c1'), 3 * BYTES_PER_GRAPH_ENTRY);
  assert.equal(partitionBytes(larger, 'c2'), partitionBytes(small, 'c2'));
  assert.ok(partitionBytes(small, 'c2') >= BYTES_PER_CHUNK_IDS + BYTES_PER_TERM, 'a chunk counts its ids and its term at least');
});
