/**
 * The CPU-heavy work an API process hands to its worker-thread pool (core/worker-pool.ts), by
 * name: structure extraction (compromise, synchronous) and the JSON tasks of json-tasks.ts (the
 * parse of a snapshot downloaded by reference runs on this pool; request bodies have a pool of
 * their own on json-thread.ts). Not the embedding model: it runs on the process's model threads
 * (models/model-thread-client.ts), never on this pool. Add a handler here to move another kind of work off the event loop; the thread entry
 * (cpu-thread.ts) serves this map, and the main side gets its types from it.
 */
import type { WorkerPool } from '../core/worker-pool.js';
import { extractChunkStructure, extractParsedChunk, LOCAL_EXTRACTOR_ID } from '../extractors/structure/local-extractor.js';
import type { ChunkStructure, ExtractOptions, ParsedChunkStructure, StructureExtractor } from '../extractors/structure/types.js';
import { jsonTasks, type PoolJob } from './json-tasks.js';

export const cpuTasks = {
  // One definition of the JSON tasks: the CPU pool parses downloaded snapshots with them.
  ...jsonTasks,
  /** Entities and facts of one chunk (milliseconds per chunk). */
  extractStructure: (input: { text: string; options: ExtractOptions }): ChunkStructure => extractChunkStructure(input.text, input.options),
  /** The same, with the parsed sentences (structured-cloned back: a fraction of a millisecond against the parse). */
  extractParsedStructure: (input: { text: string; options: ExtractOptions }): ParsedChunkStructure =>
    extractParsedChunk(input.text, input.options),
};

export type CpuTasks = typeof cpuTasks;

/** Where the thread entry is, for `new WorkerPool<CpuTasks>(cpuThreadScript, size)`. */
export const cpuThreadScript = new URL('./cpu-thread.js', import.meta.url);

/** The local extractor, run on the pool: same results, one task per chunk. */
export function pooledExtractor(pool: Pick<WorkerPool<CpuTasks>, 'run'>, job: PoolJob): StructureExtractor {
  return {
    id: LOCAL_EXTRACTOR_ID,
    extract: (text: string, options: ExtractOptions = {}): Promise<ChunkStructure> => pool.run('extractStructure', { text, options }, job),
    extractParsed: (text: string, options: ExtractOptions = {}): Promise<ParsedChunkStructure> =>
      pool.run('extractParsedStructure', { text, options }, job),
  };
}
