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
    const abandonment = new AbortController();
    ctx.state.signal = abandonment.signal;
    ctx.state.abandon = (reason) => abandonment.abort(reason);
    // The client went away before its answer was written: nobody waits for the work any more.
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) abandonment.abort(new Error('the client closed the connection before the answer'));
    });
    ctx.set('X-Request-Id', ctx.state.requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      // A body read in part and then abandoned (an upload refused mid-stream) leaves its rest on
      // the connection, where the client's next request would stall: that connection is not kept
      // alive. A body never read at all (refused on its headers) is drained by Node and the
      // connection stays usable; closing it would cut off a client still sending (EPIPE).
      const abandoned = !ctx.req.complete && (ctx.req.readableDidRead || ctx.req.destroyed);
      if (abandoned && !ctx.headerSent) ctx.set('Connection', 'close');
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
