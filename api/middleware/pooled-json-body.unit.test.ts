import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { bodyParser } from '@koa/bodyparser';
import Koa, { type Middleware } from 'koa';
import { jsonTextDigest } from '../../core/json-body.js';
import { sha256Hex } from '../../core/hash.js';
import { createLogger } from '../../core/logger.js';
import { WorkerPool } from '../../core/worker-pool.js';
import { jsonThreadScript, type JsonTasks } from '../../models/json-tasks.js';
import type { AppState } from '../context.js';
import { errorHandler } from './errors.js';
import { pooledJsonBody } from './pooled-json-body.js';
import { SharedBodyBuffers } from './shared-body.js';

const LIMIT = 64 * 1024;

/**
 * An app as the API mounts the body parsers: the error handler, a principal (the tenant named by
 * X-Tenant, t by default), `pooled` when given, then the body parser; it answers what `answer` makes.
 */
function testApp(pooled: Middleware<AppState> | null, answer: (ctx: Koa.ParameterizedContext<AppState>) => unknown): Koa<AppState> {
  const koa = new Koa<AppState>();
  koa.use(errorHandler(createLogger('test', 'silent'), LIMIT));
  koa.use(async (ctx, next) => {
    ctx.state.requestId = 'r';
    ctx.state.principal = { tenantId: ctx.get('x-tenant') || 't' } as AppState['principal'];
    ctx.state.signal = new AbortController().signal;
    await next();
  });
  if (pooled) koa.use(pooled);
  koa.use(bodyParser({ enableTypes: ['json'], jsonLimit: LIMIT, jsonStrict: true }));
  koa.use((ctx) => {
    ctx.body = answer(ctx);
  });
  return koa;
}

