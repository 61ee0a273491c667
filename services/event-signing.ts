/** The keyset that signs live-event frames (EVENT_SIGNING_KEYSET or a file; see keyset-source.ts). */
import type { Logger } from '../core/logger.js';
import { signEventFrame } from '../core/event-signature.js';
import { activeKey, publicJwks, type PublicKeyset } from '../core/signing-keyset.js';
import type { FrameSigner } from './event-stream.js';
import { openKeysetSource } from './keyset-source.js';

export interface EventSigning {
  signer: FrameSigner;
  publicKeys(): Promise<PublicKeyset>;
}

export async function createEventSigning(source: { json?: string | undefined; path: string }, logger: Logger): Promise<EventSigning> {
  const keys = await openKeysetSource(source, logger, 'event');
  return {
    signer: async (frame) => signEventFrame(frame, activeKey(await keys.current())),
    publicKeys: async () => publicJwks(await keys.current()),
  };
}
