/** The keyset that signs live-event frames (EVENT_SIGNING_KEYSET or a file; see keyset-source.ts). */
import type { Logger } from '../core/logger.js';
import { signEventFrame } from '../core/event-signature.js';
import { activeKey, publicJwks, type PublicKeyset, type PublicSigningJwk } from '../core/signing-keyset.js';
import { whpkOf } from '../core/webhook-signature.js';
import type { FrameSigner } from './event-frames.js';
import { openKeysetSource } from './keyset-source.js';

/** An event key as served; Ed25519 keys also carry `whpk`, the Standard Webhooks form that verifies v1a webhook signatures. */
export type EventPublicJwk = PublicSigningJwk & { whpk?: string };

export interface EventSigning {
  signer: FrameSigner;
  publicKeys(): Promise<{ keys: EventPublicJwk[] }>;
}

const withWhpk = (keyset: PublicKeyset): { keys: EventPublicJwk[] } => ({
  keys: keyset.keys.map((key) => (key.crv === 'Ed25519' ? { ...key, whpk: whpkOf(key.x) } : key)),
});

export async function createEventSigning(source: { json?: string | undefined; path: string }, logger: Logger): Promise<EventSigning> {
  const keys = await openKeysetSource(source, logger, 'event');
  return {
    signer: async (frame) => signEventFrame(frame, activeKey(await keys.current())),
    publicKeys: async () => withWhpk(publicJwks(await keys.current())),
  };
}
