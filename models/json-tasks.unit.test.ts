import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { jsonTextDigest } from '../core/json-body.js';
import { sha256Hex } from '../core/hash.js';
import { ownsItsBuffer, WorkerPool } from '../core/worker-pool.js';
import { cpuThreadScript, type CpuTasks } from './cpu-tasks.js';
import { jsonThreadScript, locateInPool, parseJson, type JsonTasks } from './json-tasks.js';

/**
 * The URLs of every module a thread script's import resolves, on a thread of its own: a resolve
 * hook registered there before the script is imported sees its whole module graph, packages included.
 */
async function modulesLoadedBy(script: URL): Promise<string[]> {
  const probe = `
    import { registerHooks } from 'node:module';
    import { parentPort, workerData } from 'node:worker_threads';
    const urls = [];
    registerHooks({ resolve: (specifier, context, next) => { const resolved = next(specifier, context); urls.push(resolved.url); return resolved; } });
    await import(workerData.script);
    parentPort.postMessage(urls);
  `;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(probe)}`), { workerData: { script: script.href } });
  try {
    return await new Promise<string[]>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the probe thread exited with code ${code} before answering`)));
    });
  } finally {
    // The script serves tasks, so its thread would wait for them.
    await worker.terminate();
  }
}

const isExtractorModule = (url: string): boolean => url.includes('/node_modules/compromise/') || url.includes('/extractors/');

describe('the request-body thread script (json-thread.js)', () => {
  it('does not load the structure extractor, which the CPU thread script does', async () => {
    const [json, cpu] = await Promise.all([modulesLoadedBy(jsonThreadScript), modulesLoadedBy(cpuThreadScript)]);
    // The probe sees packages and the project's own modules: without this the check below could not fail.
    assert.ok(cpu.some(isExtractorModule), `the CPU thread script's graph holds the extractor: ${cpu.length} modules`);
    assert.ok(
      json.some((url) => url.endsWith('/models/json-tasks.js')),
      `the JSON thread script's graph was seen: ${json.join(', ')}`,
    );
    assert.deepEqual(json.filter(isExtractorModule), [], 'no extractor module on the request-body thread');
  });

  it('serves the JSON tasks and answers any other task as one it has no handler for', async () => {
    // Typed as a CPU pool so the extractor's task can be asked of it: the thread, not the type, refuses.
    const pool = new WorkerPool<CpuTasks>(jsonThreadScript, 1);
    try {
      await assert.rejects(
        pool.run('extractStructure', { text: 'Alice Smith manages the Berlin office.', options: {} }, { key: 't' }),
        /no handler for task extractStructure/,
      );
      const text = JSON.stringify({ query: 'q', snapshot: { body: { episodes: ['ø'.repeat(1000)] } } });
      const parsed = await parseJson(
        pool,
        Buffer.from(text),
        { strict: true, digestPaths: [['snapshot', 'body']], minBytes: 0 },
        { key: 't' },
      );
      assert.ok(parsed.ok, JSON.stringify(parsed));
      const value = parsed.value as { snapshot: { body: object } };
      assert.deepEqual(value, JSON.parse(text));
      assert.equal(parsed.textBytes, Buffer.byteLength(text));
      // Digests are worked out on the thread only (a parse on the loop leaves them to the caller).
      assert.deepEqual(parsed.digests.get(value.snapshot.body), jsonTextDigest(value.snapshot.body));
      const refused = await parseJson(pool, Buffer.from('{"query":'), { strict: true, digestPaths: [], minBytes: 0 }, { key: 't' });
      assert.equal(refused.ok, false);
      assert.equal(!refused.ok && refused.status, 400);
    } finally {
      await pool.close();
    }
  });
});

for (const [where, script] of [
  ['the request-body thread', jsonThreadScript],
  // The CPU pool serves the JSON tasks too: a pool of either kind is a JsonPool.
  ['a CPU-pool thread', cpuThreadScript],
] as const) {
  describe(`locateInPool: a request body located on ${where}`, () => {
    const pool = new WorkerPool<JsonTasks>(script, 1);
    after(() => pool.close());
    const text = `{"query":"q","snapshot":{"body":{"episodes":[${'"ø",'.repeat(20_000)}"x"]}}}`;

    it('moves bytes that own their buffer to the thread and back: not copied', async () => {
      const bytes = Buffer.alloc(Buffer.byteLength(text), text);
      const memory = bytes.buffer;
      const { located, bytes: back } = await locateInPool(pool, bytes, 'snapshot', { key: 't' });
      assert.equal(bytes.byteLength, 0, 'the sent buffer was moved (detached), not copied');
      assert.equal(back.toString('utf8'), text);
      assert.notEqual(back.buffer, memory, 'a moved buffer comes back as a new ArrayBuffer object');
      assert.ok(located);
      assert.equal(located.digest, `sha256:${sha256Hex(back.subarray(located.start, located.end))}`);
      assert.equal(back.subarray(located.start, located.end).toString('utf8'), text.slice(text.indexOf('{"body"'), -1));
    });

    it('copies bytes that share their buffer (a pooled small Buffer), leaving them usable', async () => {
      const small = Buffer.from('{"snapshot":{"a":1},"query":"q"}');
      assert.ok(!ownsItsBuffer(small), 'a small Buffer is a slice of the shared pool');
      const { located, bytes: back } = await locateInPool(pool, small, 'snapshot', { key: 't' });
      assert.equal(small.toString('utf8'), '{"snapshot":{"a":1},"query":"q"}');
      assert.equal(back.toString('utf8'), small.toString('utf8'));
      assert.deepEqual([located?.start, located?.end], [12, 19]);
    });

    it('answers null for bytes it does not read plainly, with the bytes', async () => {
      const bytes = Buffer.alloc(40_000, 0x20);
      bytes.write('{"snapshot":[1]}');
      const { located, bytes: back } = await locateInPool(pool, bytes, 'snapshot', { key: 't' });
      assert.equal(located, null);
      assert.equal(back.byteLength, 40_000);
    });
  });
}
