import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import getRawBody from 'raw-body';
import { readSharedBody, SharedBodyBuffers } from './shared-body.js';

const MiB = 1024 * 1024;

/** A request stream fed these pieces, then ended (or not). */
function streamOf(pieces: Buffer[], end = true): PassThrough {
  const stream = new PassThrough();
  setImmediate(() => {
    for (const piece of pieces) stream.write(piece);
    if (end) stream.end();
  });
  return stream;
}

const pieces = (total: number, size: number, seed = 7): Buffer[] => {
  const whole = Buffer.alloc(total);
  for (let i = 0; i < total; i++) whole[i] = (i * 31 + seed) & 0xff;
  const out: Buffer[] = [];
  for (let at = 0; at < total; at += size) out.push(whole.subarray(at, Math.min(total, at + size)));
  return out;
};

/** What a read failed with, in the fields the error handler reads. */
async function failure(read: Promise<unknown>): Promise<{ status: number; type: string; message: string }> {
  try {
    await read;
  } catch (error) {
    const { status, type, message } = error as { status: number; type: string; message: string };
    return { status, type, message };
  }
  throw new Error('the read did not fail');
}

describe('readSharedBody: the bytes and the errors of raw-body, read into reused shared memory', () => {
  it('reads a body in pieces, whole and exact, into shared memory', async () => {
    const buffers = new SharedBodyBuffers();
    const sent = pieces(300_000, 65_536);
    const body = await readSharedBody(streamOf(sent), { limit: MiB, length: 300_000 }, buffers);
    assert.ok(body.bytes.buffer instanceof SharedArrayBuffer);
    assert.deepEqual(body.bytes, Buffer.concat(sent));
  });

  it('grows past its first buffer when the length is not declared (chunked, inflated)', async () => {
    const buffers = new SharedBodyBuffers(64 * MiB);
    const sent = pieces(3 * MiB + 5, 65_536);
    const body = await readSharedBody(streamOf(sent), { limit: 8 * MiB }, buffers);
    assert.deepEqual(body.bytes, Buffer.concat(sent));
    assert.ok(body.bytes.buffer.byteLength >= 3 * MiB + 5);
    assert.equal(buffers.idleBytes(), 2 * MiB + MiB, 'the outgrown buffers went back to the pool');
  });

  // Each case: the same request to raw-body (what co-body reads with) and to this read.
  const cases: { name: string; sent: Buffer[]; end?: boolean; abort?: boolean; limit: number; length?: number }[] = [
    { name: 'a declared length over the limit, refused before reading', sent: pieces(10, 10), limit: 5, length: 10 },
    { name: 'more bytes than the limit, without a declared length', sent: pieces(3000, 1000), limit: 2500 },
    { name: 'more bytes than the limit, with a false declared length', sent: pieces(3000, 1000), limit: 2500, length: 100 },
    { name: 'fewer bytes than declared', sent: pieces(100, 50), limit: 1000, length: 150 },
    { name: 'more bytes than declared, under the limit', sent: pieces(200, 50), limit: 1000, length: 150 },
    { name: 'a request its client aborted', sent: pieces(100, 50), end: false, abort: true, limit: 1000, length: 150 },
  ];
  for (const { name, sent, end = true, abort = false, limit, length } of cases) {
    it(`${name}: the error raw-body gives`, async () => {
      const options = { limit, ...(length !== undefined ? { length } : {}) };
      const feed = (): PassThrough => {
        const stream = streamOf(sent, end);
        if (abort) setTimeout(() => stream.emit('aborted'), 20);
        return stream;
      };
      const expected = await failure(getRawBody(feed(), options));
      const buffers = new SharedBodyBuffers();
      assert.deepEqual(await failure(readSharedBody(feed(), options, buffers)), expected);
      assert.ok(buffers.idleBytes() <= MiB, 'a failed read gives its memory back (nothing else read it)');
    });
  }

  it('passes a stream error on, and refuses a stream with an encoding set or no longer readable', async () => {
    const broken = new PassThrough();
    setImmediate(() => broken.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })));
    assert.equal((await failure(readSharedBody(broken, { limit: 10 }, new SharedBodyBuffers()))).message, 'socket hang up');
    const decoded = new PassThrough().setEncoding('utf8');
    assert.deepEqual(await failure(readSharedBody(decoded, { limit: 10 }, new SharedBodyBuffers())), {
      status: 500,
      type: 'stream.encoding.set',
      message: 'stream encoding should not be set',
    });
    const done = new PassThrough();
    done.destroy();
    assert.equal((await failure(readSharedBody(done, { limit: 10 }, new SharedBodyBuffers()))).type, 'stream.not.readable');
  });
});

describe('SharedBodyBuffers: memory reused only when nothing can read it, and bounded', () => {
  it('hands the same memory to the next request after a release, showing only that request’s bytes', async () => {
    const buffers = new SharedBodyBuffers();
    const first = await readSharedBody(streamOf([Buffer.from('{"secret":"tenant A"}')]), { limit: MiB }, buffers);
    const memory = first.bytes.buffer;
    first.release(true);
    const second = await readSharedBody(streamOf([Buffer.from('{}')]), { limit: MiB }, buffers);
    assert.equal(second.bytes.buffer, memory, 'reused');
    assert.equal(second.bytes.toString(), '{}', "none of the previous request's bytes are in view");
    assert.equal(second.bytes.byteLength, 2);
  });

  it('does not reuse memory released as possibly still read (a task abandoned on a thread)', async () => {
    const buffers = new SharedBodyBuffers();
    const first = await readSharedBody(streamOf([Buffer.from('{"a":1}')]), { limit: MiB }, buffers);
    first.release(false);
    first.release(true); // a second release changes nothing
    assert.equal(buffers.idleBytes(), 0);
    const second = await readSharedBody(streamOf([Buffer.from('{}')]), { limit: MiB }, buffers);
    assert.notEqual(second.bytes.buffer, first.bytes.buffer);
  });

  it('gives requests read at the same time memory of their own', async () => {
    const buffers = new SharedBodyBuffers();
    const [a, b] = await Promise.all([
      readSharedBody(streamOf(pieces(70_000, 4096, 1)), { limit: MiB }, buffers),
      readSharedBody(streamOf(pieces(70_000, 4096, 2)), { limit: MiB }, buffers),
    ]);
    assert.notEqual(a.bytes.buffer, b.bytes.buffer);
    assert.deepEqual(a.bytes, Buffer.concat(pieces(70_000, 4096, 1)));
    assert.deepEqual(b.bytes, Buffer.concat(pieces(70_000, 4096, 2)));
  });

  it('keeps at most its byte budget and count idle, the largest that fit first', () => {
    const buffers = new SharedBodyBuffers(4 * MiB, 2);
    buffers.release(new SharedArrayBuffer(8 * MiB));
    assert.equal(buffers.idleBytes(), 0, 'larger than the budget: left to the collector');
    buffers.release(new SharedArrayBuffer(MiB));
    buffers.release(new SharedArrayBuffer(2 * MiB));
    buffers.release(new SharedArrayBuffer(MiB));
    assert.equal(buffers.idleBytes(), 3 * MiB, 'two kept: 2 MiB and 1 MiB');
    assert.equal(buffers.acquire(MiB + 1).byteLength, 2 * MiB, 'the smallest idle one that fits');
    assert.equal(buffers.acquire(3 * MiB).byteLength, 4 * MiB, 'none fits: a new one, a power of two');
  });
});
