/** Schema pieces shared by several resources. */
import { MAX_OFFSET, METADATA_MAX_BYTES, metadataBytes } from '../../core/limits.js';
import { z } from 'zod';

export const uuid = z.string().uuid('must be a UUID');

/** A query parameter given as `?x=a&x=b`, `?x=a,b` or `?x=["a","b"]`, as a list. */
export const listParam = <T extends z.ZodType>(item: T) =>
  z.preprocess((value) => {
    const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
    return values.flatMap((entry) => {
      if (typeof entry !== 'string') return [entry];
      const trimmed = entry.trim();
      if (trimmed.startsWith('[')) {
        try {
          return JSON.parse(trimmed) as unknown[];
        } catch {
          return [entry];
        }
      }
      return trimmed
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part.length > 0);
    });
  }, z.array(item));

export const intParam = (name: string, min: number, max: number, fallback: number) =>
  z.preprocess(
    (value) =>
      value === undefined || value === '' ? fallback : typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value,
    z
      .number({ error: `${name} must be an integer` })
      .int(`${name} must be an integer`)
      .min(min, `${name} must be at least ${min}`)
      .max(max, `${name} must be at most ${max}`),
  );

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

export const pagination = (maxLimit: number, defaultLimit: number) => ({
  limit: intParam('limit', 1, maxLimit, defaultLimit),
  offset: intParam('offset', 0, MAX_OFFSET, 0),
});
