import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SignatureObject } from '../core/event-signature.js';
import type { EventEntry } from '../store/events.js';
import { EventRing } from './event-fanout.js';
import { createFrameTexts, frameBytes, frameOf, type FrameSigner } from './event-frames.js';

const entry = (seq: number, payload: Record<string, unknown> = {}): EventEntry => ({
  id: `e${seq}`,
  seq,
  type: 'ingestion_progress',
  tenant_id: 't1',
  collection_id: 'c1',
  payload,
  ts: new Date(0),
});

/** A signer whose nth call signs with value `sig<n>`; the calls listed in `failing` reject. */
function countingSigner(failing: readonly number[] = []) {
  let calls = 0;
  const signer: FrameSigner = (frame) => {
    calls++;
    if (failing.includes(calls)) return Promise.reject(new Error(`signature ${calls} failed`));
    return Promise.resolve({ key_id: 'k', value: `sig${calls}`, signed_fields: Object.keys(frame).sort() } as unknown as SignatureObject);
  };
  return { signer, calls: () => calls };
}

/**
 * One step against the frame texts: `shared` (catch-up path), `text` (the ring frame of that seq),
 * `ring` (the tail pushes the entry), `forget`, `cached`. Each shared/text/cached step answers the
 * signature value of the text it got ('unsigned' without one), 'error' or 'null'.
 */
type Step = { op: 'shared' | 'cached'; seq: number; payload?: Record<string, unknown> } | { op: 'text' | 'ring' | 'forget'; seq: number };

const CASES: { name: string; signing: boolean; failing?: number[]; steps: Step[]; answers: string[]; signed: number }[] = [
  { name: 'unsigned: the shaped frame alone', signing: false, steps: [{ op: 'shared', seq: 1 }], answers: ['unsigned'], signed: 0 },
  {
    name: 'a catch-up frame is signed once and shared',
    signing: true,
    steps: [
      { op: 'shared', seq: 1 },
      { op: 'shared', seq: 1 },
      { op: 'cached', seq: 1 },
    ],
    answers: ['sig1', 'sig1', 'sig1'],
    signed: 1,
  },
  {
    name: 'a changed payload (a redaction) is never answered from the cache',
    signing: true,
    steps: [
      { op: 'shared', seq: 1 },
      { op: 'cached', seq: 1, payload: { redacted: true } },
      { op: 'shared', seq: 1, payload: { redacted: true } },
    ],
    answers: ['sig1', 'null', 'sig2'],
    signed: 2,
  },
  {
    name: 'a forgotten frame is signed again',
    signing: true,
    steps: [
      { op: 'shared', seq: 1 },
      { op: 'forget', seq: 1 },
      { op: 'cached', seq: 1 },
      { op: 'shared', seq: 1 },
    ],
    answers: ['sig1', 'null', 'sig2'],
    signed: 2,
  },
  {
    name: 'a ring frame is signed once, whichever path asks first',
    signing: true,
    steps: [
      { op: 'ring', seq: 1 },
      { op: 'shared', seq: 1 },
      { op: 'text', seq: 1 },
      { op: 'cached', seq: 1 },
    ],
    answers: ['sig1', 'sig1', 'null'],
    signed: 1,
  },
  {
    name: 'a failed signature is not remembered',
    signing: true,
    failing: [1],
    steps: [
      { op: 'ring', seq: 1 },
      { op: 'text', seq: 1 },
      { op: 'text', seq: 1 },
      { op: 'text', seq: 1 },
    ],
    answers: ['error', 'sig2', 'sig2'],
    signed: 2,
  },
];

describe('frame texts', () => {
  for (const { name, signing, failing, steps, answers, signed } of CASES) {
    it(name, async () => {
      const ring = new EventRing(100, 1_000_000);
      ring.reset(0);
      const { signer, calls } = countingSigner(failing);
      const texts = createFrameTexts(ring, signing ? signer : null);
      const answer = (text: string | null): string => {
        if (text === null) return 'null';
        const parsed = JSON.parse(text) as { signature?: { value: string } };
        return parsed.signature?.value ?? 'unsigned';
      };
      const got: string[] = [];
      for (const step of steps) {
        if (step.op === 'shared') got.push(answer(await texts.shared(entry(step.seq, step.payload))));
        else if (step.op === 'cached') got.push(answer(texts.cachedText(entry(step.seq, step.payload))));
        else if (step.op === 'forget') texts.forget(step.seq);
        else if (step.op === 'ring') ring.push({ entry: entry(step.seq), text: null, bytes: frameBytes(entry(step.seq)) });
        else {
          const frame = ring.get(step.seq);
          assert.ok(frame);
          got.push(await Promise.resolve(texts.textOf(frame)).then(answer, () => 'error'));
        }
      }
      assert.deepEqual(got, answers);
      assert.equal(calls(), signed);
    });
  }

  it('keeps at most 4096 catch-up frames, dropping the oldest', async () => {
    const { signer, calls } = countingSigner();
    const texts = createFrameTexts(new EventRing(100, 1_000_000), signer);
    for (let seq = 1; seq <= 4097; seq++) await texts.shared(entry(seq));
    assert.equal(texts.cachedText(entry(1)), null);
    assert.notEqual(texts.cachedText(entry(2)), null);
    assert.equal(calls(), 4097);
  });

  it('shapes a log entry into the frame every session sends', () => {
    const shaped = frameOf(entry(7, { stage: 'embed' }));
    assert.deepEqual(shaped, {
      action: 'event',
      seq: 7,
      event_id: 'e7',
      type: 'ingestion_progress',
      collection_id: 'c1',
      payload: { stage: 'embed' },
      ts: '1970-01-01T00:00:00.000Z',
    });
  });
});
