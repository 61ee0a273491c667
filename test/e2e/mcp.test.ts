/**
 * The MCP server through the SDK's own client, over both transports: Streamable HTTP at /mcp on
 * the API and stdio (`npm run mcp`, the way a desktop assistant starts it). The same story on each:
 * add a memory, search finds it, delete it, search no longer does; then the refusals: no or a bad
 * API key, another tenant's memory and collection, bad arguments (stable code, field named, no
 * stack trace).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { projectRoot } from '../../config/index.js';
import { eventually, newTenant, stack, type TenantFixture } from '../support/client.js';
import { closeDatabase } from '../support/db.js';

after(closeDatabase);

const EXPECTED_TOOLS = [
  'add_memory',
  'delete_memory',
  'get_memory',
  'get_workflow_pattern',
  'list_collections',
  'list_memories',
  'list_workflow_patterns',
  'search_memories',
];

interface ToolError {
  error: { code: string; message: string; details: { field: string; issue: string }[] };
}

function httpTransport(apiKey: string): Transport {
  return httpTransportWithAuthorization(`Bearer ${apiKey}`);
}

function httpTransportWithAuthorization(authorization: string | undefined): Transport {
  const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
  return new StreamableHTTPClientTransport(new URL('/mcp', stack().apiUrl), { requestInit: { headers } });
}

function stdioTransport(apiKey: string): Transport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [path.join(projectRoot(), 'dist', 'bin', 'mcp.js')],
    env: { PATH: process.env.PATH ?? '', ENGRAM_URL: stack().apiUrl, ENGRAM_API_KEY: apiKey },
    stderr: 'pipe',
  });
}

async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'engram-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Calls a tool that must succeed; its text content is JSON. */
async function call<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? '';
  assert.ok(!result.isError, `${name} failed: ${text}`);
  return JSON.parse(text) as T;
}

/** Calls a tool that must fail; returns its error body. */
async function callFailing(client: Client, name: string, args: Record<string, unknown>): Promise<ToolError> {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.isError, true, `${name} should have failed`);
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? '';
  assert.doesNotMatch(text, /\n\s+at /, 'no stack trace');
  return JSON.parse(text) as ToolError;
}

interface SearchResult {
  hits: { memory_id: string; text: string }[];
}

const transports: [string, (apiKey: string) => Transport][] = [
  ['Streamable HTTP', httpTransport],
  ['stdio', stdioTransport],
];

