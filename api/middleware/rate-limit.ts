import type { Middleware } from 'koa';
import { rateLimited } from '../../core/errors.js';
import { TokenBuckets } from '../../core/token-bucket.js';
import type { AppState } from '../context.js';

/**
 * Per-API-key token bucket, per process. With N API processes a key gets up to N times the
 * configured rate; a shared limiter (e.g. in MongoDB or Redis) is the upgrade path if needed.
 */
export function rateLimit(ratePerSecond: number, burst: number): Middleware<AppState> {
  const buckets = new TokenBuckets(ratePerSecond, burst);
  return async (ctx, next) => {
    const retryAfter = buckets.take(ctx.state.principal.keyId);
    if (retryAfter > 0) throw rateLimited(retryAfter);
    await next();
  };
}
