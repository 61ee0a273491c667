import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { appendWorkflowId, chunkId, indexOfChunk, memoryOfChunk } from './ids.js';

describe('memoryOfChunk: the memory a chunk id belongs to', () => {
  const memory = '0b7c2a51-3f0e-4d8e-9a57-4c1f3e2d9b10';
  const cases: { chunk: string; memoryId: string; expected: boolean }[] = [
    { chunk: chunkId(memory, 0), memoryId: memory, expected: true },
    { chunk: chunkId(memory, 1234), memoryId: memory, expected: true },
    // Another memory whose id starts with this one's: the separator must follow at once.
    { chunk: chunkId(`${memory}x`, 0), memoryId: memory, expected: false },
    { chunk: chunkId(memory, 0), memoryId: `${memory}x`, expected: false },
    // A prefix of the memory id is not the memory.
    { chunk: chunkId(memory, 0), memoryId: memory.slice(0, 8), expected: false },
    // memoryOfChunk cuts at the last ':', so an id with a ':' in it belongs to the longer prefix.
    { chunk: 'a:b:3', memoryId: 'a', expected: false },
    { chunk: 'a:b:3', memoryId: 'a:b', expected: true },
    { chunk: chunkId(memory, 0), memoryId: '', expected: false },
    { chunk: ':7', memoryId: '', expected: true },
    { chunk: memory, memoryId: memory, expected: false },
  ];
  for (const { chunk, memoryId, expected } of cases) {
    it(`${JSON.stringify(chunk)} of ${JSON.stringify(memoryId)}: ${expected}`, () => {
      assert.equal(chunk.includes(':') && memoryOfChunk(chunk) === memoryId, expected);
    });
  }
});

it('takes a chunk id apart into the memory and index chunkId joined, a memory id with a colon in it too', () => {
  for (const [memoryId, index] of [
    ['0b7c2a51-3f0e-4d8e-9a57-4c1f3e2d9b10', 0],
    ['m1', 1234],
    ['a:b', 3],
  ] as const) {
    assert.equal(memoryOfChunk(chunkId(memoryId, index)), memoryId);
    assert.equal(indexOfChunk(chunkId(memoryId, index)), index);
  }
});

describe('appendWorkflowId: named by its first message, unique to each claim', () => {
  it('never gives two appends at the same message the same id', () => {
    const [a, b] = [appendWorkflowId('m1', 4), appendWorkflowId('m1', 4)];
    assert.match(a, /^memory-m1-append-4-[0-9a-f]{8}$/);
    assert.notEqual(a, b, 'an abandoned append at message 4 does not hold the id of the next one');
  });
});
