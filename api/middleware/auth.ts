import type { Middleware } from 'koa';
import { unauthenticated } from '../../core/errors.js';
import type { AuthService } from '../../services/auth.js';
import type { AppState } from '../context.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function authenticate(auth: AuthService): Middleware<AppState> {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    if (!header) throw unauthenticated('Missing Authorization header; send Authorization: Bearer <api key>');
    const match = BEARER.exec(header);
    if (!match?.[1]) throw unauthenticated('Authorization header must be of the form Bearer <api key>');
    const principal = await auth.authenticate(match[1]);
    if (!principal) throw unauthenticated('The API key is not valid or has been revoked');
    ctx.state.principal = principal;
    await next();
  };
}
