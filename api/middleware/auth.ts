import type { Middleware } from 'koa';
import { type AuthFailures, tooManyFailures } from '../../core/auth-failures.js';
import { AppError, unauthenticated } from '../../core/errors.js';
import type { AuthService } from '../../services/auth.js';
import type { AppState } from '../context.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The API key of an `Authorization: Bearer <key>` header, or undefined. */
export const bearerKey = (header: string | undefined): string | undefined => (header ? BEARER.exec(header)?.[1] : undefined);

/** The address failures are charged to: the socket's peer of a request (HTTP or WebSocket upgrade). */
export const peerOf = (request: { socket: { remoteAddress?: string } }): string => request.socket.remoteAddress ?? 'unknown';

/**
 * Resolves the API key to a principal. Failed authentications are charged to the address's
 * AuthFailures bucket; once spent, 429 without a key lookup, except for a key this process
 * validated moments ago (so a client behind a shared address keeps working).
 */
export function authenticate(auth: AuthService, failures: AuthFailures): Middleware<AppState> {
  return async (ctx, next) => {
    const address = peerOf(ctx.req);
    const refuse = (message: string): never => {
      const retryAfter = failures.charge(address);
      if (retryAfter > 0) throw tooManyFailures(retryAfter);
      throw unauthenticated(message);
    };
    const header = ctx.get('Authorization');
    const key = bearerKey(header);
    let principal = key ? auth.cachedPrincipal(key) : null;
    if (!principal) {
      const wait = failures.wait(address);
      if (wait > 0) throw tooManyFailures(wait);
      if (!header) refuse('Missing Authorization header; send Authorization: Bearer <api key>');
      if (!key) refuse('Authorization header must be of the form Bearer <api key>');
      principal = await auth.authenticate(key!);
      if (!principal) refuse('The API key is not valid or has been revoked');
    }
    ctx.state.principal = principal!;
    await next();
  };
}

/**
 * For a route whose credential is in the request itself (a signed URL): refuses a spent address
 * with 429 before the route runs, and charges the refusals whose code `codes` names (a bad
 * signature) to the same bucket as failed authentications.
 */
export function chargeCredentialFailures(failures: AuthFailures, codes: ReadonlySet<string>): Middleware<AppState> {
  return async (ctx, next) => {
    const address = peerOf(ctx.req);
    const wait = failures.wait(address);
    if (wait > 0) throw tooManyFailures(wait);
    try {
      await next();
    } catch (error) {
      if (error instanceof AppError && codes.has(error.code)) {
        const retryAfter = failures.charge(address);
        if (retryAfter > 0) throw tooManyFailures(retryAfter);
      }
      throw error;
    }
  };
}
