/**
 * The CPU-heavy work an API process hands to its worker-thread pool (core/worker-pool.ts), by
 * name: structure extraction (compromise, synchronous) and the parse of large JSON texts (request
 * bodies, downloaded snapshots: `parseJson`). Not the embedding model: onnxruntime-node
 * loaded in a worker thread and the main thread at once crashed the process (a native
 * "Cannot create a handle without a HandleScope" in OrtValueToNapiValue), so the model runs on a
 * thread of its own and only there (models/model-tasks.ts). Add a handler here to move another kind of work off the event loop; the thread entry
 * (cpu-thread.ts) serves this map, and the main side gets its types from it.
 */
import { decodeJson, parseJsonBody, type JsonTextDigest, type ParsedJsonBody } from '../core/json-body.js';
import { joinJson, valueAt, type JsonPath } from '../core/json-pieces.js';
import { locateObjectSpan, type HashedJsonSpan } from '../core/json-span.js';
import { TimeSlicer } from '../core/time-slice.js';
import { movableBuffers, transferring, type WorkerPool } from '../core/worker-pool.js';
import { extractChunkStructure, extractParsedChunk, LOCAL_EXTRACTOR_ID } from '../extractors/structure/local-extractor.js';
import type { ChunkStructure, ExtractOptions, ParsedChunkStructure, StructureExtractor } from '../extractors/structure/types.js';

export const cpuTasks = {
  /** A large request body's JSON, parsed and handed back in pieces (core/json-body.ts), their buffers moved, not copied. */
  parseJsonBody: async (input: Parameters<typeof parseJsonBody>[0]): Promise<ParsedJsonBody> => {
    const parsed = await parseJsonBody(input);
    return parsed.ok ? transferring(parsed, [parsed.pieces.shell, ...parsed.pieces.fills.map((fill) => fill.items)]) : parsed;
  },
  /**
   * Where a top-level member's object value lies in JSON bytes, and the digest of its bytes
   * (core/json-span.ts). The bytes come back with the answer, moved both ways when they are a
   * buffer of their own (`locateInPool`): the caller parses them next.
   */
  locateObjectSpan: (input: { bytes: Uint8Array; key: string }): { located: HashedJsonSpan | null; bytes: Uint8Array } =>
    transferring({ located: locateObjectSpan(input.bytes, input.key), bytes: input.bytes }, [input.bytes]),
  /** Entities and facts of one chunk (milliseconds per chunk). */
  extractStructure: (input: { text: string; options: ExtractOptions }): ChunkStructure => extractChunkStructure(input.text, input.options),
  /** The same, with the parsed sentences (structured-cloned back: a fraction of a millisecond against the parse). */
  extractParsedStructure: (input: { text: string; options: ExtractOptions }): ParsedChunkStructure =>
    extractParsedChunk(input.text, input.options),
};

export type CpuTasks = typeof cpuTasks;

/** Where the thread entry is, for `new WorkerPool<CpuTasks>(cpuThreadScript, size)`. */
export const cpuThreadScript = new URL('./cpu-thread.js', import.meta.url);

export interface PoolJob {
  /** Fairness key: the tenant. */
  key: string;
  signal?: AbortSignal | undefined;
}

/** JSON from this size on (1 MiB) is parsed on the pool: below it JSON.parse takes a few milliseconds, less than the trip to a thread. */
export const POOLED_JSON_MIN_BYTES = 1024 * 1024;

/** JSON bytes parsed (`parseJson`), with what was worked out beside the value. */
export type ParsedJson =
  | {
      ok: true;
      value: unknown;
      /** UTF-8 bytes of the decoded text (what Buffer.byteLength of the body parser's rawBody gives). */
      textBytes: number;
      /** By the parsed object they describe (those at `digestPaths`): the JSON.stringify text of it, hashed. */
      digests: WeakMap<object, JsonTextDigest>;
    }
  /** What co-body threw: its status (400) and message. */
  | { ok: false; status: number; message: string };

/**
 * JSON bytes (already inflated) parsed as co-body parses a request body: from `POOLED_JSON_MIN_BYTES`
 * on (or `minBytes`) on a pool thread, which also hashes the JSON text of the values at
 * `digestPaths` and hands the value back in pieces taken in with a turn of the event loop between
 * them (core/json-pieces.ts); a smaller text on the loop (the digests then left to the caller).
 * The one way a large JSON text is parsed in an API process: a request body
 * (api/middleware/pooled-json-body.ts) and a snapshot downloaded by reference (services/device-memory.ts).
 * The bytes' buffer is moved to the thread when it is theirs alone: do not use them afterwards.
 */
export async function parseJson(
  pool: Pick<WorkerPool<CpuTasks>, 'run'>,
  bytes: Uint8Array,
  options: { strict: boolean; digestPaths: JsonPath[]; minBytes?: number },
  job: PoolJob,
): Promise<ParsedJson> {
  const digests = new WeakMap<object, JsonTextDigest>();
  if (bytes.byteLength < (options.minBytes ?? POOLED_JSON_MIN_BYTES)) {
    const decoded = await decodeJson(bytes, options.strict);
    if (!decoded.ok) return decoded;
    return { ok: true, value: decoded.value, textBytes: Buffer.byteLength(decoded.text), digests };
  }
  const parsed = await pool.run(
    'parseJsonBody',
    { bytes, strict: options.strict, digestPaths: options.digestPaths },
    { key: job.key, signal: job.signal, transfer: movableBuffers(bytes) },
  );
  if (!parsed.ok) return parsed;
  const value = await joinJson(parsed.pieces, new TimeSlicer());
  for (const { path, text } of parsed.digests) {
    const at = valueAt(value, path);
    if (typeof at === 'object' && at !== null) digests.set(at, text);
  }
  return { ok: true, value, textBytes: parsed.textBytes, digests };
}

/**
 * `locateObjectSpan` on a pool thread, the bytes moved there and back rather than copied (shared
 * memory is read where it is): a copy of a device request's megabytes per call, on the loop and
 * again on the thread, was most of what a call sending a prepared snapshot allocated
 * (docs/device-memory.md). `bytes` is not usable after this call: use the bytes it answers (the
 * same memory).
 */
export async function locateInPool(
  pool: Pick<WorkerPool<CpuTasks>, 'run'>,
  bytes: Uint8Array,
  key: string,
  job: PoolJob,
): Promise<{ located: HashedJsonSpan | null; bytes: Buffer }> {
  const answer = await pool.run('locateObjectSpan', { bytes, key }, { key: job.key, signal: job.signal, transfer: movableBuffers(bytes) });
  return { located: answer.located, bytes: Buffer.from(answer.bytes.buffer, answer.bytes.byteOffset, answer.bytes.byteLength) };
}

/** The local extractor, run on the pool: same results, one task per chunk. */
export function pooledExtractor(pool: Pick<WorkerPool<CpuTasks>, 'run'>, job: PoolJob): StructureExtractor {
  return {
    id: LOCAL_EXTRACTOR_ID,
    extract: (text: string, options: ExtractOptions = {}): Promise<ChunkStructure> => pool.run('extractStructure', { text, options }, job),
    extractParsed: (text: string, options: ExtractOptions = {}): Promise<ParsedChunkStructure> =>
      pool.run('extractParsedStructure', { text, options }, job),
  };
}
