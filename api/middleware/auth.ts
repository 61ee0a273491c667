import type { Middleware } from 'koa';
import { rateLimited, unauthenticated } from '../../core/errors.js';
import { TokenBuckets } from '../../core/token-bucket.js';
import type { AuthService } from '../../services/auth.js';
import type { AppState } from '../context.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves the API key to a principal. Failed authentications are rate limited per client
 * address (a token bucket of AUTH_FAILURE_RATE_PER_SECOND, AUTH_FAILURE_BURST): an address that
 * spent its failures gets 429 `rate_limited` with Retry-After, without a key lookup, except for
 * a key this process validated moments ago (so a client behind a shared address keeps working).
 * The address is the socket's peer, never X-Forwarded-For, which a client could vary at will.
 */
export function authenticate(auth: AuthService, failureRatePerSecond: number, failureBurst: number): Middleware<AppState> {
  const failures = new TokenBuckets(failureRatePerSecond, failureBurst);
  return async (ctx, next) => {
    const address = ctx.req.socket.remoteAddress ?? 'unknown';
    const refuse = (message: string): never => {
      const retryAfter = failures.take(address);
      if (retryAfter > 0) throw tooManyFailures(retryAfter);
      throw unauthenticated(message);
    };
    const header = ctx.get('Authorization');
    const key = header ? BEARER.exec(header)?.[1] : undefined;
    let principal = key ? auth.cachedPrincipal(key) : null;
    if (!principal) {
      const wait = failures.peek(address);
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

const tooManyFailures = (retryAfter: number) =>
  rateLimited(retryAfter, `Too many failed authentications from this address; retry after ${retryAfter} s`);
