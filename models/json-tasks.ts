/**
 * The JSON work an API process hands to a worker thread, by name: the parse of large JSON texts
 * (request bodies, downloaded snapshots: `parseJson`) and the location of a member's bytes in a
 * body (`locateInPool`). Kept apart from the CPU tasks' structure extraction (cpu-tasks.ts) so the
 * request-body thread (json-thread.ts) loads only what these need, not the extractor's modules
 * (compromise: about 300 ms of the thread's start, and their memory). The CPU pool serves these
 * too (cpu-tasks.ts spreads them into its map): a snapshot downloaded by reference is parsed there.
 */
import { decodeJson, parseJsonBody, type JsonTextDigest, type ParsedJsonBody } from '../core/json-body.js';
import { joinJson, valueAt, type JsonPath } from '../core/json-pieces.js';
import { locateObjectSpan, type HashedJsonSpan } from '../core/json-span.js';
import { TimeSlicer } from '../core/time-slice.js';
import { movableBuffers, transferring, type WorkerPool } from '../core/worker-pool.js';

export const jsonTasks = {
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
};

export type JsonTasks = typeof jsonTasks;

/** Where the JSON-only thread entry is, for `new WorkerPool<JsonTasks>(jsonThreadScript, size)`. */
export const jsonThreadScript = new URL('./json-thread.js', import.meta.url);

/** A pool that runs the JSON tasks: the request-body pool, or the CPU pool (which serves them too). */
export type JsonPool = Pick<WorkerPool<JsonTasks>, 'run'>;

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
  pool: JsonPool,
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
  pool: JsonPool,
  bytes: Uint8Array,
  key: string,
  job: PoolJob,
): Promise<{ located: HashedJsonSpan | null; bytes: Buffer }> {
  const answer = await pool.run('locateObjectSpan', { bytes, key }, { key: job.key, signal: job.signal, transfer: movableBuffers(bytes) });
  return { located: answer.located, bytes: Buffer.from(answer.bytes.buffer, answer.bytes.byteOffset, answer.bytes.byteLength) };
}
