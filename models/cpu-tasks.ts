/**
 * The CPU-heavy work an API process hands to its worker-thread pool (core/worker-pool.ts), by
 * name: structure extraction (compromise, synchronous) and passage embedding (onnxruntime-node's
 * `run` blocks the calling thread for the whole batch: seconds for 32 chunks on a busy 2-core
 * machine). Add a handler here to move another kind of work off the event loop; the thread entry
 * (cpu-thread.ts) serves this map, and the main side gets its types from it.
 */
import type { WorkerPool } from '../core/worker-pool.js';
import { extractChunkStructure, LOCAL_EXTRACTOR_ID } from '../extractors/structure/local-extractor.js';
import type { ChunkStructure, ExtractOptions, StructureExtractor } from '../extractors/structure/types.js';
import { loadEmbedder, type Embedder, type EmbedderOptions } from './embedder.js';

/** Each thread loads the model once, on its first embedding task. */
let threadEmbedder: Promise<Embedder> | null = null;

export const cpuTasks = {
  /** Entities and facts of one chunk (milliseconds per chunk). */
  extractStructure: (input: { text: string; options: ExtractOptions }): ChunkStructure => extractChunkStructure(input.text, input.options),
  /** Vectors of a few passages, with the thread's own copy of the model (one thread each, so the event loop keeps a core). */
  embedPassages: async (input: { model: EmbedderOptions; texts: string[] }): Promise<Float32Array[]> => {
    threadEmbedder ??= loadEmbedder({ ...input.model, threads: 1 });
    return (await threadEmbedder).embedPassages(input.texts);
  },
};

export type CpuTasks = typeof cpuTasks;

/** Where the thread entry is, for `new WorkerPool<CpuTasks>(cpuThreadScript, size)`. */
export const cpuThreadScript = new URL('./cpu-thread.js', import.meta.url);

export interface PoolJob {
  /** Fairness key: the tenant. */
  key: string;
  signal?: AbortSignal | undefined;
}

/** The local extractor, run on the pool: same results, one task per chunk. */
export function pooledExtractor(pool: WorkerPool<CpuTasks>, job: PoolJob): StructureExtractor {
  return {
    id: LOCAL_EXTRACTOR_ID,
    extract: (text: string, options: ExtractOptions = {}): Promise<ChunkStructure> => pool.run('extractStructure', { text, options }, job),
  };
}

/** Texts per embedding task: small, so tenants' tasks interleave and an abandoned request stops soon. */
const PASSAGES_PER_TASK = 8;

/** Embeds passages on the pool, a few per task, answered in order. */
export async function embedPassagesOnPool(
  pool: WorkerPool<CpuTasks>,
  model: EmbedderOptions,
  texts: string[],
  job: PoolJob,
): Promise<Float32Array[]> {
  const tasks: Promise<Float32Array[]>[] = [];
  for (let start = 0; start < texts.length; start += PASSAGES_PER_TASK) {
    tasks.push(pool.run('embedPassages', { model, texts: texts.slice(start, start + PASSAGES_PER_TASK) }, job));
  }
  return (await Promise.all(tasks)).flat();
}
