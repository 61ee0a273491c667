/**
 * `npm run mcp`: the MCP server over stdio, for desktop assistants that start it as a child
 * process. Configured by the environment, like the CLI: ENGRAM_URL (default http://127.0.0.1:8080)
 * and ENGRAM_API_KEY. Standard output carries the protocol only; diagnostics go to standard error.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MemoryServiceClient } from '../client/rest.js';
import { createMcpServer } from '../mcp/server.js';

async function main(): Promise<number> {
  const baseUrl = process.env.ENGRAM_URL ?? 'http://127.0.0.1:8080';
  const apiKey = process.env.ENGRAM_API_KEY;
  if (!apiKey) {
    process.stderr.write('engram mcp: set ENGRAM_API_KEY (and ENGRAM_URL if the service is not at http://127.0.0.1:8080)\n');
    return 2;
  }
  const client = new MemoryServiceClient({ baseUrl, apiKey });
  const server = createMcpServer(client, {
    onUnexpectedError: (error, tool) =>
      process.stderr.write(`engram mcp: ${tool} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
  });
  const transport = new StdioServerTransport();
  await server.connect(transport);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  process.stdin.once('end', () => void server.close());
  await closed;
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`engram mcp: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
