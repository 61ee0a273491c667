import Router from '@koa/router';
import type { ApiDeps, AppState } from '../../context.js';

/**
 * Liveness and readiness. The one deliberate exception to "every endpoint needs a key": probes
 * from orchestrators carry no credentials, and these answers reveal nothing but up/down.
 */
export function healthRouter({ services }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  // Also reports this process's in-process search indexes against their memory budget: sizes only,
  // nothing about any tenant.
  router.get('/health', (ctx) => {
    ctx.body = { results: services.health.liveness() };
  });
  router.get('/ready', async (ctx) => {
    const readiness = await services.health.readiness();
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = { results: { status: readiness.ready ? 'ready' : 'not_ready', checks: readiness.checks } };
  });
  return router;
}
