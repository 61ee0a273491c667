/**
 * Slots for expensive calls, bounded per process and per key (tenant), taken or refused at once
 * (the caller answers 503 with Retry-After; nothing waits). A slot is given back when its call
 * ends, or as soon as the call's signal aborts (its request's deadline answered, or its client
 * left), whichever comes first: an abandoned call never holds a slot after its answer was sent.
 * A call may weigh more than one slot (the request bodies in flight weigh their bytes); one that
 * finds nothing else held is admitted whatever its weight, so a single call at the size limit is
 * never refused. Pure, so it is unit-tested beside.
 */
export type SlotRefusal = 'process' | 'key';

export class WorkSlots {
  private running = 0;
  private readonly perKey = new Map<string, number>();

  constructor(
    readonly processLimit: number,
    readonly keyLimit: number,
    /** Told the number of held slots after each change (a metric). */
    private readonly onChange: (active: number) => void = () => undefined,
  ) {}

  /** A release function, or which limit refused. The slot is also released when `signal` aborts. */
  acquire(key: string, signal?: AbortSignal, weight = 1): { release: () => void } | { refused: SlotRefusal } {
    if (this.running > 0 && this.running + weight > this.processLimit) return { refused: 'process' };
    const held = this.perKey.get(key) ?? 0;
    if (held > 0 && held + weight > this.keyLimit) return { refused: 'key' };
    this.running += weight;
    this.perKey.set(key, held + weight);
    this.onChange(this.running);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      signal?.removeEventListener('abort', release);
      this.running -= weight;
      const left = (this.perKey.get(key) ?? weight) - weight;
      if (left > 0) this.perKey.set(key, left);
      else this.perKey.delete(key);
      this.onChange(this.running);
    };
    if (signal?.aborted) release();
    else signal?.addEventListener('abort', release, { once: true });
    return { release };
  }

  active(key?: string): number {
    return key === undefined ? this.running : (this.perKey.get(key) ?? 0);
  }
}
