/**
 * Large request bodies read into reused shared memory, not into a new buffer per request.
 *
 * Why: V8 starts a major garbage collection each time about 64 MB of new ArrayBuffer memory has
 * been allocated since the last one ("external memory pressure", `--trace-incremental-marking`).
 * A device call sends its snapshot's megabytes again on every call: the socket's pieces and
 * raw-body's join of them allocated the body twice, and a mark-compact of the whole API heap
 * followed every 12 calls of a 2.9 MB body (bench device-open, HTTP phase: 8 major GCs per 100
 * calls; joined into reused memory, 4). The socket's pieces are Node's and stay: scavenges let
 * them go since new space is capped as before Node 24 (runtime/gc-tuning.ts). The memory is
 * shared (SharedArrayBuffer) so that a CPU-pool thread reads the bytes where they are.
 *
 * The read answers as raw-body (what @koa/bodyparser and co-body use) answers: the same limit and
 * length checks, the same errors (status, type, message), so a client cannot tell which read it met.
 */
import type { Readable } from 'node:stream';

/** The smallest buffer handed out; sizes double from here, so a growing body is copied a few times at most. */
const MIN_BUFFER_BYTES = 1024 * 1024;

/**
 * Idle buffers kept for the next requests: bounded in number and bytes (a process that once read a
 * 32 MiB body does not keep 32 MiB for ever). One or two device calls at a time is the usual load.
 */
export class SharedBodyBuffers {
  private readonly idle: SharedArrayBuffer[] = [];

  constructor(
    readonly keepBytes = 16 * 1024 * 1024,
    readonly keepCount = 2,
  ) {}

  /** A buffer of at least `bytes` (the smallest idle one that fits, or a new one). */
  acquire(bytes: number): SharedArrayBuffer {
    let best = -1;
    this.idle.forEach((buffer, index) => {
      if (buffer.byteLength >= bytes && (best < 0 || buffer.byteLength < this.idle[best]!.byteLength)) best = index;
    });
    if (best >= 0) return this.idle.splice(best, 1)[0]!;
    let size = MIN_BUFFER_BYTES;
    while (size < bytes) size *= 2;
    return new SharedArrayBuffer(size);
  }

  /** Gives a buffer back for reuse. Only when nothing can still read it: no task on a thread, no view kept. */
  release(buffer: SharedArrayBuffer): void {
    if (buffer.byteLength > this.keepBytes) return;
    this.idle.push(buffer);
    this.idle.sort((a, b) => b.byteLength - a.byteLength);
    let kept = 0;
    // The largest that fit the budget stay; the rest are left to the collector.
    const keep = this.idle.filter((candidate) => {
      if (kept + candidate.byteLength > this.keepBytes) return false;
      kept += candidate.byteLength;
      return true;
    });
    this.idle.length = 0;
    this.idle.push(...keep.slice(0, this.keepCount));
  }

  /** Idle bytes held (tests). */
  idleBytes(): number {
    return this.idle.reduce((sum, buffer) => sum + buffer.byteLength, 0);
  }
}

/** A body read into shared memory: `bytes` is valid until `release`. */
export interface SharedBody {
  bytes: Buffer;
  /** Hands the memory back for the next request; `reuse: false` when a thread may still be reading it. */
  release(reuse: boolean): void;
}

/** raw-body's errors, the same fields (http-errors shape), so the error handler maps both reads alike. */
function bodyError(status: number, message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: status < 500, ...fields });
}

/**
 * Reads a request stream (already inflated) into a shared buffer, as raw-body reads it: `length`
 * (the declared Content-Length, checked only when given) above `limit` fails before reading; more
 * bytes than `limit` fail as they arrive; fewer or more than `length` fail at the end; a request
 * aborted by its client fails as aborted.
 */
export function readSharedBody(
  stream: Readable,
  options: { limit: number; length?: number },
  buffers: SharedBodyBuffers,
): Promise<SharedBody> {
  const { limit } = options;
  const length = options.length ?? null;
  if (length !== null && length > limit) {
    return Promise.reject(bodyError(413, 'request entity too large', { expected: length, length, limit, type: 'entity.too.large' }));
  }
  const state = (stream as Readable & { _readableState?: { encoding?: unknown; decoder?: unknown } })._readableState;
  if (state?.encoding || state?.decoder) {
    return Promise.reject(bodyError(500, 'stream encoding should not be set', { type: 'stream.encoding.set' }));
  }
  if (!stream.readable) return Promise.reject(bodyError(500, 'stream is not readable', { type: 'stream.not.readable' }));

  return new Promise<SharedBody>((resolve, reject) => {
    let memory = buffers.acquire(Math.max(1, length ?? 0));
    let view = Buffer.from(memory);
    let received = 0;
    let complete = false;

    const cleanup = (): void => {
      stream.removeListener('aborted', onAborted);
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onEnd);
      stream.removeListener('close', cleanup);
    };
    const fail = (error: Error): void => {
      complete = true;
      cleanup();
      // As raw-body halts a stream it gave up on: unpiped and paused, the rest left unread.
      stream.unpipe?.();
      stream.pause();
      buffers.release(memory);
      reject(error);
    };
    function onAborted(): void {
      if (!complete)
        fail(bodyError(400, 'request aborted', { code: 'ECONNABORTED', expected: length, length, received, type: 'request.aborted' }));
    }
    function onData(chunk: Buffer): void {
      if (complete) return;
      if (received + chunk.length > limit) {
        received += chunk.length;
        fail(bodyError(413, 'request entity too large', { limit, received, type: 'entity.too.large' }));
        return;
      }
      if (received + chunk.length > view.length) {
        // A body longer than declared space (chunked, inflated): into a larger buffer, the old one given back.
        const larger = buffers.acquire(received + chunk.length);
        const grown = Buffer.from(larger);
        view.copy(grown, 0, 0, received);
        buffers.release(memory);
        memory = larger;
        view = grown;
      }
      chunk.copy(view, received);
      received += chunk.length;
    }
    function onEnd(error?: Error): void {
      if (complete) return;
      if (error) {
        fail(error);
        return;
      }
      if (length !== null && received !== length) {
        fail(
          bodyError(400, 'request size did not match content length', { expected: length, length, received, type: 'request.size.invalid' }),
        );
        return;
      }
      complete = true;
      cleanup();
      const bytes = view.subarray(0, received);
      let released = false;
      resolve({
        bytes,
        release: (reuse) => {
          if (released) return;
          released = true;
          if (reuse) buffers.release(memory);
        },
      });
    }

    stream.on('aborted', onAborted);
    stream.on('close', cleanup);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onEnd);
  });
}
