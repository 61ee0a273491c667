import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chunkTime, memoryTime, storedChunkTime, turnTime } from './memory-time.js';

const created = new Date('2026-11-26T08:00:00Z');
const occurred = new Date('2023-05-08T13:56:00Z');
const said = new Date('2023-05-09T07:00:00Z');

describe('memory time: the time of a chunk or turn', () => {
  it('is the message timestamp, else the memory occurred_at, else its creation', () => {
    assert.equal(turnTime({ created_at: created, occurred_at: occurred }, said), said);
    assert.equal(turnTime({ created_at: created, occurred_at: occurred }), occurred);
    assert.equal(turnTime({ created_at: created, occurred_at: null }, undefined), created);
    assert.equal(memoryTime({ created_at: created }), created);
  });

  it('finds a message chunk its own message; other chunks take the memory time', () => {
    const memory = {
      created_at: created,
      occurred_at: occurred,
      content: {
        messages: [
          { role: 'user', content: 'a', timestamp: said },
          { role: 'user', content: 'b' },
        ],
      },
    };
    assert.equal(chunkTime(memory, { type: 'message', role: 'user', message_index: 0 }), said);
    assert.equal(chunkTime(memory, { type: 'message', role: 'user', message_index: 1 }), occurred);
    assert.equal(chunkTime(memory, { type: 'text', start: 0, end: 1 }), occurred);
    assert.equal(storedChunkTime({}, { created_at: created }), created);
    assert.equal(storedChunkTime({ occurred_at: said }, { created_at: created }), said);
  });
});
