/**
 * Cooperative time slicing, for work that has to run on the event loop (it calls back into the
 * process: the embedder, a graph store) but is long in total: a device create's graph merge and
 * sealing over 2M characters took about 2 s of CPU in one stretch, during which no other tenant's
 * request, ping or deadline timer ran. A loop asks `due()` per step (a clock read) and, when its
 * slice is spent, awaits `pause()`: a macrotask turn (setImmediate), so timers and I/O run in
 * between. Await `pause()` only when `due()`: a resolved await is a microtask, which gives the
 * loop nothing. The work and its results are unchanged; only where it stops is new.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Long enough that a turn's cost (microseconds) is noise, short enough that a search barely waits. */
export const DEFAULT_SLICE_MS = 10;

export class TimeSlicer {
  private sliceStarted = performance.now();

  constructor(readonly sliceMs = DEFAULT_SLICE_MS) {}

  /** The running slice is spent: the caller should `await pause()` before its next step. */
  due(): boolean {
    return performance.now() - this.sliceStarted >= this.sliceMs;
  }

  /** Gives the event loop a turn, then starts a new slice. */
  async pause(): Promise<void> {
    await nextTurn();
    this.sliceStarted = performance.now();
  }

  /** `pause()` when the slice is spent, else nothing (for loops whose steps are few and long). */
  async step(): Promise<void> {
    if (this.due()) await this.pause();
  }
}
