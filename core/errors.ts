/**
 * Error factories. Every failure a client can see is an AppError with an HTTP status and a
 * stable machine-readable code; the API's one error handler turns it into one JSON body.
 */
export interface FieldIssue {
  /** Dotted path of the offending input, e.g. `messages.2.role` or `query.limit`. */
  field: string;
  issue: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: FieldIssue[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const validationError = (details: FieldIssue[]): AppError => {
  const first = details[0];
  const summary = first ? `${first.field}: ${first.issue}` : 'request is invalid';
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return new AppError(400, 'validation_failed', `Invalid request: ${summary}${more}`, details);
};

export const invalidJson = (message: string): AppError =>
  new AppError(400, 'invalid_json', `Request body is not valid JSON: ${message}`, [{ field: 'body', issue: message }]);

export const unauthenticated = (message = 'A valid API key is required (Authorization: Bearer <key>)'): AppError =>
  new AppError(401, 'unauthenticated', message, undefined, { 'WWW-Authenticate': 'Bearer' });

/** Missing and not-yours look the same, so another tenant's ids never leak. */
export const notFound = (resource: string, id: string, field?: string): AppError =>
  new AppError(
    404,
    `${resource}_not_found`,
    `No ${resource} with id ${id}`,
    field ? [{ field, issue: `no ${resource} with id ${id}` }] : undefined,
  );

export const routeNotFound = (method: string, path: string): AppError =>
  new AppError(404, 'route_not_found', `No route for ${method} ${path}`);

export const conflict = (code: string, message: string, field?: string): AppError =>
  new AppError(409, code, message, field ? [{ field, issue: message }] : undefined);

export const unprocessable = (code: string, message: string, field?: string): AppError =>
  new AppError(422, code, message, field ? [{ field, issue: message }] : undefined);

export const payloadTooLarge = (limitBytes: number): AppError =>
  new AppError(413, 'payload_too_large', `Request body exceeds the ${limitBytes} byte limit`);

export const unsupportedMediaType = (message: string): AppError => new AppError(415, 'unsupported_media_type', message);

/** The client closed the connection before its body was read in full (nobody may read this answer). */
export const requestAborted = (): AppError =>
  new AppError(400, 'request_aborted', 'The connection was closed before the request body was read in full');

/** The body ended before, or went past, the length its Content-Length header declared. */
export const bodyLengthMismatch = (): AppError =>
  new AppError(400, 'body_length_mismatch', 'The request body is not as long as its Content-Length header says', [
    { field: 'Content-Length', issue: 'does not match the body' },
  ]);

export const rateLimited = (retryAfterSeconds: number, message = `Too many requests; retry after ${retryAfterSeconds} s`): AppError =>
  new AppError(429, 'rate_limited', message, undefined, {
    'Retry-After': String(retryAfterSeconds),
  });

export const serviceUnavailable = (code: string, message: string, retryAfterSeconds?: number): AppError =>
  new AppError(503, code, message, undefined, retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(retryAfterSeconds) });

export const internalError = (): AppError => new AppError(500, 'internal_error', 'Internal server error');
