import assert from 'node:assert/strict';
import { it } from 'node:test';
import { BATCH_PADDED_TOKENS, lengthGroups, microBatch, passageLanes } from './embedder.js';

it('merges requests that arrive while a batch runs, and returns each its own vectors', async () => {
  const calls: string[][] = [];
  const run = async (texts: string[]) => {
    calls.push(texts);
    await new Promise((resolve) => setTimeout(resolve, 10));
    return texts.map((text) => Float32Array.of(text.length));
  };
  const embed = microBatch(run, 8);
  const results = await Promise.all([embed(['a']), embed(['bb', 'ccc']), embed(['dddd'])]);
  assert.deepEqual(
    results.map((vectors) => vectors.map((vector) => vector[0])),
    [[1], [2, 3], [4]],
  );
  assert.deepEqual(calls, [['a'], ['bb', 'ccc', 'dddd']]);
});

it('rejects every request of a failed batch', async () => {
  const embed = microBatch(async () => {
    throw new Error('model failed');
  }, 8);
  await assert.rejects(embed(['x']), /model failed/);
});

it('splits a large request into batches and lets a query and other requests in between its batches', async () => {
  const calls: string[][] = [];
  const run = async (texts: string[]) => {
    calls.push(texts);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return texts.map((text) => Float32Array.of(Number(text.slice(1))));
  };
  const embed = microBatch(run, 4);
  // Four calls' worth: the query's call carries no passages, so the bulk request still has calls left after the other's.
  const big = Array.from({ length: 14 }, (_, i) => `p${i}`);
  const bulk = embed(big);
  await new Promise((resolve) => setTimeout(resolve, 1)); // the first batch of the bulk request is running
  const other = embed(['o100', 'o101']);
  const query = embed(['q7'], { priority: 'query' });
  const [bulkVectors, otherVectors, queryVectors] = await Promise.all([bulk, other, query]);
  assert.deepEqual(
    bulkVectors.map((vector) => vector[0]),
    big.map((_, i) => i),
    'the split request gets its vectors back in order',
  );
  assert.deepEqual(
    otherVectors.map((vector) => vector[0]),
    [100, 101],
  );
  assert.deepEqual(
    queryVectors.map((vector) => vector[0]),
    [7],
  );
  assert.ok(
    calls.every((call) => call.length <= 4),
    'no model call is larger than the batch size',
  );
  assert.deepEqual(calls[1], ['q7'], 'the query goes alone in the very next model call');
  const otherCall = calls.findIndex((call) => call.includes('o100'));
  const lastBulkCall = calls.findLastIndex((call) => call.some((text) => text.startsWith('p')));
  assert.ok(otherCall < lastBulkCall, 'a request arriving later does not wait for the whole bulk request');
});

