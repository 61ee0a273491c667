/** Schema pieces shared by several resources. */
import { MAX_OFFSET } from '../../core/limits.js';
import { z } from 'zod';

export const uuid = z.string().uuid('must be a UUID');

/** An ISO 8601 date-time with a zone (`Z` or `±hh:mm`), read as a Date; the message names the field. */
export const isoTimestamp = (field: string) =>
  z.iso
    .datetime({ offset: true, error: `${field} must be an ISO 8601 timestamp with a time zone, such as 2026-01-31T12:00:00Z` })
    .transform((value) => new Date(value))
    .refine((date) => !Number.isNaN(date.getTime()), `${field} is not a real date`);

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

/** Free-form metadata (core/limits.ts holds the rule: snapshots carry metadata too). */
export { metadataObject } from '../../core/limits.js';

export const pagination = (maxLimit: number, defaultLimit: number) => ({
  limit: intParam('limit', 1, maxLimit, defaultLimit),
  offset: intParam('offset', 0, MAX_OFFSET, 0),
});
