/**
 * A signing keyset that the service reads from an env value (production) or from a file created on
 * first start. Every process re-reads the file when it changes, so `npm run admin -- signing-key
 * rotate` takes effect within a few seconds everywhere without a restart. Live events and device
 * snapshots each have one (separate keys: a key never signs two kinds of thing).
 */
import { statSync } from 'node:fs';
import type { Logger } from '../core/logger.js';
import { activeKey, keysetFromEnv, loadOrCreateKeyset, readKeysetFile, type SigningKeyset } from '../core/signing-keyset.js';

const RECHECK_MS = 3000;

export interface KeysetSource {
  current(): Promise<SigningKeyset>;
}

export async function openKeysetSource(
  source: { json?: string | undefined; path: string },
  logger: Logger,
  label: string,
): Promise<KeysetSource> {
  let keyset: SigningKeyset = source.json ? keysetFromEnv(source.json) : await loadOrCreateKeyset(source.path);
  let mtime = source.json ? 0 : statSync(source.path).mtimeMs;
  let checkedAt = Date.now();

  return {
    async current() {
      if (source.json || Date.now() - checkedAt < RECHECK_MS) return keyset;
      checkedAt = Date.now();
      try {
        const changed = statSync(source.path).mtimeMs;
        if (changed !== mtime) {
          const reloaded = await readKeysetFile(source.path);
          if (reloaded) {
            keyset = reloaded;
            mtime = changed;
            logger.info({ kid: activeKey(keyset).kid }, `${label} signing keyset reloaded`);
          }
        }
      } catch (error) {
        logger.warn({ err: error }, `could not re-read the ${label} signing keyset; keeping the current one`);
      }
      return keyset;
    },
  };
}