/** Loopback servers for a suite's apps, closed together. */
function testServers() {
  const servers: http.Server[] = [];
  return {
    async listen(koa: Koa<AppState>): Promise<string> {
      const server = http.createServer(koa.callback());
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close(): void {
      for (const server of servers) server.close();
    },
  };
}

async function post(url: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
  return { status: response.status, text: await response.text() };
}

/**
 * The same request to an app whose bodies the body parser parses on the event loop and to one
 * whose bodies (all of them: minBytes 0) a worker thread parses: the answers must be the same.
 */
describe('request bodies parsed on a worker thread answer as the body parser does', () => {
  const pool = new WorkerPool<JsonTasks>(jsonThreadScript, 1);
  const servers = testServers();
  let loopUrl = '';
  let pooledUrl = '';

  const buffers = new SharedBodyBuffers();
  const app = (pooled: boolean): Koa<AppState> =>
    testApp(pooled ? pooledJsonBody({ pool, limit: LIMIT, minBytes: 0, digestPaths: [['snapshot', 'body']], buffers }) : null, (ctx) => {
      const body: unknown = ctx.request.body;
      const snapshotBody = (body as { snapshot?: { body?: object } }).snapshot?.body;
      return {
        text: JSON.stringify(body),
        pooled: ctx.state.parsedBody !== undefined,
        // What the device routes hand openSnapshot: the digest of snapshot.body's JSON text, as it would work it out.
        digest: snapshotBody ? (ctx.state.parsedBody?.digests.get(snapshotBody) ?? null) : null,
      };
    });

  before(async () => {
    loopUrl = await servers.listen(app(false));
    pooledUrl = await servers.listen(app(true));
  });
  after(async () => {
    servers.close();
    await pool.close();
  });

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

  it('reads each body into the memory the one before was read into, once that one was parsed', async () => {
    await post(pooledUrl, big);
    const idle = buffers.idleBytes();
    assert.ok(idle > 0, 'the memory went back for the next request');
    await post(pooledUrl, '{"a":1}');
    assert.equal(buffers.idleBytes(), idle, 'and the next request took it and gave it back: no new memory');
  });

  it("works out the digest of snapshot.body's JSON text on the thread", async () => {
    const answer = JSON.parse((await post(pooledUrl, big)).text) as { digest: unknown };
    const parsed = JSON.parse(big) as { snapshot: { body: object } };
    assert.deepEqual(answer.digest, jsonTextDigest(parsed.snapshot.body));
  });
});

/**
 * Bytes of a snapshot already held prepared are looked up by their digest before the body is
 * parsed: the rest of the body is parsed as before and the snapshot reads {} (the routes then use
 * the prepared one). Anything else parses the whole body, with the same answers.
 */
describe('a known snapshot in a request body is not parsed again', () => {
  const pool = new WorkerPool<JsonTasks>(jsonThreadScript, 1);
  const servers = testServers();
  const known = JSON.stringify({ format: 'x', body: { episodes: Array.from({ length: 200 }, (_, i) => ({ id: `e${i}`, t: 'ø✓' })) } });
  const knownDigest = `sha256:${sha256Hex(known)}`;
  /** What the cache would hand back: only tenant t holds the snapshot. */
  const prepared = { graphId: 'g', snapshotId: 's', body: { episodes: [], entities: [], facts: [], mentions: [] }, bodyBytes: 1 };
  const lookups: [string, string][] = [];
  let loopUrl = '';
  let spanUrl = '';

  const app = (withSpan: boolean): Koa<AppState> =>
    testApp(
      withSpan
        ? pooledJsonBody({
            pool,
            limit: LIMIT,
            minBytes: 0,
            digestPaths: [['snapshot', 'body']],
            buffers: new SharedBodyBuffers(),
            knownSpan: {
              key: 'snapshot',
              lookup: (tenantId, digest) => {
                lookups.push([tenantId, digest]);
                return tenantId === 't' && digest === knownDigest ? prepared : null;
              },
            },
          })
        : null,
      (ctx) => {
        const rawBody: unknown = ctx.request.rawBody;
        const span = ctx.state.parsedBody?.span;
        return {
          text: JSON.stringify(ctx.request.body),
          textBytes: ctx.state.parsedBody?.textBytes ?? (typeof rawBody === 'string' ? Buffer.byteLength(rawBody) : null),
          span: span ? { key: span.key, digest: span.digest, prepared: span.prepared === prepared } : null,
        };
      },
    );

  before(async () => {
    loopUrl = await servers.listen(app(false));
    spanUrl = await servers.listen(app(true));
  });
  after(async () => {
    servers.close();
    await pool.close();
  });

  const postAs = (url: string, body: string, tenant = 't') => post(url, body, { 'X-Tenant': tenant });
  type Answer = { text: string; textBytes: number; span: { key: string; digest: string; prepared: boolean } | null };

  it('parses only the rest of a body around known bytes, counting the whole text', async () => {
    const body = ` {"query":"where is ørret","snapshot": ${known} ,"limit":5}`;
    const answer = JSON.parse((await postAs(spanUrl, body)).text) as Answer;
    assert.equal(answer.text, '{"query":"where is ørret","snapshot":{},"limit":5}');
    assert.deepEqual(answer.span, { key: 'snapshot', digest: knownDigest, prepared: true });
    assert.equal(answer.textBytes, Buffer.byteLength(body));
    assert.deepEqual(lookups.at(-1), ['t', knownDigest]);
  });

  // Each parses the whole body: the answer is the body parser's, and no prepared snapshot is used.
  const whole: [name: string, body: string, tenant?: string][] = [
    ["another tenant's call with the same bytes", `{"query":"q","snapshot":${known}}`, 'u'],
    ['bytes this process does not hold', `{"query":"q","snapshot":${known.replace('e199', 'e198')}}`],
    ['the known bytes with a spare space inside', `{"query":"q","snapshot":${known.replace('"body":', '"body": ')}}`],
    ['the known bytes twice (the last counts)', `{"snapshot":${known},"snapshot":{"a":1}}`],
    ['the known bytes under an escaped key', `{"snap\\u0073hot":${known}}`],
    ['the known bytes in a malformed body', `{"query":,"snapshot":${known}}`],
    ['the known bytes beside a __proto__ key', `{"__proto__":{"admin":true},"snapshot":${known}}`],
    ['the known bytes nested', `{"outer":{"snapshot":${known}}}`],
    ['the known bytes, then trailing bytes', `{"snapshot":${known}} x`],
  ];
  for (const [name, body, tenant] of whole) {
    it(`${name}: the whole body is parsed, as the body parser parses it`, async () => {
      const onLoop = await postAs(loopUrl, body, tenant);
      const withSpan = await postAs(spanUrl, body, tenant);
      assert.equal(withSpan.status, onLoop.status, withSpan.text);
      if (onLoop.status !== 200) {
        assert.equal(withSpan.text, onLoop.text, 'the same error: status, code, message, fields');
        return;
      }
      const loop = JSON.parse(onLoop.text) as Answer;
      const answer = JSON.parse(withSpan.text) as Answer;
      assert.equal(answer.text, loop.text, 'the same value, keys in the same order');
      assert.equal(answer.textBytes, loop.textBytes);
      assert.ok(answer.span === null || answer.span.prepared === false, JSON.stringify(answer.span));
    });
  }
});
