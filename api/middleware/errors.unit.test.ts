import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { pino } from 'pino';
import { AppError } from '../../core/errors.js';
import { WorkerPool } from '../../core/worker-pool.js';
import { jsonThreadScript, type JsonTasks } from '../../models/json-tasks.js';
import type { AppState } from '../context.js';
import { errorHandler } from './errors.js';
import { pooledJsonBody } from './pooled-json-body.js';
import { SharedBodyBuffers } from './shared-body.js';

/** A logger whose JSON lines land in `lines`. */
function recordingLogger(lines: { level: number; msg?: string }[]) {
  return pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number });
        done();
      },
    }),
  );
}

/** The handler in front of a step that throws `error`; the JSON it answers and what it logged at error level. */
async function answerTo(error: unknown): Promise<{ status: number; code: string; errorLogs: number }> {
  const lines: { level: number }[] = [];
  const logger = recordingLogger(lines);
  const koa = new Koa<AppState>();
  const handle = errorHandler(logger, 1024);
  const ctx = koa.createContext<AppState>(
    Object.assign(Object.create(null) as object, { headers: {}, method: 'POST', url: '/' }) as never,
    Object.assign(Object.create(null) as object, { setHeader() {}, getHeader() {}, removeHeader() {} }) as never,
  );
  ctx.state.requestId = 'r';
  await handle(ctx, () => Promise.reject(error));
  const body = ctx.body as { error: { status: number; code: string } };
  // pino writes asynchronously only with a sonic-boom destination; a Writable gets its lines at once.
  return { status: body.error.status, code: body.error.code, errorLogs: lines.filter((line) => line.level >= 50).length };
}

/** raw-body's error shape (http-errors): what the body parsers throw. */
const rawBodyError = (status: number, type: string, message: string): Error =>
  Object.assign(new Error(message), { status, statusCode: status, expose: status < 500, type });

describe('the error handler: every failure a stable status and code, and an error log only for bugs', () => {
  const cases: { name: string; error: unknown; status: number; code: string; logged: boolean }[] = [
    { name: 'an AppError', error: new AppError(409, 'memory_busy', 'busy'), status: 409, code: 'memory_busy', logged: false },
    {
      name: 'a body over the limit',
      error: rawBodyError(413, 'entity.too.large', 'request entity too large'),
      status: 413,
      code: 'payload_too_large',
      logged: false,
    },
    {
      name: 'a body that is not JSON',
      error: rawBodyError(400, 'entity.parse.failed', 'Unexpected token } in JSON'),
      status: 400,
      code: 'invalid_json',
      logged: false,
    },
    {
      name: 'an unsupported content encoding',
      error: rawBodyError(415, 'encoding.unsupported', 'unsupported content encoding "zstd-ish"'),
      status: 415,
      code: 'unsupported_media_type',
      logged: false,
    },
    // A client that went away mid-body was a 500 and an "unhandled error" log line.
    {
      name: 'a request its client closed before the body was read',
      error: rawBodyError(400, 'request.aborted', 'request aborted'),
      status: 400,
      code: 'request_aborted',
      logged: false,
    },
    {
      name: 'a body shorter or longer than its Content-Length',
      error: rawBodyError(400, 'request.size.invalid', 'request size did not match content length'),
      status: 400,
      code: 'body_length_mismatch',
      logged: false,
    },
    { name: 'anything else: a bug', error: new TypeError('x is undefined'), status: 500, code: 'internal_error', logged: true },
    {
      name: 'a stream error the body parser passes on',
      error: rawBodyError(500, 'stream.not.readable', 'stream is not readable'),
      status: 500,
      code: 'internal_error',
      logged: true,
    },
  ];
  for (const { name, error, status, code, logged } of cases) {
    it(`${name}: ${status} ${code}${logged ? ', logged as an error' : ''}`, async () => {
      const answer = await answerTo(error);
      assert.deepEqual(answer, { status, code, errorLogs: logged ? 1 : 0 });
    });
  }
});

describe('a client that closes its connection half-way through its body', () => {
  for (const pooled of [false, true]) {
    it(`is a 400 the handler does not log as an error (${pooled ? 'read into shared memory, parsed on a thread' : 'the body parser'})`, async () => {
      const lines: { level: number; msg?: string }[] = [];
      const statuses: number[] = [];
      const pool = pooled ? new WorkerPool<JsonTasks>(jsonThreadScript, 1) : null;
      const koa = new Koa<AppState>();
      koa.use(async (ctx, next) => {
        await next();
        statuses.push(ctx.status);
      });
      koa.use(errorHandler(recordingLogger(lines), 1024 * 1024));
      koa.use(async (ctx, next) => {
        ctx.state.requestId = 'r';
        ctx.state.principal = { tenantId: 't' } as AppState['principal'];
        ctx.state.signal = new AbortController().signal;
        await next();
      });
      if (pool) koa.use(pooledJsonBody({ pool, limit: 1024 * 1024, minBytes: 0, digestPaths: [], buffers: new SharedBodyBuffers() }));
      koa.use(bodyParser({ enableTypes: ['json'], jsonLimit: 1024 * 1024, jsonStrict: true }));
      koa.use((ctx) => {
        ctx.body = { ok: true };
      });
      const server = http.createServer(koa.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":"');
        await new Promise((resolve) => setTimeout(resolve, 50));
        socket.destroy();
        const deadline = Date.now() + 5000;
        while (statuses.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.deepEqual(statuses, [400]);
        assert.deepEqual(
          lines.filter((line) => line.level >= 50),
          [],
          'no error-level log line',
        );
      } finally {
        server.close();
        await pool?.close();
      }
    });
  }
});
