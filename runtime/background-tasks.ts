/**
 * The API process's periodic repair tasks (reconcile, delete sweep, expiry sweep, owed mines, …).
 *
 * Two guarantees a bare setInterval does not give:
 *   - a run is never overlapped by the next tick of the same task (a slow expiry sweep would
 *     otherwise purge the same ids twice at once): a tick that finds the previous run still going
 *     is skipped;
 *   - `stop()` clears every timer and waits for the runs in flight, so the process closes its
 *     database client only after they finished (no MongoClientClosedError at Ctrl-C).
 */
import type { Logger } from '../core/logger.js';

export class BackgroundTasks {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly logger: Pick<Logger, 'warn'>) {}

  /** Runs `task` every `ms`; logs `done` with the count it returns when above 0, and `failed` when it throws. */
  every(ms: number, task: () => Promise<number | void>, done: string, failed: string): void {
    let running = false;
    const timer = setInterval(() => {
      if (running || this.stopped) return;
      running = true;
      const run = task()
        .then((count) => {
          if (typeof count === 'number' && count > 0) this.logger.warn({ count }, done);
        })
        .catch((error: unknown) => this.logger.warn({ err: error }, failed))
        .finally(() => {
          running = false;
          this.inFlight.delete(run);
        });
      this.inFlight.add(run);
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** No new run starts; resolves once the runs in flight have finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    await Promise.all([...this.inFlight]);
  }
}
