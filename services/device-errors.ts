/**
 * What a device call's failures answer (services/device-memory.ts is their client): a signed URL
 * the outbound policy refuses, an upstream that fails, times out, redirects or sends too much, and
 * a snapshot that does not open, each as the API error with its status, stable code and field.
 */
import { AppError } from '../core/errors.js';
import { OutboundError } from '../core/outbound/client.js';
import { checkHeaders, OutboundRefusal } from '../core/outbound/policy.js';
import { SnapshotError } from '../snapshot/seal.js';

/** A check of the outbound policy (a URL, headers): a refusal answers 400 naming `field`. */
export function policyChecked<T>(field: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof OutboundRefusal) throw refusal(error, field);
    throw error;
  }
}

/** Headers a caller gives for a signed URL, checked by the outbound policy (refused: 400 naming `field`). */
export const outboundHeaders = (headers: Record<string, string> | undefined, field: string): Record<string, string> =>
  policyChecked(field, () => checkHeaders(headers, field));

/** 413 snapshot_too_large naming the field and the cap it passed. */
export const tooLarge = (message: string, field: string): AppError =>
  new AppError(413, 'snapshot_too_large', message, [{ field, issue: message }]);

/** 400 snapshot_url_refused: the outbound policy refused a URL or header (the reason is in the details). */
export const refusal = (error: OutboundRefusal, field: string): AppError =>
  new AppError(400, 'snapshot_url_refused', `${field}: ${error.message}`, [{ field, issue: `${error.reason}: ${error.message}` }]);

/** Maps outbound failures to statuses: refused 400, too large 413, redirect or upstream error 502, timeout 504. */
export async function outbound<T>(field: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof OutboundRefusal) throw refusal(error, field);
    if (!(error instanceof OutboundError)) throw error;
    const details = [{ field, issue: error.message }];
    switch (error.kind) {
      case 'too_large':
        throw new AppError(413, 'snapshot_too_large', `${field}: ${error.message}`, details);
      case 'timeout':
        throw new AppError(504, 'upstream_timeout', `${field}: ${error.message}`, details);
      case 'redirect':
        throw new AppError(502, 'upstream_redirect', `${field}: ${error.message}`, details);
      default:
        throw new AppError(502, 'upstream_failed', `${field}: ${error.message}`, details);
    }
  }
}

/** A snapshot that does not open (snapshot/seal.ts SnapshotError) as the API error it answers: 413 over a cap, else 400, naming its field. */
export async function translate<T>(open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error;
    throw new AppError(error.code === 'snapshot_too_large' ? 413 : 400, error.code, error.message, [
      { field: error.path, issue: error.message },
    ]);
  }
}
