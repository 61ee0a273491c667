/** Device memory responses. A snapshot is sent as the pieces it was sealed in: never re-serialised or joined. */
import { Readable } from 'node:stream';
import type { ParameterizedContext } from 'koa';
import type { SnapshotOutcome } from '../../../services/device-memory.js';
import type { AppState } from '../../context.js';

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
