import type { Middleware } from 'koa';
import { AppError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { AppState } from '../context.js';

/**
 * A server-side deadline for every request behind it: whatever it waits on (the store, Temporal, a
 * search index reload), the client gets an answer. Past `timeoutMs` the request ends with 503
 * `request_timeout` and Retry-After. The request's signal is aborted first: work that takes it
 * stops at its next step; other abandoned work finishes or fails on its own, logged.
 */
export function deadline(timeoutMs: number, logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    const work = next();
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        expired = true;
        const error = new AppError(503, 'request_timeout', `The request did not finish within ${timeoutMs} ms; retry it`, undefined, {
          'Retry-After': '1',
        });
        // Before the answer: work that listens (device calls, their outbound requests and pool
        // tasks) stops and gives back its slot, so nothing it does lands after the client was told 503.
        ctx.state.abandon(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
      if (expired) {
        work.catch((error: unknown) =>
          logger.warn({ err: error, requestId: ctx.state.requestId, path: ctx.path }, 'request failed after its deadline'),
        );
      }
    }
  };
}
