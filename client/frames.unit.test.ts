import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type EventFrame, isIngestionProgress, isMemoryUnconfident, parseServerFrame } from './frames.js';

const event = {
  action: 'event',
  seq: 7,
  event_id: 'e1',
  type: 'ingestion_progress',
  collection_id: 'c1',
  payload: { engram_id: 'm1', stage: 'embed', user_stage: 'indexing', current: 2, total: 4, message: null },
  ts: '2025-01-01T00:00:00.000Z',
};

it('parses an event frame and keeps unknown fields (they are signed too)', () => {
  const result = parseServerFrame(JSON.stringify({ ...event, extra: { a: 1 } }));
  assert.ok(result.ok);
  assert.deepEqual(result.frame, { ...event, extra: { a: 1 } });
});

it('rejects event frames without the required fields', () => {
  for (const broken of [
    { ...event, seq: '7' },
    { ...event, seq: -1 },
    { ...event, seq: 1.5 },
    { ...event, event_id: 1 },
    { ...event, type: undefined },
    { ...event, collection_id: null },
    { ...event, payload: [] },
    { ...event, ts: 0 },
    { ...event, signature: 'abc' },
  ]) {
    const result = parseServerFrame(JSON.stringify(broken));
    assert.equal(result.ok, false, JSON.stringify(broken));
  }
});

it('parses control frames, and passes unknown actions through', () => {
  assert.deepEqual(parseServerFrame('{"action":"heartbeat_ack"}'), { ok: true, frame: { action: 'heartbeat_ack' } });
  assert.ok(parseServerFrame('{"action":"subscribed","collections":[],"event_types":["x"]}').ok);
  assert.equal(parseServerFrame('{"action":"subscribed","collections":"all"}').ok, false);
  assert.deepEqual(parseServerFrame('{"action":"error","reason":"replay_gap","oldest_seq":5}'), {
    ok: true,
    frame: { action: 'error', reason: 'replay_gap', oldest_seq: 5 },
  });
  assert.equal(parseServerFrame('{"action":"subscribe_error"}').ok, false);
  assert.deepEqual(parseServerFrame('{"action":"future_thing","x":1}'), { ok: true, frame: { action: 'future_thing', x: 1 } });
  assert.equal(parseServerFrame('nope').ok, false);
  assert.equal(parseServerFrame('[1]').ok, false);
  assert.equal(parseServerFrame('{"no":"action"}').ok, false);
});

it('type guards check the documented payload fields', () => {
  assert.ok(isIngestionProgress(event as EventFrame));
  assert.ok(!isIngestionProgress({ ...event, payload: { ...event.payload, current: '2' } } as EventFrame));
  const unconfident = { ...event, type: 'memory_unconfident', payload: { query: 'q', reason: 'no_results' } } as EventFrame;
  assert.ok(isMemoryUnconfident(unconfident));
  assert.ok(!isIngestionProgress(unconfident));
});
