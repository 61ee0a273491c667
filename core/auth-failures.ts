// Kept apart from the HTTP middleware so that the API's context, its entry points and the
// composition root share it without importing one another.
import { type AppError, rateLimited } from './errors.js';
import { TokenBuckets } from './token-bucket.js';

/**
 * Failed credential checks per client address, shared by every unauthenticated entry point (API
 * keys, WebSocket tickets, signed upload URLs): a token bucket of AUTH_FAILURE_RATE_PER_SECOND,
 * AUTH_FAILURE_BURST. An address that spent its failures gets 429 `rate_limited` with
 * Retry-After, before any credential is looked up, on every one of them (one process-wide
 * bucket, so switching entry points buys no extra guesses). The address is the socket's peer,
 * never X-Forwarded-For, which a client could vary at will.
 */
export class AuthFailures {
  private readonly buckets: TokenBuckets;

  constructor(ratePerSecond: number, burst: number) {
    this.buckets = new TokenBuckets(ratePerSecond, burst);
  }

  /** Seconds the address must wait before its next credential check; 0 when it may try. */
  wait(address: string): number {
    return this.buckets.peek(address);
  }

  /** Records a failure; the seconds to wait when it was one too many (answer 429), else 0. */
  charge(address: string): number {
    return this.buckets.take(address);
  }
}

export const tooManyFailures = (retryAfter: number): AppError =>
  rateLimited(retryAfter, `Too many failed authentications from this address; retry after ${retryAfter} s`);
