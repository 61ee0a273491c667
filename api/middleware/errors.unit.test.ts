import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import Koa from 'koa';
import { pino } from 'pino';
import { AppError } from '../../core/errors.js';
import type { AppState } from '../context.js';
import { errorHandler } from './errors.js';

/** The handler in front of a step that throws `error`; the JSON it answers and what it logged at error level. */
async function answerTo(error: unknown): Promise<{ status: number; code: string; errorLogs: number }> {
  const lines: { level: number }[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number });
        done();
      },
    }),
  );
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
