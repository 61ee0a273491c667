import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entryMatches, type EventEntry } from '../store/events.js';
import { EventRing, SessionCounter } from './event-fanout.js';

const entry = (seq: number, tenant = 't1', collection = 'c1', extra: Partial<EventEntry> = {}): EventEntry => ({
  id: `e${seq}`,
  seq,
  type: 'ingestion_progress',
  tenant_id: tenant,
  collection_id: collection,
  payload: {},
  ts: new Date(0),
  ...extra,
});
const frame = (seq: number, bytes = 10) => ({ entry: entry(seq), bytes, text: null });

describe('EventRing', () => {
  it('serves contiguous frames after a cursor it covers, and nothing it does not hold', () => {
    const ring = new EventRing(100, 1_000_000);
    assert.equal(ring.covers(0), false, 'not ready before the tail started');
    ring.reset(10);
    for (let seq = 11; seq <= 15; seq++) ring.push(frame(seq));
    assert.equal(ring.covers(10), true);
    assert.equal(ring.covers(9), false);
    assert.deepEqual(
      ring.after(12).map((held) => held.entry.seq),
      [13, 14, 15],
    );
    assert.deepEqual(ring.after(15), []);
    assert.equal(ring.get(13)?.entry.seq, 13);
    assert.equal(ring.get(10), undefined);
    assert.equal(ring.get(16), undefined);
  });

  it('drops the oldest frames beyond its count and byte bounds, moving base', () => {
    const byCount = new EventRing(3, 1_000_000);
    byCount.reset(0);
    for (let seq = 1; seq <= 5; seq++) byCount.push(frame(seq));
    assert.equal(byCount.size, 3);
    assert.equal(byCount.base, 2);
    assert.equal(byCount.covers(1), false, 'a cursor before the ring reads the log instead');
    assert.deepEqual(
      byCount.after(2).map((held) => held.entry.seq),
      [3, 4, 5],
    );
    const byBytes = new EventRing(100, 25);
    byBytes.reset(0);
    for (let seq = 1; seq <= 4; seq++) byBytes.push(frame(seq, 10));
    assert.equal(byBytes.size, 2);
    assert.equal(byBytes.base, 2);
  });

  it('restarts after a hole, so no session is served across entries it never held', () => {
    const ring = new EventRing(100, 1_000_000);
    ring.reset(0);
    ring.push(frame(1));
    ring.push(frame(2));
    ring.push(frame(7)); // 3..6 were trimmed before the tail read them
    assert.equal(ring.base, 6);
    assert.equal(ring.covers(2), false);
    assert.deepEqual(
      ring.after(6).map((held) => held.entry.seq),
      [7],
    );
    ring.push(frame(7));
    assert.equal(ring.size, 1, 'a repeated seq is ignored');
  });

  it('replaces a held frame by its redacted entry, dropping the text signed from the old one', () => {
    const ring = new EventRing(100, 1_000_000);
    ring.reset(0);
    for (let seq = 1; seq <= 3; seq++) ring.push({ ...frame(seq), text: `signed ${seq}` });
    const redacted = entry(2, 't1', 'c1', { type: 'fact_superseded', payload: { redacted: true } });
    assert.equal(ring.refresh(redacted, 25), true);
    assert.deepEqual(ring.get(2), { entry: redacted, text: null, bytes: 25 });
    assert.equal(ring.get(1)?.text, 'signed 1', 'the other frames keep their text');
    assert.equal(ring.refresh(entry(7), 10), false, 'a frame it does not hold is left to the log');
  });
});

describe('entryMatches', () => {
  const filter = { tenantId: 't1', collectionIds: ['c2'], eventTypes: [] };
  it('matches by tenant, type, and any of the collections an event names', () => {
    assert.equal(entryMatches(entry(1, 't1', 'c2'), filter), true);
    assert.equal(entryMatches(entry(1, 't2', 'c2'), filter), false, 'never another tenant');
    assert.equal(entryMatches(entry(1, 't1', 'c1'), filter), false);
    assert.equal(entryMatches(entry(1, 't1', 'c1', { collection_ids: ['c1', 'c2'] }), filter), true, 'a coalesced event');
    assert.equal(entryMatches(entry(1, 't1', 'c1'), { ...filter, collectionIds: [] }), true, 'empty = every collection');
    assert.equal(entryMatches(entry(1, 't1', 'c2'), { ...filter, eventTypes: ['memory_unconfident'] }), false);
  });
});

describe('SessionCounter', () => {
  it('refuses by the first cap reached, and frees a slot on release', () => {
    const counter = new SessionCounter({ perKey: 2, perTenant: 3, perProcess: 4 });
    assert.equal(counter.admit('a', 'a1'), null);
    assert.equal(counter.admit('a', 'a1'), null);
    assert.equal(counter.admit('a', 'a1'), 'key');
    assert.equal(counter.admit('a', 'a2'), null);
    assert.equal(counter.admit('a', 'a3'), 'tenant');
    assert.equal(counter.admit('b', 'b1'), null);
    assert.equal(counter.admit('c', 'c1'), 'process');
    assert.equal(counter.open, 4);
    counter.release('a', 'a1');
    assert.equal(counter.admit('a', 'a1'), null, 'a released slot is usable again');
    assert.equal(counter.limitOf('tenant'), 3);
  });
});
