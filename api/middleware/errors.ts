/**
 * The one error handler: every failure leaves the API as
 * `{ "error": { "status", "code", "message", "details"?, "request_id" } }`.
 */
import type { Middleware } from 'koa';
import {
  AppError,
  bodyLengthMismatch,
  internalError,
  invalidJson,
  payloadTooLarge,
  requestAborted,
  routeNotFound,
  unsupportedMediaType,
} from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { AppState } from '../context.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message?: string;
}

function toAppError(error: unknown, bodyLimit: number): AppError | null {
  if (error instanceof AppError) return error;
  const candidate = error as HttpishError;
  const status = candidate?.status ?? candidate?.statusCode;
  if (status === 413 || candidate?.type === 'entity.too.large') return payloadTooLarge(bodyLimit);
  if (status === 400 && (candidate.type === 'entity.parse.failed' || /JSON/i.test(candidate.message ?? ''))) {
    return invalidJson(candidate.message ?? 'malformed JSON');
  }
  if (status === 415) return unsupportedMediaType(candidate.message ?? 'Unsupported media type');
  // raw-body's (and so co-body's) reads of a body that did not arrive whole: the client's doing, not a bug.
  if (candidate?.type === 'request.aborted') return requestAborted();
  if (candidate?.type === 'request.size.invalid') return bodyLengthMismatch();
  return null;
}

export function errorHandler(logger: Logger, bodyLimit: number): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw routeNotFound(ctx.method, ctx.path);
    } catch (error) {
      let appError = toAppError(error, bodyLimit);
      if (!appError) {
        logger.error({ err: error, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
        appError = internalError();
      }
      ctx.status = appError.status;
      for (const [name, value] of Object.entries(appError.headers ?? {})) ctx.set(name, value);
      ctx.body = {
        error: {
          status: appError.status,
          code: appError.code,
          message: appError.message,
          ...(appError.details ? { details: appError.details } : {}),
          request_id: ctx.state.requestId,
        },
      };
    }
  };
}
