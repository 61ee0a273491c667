/** Reconnect delays: exponential backoff with jitter. */

export interface ReconnectPolicy {
  /** Delay before the first retry (before jitter). */
  minDelayMs: number;
  /** Cap of the exponential growth. */
  maxDelayMs: number;
  /** Consecutive failed attempts before giving up; unlimited when absent. */
  maxAttempts?: number;
}

export const DEFAULT_RECONNECT: Readonly<ReconnectPolicy> = { minDelayMs: 250, maxDelayMs: 30_000 };

/**
 * Delay before retry number `attempt` (0 = first retry): min(max, min·2^attempt), then jittered
 * into [50 %, 100 %] of that, so many clients dropped at once do not reconnect in lockstep while
 * the delay still grows.
 */
export function backoffDelay(policy: ReconnectPolicy, attempt: number, random: () => number = Math.random): number {
  const min = Math.max(0, policy.minDelayMs);
  const max = Math.max(min, policy.maxDelayMs);
  const base = Math.min(max, min * 2 ** Math.min(Math.max(0, attempt), 52));
  return Math.round(base * (0.5 + 0.5 * random()));
}
