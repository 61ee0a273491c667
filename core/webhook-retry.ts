/**
 * When a failed webhook delivery is tried again, and what an answer means (docs/webhooks.md,
 * "Retries"). Pure functions: the delivery loop (services/webhook-delivery.ts) applies them.
 *
 * The schedule is the Standard Webhooks example's first eight steps: immediately, 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h. Past its end the last step repeats until the endpoint has failed
 * for the disable period. Each delay is spread by ±20 % jitter so that many subscriptions failing
 * together do not retry in lockstep.
 */

export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** A Retry-After longer than this is not believed: the endpoint is tried again after a day. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
const JITTER = 0.2;

/**
 * The delay before the next attempt, after `failedAttempts` (≥ 1) attempts at this event failed.
 * `random` is in [0, 1).
 */
export function retryDelayMs(schedule: readonly number[], failedAttempts: number, random: number): number {
  if (schedule.length === 0) throw new Error('the retry schedule is empty');
  const step = schedule[Math.min(Math.max(failedAttempts, 1), schedule.length - 1)]!;
  return Math.round(step * (1 - JITTER + 2 * JITTER * random));
}

/** Retry-After as delta-seconds or an HTTP-date (RFC 9110 §10.2.3), in ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  // An HTTP-date names its weekday and month; anything else (e.g. "-5") is not one.
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return null;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

export type Outcome =
  | { kind: 'delivered' }
  /** 410 Gone: the receiver wants nothing more; the subscription is disabled. */
  | { kind: 'gone' }
  | { kind: 'retry'; delayMs: number };

/**
 * What an attempt's answer means. `status` is null when there was no HTTP answer (refused,
 * timeout, connection reset): those are retried like a 5xx. Retry-After counts on 429 and 503,
 * as a lower bound on the scheduled delay.
 */
export function outcomeOf(
  status: number | null,
  retryAfter: string | undefined,
  failedAttempts: number,
  schedule: readonly number[],
  now: number,
  random: number,
): Outcome {
  if (status !== null && status >= 200 && status < 300) return { kind: 'delivered' };
  if (status === 410) return { kind: 'gone' };
  let delayMs = retryDelayMs(schedule, failedAttempts, random);
  if (status === 429 || status === 503) {
    const asked = parseRetryAfter(retryAfter, now);
    if (asked !== null) delayMs = Math.max(delayMs, asked);
  }
  return { kind: 'retry', delayMs };
}
