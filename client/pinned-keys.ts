/**
 * The event client's signature check (spec: Events, signatures): only keys the caller pinned
 * verify an event, and each way an event can fail says so with its own code.
 */
import type { JWK } from 'jose';
import { verifyEventFrame } from '../core/event-signature.js';
import type { EventFrame } from './frames.js';
import type { VerifyOptions } from './options.js';

export interface Rejection {
  code: 'signature_missing' | 'kid_not_pinned' | 'signature_invalid';
  message: string;
  kid?: string;
}

export class PinnedKeys {
  readonly #keys: readonly JWK[];
  readonly #kids: ReadonlySet<string>;

  constructor(options: VerifyOptions) {
    const kids = options.kids ? new Set(options.kids) : undefined;
    this.#keys = options.jwks.filter((jwk) => typeof jwk.kid === 'string' && (!kids || kids.has(jwk.kid)));
    this.#kids = new Set(this.#keys.map((jwk) => jwk.kid as string));
  }

  /** Why the event must be dropped, or null when a pinned key signed it. */
  async check(frame: EventFrame): Promise<Rejection | null> {
    const signature: unknown = frame.signature;
    if (signature === undefined) return { code: 'signature_missing', message: 'no signature (verification is on)' };
    const kid = typeof signature === 'object' && signature !== null ? (signature as { key_id?: unknown }).key_id : undefined;
    if (typeof kid !== 'string') return { code: 'signature_invalid', message: 'signature without a string key_id' };
    if (!this.#kids.has(kid)) return { code: 'kid_not_pinned', message: `signed with key ${kid}, which is not pinned`, kid };
    if (!(await verifyEventFrame(frame, this.#keys)))
      return { code: 'signature_invalid', message: `signature by key ${kid} does not verify`, kid };
    return null;
  }
}
