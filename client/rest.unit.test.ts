/** The REST client's retry, error and idempotency rules, against a loopback HTTP server. */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { ERROR_CODES } from '../api/openapi/responses.js';
import { API_ERROR_CODES, ApiError, MemoryServiceClient, retryAfterMs } from './rest.js';

type Reply = { status: number; headers?: Record<string, string>; body: unknown };
let replies: Reply[] = [];
const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
let server: http.Server;
let baseUrl = '';

before(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (part: Buffer) => (body += String(part)));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      const reply = replies.shift() ?? { status: 500, body: { error: { code: 'internal_error', message: 'no reply queued' } } };
      response.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const client = (retries = 3) => new MemoryServiceClient({ baseUrl, apiKey: 'mk_test', retry: { retries, minDelayMs: 1, maxDelayMs: 50 } });
const accepted = { results: { id: 'm1', status: 'queued', collection_id: 'c', kind: 'document', workflow_id: 'w', created_at: 'now' } };
const error = (status: number, code: string, headers?: Record<string, string>): Reply => ({
  status,
  headers,
  body: { error: { status, code, message: code, request_id: 'r1' } },
});

test('the client knows exactly the error codes the OpenAPI registry documents', () => {
  assert.deepEqual([...API_ERROR_CODES].sort(), Object.keys(ERROR_CODES).sort());
});

test('Retry-After: seconds, an HTTP date, or nothing', () => {
  assert.equal(retryAfterMs('3'), 3000);
  assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6000);
  assert.equal(retryAfterMs(null), null);
  assert.equal(retryAfterMs('soon'), null);
});

test('429 and 503 are retried (honouring Retry-After) with the same idempotency key', async () => {
  seen.length = 0;
  replies = [error(429, 'rate_limited', { 'Retry-After': '0' }), error(503, 'orchestrator_unavailable'), { status: 202, body: accepted }];
  const memory = await client().memories.create({ collection_id: 'c', raw_text: 'x' });
  assert.equal(memory.id, 'm1');
  assert.equal(seen.length, 3);
  const keys = new Set(seen.map((request) => request.headers['idempotency-key']));
  assert.equal(keys.size, 1, 'one key across the retries');
  assert.ok([...keys][0]);
  assert.equal(seen[0]!.headers.authorization, 'Bearer mk_test');
});

test('a caller-given idempotency key is sent as is', async () => {
  seen.length = 0;
  replies = [{ status: 202, body: accepted }];
  await client().memories.create({ collection_id: 'c', raw_text: 'x' }, { idempotencyKey: 'order-42' });
  assert.equal(seen[0]!.headers['idempotency-key'], 'order-42');
});

test('gives up after the configured retries with the last error', async () => {
  seen.length = 0;
  replies = [error(429, 'rate_limited', { 'Retry-After': '0' }), error(429, 'rate_limited', { 'Retry-After': '0' })];
  await assert.rejects(client(1).memories.get('m1'), (failure: unknown) => failure instanceof ApiError && failure.is('rate_limited'));
  assert.equal(seen.length, 2);
});

test('other errors are not retried and arrive typed, with details and the request id', async () => {
  for (const [status, code] of [
    [404, 'memory_not_found'],
    [400, 'validation_failed'],
    [401, 'unauthenticated'],
    [409, 'collection_name_taken'],
    [500, 'internal_error'],
  ] as const) {
    seen.length = 0;
    replies = [error(status, code)];
    await assert.rejects(client().memories.get('m1'), (failure: unknown) => {
      assert.ok(failure instanceof ApiError);
      assert.equal(failure.status, status);
      assert.equal(failure.code, code);
      assert.equal(failure.requestId, 'r1');
      return true;
    });
    assert.equal(seen.length, 1, `${code} is not retried`);
  }
});

test('list filters become query parameters', async () => {
  seen.length = 0;
  replies = [{ status: 200, body: { results: [], total_entries: 0 } }];
  await client().memories.list({ collectionIds: ['a', 'b'], limit: 5, offset: 10, metadataFilters: { 'metadata.team': { $eq: 'core' } } });
  const url = new URL(seen[0]!.url, baseUrl);
  assert.equal(url.pathname, '/v1/memories');
  assert.equal(url.searchParams.get('collection_ids'), 'a,b');
  assert.equal(url.searchParams.get('limit'), '5');
  assert.equal(url.searchParams.get('offset'), '10');
  assert.deepEqual(JSON.parse(url.searchParams.get('metadata_filters')!), { 'metadata.team': { $eq: 'core' } });
});
