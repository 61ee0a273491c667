/**
 * Estimated sizes of the loaded partitions: the bytes of one collection's partitions (what the
 * index budget bounds, search/search-index.ts), and the entries and bytes per in-process index
 * (what the metrics and health endpoints report). Reads the indexes only.
 */
import type { PartitionedIndexes } from './partition-loader.js';
import type { VectorIndex } from './vector-index.js';

/**
 * Estimated bytes of what the typed arrays leave out, per entry: a chunk's id strings, array
 * slots and map entries in the vector and the lexical partition; a term's string and map entry;
 * a graph entity's or fact's object and map entries. Rough, on purpose on the high side, so the
 * budget is kept rather than exceeded (the bench compares RSS with it).
 */
export const BYTES_PER_CHUNK_IDS = 2 * 240;
export const BYTES_PER_TERM = 120;
export const BYTES_PER_GRAPH_ENTRY = 600;

/** Entries and bytes of one in-process index (bytes: null where they are not measured). */
export interface IndexSize {
  index: 'vector' | 'lexical' | 'graph';
  entries: number;
  bytes: number | null;
}

/** Estimated bytes of one collection's partitions (vector, lexical, turn facts and graph). */
export function partitionBytes(indexes: PartitionedIndexes, collectionId: string): number {
  const vector = indexes.vector.partition(collectionId);
  const lexical = indexes.lexical.partition(collectionId)?.storageStats();
  const graph = indexes.graph.partition(collectionId);
  return (
    (vector ? vector.bytes + vector.size * BYTES_PER_CHUNK_IDS : 0) +
    (lexical ? lexical.typedArrayBytes + (lexical.terms + lexical.cachedPieces) * BYTES_PER_TERM : 0) +
    indexes.turns.bytes(collectionId) +
    (graph ? (graph.entityCount + graph.factCount) * BYTES_PER_GRAPH_ENTRY : 0)
  );
}

/** Entries and bytes per in-process index, for the metrics endpoint. */
export function indexSizes(indexes: Pick<PartitionedIndexes, 'vector' | 'lexical' | 'graph'>): IndexSize[] {
  let vectorEntries = 0;
  let vectorBytes = 0;
  for (const id of indexes.vector.loadedCollections()) {
    const partition = indexes.vector.partition(id);
    vectorEntries += partition?.size ?? 0;
    vectorBytes += partition?.bytes ?? 0;
  }
  let postings = 0;
  let lexicalBytes = 0;
  for (const id of indexes.lexical.loadedCollections()) {
    const stats = indexes.lexical.partition(id)?.storageStats();
    postings += stats?.postings ?? 0;
    lexicalBytes += stats?.typedArrayBytes ?? 0;
  }
  let graphEntries = 0;
  for (const id of indexes.graph.loadedCollections()) {
    const partition = indexes.graph.partition(id);
    graphEntries += (partition?.entityCount ?? 0) + (partition?.factCount ?? 0);
  }
  return [
    { index: 'vector', entries: vectorEntries, bytes: vectorBytes },
    { index: 'lexical', entries: postings, bytes: lexicalBytes },
    { index: 'graph', entries: graphEntries, bytes: null },
  ];
}

/** Chunks held by every loaded vector partition. */
export function loadedChunkCount(vector: VectorIndex): number {
  return vector.loadedCollections().reduce((sum, id) => sum + (vector.partition(id)?.size ?? 0), 0);
}
