/**
 * Writes a synthetic search corpus straight into MongoDB through the store: complete memories
 * whose chunks carry random unit vectors of the model's dimension. Random vectors do not change
 * the cost of a brute-force scan (every vector is scored either way); only the hits are meaningless.
 */
import { chunkId, ingestWorkflowId, newId } from '../core/ids.js';
import type { ChunkDoc } from '../store/chunks.js';
import { vectorToBinary } from '../store/chunks.js';
import type { Store } from '../store/index.js';
import type { MemoryDoc } from '../store/memories.js';
import { seededRandom } from './texts.js';

export interface SyntheticCorpusOptions {
  tenantId: string;
  collectionId: string;
  embeddingModel: string;
  dimensions: number;
  memories: number;
  chunksPerMemory: number;
  seed: number;
}

function randomUnitVector(random: () => number, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i += 2) {
    // Box–Muller: two standard normals from two uniforms; normals make the direction uniform.
    const u = Math.max(random(), 1e-12);
    const v = random();
    const radius = Math.sqrt(-2 * Math.log(u));
    vector[i] = radius * Math.cos(2 * Math.PI * v);
    if (i + 1 < dimensions) vector[i + 1] = radius * Math.sin(2 * Math.PI * v);
  }
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) vector[i] = vector[i]! / norm;
  return vector;
}

/** Inserts the corpus and publishes the index changes; returns the memory ids. */
export async function writeSyntheticCorpus(store: Store, options: SyntheticCorpusOptions): Promise<string[]> {
  const random = seededRandom(options.seed);
  const memoryIds: string[] = [];
  const now = new Date();
  for (let m = 0; m < options.memories; m++) {
    const memoryId = newId();
    memoryIds.push(memoryId);
    const texts = Array.from(
      { length: options.chunksPerMemory },
      (_, i) => `Synthetic chunk ${i} of memory ${m}: random vector, placeholder text.`,
    );
    const memory: MemoryDoc = {
      _id: memoryId,
      tenant_id: options.tenantId,
      collection_ids: [options.collectionId],
      kind: 'document',
      name: `synthetic-${m}`,
      metadata: { synthetic: true },
      content: { chunks: texts },
      status: 'complete',
      status_message: null,
      chunk_count: options.chunksPerMemory,
      embedding_model: options.embeddingModel,
      workflow_id: ingestWorkflowId(memoryId),
      created_at: now,
      updated_at: now,
      completed_at: now,
    };
    const chunks: ChunkDoc[] = texts.map((text, index) => ({
      _id: chunkId(memoryId, index),
      memory_id: memoryId,
      tenant_id: options.tenantId,
      collection_ids: [options.collectionId],
      index,
      text,
      source: { type: 'chunk' },
      embedding: vectorToBinary(randomUnitVector(random, options.dimensions)),
      embedding_model: options.embeddingModel,
    }));
    // Chunks first, memory last: like the pipeline, a memory is complete only once its vectors exist.
    await store.chunks.collection.insertMany(chunks, { ordered: false });
    await store.memories.insert(memory);
  }
  for (let i = 0; i < memoryIds.length; i += 100) {
    await store.indexChanges.publish('upsert', options.tenantId, memoryIds.slice(i, i + 100));
  }
  return memoryIds;
}
