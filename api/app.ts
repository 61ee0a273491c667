/** The Koa application: one middleware chain, then the resource routers. */
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import type { ApiDeps, AppState } from './context.js';
import { AuthFailures } from '../core/auth-failures.js';
import { authenticate } from './middleware/auth.js';
import { bodiesInFlight } from './middleware/bodies-in-flight.js';
import { deadline } from './middleware/deadline.js';
import { errorHandler } from './middleware/errors.js';
import { pooledJsonBody } from './middleware/pooled-json-body.js';
import { SharedBodyBuffers } from './middleware/shared-body.js';
import { httpMetrics } from './middleware/metrics.js';
import { rateLimit } from './middleware/rate-limit.js';
import { requestContext } from './middleware/request-context.js';
import { openApiRouter } from './openapi/router.js';
import { collectionsRouter } from './routes/collections/router.js';
import { deviceMemoryRouter } from './routes/device-memory/router.js';
import { eventsRouter, websocketPathRouter } from './routes/events/router.js';
import { healthRouter } from './routes/health/router.js';
import { mcpRouter } from './routes/mcp/router.js';
import { memoriesRouter } from './routes/memories/router.js';
import { metricsRouter } from './routes/metrics/router.js';
import { searchRouter } from './routes/search/router.js';
import { signedUploadRouter, uploadsRouter } from './routes/uploads/router.js';
import { webhooksRouter } from './routes/webhooks/router.js';
import { workflowsRouter } from './routes/workflows/router.js';

export function createApp(deps: ApiDeps): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: true });
  app.use(requestContext(deps.logger));
  app.use(httpMetrics());
  app.use(errorHandler(deps.logger, deps.config.BODY_LIMIT_BYTES));

  const health = healthRouter(deps);
  app.use(health.routes());
  app.use(openApiRouter(deps).routes());
  app.use(metricsRouter(deps).routes());
  // Presigned PUTs: authenticated by their signature, and their body must stay a raw stream.
  const failures = deps.authFailures ?? new AuthFailures(deps.config.AUTH_FAILURE_RATE_PER_SECOND, deps.config.AUTH_FAILURE_BURST);
  const signedUploads = signedUploadRouter(deps, failures);
  app.use(signedUploads.routes());
  app.use(websocketPathRouter().routes());

  // Uploads stream up to 100 MB and are bounded by their own size limit; everything below has a deadline.
  app.use(deadline(deps.config.REQUEST_TIMEOUT_MS, deps.logger));

  app.use(authenticate(deps.services.auth, failures));
  app.use(rateLimit(deps.config.RATE_LIMIT_PER_SECOND, deps.config.RATE_LIMIT_BURST));
  app.use(bodiesInFlight(deps.config.BODY_BYTES_IN_FLIGHT_MAX, deps.config.BODY_BYTES_IN_FLIGHT_PER_TENANT, deps.config.BODY_LIMIT_BYTES));
  // Device snapshots' bodies are hashed there too: their digest covers the JSON text of `snapshot.body`.
  app.use(
    pooledJsonBody({
      pool: deps.bodyPool ?? null,
      limit: deps.config.BODY_LIMIT_BYTES,
      digestPaths: [['snapshot', 'body']],
      // Device calls send the same snapshot again and again (api/routes/device-memory/presenter.ts inlineSnapshot).
      knownSpan: { key: 'snapshot', lookup: (tenantId, digest) => deps.services.deviceMemory.preparedBySpan(tenantId, digest) },
      buffers: new SharedBodyBuffers(),
    }),
  );
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: deps.config.BODY_LIMIT_BYTES, jsonStrict: true }));

  // Search is mounted before memories so /v1/memories/search is not read as a memory id.
  for (const router of [
    searchRouter(deps),
    collectionsRouter(deps),
    memoriesRouter(deps),
    deviceMemoryRouter(deps),
    uploadsRouter(deps),
    eventsRouter(deps),
    workflowsRouter(deps),
    webhooksRouter(deps),
    mcpRouter(deps),
  ]) {
    app.use(router.routes());
    app.use(router.allowedMethods({ throw: false }));
  }
  return app;
}
