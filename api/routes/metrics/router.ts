/**
 * GET /metrics: Prometheus exposition. Mounted before API-key authentication: with METRICS_TOKEN
 * set it needs that bearer token; without, only loopback peers get an answer. The peer is the
 * socket's address, never X-Forwarded-For, which a client can write.
 */
import Router from '@koa/router';
import { AppError } from '../../../core/errors.js';
import { metricsAccessAllowed, metricsRegistry, scrapeMetrics } from '../../../core/metrics.js';
import type { ApiDeps, AppState } from '../../context.js';

export function metricsRouter({ config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/metrics', async (ctx) => {
    const token = config.METRICS_TOKEN;
    if (!metricsAccessAllowed(token, ctx.get('Authorization'), ctx.req.socket.remoteAddress)) {
      throw new AppError(
        403,
        'metrics_forbidden',
        token ? 'GET /metrics needs the METRICS_TOKEN bearer token' : 'GET /metrics answers loopback clients only',
      );
    }
    ctx.type = metricsRegistry.contentType;
    ctx.body = await scrapeMetrics();
  });
  return router;
}
