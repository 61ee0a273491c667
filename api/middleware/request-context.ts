import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../core/logger.js';
import type { AppState } from '../context.js';

/** Request id (echoed as X-Request-Id), one structured access-log line per request, and no reuse of a half-read connection. */
export function requestContext(logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    ctx.state.requestId = /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.input = {};
    ctx.set('X-Request-Id', ctx.state.requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      // Answered before the whole request body arrived (a refused or oversize upload): the unread
      // rest would stall the connection for the client's next request, so it is not kept alive.
      if (!ctx.req.complete && !ctx.headerSent) ctx.set('Connection', 'close');
      logger.info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          tenantId: ctx.state.principal?.tenantId,
          workflowId: ctx.state.workflowId ?? undefined,
        },
        'request',
      );
    }
  };
}
