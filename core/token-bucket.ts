/** Per-key token buckets for rate limiting; pure and clock-injectable so it is unit-tested. */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; updated: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
    /** Keys tracked at most; past it, buckets that have refilled (hold nothing) are forgotten. */
    private readonly maxKeys = 100_000,
  ) {}

  private refilled(key: string, now: number): { tokens: number; updated: number } {
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, updated: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updated) / 1000) * this.ratePerSecond);
    bucket.updated = now;
    return bucket;
  }

  private wait(tokens: number): number {
    return Math.max(1, Math.ceil((1 - tokens) / this.ratePerSecond));
  }

  /** Takes one token; returns 0 when allowed, else the whole seconds to wait before a retry. */
  take(key: string): number {
    const now = this.now();
    const bucket = this.refilled(key, now);
    if (!this.buckets.has(key)) {
      if (this.buckets.size >= this.maxKeys) this.forgetFull(now);
      this.buckets.set(key, bucket);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return this.wait(bucket.tokens);
  }

  /** Like `take`, but only looks: 0 when a token is available, else the seconds until one is. */
  peek(key: string): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = Math.min(this.burst, bucket.tokens + ((this.now() - bucket.updated) / 1000) * this.ratePerSecond);
    return tokens >= 1 ? 0 : this.wait(tokens);
  }

  get size(): number {
    return this.buckets.size;
  }

  /** A full bucket is the same as no bucket, so forgetting one changes nothing for its key. */
  private forgetFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.updated) / 1000) * this.ratePerSecond >= this.burst) this.buckets.delete(key);
    }
    // Still full of draining buckets (an address flood): drop the oldest half rather than grow.
    if (this.buckets.size >= this.maxKeys) {
      let drop = Math.ceil(this.buckets.size / 2);
      for (const key of this.buckets.keys()) {
        if (drop-- <= 0) break;
        this.buckets.delete(key);
      }
    }
  }
}
