/**
 * Turns zod schema failures into one ValidationError (400) whose details name each field.
 * Validated values land in ctx.state.input; routes read only those.
 */
import type { Middleware, ParameterizedContext } from 'koa';
import type { z } from 'zod';
import { unsupportedMediaType, validationError, type FieldIssue } from '../../core/errors.js';
import type { AppState } from '../context.js';

interface Schemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
}

export function issuesOf(error: z.ZodError, location: string): FieldIssue[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') message = `unrecognized field(s): ${issue.keys.join(', ')}`;
    return { field: path || location, issue: message };
  });
}

export function validate(schemas: Schemas): Middleware<AppState> {
  return async (ctx, next) => {
    const details: FieldIssue[] = [];
    if (schemas.body) {
      if (ctx.request.length && !ctx.is('application/json')) {
        throw unsupportedMediaType('Request bodies must be JSON (Content-Type: application/json)');
      }
      const parsed = schemas.body.safeParse((ctx.request as { body?: unknown }).body);
      if (parsed.success) ctx.state.input.body = parsed.data;
      else details.push(...issuesOf(parsed.error, 'body'));
    }
    if (schemas.query) {
      const parsed = schemas.query.safeParse(ctx.query);
      if (parsed.success) ctx.state.input.query = parsed.data;
      else details.push(...issuesOf(parsed.error, 'query'));
    }
    if (schemas.params) {
      const parsed = schemas.params.safeParse((ctx as unknown as { params: unknown }).params);
      if (parsed.success) ctx.state.input.params = parsed.data;
      else details.push(...issuesOf(parsed.error, 'params'));
    }
    if (details.length > 0) throw validationError(details);
    await next();
  };
}

type Parsed<T> = T extends z.ZodType ? z.output<T> : undefined;

/** What a handler receives: the validated values, typed by the very schemas that validated them. */
export interface ValidatedInput<S extends Schemas> {
  body: Parsed<S['body']>;
  query: Parsed<S['query']>;
  params: Parsed<S['params']>;
}

/**
 * A validated route handler: `validate` then the handler, which gets the input with the types
 * inferred from `schemas`, so no handler casts `ctx.state.input`.
 */
export function handle<S extends Schemas>(
  schemas: S,
  handler: (ctx: ParameterizedContext<AppState>, input: ValidatedInput<S>) => Promise<void>,
): Middleware<AppState> {
  const check = validate(schemas);
  // The one place the validated values meet their inferred types. The handler ends the chain, as a
  // plain route handler does: calling next() would run what is mounted after the router (e.g.
  // authentication after the signed-upload PUT, which carries no API key).
  return (ctx) => check(ctx, () => handler(ctx, ctx.state.input as ValidatedInput<S>));
}
