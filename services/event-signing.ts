/**
 * The keyset that signs live-event frames. Production passes it in EVENT_SIGNING_KEYSET (JSON);
 * otherwise it lives in a file (created on first start), and every API process re-reads that
 * file when it changes, so `npm run admin -- signing-key rotate` takes effect within a few
 * seconds everywhere without a restart.
 */
import { statSync } from 'node:fs';
import type { Logger } from '../core/logger.js';
import { signEventFrame } from '../core/event-signature.js';
import {
  activeKey,
  keysetFromEnv,
  loadOrCreateKeyset,
  publicJwks,
  readKeysetFile,
  type PublicKeyset,
  type SigningKeyset,
} from '../core/signing-keyset.js';
import type { FrameSigner } from './event-stream.js';

const RECHECK_MS = 3000;

export interface EventSigning {
  signer: FrameSigner;
  publicKeys(): Promise<PublicKeyset>;
}

export async function createEventSigning(source: { json?: string | undefined; path: string }, logger: Logger): Promise<EventSigning> {
  let keyset: SigningKeyset = source.json ? keysetFromEnv(source.json) : await loadOrCreateKeyset(source.path);
  let mtime = source.json ? 0 : statSync(source.path).mtimeMs;
  let checkedAt = Date.now();

  const current = async (): Promise<SigningKeyset> => {
    if (source.json || Date.now() - checkedAt < RECHECK_MS) return keyset;
    checkedAt = Date.now();
    try {
      const changed = statSync(source.path).mtimeMs;
      if (changed !== mtime) {
        const reloaded = await readKeysetFile(source.path);
        if (reloaded) {
          keyset = reloaded;
          mtime = changed;
          logger.info({ kid: activeKey(keyset).kid }, 'event signing keyset reloaded');
        }
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not re-read the event signing keyset; keeping the current one');
    }
    return keyset;
  };

  return {
    signer: async (frame) => signEventFrame(frame, activeKey(await current())),
    publicKeys: async () => publicJwks(await current()),
  };
}
