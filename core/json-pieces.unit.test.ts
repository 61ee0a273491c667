import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { CountingSlicer } from '../test/support/counting-slicer.js';
import { joinJson, splitJson, valueAt } from './json-pieces.js';

/** Equal as JSON.parse made them: the same JSON text (keys in order) and the same numbers (Object.is: -0). */
function assertSameValue(actual: unknown, expected: unknown): void {
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
  assert.deepEqual(actual, expected);
}

const episode = (i: number) => ({
  id: `e${i}`,
  metadata: { z: i, a: 'first key z' },
  chunks: Array.from({ length: 3 }, (_, c) => ({ index: c, text: `chunk ${c} of ${i} `.repeat(20) })),
});

describe('json pieces (a parsed body carried from a thread in slices)', () => {
  it('gives back the same value, keys in order, numbers exactly (-0, Infinity), own __proto__ keys', async () => {
    const value = JSON.parse('{"b":-0,"a":1e400,"__proto__":{"x":1},"list":[1,"two",null,true,{"k":[]}],"s":""}') as Record<
      string,
      unknown
    >;
    const joined = (await joinJson(splitJson(value, 16), new CountingSlicer())) as Record<string, unknown>;
    assertSameValue(joined, value);
    assert.ok(Object.is(joined.b, -0));
    assert.equal(joined.a, Infinity);
    assert.ok(Object.hasOwn(joined, '__proto__'), '__proto__ stays a key');
    assert.equal(Object.getPrototypeOf(joined), Object.prototype);
  });

  it('sends a large array in batches of about the piece size, and a large item inside one after the item', async () => {
    const value = { snapshot: { body: { episodes: Array.from({ length: 200 }, (_, i) => episode(i)), entities: [] } }, raw_text: 'x' };
    // One episode with many chunks: its chunks are a batch of their own, after the batch that placed it.
    value.snapshot.body.episodes[37]!.chunks = Array.from({ length: 300 }, (_, c) => ({ index: c, text: `long ${c} `.repeat(30) }));
    const pieces = splitJson(value, 16 * 1024);
    assert.ok(pieces.fills.length > 10, `${pieces.fills.length} fills`);
    assert.ok(pieces.fills.some((fill) => fill.path.join('.') === 'snapshot.body.episodes.37.chunks'));
    for (const fill of pieces.fills) assert.ok(fill.items.byteLength < 48 * 1024, `a piece of ${fill.items.byteLength} bytes`);
    assert.ok(pieces.shell.byteLength < 1024, 'the shell holds no episode');
    const slicer = new CountingSlicer();
    assertSameValue(await joinJson(pieces, slicer), value);
    assert.equal(slicer.pauses, pieces.fills.length, 'a turn of the event loop before each piece (every slice due)');
  });

  it('leaves a small value whole, in the shell', async () => {
    const value = { a: [1, 2, 3], b: { c: 'd' } };
    const pieces = splitJson(value);
    assert.equal(pieces.fills.length, 0);
    assert.deepEqual(v8.deserialize(pieces.shell), value);
    assertSameValue(await joinJson(pieces, new CountingSlicer()), value);
  });

  it('valueAt follows own keys and indices only', () => {
    const value = { a: [{ b: 1 }] };
    assert.equal(valueAt(value, ['a', 0, 'b']), 1);
    assert.equal(valueAt(value, ['a', 1, 'b']), undefined);
    assert.equal(valueAt(value, ['toString']), undefined);
    assert.equal(valueAt('text', ['length']), undefined);
  });
});
