import type { Middleware } from 'koa';
import { AppError, rateLimited } from '../../core/errors.js';
import { requestBodyBytesInFlight } from '../../core/metrics.js';
import { WorkSlots } from '../../core/work-slots.js';
import type { AppState } from '../context.js';

/**
 * Bounds the request bodies an API process holds at once, per process and per tenant, before
 * any byte of them is read: a body weighs its Content-Length, or the body limit when it is
 * chunked (its size is unknown until read). It stays counted until the request ends, as the
 * parsed body lives that long. Beyond the tenant's share: 429 `rate_limited`; beyond the
 * process's: 503 `server_busy`; both with Retry-After, refused at once (nothing waits).
 */
export function bodiesInFlight(processBytes: number, tenantBytes: number, bodyLimit: number): Middleware<AppState> {
  const slots = new WorkSlots(processBytes, tenantBytes, (bytes) => requestBodyBytesInFlight.set(bytes));
  return async (ctx, next) => {
    const bytes = declaredBodyBytes(ctx.get('content-length'), ctx.get('transfer-encoding'), bodyLimit);
    if (bytes === 0) return next();
    const slot = slots.acquire(ctx.state.principal.tenantId, undefined, bytes);
    if ('refused' in slot) {
      if (slot.refused === 'key') throw rateLimited(1, 'Too many request bodies of this tenant in flight; retry after 1 s');
      throw new AppError(503, 'server_busy', 'The server holds too many request bodies; retry after 1 s', undefined, {
        'Retry-After': '1',
      });
    }
    try {
      await next();
    } finally {
      slot.release();
    }
  };
}

/** What a body will weigh: its declared length (at most the limit, above which it is refused anyway), the limit if chunked, else 0. */
export function declaredBodyBytes(contentLength: string, transferEncoding: string, bodyLimit: number): number {
  if (contentLength !== '') {
    const length = Number(contentLength);
    if (Number.isSafeInteger(length) && length >= 0) return Math.min(length, bodyLimit);
    return bodyLimit;
  }
  return transferEncoding !== '' ? bodyLimit : 0;
}
