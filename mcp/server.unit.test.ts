/**
 * The MCP tools against a fake REST service (an in-process fetch), through the SDK's own client
 * over its in-memory transport: what each tool sends, and how every kind of failure reaches the
 * model (stable code, fields named, nothing of a stack trace or an internal message).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { MemoryServiceClient } from '../client/rest.js';
import { createMcpServer, TOOLS } from './server.js';

const COLLECTION = '0b6f2f0e-4c1a-4f7e-9d54-6a3c1e2f9b10';
const MEMORY = '5d0c7f1e-2b3a-4c5d-8e9f-0a1b2c3d4e5f';

interface Recorded {
  method: string;
  path: string;
  body: unknown;
  authorization: string | null;
}

/** A client whose fetch answers with `respond` and records each request. */
async function connectWith(respond: (request: Recorded) => Response | Promise<Response>) {
  const requests: Recorded[] = [];
  const fakeFetch: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers = new Headers(init?.headers);
    const recorded = {
      method: init?.method ?? 'GET',
      path: `${url.pathname}${url.search}`,
      body: typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined,
      authorization: headers.get('authorization'),
    };
    requests.push(recorded);
    return respond(recorded);
  };
  const rest = new MemoryServiceClient({ baseUrl: 'http://engram.test', apiKey: 'mk_test', fetch: fakeFetch, retry: { retries: 0 } });
  const unexpected: string[] = [];
  const server = createMcpServer(rest, { onUnexpectedError: (_error, tool) => unexpected.push(tool) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'unit', version: '1.0.0' });
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    const text = (result.content as { text: string }[])[0]?.text ?? '';
    return { isError: result.isError === true, text, json: JSON.parse(text) as Record<string, unknown> };
  };
  return { client, call, requests, unexpected };
}

const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('MCP tools', () => {
  it('publish an object schema and a model-sized description each', () => {
    assert.equal(new Set(TOOLS.map((tool) => tool.name)).size, TOOLS.length);
    for (const tool of TOOLS) assert.ok(tool.description.length > 40, tool.name);
  });

  it('send what the REST API expects, with the caller key', async () => {
    const { call, requests } = await connectWith((request) => {
      if (request.path === '/v1/memories' && request.method === 'POST') {
        return json(202, { results: { id: MEMORY, status: 'queued', kind: 'document', collection_id: COLLECTION } });
      }
      return json(200, { results: { query: 'q', hits: [], total_hits: 0 } });
    });
    const added = await call('add_memory', { collection_id: COLLECTION, text: 'Remember the milk', metadata: { team: 'core' } });
    assert.deepEqual(added.json, { id: MEMORY, status: 'queued', kind: 'document' });
    await call('search_memories', {
      query: 'milk',
      collection_ids: [COLLECTION],
      limit: 5,
      metadata_filters: { 'metadata.team': { $eq: 'core' } },
    });
    assert.deepEqual(
      requests.map((request) => [request.method, request.path, request.body, request.authorization]),
      [
        [
          'POST',
          '/v1/memories',
          { collection_id: COLLECTION, metadata: { team: 'core' }, raw_text: 'Remember the milk' },
          'Bearer mk_test',
        ],
        [
          'POST',
          '/v1/memories/search',
          { query: 'milk', collection_ids: [COLLECTION], limit: 5, metadata_filters: { 'metadata.team': { $eq: 'core' } } },
          'Bearer mk_test',
        ],
      ],
    );
  });

  it('turn every failure into a stable code with the fields named, never a stack trace', async () => {
    const { call, unexpected } = await connectWith((request) => {
      if (request.path.startsWith('/v1/memories/')) {
        return json(404, { error: { code: 'memory_not_found', message: `memory ${MEMORY} not found`, details: [] } });
      }
      if (request.path.startsWith('/v1/collections')) throw new TypeError('secret internal detail at Object.<anonymous> (/srv/x.js:1:1)');
      return json(400, { error: { code: 'validation_failed', message: 'bad', details: [{ field: 'metadata', issue: 'too large' }] } });
    });
    const cases: [string, Record<string, unknown>, string, string | undefined][] = [
      ['get_memory', { memory_id: MEMORY }, 'memory_not_found', undefined],
      ['get_memory', { memory_id: 'x' }, 'validation_failed', 'memory_id'],
      ['get_memory', {}, 'validation_failed', 'memory_id'],
      ['add_memory', { collection_id: COLLECTION, text: 'a', metadata: { big: true } }, 'validation_failed', 'metadata'],
      ['add_memory', { collection_id: COLLECTION }, 'validation_failed', 'text'],
      ['search_memories', { query: '', collection_ids: [COLLECTION] }, 'validation_failed', 'query'],
      ['search_memories', { query: 'x', collection_ids: [] }, 'validation_failed', 'collection_ids'],
      ['list_memories', { limit: 0 }, 'validation_failed', 'limit'],
      ['delete_memory', { memory_id: MEMORY, extra: 1 }, 'validation_failed', '(arguments)'],
      ['list_collections', {}, 'service_unreachable', undefined],
      ['no_such_tool', {}, 'tool_not_found', 'name'],
    ];
    for (const [tool, args, code, field] of cases) {
      const result = await call(tool, args);
      const label = `${tool} ${JSON.stringify(args)}: ${result.text}`;
      assert.equal(result.isError, true, label);
      const error = result.json.error as { code: string; message: string; details: { field: string }[] };
      assert.equal(error.code, code, label);
      if (field !== undefined)
        assert.ok(
          error.details.some((detail) => detail.field === field),
          label,
        );
      assert.doesNotMatch(result.text, /secret internal detail|\n\s+at /, label);
    }
    assert.deepEqual(unexpected, ['list_collections'], 'the unreachable service is logged');
  });
});
