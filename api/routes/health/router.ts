import Router from '@koa/router';
import type { ApiDeps, AppState } from '../../context.js';

/**
 * Liveness and readiness. The one deliberate exception to "every endpoint needs a key": probes
 * from orchestrators carry no credentials, and these answers reveal nothing but up/down.
 */
export function healthRouter({ services }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  router.get('/health', (ctx) => {
    ctx.body = { results: { status: 'ok' } };
  });
  router.get('/ready', async (ctx) => {
    const readiness = await services.health.readiness();
    ctx.status = readiness.ready ? 200 : 503;
    ctx.body = { results: { status: readiness.ready ? 'ready' : 'not_ready', checks: readiness.checks } };
  });
  return router;
}
