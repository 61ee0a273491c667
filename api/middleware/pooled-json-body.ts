/**
 * Large JSON request bodies are parsed on a worker thread (the request-body pool,
 * runtime/roles.ts), not on the event loop: a body of up to BODY_LIMIT_BYTES (32 MiB, a device
 * snapshot) took 40-60 ms of CPU to JSON.parse in one stretch, 43-410 ms of wall time on a loaded
 * machine, during which no other tenant's request, ping or deadline timer ran
 * (docs/device-memory.md). The bytes are read here as @koa/bodyparser reads them (raw-body after
 * inflation, the same length and limit checks, the same errors), then parsed on a thread by co-body
 * as the body parser parses them (models/json-tasks.ts `parseJson`, the path a downloaded snapshot
 * takes too), and the value comes back in pieces taken in with a turn of the loop between them
 * (core/json-pieces.ts).
 *
 * A body below `minBytes` (Content-Length), another method or media type, or a process without a
 * pool is left to the body parser mounted after this, on the loop: it costs a few milliseconds.
 */
import type { Middleware } from 'koa';
import inflate from 'inflation';
import type { JsonTextDigest } from '../../core/json-body.js';
import type { JsonPath } from '../../core/json-pieces.js';
import { withoutSpan } from '../../core/json-span.js';
import { locateInPool, parseJson, POOLED_JSON_MIN_BYTES, type JsonPool } from '../../models/json-tasks.js';
import type { OpenedSnapshot } from '../../snapshot/prepared-cache.js';
import type { AppState } from '../context.js';
import { declaredBodyBytes } from './bodies-in-flight.js';
import { readSharedBody, type SharedBodyBuffers } from './shared-body.js';

/** @koa/bodyparser's JSON media types (enableTypes: ['json']). */
const JSON_TYPES = [
  'application/json',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/csp-report',
  'application/reports+json',
  'application/scim+json',
];

/** What the thread worked out beside the value: the text's size, and the digests of the values at `digestPaths`. */
export interface ParsedBodyText {
  /** UTF-8 bytes of the decoded body text (the body parser's rawBody). */
  textBytes: number;
  /** By the parsed object they describe: the JSON.stringify text of it, hashed. */
  digests: WeakMap<object, JsonTextDigest>;
  /**
   * The top-level member `knownSpan.key` located in the bytes, with the digest of its exact bytes;
   * `prepared` when they are bytes of a snapshot this tenant had opened (the member then reads `{}`
   * in the body, not parsed again). See `knownSpan` below.
   */
  span?: { key: string; digest: string; prepared: OpenedSnapshot | null };
}

/**
 * A member whose bytes are looked up before the body is parsed: a device call sends the same
 * megabytes of snapshot call after call beside a short query, and parsing them, hashing their JSON
 * text and taking the value in cost 31-45 ms of CPU per call for a 1.8 MiB body (in-process, on a
 * loaded machine) for a snapshot already held prepared. The thread scans and hashes the bytes
 * instead (core/json-span.ts: 8-13 ms with the rest's parse); when `lookup` knows them, only the
 * rest of the body is parsed.
 */
export interface KnownSpan {
  key: string;
  lookup: (tenantId: string, digest: string) => OpenedSnapshot | null;
}

export function pooledJsonBody(options: {
  /** Any pool that runs the JSON tasks: the request-body pool in the service. */
  pool: JsonPool | null;
  limit: number;
  minBytes?: number;
  /** Values whose JSON text the thread hashes (device snapshots' `body`). */
  digestPaths: JsonPath[];
  knownSpan?: KnownSpan;
  /** Where bodies are read (api/middleware/shared-body.ts): one per process, reused across requests. */
  buffers: SharedBodyBuffers;
}): Middleware<AppState> {
  const { pool, limit, digestPaths } = options;
  const minBytes = options.minBytes ?? POOLED_JSON_MIN_BYTES;
  return async (ctx, next) => {
    if (!pool || !['POST', 'PUT', 'PATCH'].includes(ctx.method.toUpperCase()) || ctx.request.body !== undefined) return next();
    if (declaredBodyBytes(ctx.get('content-length'), ctx.get('transfer-encoding'), limit) < minBytes) return next();
    if (!ctx.request.is(JSON_TYPES)) return next();
    if (ctx.req.closed) {
      // As the body parser answers a request closed before its body was read.
      ctx.status = 499;
      ctx.body = 'Request already closed';
      return;
    }
    // As co-body reads it: the declared length is checked only without a Content-Encoding.
    const declared = ctx.get('content-length');
    const encoding = ctx.get('content-encoding') || 'identity';
    const body = await readSharedBody(
      inflate(ctx.req),
      { limit, ...(declared && encoding === 'identity' ? { length: ~~declared } : {}) },
      options.buffers,
    );
    let parsed: { value: unknown; parsedBody: ParsedBodyText };
    try {
      parsed = await parseRead(pool, body.bytes, { key: ctx.state.principal.tenantId, signal: ctx.state.signal });
    } catch (error) {
      // A task abandoned on its thread may still be reading the memory: it is not reused.
      body.release(false);
      throw error;
    }
    // Every task that read the memory has answered, and nothing parsed keeps a view of it.
    body.release(true);
    ctx.request.body = parsed.value;
    ctx.state.parsedBody = parsed.parsedBody;
    return next();
  };

  /** The body's bytes parsed: around a known member when its bytes are known, otherwise whole. */
  async function parseRead(
    pool: JsonPool,
    read: Buffer,
    job: { key: string; signal: AbortSignal },
  ): Promise<{ value: unknown; parsedBody: ParsedBodyText }> {
    const { knownSpan } = options;
    const { located, bytes } = knownSpan ? await locateInPool(pool, read, knownSpan.key, job) : { located: null, bytes: read };
    const span =
      located && knownSpan
        ? { key: knownSpan.key, digest: located.digest, prepared: knownSpan.lookup(job.key, located.digest) }
        : undefined;
    if (located && span?.prepared) {
      // Everything but the known member is parsed as the whole body would be. If that fails the
      // whole body is parsed below, so a client gets the error it would have had. The rest is
      // usually the query alone: below `minBytes` it is parsed on the loop (a few hundred bytes),
      // as the body parser would parse a body that small, without another trip to a thread.
      const rest = await parseJson(pool, withoutSpan(bytes, located), { strict: true, digestPaths, minBytes }, job);
      if (rest.ok) {
        // The known bytes are valid UTF-8 (locateObjectSpan): they decode to as many bytes.
        return {
          value: rest.value,
          parsedBody: { textBytes: rest.textBytes - 2 + (located.end - located.start), digests: rest.digests, span },
        };
      }
    }
    // Chosen by its declared size (a chunked body's is unknown): parsed on the pool whatever size it turns out to be.
    const parsed = await parseJson(pool, bytes, { strict: true, digestPaths, minBytes: 0 }, job);
    // The body parser's error, as co-body threw it (status 400 and its message): the error handler maps both alike.
    if (!parsed.ok) throw Object.assign(new SyntaxError(parsed.message), { status: parsed.status });
    return {
      value: parsed.value,
      parsedBody: { textBytes: parsed.textBytes, digests: parsed.digests, ...(span ? { span: { ...span, prepared: null } } : {}) },
    };
  }
}
