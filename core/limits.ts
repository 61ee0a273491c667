/** Size limits shared by the request schemas (api/) and the services that enforce them on stored state. */
import { z } from 'zod';

/** JSON bytes a memory's or collection's metadata may hold: sent whole, or grown by merging PATCHes. */
export const METADATA_MAX_BYTES = 16 * 1024;

/** Deepest page offset of any list: past it each request would skip (scan) that many rows; filter instead. */
export const MAX_OFFSET = 100_000;

export const metadataBytes = (metadata: Record<string, unknown>): number => Buffer.byteLength(JSON.stringify(metadata));

// Mongo forbids NUL in keys; `$` and `.` would turn metadata keys into operators or paths.
// eslint-disable-next-line no-control-regex -- matching NUL is the point.
const SAFE_KEY = /^[^$.\u0000][^.\u0000]*$/;

function keysAreSafe(value: unknown, depth = 0): boolean {
  if (depth > 8) return false;
  if (Array.isArray(value)) return value.every((item) => keysAreSafe(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).every(([key, item]) => SAFE_KEY.test(key) && keysAreSafe(item, depth + 1));
  }
  return true;
}

/** Free-form metadata, stored as given: keys may not start with `$` or contain `.`. */
export const metadataObject = z
  .record(z.string(), z.unknown())
  .refine((value) => keysAreSafe(value), 'metadata keys must not start with "$" or contain "." (nesting up to 8 levels)')
  .refine((value) => metadataBytes(value) <= METADATA_MAX_BYTES, `metadata must be at most ${METADATA_MAX_BYTES} bytes of JSON`);
