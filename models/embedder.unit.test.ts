import assert from 'node:assert/strict';
import { it } from 'node:test';
import { microBatch } from './embedder.js';

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
