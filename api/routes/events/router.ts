/**
 * Live-event endpoints over HTTP: minting the single-use WebSocket ticket, and a clear answer
 * for a plain GET on the WebSocket path (which only streams after an upgrade).
 */
import Router from '@koa/router';
import { AppError } from '../../../core/errors.js';
import type { ApiDeps, AppState } from '../../context.js';

export function eventsRouter({ services }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });

  router.post('/users/ws-ticket', async (ctx) => {
    const { ticket, expiresAt } = await services.tickets.mint(ctx.state.principal);
    const scheme = ctx.protocol === 'https' ? 'wss' : 'ws';
    ctx.status = 201;
    ctx.body = {
      results: {
        ticket,
        expires_at: expiresAt.toISOString(),
        ws_url: `${scheme}://${ctx.host}/v1/ws/memory-events?ticket=${encodeURIComponent(ticket)}`,
      },
    };
  });

  router.get('/memory-events/signing-keys', async (ctx) => {
    // A JWKS: `keys` at the top level, as JWT libraries expect; public parts only.
    ctx.body = await services.signingKeys();
  });

  return router;
}

/**
 * The WebSocket path answers a plain GET (no upgrade) with 426 instead of hanging. It is mounted
 * before API-key authentication: this path is authenticated by its ticket, not a bearer key.
 */
export function websocketPathRouter(): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  router.get('/ws/memory-events', () => {
    throw new AppError(
      426,
      'websocket_upgrade_required',
      'This endpoint streams events over WebSocket only: connect with a WebSocket client (Upgrade: websocket) and a ticket from POST /v1/users/ws-ticket',
    );
  });
  return router;
}
