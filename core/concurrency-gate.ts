/**
 * Per-key concurrency limits with a bounded FIFO wait: at most `limit` holders per key run at
 * once, up to `maxWaiting` more wait their turn in order, and beyond that `acquire` refuses at
 * once (the caller answers 429). Pure, so it is unit-tested beside.
 */
export class ConcurrencyGate {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}

  /** Resolves with a release function, or with null when the key's queue is full. */
  async acquire(key: string): Promise<(() => void) | null> {
    const active = this.running.get(key) ?? 0;
    if (active < this.limit) {
      this.running.set(key, active + 1);
      return this.releaser(key);
    }
    const queue = this.waiting.get(key) ?? [];
    if (queue.length >= this.maxWaiting) return null;
    this.waiting.set(key, queue);
    // The slot is handed over by release(): running stays counted for the waiter.
    await new Promise<void>((resolve) => queue.push(resolve));
    return this.releaser(key);
  }

  private releaser(key: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const queue = this.waiting.get(key);
      const next = queue?.shift();
      if (queue && queue.length === 0) this.waiting.delete(key);
      if (next) return next();
      const left = (this.running.get(key) ?? 1) - 1;
      if (left > 0) this.running.set(key, left);
      else this.running.delete(key);
    };
  }

  active(key: string): number {
    return this.running.get(key) ?? 0;
  }

  queued(key: string): number {
    return this.waiting.get(key)?.length ?? 0;
  }
}
