import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { jsonTextDigest } from '../../core/json-body.js';
import { createLogger } from '../../core/logger.js';
import { WorkerPool } from '../../core/worker-pool.js';
import { cpuThreadScript, type CpuTasks } from '../../models/cpu-tasks.js';
import type { AppState } from '../context.js';
import { errorHandler } from './errors.js';
import { pooledJsonBody } from './pooled-json-body.js';

const LIMIT = 64 * 1024;

/**
 * The same request to an app whose bodies the body parser parses on the event loop and to one
 * whose bodies (all of them: minBytes 0) a worker thread parses: the answers must be the same.
 */
describe('request bodies parsed on a worker thread answer as the body parser does', () => {
  const pool = new WorkerPool<CpuTasks>(cpuThreadScript, 1);
  const servers: http.Server[] = [];
  let loopUrl = '';
  let pooledUrl = '';

  function app(pooled: boolean): Koa<AppState> {
    const koa = new Koa<AppState>();
    koa.use(errorHandler(createLogger('test', 'silent'), LIMIT));
    koa.use(async (ctx, next) => {
      ctx.state.requestId = 'r';
      ctx.state.principal = { tenantId: 't' } as AppState['principal'];
      ctx.state.signal = new AbortController().signal;
      await next();
    });
    if (pooled) koa.use(pooledJsonBody({ pool, limit: LIMIT, minBytes: 0, digestPaths: [['snapshot', 'body']] }));
    koa.use(bodyParser({ enableTypes: ['json'], jsonLimit: LIMIT, jsonStrict: true }));
    koa.use((ctx) => {
      const body: unknown = ctx.request.body;
      const snapshotBody = (body as { snapshot?: { body?: object } }).snapshot?.body;
      ctx.body = {
        text: JSON.stringify(body),
        pooled: ctx.state.parsedBody !== undefined,
        // What the device routes hand openSnapshot: the digest of snapshot.body's JSON text, as it would work it out.
        digest: snapshotBody ? (ctx.state.parsedBody?.digests.get(snapshotBody) ?? null) : null,
      };
    });
    return koa;
  }

  async function listen(koa: Koa<AppState>): Promise<string> {
    const server = http.createServer(koa.callback());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  before(async () => {
    loopUrl = await listen(app(false));
    pooledUrl = await listen(app(true));
  });
  after(async () => {
    for (const server of servers) server.close();
    await pool.close();
  });

  async function post(url: string, body: Buffer | string, headers: Record<string, string> = {}) {
    const response = await fetch(`${url}/`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
    const text = await response.text();
    return { status: response.status, text };
  }

  const big = JSON.stringify({ snapshot: { body: { episodes: Array.from({ length: 300 }, (_, i) => ({ id: `e${i}`, b: -0, z: 1 })) } } });
  const cases: [string, Buffer | string, Record<string, string>?][] = [
    ['an object', '{"b":1,"a":[1,2,{"c":null}]}'],
    ['an array', '[1,2,3]'],
    ['whitespace, then an object', ' \n\t{"a":1}'],
    ['a UTF-8 byte order mark, then an object', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"é"}')])],
    ['invalid UTF-8 inside a string', Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])],
    ['a number (strict: objects and arrays only)', '123'],
    ['a string', '"text"'],
    ['an empty body', ''],
    ['a truncated object', '{"collection_id": '],
    ['a stray token', '{"a": 1,}'],
    ['a __proto__ key', '{"a":1,"__proto__":{"admin":true}}'],
    ['a number too large for a double', '{"a":1e400}'],
    ['a body over the limit', JSON.stringify({ raw_text: 'x'.repeat(LIMIT) })],
    ['a gzip body', gzipSync('{"a":1}'), { 'Content-Encoding': 'gzip' }],
    ['an unknown content encoding', '{"a":1}', { 'Content-Encoding': 'zstd-ish' }],
    ['a snapshot body in many pieces', big],
    ['another media type', 'hello', { 'Content-Type': 'text/plain' }],
  ];
  for (const [name, body, headers] of cases) {
    it(`${name}: the same answer`, async () => {
      const onLoop = await post(loopUrl, body, headers);
      const onThread = await post(pooledUrl, body, headers);
      assert.equal(onThread.status, onLoop.status, onThread.text);
      if (onLoop.status !== 200) {
        assert.equal(onThread.text, onLoop.text, 'the same error: status, code, message, fields');
        return;
      }
      const loop = JSON.parse(onLoop.text) as { text: string; pooled: boolean };
      const thread = JSON.parse(onThread.text) as { text: string; pooled: boolean; digest: unknown };
      assert.equal(thread.text, loop.text, 'the same value, keys in the same order');
      assert.equal(loop.pooled, false);
      if (name !== 'another media type') assert.equal(thread.pooled, true, 'parsed on the thread');
    });
  }

  it("works out the digest of snapshot.body's JSON text on the thread", async () => {
    const answer = JSON.parse((await post(pooledUrl, big)).text) as { digest: unknown };
    const parsed = JSON.parse(big) as { snapshot: { body: object } };
    assert.deepEqual(answer.digest, jsonTextDigest(parsed.snapshot.body));
  });
});
