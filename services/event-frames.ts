/**
 * The text of the event frames the live stream sends (services/event-stream.ts): a log entry shaped
 * into a frame, signed when signing is configured, serialised once and shared by every session that
 * sends it: a frame in the ring (services/event-fanout.ts) is signed by whichever session needs it
 * first, and one older than the ring (a catch-up read) is kept in a bounded cache of signed frames.
 */
import { eventFramesSigned } from '../core/metrics.js';
import type { EventFrameWithoutSignature, SignatureObject } from '../core/event-signature.js';
import type { EventEntry } from '../store/events.js';
import type { EventRing, SharedFrame } from './event-fanout.js';

export type { EventFrameWithoutSignature as EventFrame } from '../core/event-signature.js';

/** Signs a frame when signing is configured. */
export type FrameSigner = (frame: EventFrameWithoutSignature) => Promise<SignatureObject>;

const SIGNED_CACHE = 4096;

export const frameBytes = (entry: EventEntry): number => 512 + JSON.stringify(entry.payload).length;

export const frameOf = (entry: EventEntry): EventFrameWithoutSignature => ({
  action: 'event',
  seq: entry.seq,
  event_id: entry.id,
  type: entry.type,
  collection_id: entry.collection_id,
  payload: entry.payload,
  ts: entry.ts.toISOString(),
});

/** The frame texts of one event stream: `ring` is its ring, `signer` null when frames go unsigned. */
export function createFrameTexts(ring: EventRing, signer: FrameSigner | null) {
  /**
   * Frames signed for catch-up reads (older than the ring), shared by every session replaying them;
   * each with the payload it was made from, so a redacted entry is never answered with its old text.
   */
  const signedCache = new Map<number, { text: string; payload: string }>();
  const cachedText = (entry: EventEntry): string | null => {
    const cached = signedCache.get(entry.seq);
    return cached !== undefined && cached.payload === JSON.stringify(entry.payload) ? cached.text : null;
  };

  /** The text of a ring frame, signed by whichever session needs it first. */
  function textOf(frame: SharedFrame): string | Promise<string> {
    if (frame.text !== null) return frame.text;
    // A failed signature is not remembered: the next wake tries again.
    frame.signing ??= serialise(frame.entry).then(
      (text) => (frame.text = text),
      (error: unknown) => {
        frame.signing = undefined;
        throw error;
      },
    );
    return frame.signing;
  }

  /** The frame text of an entry: from the ring, the cache, or signed now (once). */
  async function shared(entry: EventEntry): Promise<string> {
    const held = ring.get(entry.seq);
    if (held) return textOf(held);
    const cached = cachedText(entry);
    if (cached !== null) return cached;
    const text = await serialise(entry);
    signedCache.set(entry.seq, { text, payload: JSON.stringify(entry.payload) });
    if (signedCache.size > SIGNED_CACHE) signedCache.delete(signedCache.keys().next().value as number);
    return text;
  }

  async function serialise(entry: EventEntry): Promise<string> {
    const frame = frameOf(entry);
    if (!signer) return JSON.stringify(frame);
    eventFramesSigned.inc();
    return JSON.stringify({ ...frame, signature: await signer(frame) });
  }

  return {
    cachedText,
    textOf,
    shared,
    /** A cached frame of an entry rewritten in the log (a delete's redaction): never sent again. */
    forget(seq: number): void {
      signedCache.delete(seq);
    },
  };
}

export type FrameTexts = ReturnType<typeof createFrameTexts>;