it('drops the rest of an abandoned request and rejects it with the reason', async () => {
  const calls: string[][] = [];
  const controller = new AbortController();
  const embed = microBatch(async (texts: string[]) => {
    calls.push(texts);
    controller.abort(new Error('deadline'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    return texts.map(() => Float32Array.of(0));
  }, 2);
  await assert.rejects(embed(['a', 'b', 'c', 'd', 'e'], { signal: controller.signal }), /deadline/);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(calls, [['a', 'b']], 'nothing more of it is embedded');
});

it('caps one request per model call when asked, so each blocking call stays short, and other requests share the calls', async () => {
  const calls: string[][] = [];
  const run = async (texts: string[]) => {
    calls.push(texts);
    await new Promise((resolve) => setTimeout(resolve, 2));
    return texts.map((text) => Float32Array.of(Number(text.slice(1))));
  };
  const embed = microBatch(run, 32);
  const big = Array.from({ length: 10 }, (_, i) => `p${i}`);
  const capped = embed(big, { maxPerCall: 3 });
  const other = embed(['o100', 'o101']);
  const [cappedVectors, otherVectors] = await Promise.all([capped, other]);
  assert.deepEqual(
    cappedVectors.map((vector) => vector[0]),
    big.map((_, i) => i),
  );
  assert.deepEqual(
    otherVectors.map((vector) => vector[0]),
    [100, 101],
  );
  for (const call of calls)
    assert.ok(call.filter((text) => text.startsWith('p')).length <= 3, `at most 3 of the capped request per call: ${call.join(',')}`);
  assert.equal(calls.filter((call) => call.some((text) => text.startsWith('p'))).length, 4, '10 texts at 3 per call take 4 calls');
});

it('holds no more than the cap in a call with capped requests, so a query waits for one short call, not several creates merged', async () => {
  const calls: string[][] = [];
  const run = async (texts: string[]) => {
    calls.push(texts);
    await new Promise((resolve) => setTimeout(resolve, 2));
    return texts.map(() => Float32Array.of(0));
  };
  const embed = microBatch(run, 32);
  // Four device creates at once, 4 passages per call each (services/device-memory.ts).
  const creates = [0, 1, 2, 3].map((c) =>
    embed(
      Array.from({ length: 12 }, (_, i) => `c${c}-${i}`),
      { maxPerCall: 4 },
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 3));
  const query = embed(['q'], { priority: 'query' });
  const callsBeforeQuery = calls.length;
  await query;
  await Promise.all(creates);
  for (const call of calls) assert.ok(call.length <= 4, `at most 4 texts per call: ${call.join(',')}`);
  const queryCall = calls.findIndex((call) => call.includes('q'));
  assert.deepEqual(calls[queryCall], ['q'], 'the query rides alone');
  assert.equal(queryCall, callsBeforeQuery, 'the next call after the one running when it came');
  assert.equal(calls.filter((call) => !call.includes('q')).length, 12, '48 passages in calls of 4');
  // An uncapped request still fills its own calls.
  calls.length = 0;
  await embed(Array.from({ length: 40 }, (_, i) => `u${i}`));
  assert.deepEqual(
    calls.map((call) => call.length),
    [32, 8],
  );
});

it('coalesces passage requests that may wait into one call, and starts it once the call is full', async () => {
  const calls: string[][] = [];
  const run = async (texts: string[]) => {
    calls.push(texts);
    return texts.map((text) => Float32Array.of(text.length));
  };
  const embed = microBatch(run, 4);
  const first = embed(['a'], { coalesceMs: 1000 });
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(calls.length, 0, 'a lone request that may wait does not start a call at once');
  const second = embed(['bb', 'ccc'], { coalesceMs: 1000 });
  const third = embed(['dddd'], { coalesceMs: 1000 });
  const results = await Promise.all([first, second, third]);
  assert.deepEqual(calls, [['a', 'bb', 'ccc', 'dddd']], 'one full call, long before the allowance ran out');
  assert.deepEqual(
    results.map((vectors) => vectors.map((vector) => vector[0])),
    [[1], [2, 3], [4]],
  );
});

it('starts a waiting call when its allowance runs out, and a request that may not wait at once', async () => {
  const calls: string[][] = [];
  const run = async (texts: string[]) => {
    calls.push(texts);
    return texts.map(() => Float32Array.of(0));
  };
  const embed = microBatch(run, 32);
  const started = performance.now();
  await embed(['a', 'b'], { coalesceMs: 30 });
  const waited = performance.now() - started;
  assert.ok(waited >= 25, `it waited for others (${waited.toFixed(1)} ms)`);
  assert.deepEqual(calls, [['a', 'b']]);

  // A query does not end a passage's wait: the passage still waits out its own allowance for others.
  const patient = embed(['c'], { coalesceMs: 200 });
  const query = embed(['q'], { priority: 'query', coalesceMs: 200 });
  await query;
  assert.deepEqual(calls.slice(1), [['q']], 'a query never waits and rides alone, ahead of the waiting passage');
  await patient;
  assert.deepEqual(calls.slice(1), [['q'], ['c']], 'the waiting passage follows once its allowance runs out');
});

it('holds a waiting request until its caller needs the vectors, gathering requests that arrive meanwhile', async () => {
  const calls: string[][] = [];
  const run = async (texts: string[]) => {
    calls.push(texts);
    return texts.map(() => Float32Array.of(0));
  };
  const embed = microBatch(run, 32);
  let needed!: () => void;
  const until = new Promise<void>((resolve) => (needed = resolve));
  const held = embed(['a'], { coalesceMs: 60_000, until });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const other = embed(['b', 'c'], { coalesceMs: 60_000 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(calls.length, 0, 'nothing runs while every request may still wait');
  needed();
  await Promise.all([held, other]);
  assert.deepEqual(calls, [['a', 'b', 'c']], 'one call, as soon as the held request was needed');
});

/** A model thread whose calls end only when told: which thread ran what, and when it is busy. */
function heldThread(name: string, log: string[]) {
  const releases: (() => void)[] = [];
  const embed = microBatch(async (texts) => {
    log.push(`${name}: ${texts.join(' ')}`);
    await new Promise<void>((resolve) => releases.push(resolve));
    return texts.map(() => Float32Array.of(0));
  }, 32);
  return { embed, release: () => releases.shift()?.() };
}

it('runs short requests on the query thread while the passage thread is busy and the query thread embeds no query', async () => {
  const cases: {
    name: string;
    passageBusy: boolean;
    /** What the query thread is doing when the request comes. */
    queryThread: 'idle' | 'query' | 'names';
    short: boolean;
    coalesceMs?: number;
    /** The thread that embedded the request. */
    ranOn: 'passages' | 'queries';
  }[] = [
    {
      name: 'names behind a running passage call, query thread idle',
      passageBusy: true,
      queryThread: 'idle',
      short: true,
      ranOn: 'queries',
    },
    {
      name: 'names behind a running passage call, query thread running other names',
      passageBusy: true,
      queryThread: 'names',
      short: true,
      ranOn: 'queries',
    },
    {
      name: 'names with both threads idle: the passage thread, as before',
      passageBusy: false,
      queryThread: 'idle',
      short: true,
      ranOn: 'passages',
    },
    {
      name: 'names while a search embeds its query: behind the passages, never ahead of the query',
      passageBusy: true,
      queryThread: 'query',
      short: true,
      ranOn: 'passages',
    },
    {
      name: 'a passage request behind a running call never takes the query thread',
      passageBusy: true,
      queryThread: 'idle',
      short: false,
      ranOn: 'passages',
    },
    {
      name: 'names that may wait for others ride along with the passages',
      passageBusy: true,
      queryThread: 'idle',
      short: true,
      coalesceMs: 1,
      ranOn: 'passages',
    },
  ];
  for (const { name, passageBusy, queryThread, short, coalesceMs, ranOn } of cases) {
    const log: string[] = [];
    const passages = heldThread('passages', log);
    const queries = heldThread('queries', log);
    const lanes = passageLanes(passages.embed, queries.embed);
    const busy: Promise<unknown>[] = [];
    if (passageBusy) busy.push(passages.embed(['chunk']));
    if (queryThread === 'query') busy.push(queries.embed(['query'], { priority: 'query' }));
    if (queryThread === 'names') busy.push(lanes(['Initech'], { short: true }));
    const request = lanes(['Acme Corp'], { short, ...(coalesceMs ? { coalesceMs } : {}) });
    await new Promise((resolve) => setImmediate(resolve));
    // Release calls one by one until the request is answered, in whatever order they run.
    let answered = false;
    void request.then(() => (answered = true));
    for (let round = 0; round < 100 && !answered; round++) {
      passages.release();
      queries.release();
      // Long enough for a coalescing request's 1 ms allowance to run out.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await request;
    await Promise.all(busy);
    assert.equal(log.find((line) => line.endsWith('Acme Corp'))?.split(':')[0], ranOn, name);
  }
  // Without a query thread, names go to the passage thread.
  const log: string[] = [];
  const passages = heldThread('passages', log);
  const pending = passages.embed(['chunk']);
  const names = passageLanes(passages.embed, undefined)(['Acme Corp'], { short: true });
  passages.release();
  await new Promise((resolve) => setImmediate(resolve));
  passages.release();
  await Promise.all([pending, names]);
  assert.deepEqual(log, ['passages: chunk', 'passages: Acme Corp']);
});

it('runs texts of similar length together, so no batch is padded far beyond what it holds', () => {
  const table: { name: string; lengths: number[]; groups: number[][] }[] = [
    { name: 'nothing', lengths: [], groups: [] },
    { name: 'alike lengths share one batch', lengths: [40, 42, 38, 41], groups: [[2, 0, 3, 1]] },
    { name: 'a long chunk is not padded onto short turns', lengths: [12, 250, 14], groups: [[0, 2], [1]] },
    { name: 'runs grow while the padding stays within 30%', lengths: [10, 10, 13, 30, 31, 200], groups: [[0, 1, 2], [3, 4], [5]] },
    { name: 'an empty text counts as one token', lengths: [0, 1], groups: [[0, 1]] },
    {
      name: 'long passages of alike length run in batches of at most 1024 padded tokens',
      lengths: [200, 200, 200, 200, 200, 200],
      groups: [[0, 1, 2, 3, 4], [5]],
    },
    {
      name: 'short texts still fill large batches',
      lengths: Array.from({ length: 25 }, () => 40),
      groups: [Array.from({ length: 25 }, (_, at) => at)],
    },
    { name: 'a text over the budget runs alone', lengths: [600, 600], groups: [[0], [1]] },
  ];
  for (const { name, lengths, groups } of table) {
    const got = lengthGroups(lengths);
    assert.deepEqual(got, groups, name);
    // Every text once, and each batch's padded size within the slack of its tokens.
    assert.deepEqual(
      got.flat().sort((a, b) => a - b),
      lengths.map((_, at) => at),
      name,
    );
    for (const group of got) {
      const sizes = group.map((at) => Math.max(1, lengths[at]!));
      assert.ok(Math.max(...sizes) * sizes.length <= 1.3 * sizes.reduce((a, b) => a + b, 0), name);
      assert.ok(sizes.length === 1 || Math.max(...sizes) * sizes.length <= BATCH_PADDED_TOKENS, name);
    }
  }
});