for (const [label, makeTransport] of transports) {
  describe(`MCP over ${label}`, () => {
    let tenant: TenantFixture;
    let other: TenantFixture;
    let client: Client;
    before(async () => {
      [tenant, other] = await Promise.all([newTenant('mcp'), newTenant('mcp-other')]);
      client = await connect(makeTransport(tenant.apiKey));
    });
    after(async () => {
      await client?.close();
    });

    it('lists the tools, each with a description and an input schema', async () => {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name).sort(), EXPECTED_TOOLS);
      for (const tool of tools) {
        assert.ok((tool.description ?? '').length > 40, `${tool.name} has a description written for a model`);
        assert.equal(tool.inputSchema.type, 'object');
      }
      const search = tools.find((tool) => tool.name === 'search_memories');
      assert.deepEqual(search?.inputSchema.required, ['query', 'collection_ids']);
      assert.ok(
        search?.inputSchema.properties && 'as_of' in search.inputSchema.properties && 'include_history' in search.inputSchema.properties,
      );
    });

    it('adds a memory, finds it by search, deletes it, and search no longer finds it', async () => {
      const collections = await call<{ results: { id: string }[] }>(client, 'list_collections', {});
      assert.deepEqual(
        collections.results.map((collection) => collection.id),
        [tenant.collectionId],
      );
      const marker = label === 'stdio' ? 'marmalade' : 'quince';
      const added = await call<{ id: string; status: string }>(client, 'add_memory', {
        collection_id: tenant.collectionId,
        text: `The orchard's ${marker} trees were pruned on the first frost-free morning of March.`,
        name: 'orchard log',
        wait_seconds: 20,
      });
      assert.equal(added.status, 'complete');

      const query = { query: `${marker} trees pruned`, collection_ids: [tenant.collectionId] };
      const found = await call<SearchResult>(client, 'search_memories', query);
      assert.equal(found.hits[0]?.memory_id, added.id);
      assert.match(found.hits[0]?.text ?? '', new RegExp(marker));
      // The REST search's validity options pass through (docs/search.md, as_of and include_history).
      const asOf = await call<SearchResult>(client, 'search_memories', { ...query, as_of: '2030-01-01T00:00:00Z', include_history: true });
      assert.equal(asOf.hits[0]?.memory_id, added.id);

      const memory = await call<{ id: string; status: string; chunks: string[] }>(client, 'get_memory', { memory_id: added.id });
      assert.equal(memory.status, 'complete');
      const listed = await call<{ results: { id: string }[] }>(client, 'list_memories', { collection_ids: [tenant.collectionId] });
      assert.ok(listed.results.some((entry) => entry.id === added.id));

      assert.deepEqual(await call(client, 'delete_memory', { memory_id: added.id }), { id: added.id, deleted: true });
      await eventually(async () => {
        const after = await call<SearchResult>(client, 'search_memories', query);
        assert.ok(!after.hits.some((hit) => hit.memory_id === added.id), 'the deleted memory is still found');
      });
      const gone = await callFailing(client, 'get_memory', { memory_id: added.id });
      assert.equal(gone.error.code, 'memory_not_found');
    });

    it('adds a conversation', async () => {
      const added = await call<{ id: string; kind: string }>(client, 'add_memory', {
        collection_id: tenant.collectionId,
        messages: [
          { role: 'user', content: 'Remind me that the beehive inspection is on Friday.' },
          { role: 'assistant', content: 'Noted: beehive inspection on Friday.' },
        ],
      });
      assert.equal(added.kind, 'conversation');
    });

    it("answers another tenant's memory and collection as not found, exactly like REST", async () => {
      const theirs = await other.api.post('/v1/memories', {
        collection_id: other.collectionId,
        raw_text: 'Private notes of the other tenant.',
      });
      assert.equal(theirs.status, 202);
      const theirId = theirs.body.results.id as string;
      const rest = await tenant.api.get(`/v1/memories/${theirId}`);
      for (const [tool, args] of [
        ['get_memory', { memory_id: theirId }],
        ['delete_memory', { memory_id: theirId }],
      ] as const) {
        const refused = await callFailing(client, tool, args);
        assert.equal(refused.error.code, 'memory_not_found', tool);
        assert.equal(refused.error.code, rest.body.error.code);
      }
      const search = await callFailing(client, 'search_memories', { query: 'private notes', collection_ids: [other.collectionId] });
      assert.equal(search.error.code, 'collection_not_found');
      const add = await callFailing(client, 'add_memory', { collection_id: other.collectionId, text: 'sneaking in' });
      assert.equal(add.error.code, 'collection_not_found');
      // The other tenant still has its memory.
      assert.equal((await other.api.get(`/v1/memories/${theirId}`)).status, 200);
    });

    it('refuses bad arguments with a stable code and the field named', async () => {
      const cases: [string, Record<string, unknown>, string][] = [
        ['get_memory', { memory_id: 'not-a-uuid' }, 'memory_id'],
        ['search_memories', { query: 'x' }, 'collection_ids'],
        ['search_memories', { query: 'x', collection_ids: [tenant.collectionId], limit: 1000 }, 'limit'],
        ['add_memory', { collection_id: tenant.collectionId }, 'text'],
        ['add_memory', { collection_id: tenant.collectionId, text: 'a', messages: [{ role: 'user', content: 'b' }] }, 'text'],
        ['add_memory', { collection_id: tenant.collectionId, messages: [{ role: 'narrator', content: 'b' }] }, 'messages.0.role'],
        ['list_memories', { surprise: true }, '(arguments)'],
      ];
      for (const [tool, args, field] of cases) {
        const refused = await callFailing(client, tool, args);
        assert.equal(refused.error.code, 'validation_failed', `${tool} ${JSON.stringify(args)}`);
        assert.ok(
          refused.error.details.some((detail) => detail.field === field),
          `${tool} ${JSON.stringify(args)} names ${field}: ${JSON.stringify(refused.error.details)}`,
        );
      }
      const unknown = await callFailing(client, 'drop_database', {});
      assert.equal(unknown.error.code, 'tool_not_found');
      // The REST API's own validation comes through with its code and field, too.
      const tooLong = await callFailing(client, 'add_memory', { collection_id: tenant.collectionId, text: 'x', metadata: { ['$bad']: 1 } });
      assert.equal(tooLong.error.code, 'validation_failed');
      assert.ok(
        tooLong.error.details.some((detail) => detail.field.startsWith('metadata')),
        JSON.stringify(tooLong.error.details),
      );
    });
  });
}

describe('MCP authentication', () => {
  it('refuses the HTTP transport without a valid key, before any MCP message is read', async () => {
    const tenant = await newTenant('mcp-auth');
    const cases: [string, string | undefined][] = [
      ['no Authorization header', undefined],
      ['a key that does not exist', 'Bearer engram_not_a_real_key'],
      ['another scheme', `Basic ${Buffer.from(`user:${tenant.apiKey}`).toString('base64')}`],
      ['the key without its scheme', tenant.apiKey],
      ['an empty bearer', 'Bearer '],
    ];
    for (const [label, authorization] of cases) {
      const client = new Client({ name: 'engram-e2e', version: '1.0.0' });
      await assert.rejects(client.connect(httpTransportWithAuthorization(authorization)), (error: unknown) => {
        assert.match(String(error), /401|unauthenticated/i, label);
        return true;
      });
      // The same answer for a raw request: a plain 401 from the API's auth, not a JSON-RPC body.
      const raw = await fetch(new URL('/mcp', stack().apiUrl), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(authorization === undefined ? {} : { Authorization: authorization }) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(raw.status, 401, label);
      assert.equal(((await raw.json()) as { error: { code: string } }).error.code, 'unauthenticated', label);
    }
  });

  it('answers 405 to GET /mcp: the endpoint is stateless, there is no stream to open', async () => {
    const tenant = await newTenant('mcp-get');
    const response = await fetch(new URL('/mcp', stack().apiUrl), {
      headers: { Authorization: `Bearer ${tenant.apiKey}`, Accept: 'text/event-stream' },
    });
    assert.equal(response.status, 405);
    await response.body?.cancel();
  });

  it('gives stdio tools with a wrong key a clear unauthenticated error', async () => {
    const client = await connect(stdioTransport('engram_not_a_real_key'));
    try {
      const refused = await callFailing(client, 'list_collections', {});
      assert.equal(refused.error.code, 'unauthenticated');
    } finally {
      await client.close();
    }
  });
});
