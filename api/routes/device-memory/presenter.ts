/** Device memory responses. A snapshot is sent as the pieces it was sealed in: never re-serialised or joined. */
import { Readable } from 'node:stream';
import type { ParameterizedContext } from 'koa';
import { AppError } from '../../../core/errors.js';
import type { SnapshotOutcome, SnapshotSource } from '../../../services/device-memory.js';
import type { AppState } from '../../context.js';

/**
 * An inline snapshot is the request body: its byte cap (SNAPSHOT_MAX_BYTES) is checked on the
 * bytes the body parser actually read, before the snapshot is opened. Content-Length alone would
 * let a chunked body (no Content-Length) through; bodies are bounded by BODY_LIMIT_BYTES while
 * they are read.
 */
export function assertSnapshotBodySize(ctx: ParameterizedContext<AppState>, maxBytes: number): void {
  const raw: unknown = ctx.request.rawBody;
  // A body parsed on a worker thread has no rawBody here: the thread counted the same bytes.
  const length = ctx.state.parsedBody?.textBytes ?? (typeof raw === 'string' ? Buffer.byteLength(raw, 'utf8') : ctx.request.length);
  if (length !== undefined && length > maxBytes) {
    throw new AppError(413, 'snapshot_too_large', `the request carries ${length} bytes; the snapshot cap is ${maxBytes}`, [
      { field: 'snapshot', issue: `larger than ${maxBytes} bytes` },
    ]);
  }
}

/**
 * The inline snapshot a device call opens. A request parsed on a worker thread brings the digest
 * of the body's JSON text (openSnapshot then neither writes the body out again nor hashes it on
 * the event loop) and the digest of the snapshot's exact bytes (remembered once it opens); bytes
 * this tenant sent before come as the prepared snapshot they opened to, unparsed.
 */
export function inlineSnapshot(ctx: ParameterizedContext<AppState>, snapshot: Record<string, unknown>): SnapshotSource {
  const span = ctx.state.parsedBody?.span;
  // Bytes this tenant sent before: the body parser left them unparsed (`snapshot` reads {} here).
  if (span?.key === 'snapshot' && span.prepared) return { prepared: span.prepared };
  const body = snapshot.body;
  const sent = typeof body === 'object' && body !== null ? ctx.state.parsedBody?.digests.get(body) : undefined;
  return { snapshot, ...(sent ? { sent } : {}), ...(span?.key === 'snapshot' ? { spanDigest: span.digest } : {}) };
}

/** `{"results": <snapshot>}` (export) or `{"results": {"snapshot": <snapshot>}}` (device create), or the receipt of a PUT. */
export function respondWithSnapshot(ctx: ParameterizedContext<AppState>, outcome: SnapshotOutcome, nested: boolean): void {
  if ('receipt' in outcome) {
    ctx.body = { results: outcome.receipt };
    return;
  }
  const open = Buffer.from(nested ? '{"results":{"snapshot":' : '{"results":');
  const close = Buffer.from(nested ? '}}' : '}');
  const pieces = [open, ...outcome.snapshot.pieces, close];
  ctx.type = 'application/json';
  ctx.length = pieces.reduce((sum, piece) => sum + piece.length, 0);
  ctx.body = Readable.from(pieces);
}
