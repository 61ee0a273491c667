import type { Middleware } from 'koa';
import { httpRequestDuration } from '../../core/metrics.js';
import type { AppState } from '../context.js';

/** Request duration by method, route template (not the raw path: ids would explode the labels) and status. */
export function httpMetrics(): Middleware<AppState> {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      httpRequestDuration.observe({ method: ctx.method, route, status: String(ctx.status) }, (performance.now() - started) / 1000);
    }
  };
}
