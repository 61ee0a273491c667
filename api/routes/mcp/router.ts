import Router from '@koa/router';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { MemoryServiceClient } from '../../../client/rest.js';
import { createMcpServer } from '../../../mcp/server.js';
import type { ApiDeps, AppState } from '../../context.js';
import { bearerKey } from '../../middleware/auth.js';

/**
 * POST /mcp: the MCP server over Streamable HTTP, stateless (no session: every request carries
 * its API key, checked by the same authenticate middleware as every route, before this runs).
 * The tools call this same API through the REST client with the caller's key, so an MCP call
 * sees exactly what a REST call with that key sees. GET and DELETE (server-initiated streams,
 * session teardown) have no meaning without sessions and answer 405.
 */
export function mcpRouter({ logger }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.post('/mcp', async (ctx) => {
    const apiKey = bearerKey(ctx.get('Authorization'));
    // The tools talk to the very server that took this request, on the address it was reached at.
    const { localAddress, localPort } = ctx.req.socket;
    const host = localAddress?.includes(':') ? `[${localAddress}]` : (localAddress ?? '127.0.0.1');
    const client = new MemoryServiceClient({ baseUrl: `http://${host}:${localPort}`, apiKey: apiKey ?? '', retry: { retries: 1 } });
    const server = createMcpServer(client, {
      onUnexpectedError: (error, tool) =>
        logger.error({ err: error, tool, requestId: ctx.state.requestId }, 'MCP tool failed unexpectedly'),
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The transport writes the response itself; Koa must not.
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, ctx.request.body);
  });
  return router;
}
