/**
 * This process's garbage collections while a recording runs (perf_hooks `gc` entries), for the
 * bench's own processes: when each began, how long it took, and its kind
 * (perf_hooks constants.NODE_PERFORMANCE_GC_MAJOR etc.). A module of its own, as the device client
 * is a script of its own and loads nothing else of the bench.
 */
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export interface Collection {
  start: number;
  ms: number;
  kind: number;
}

export function recordCollections(): { collections: Collection[]; stop(): Promise<void> } {
  const collections: Collection[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      collections.push({
        start: entry.startTime,
        ms: entry.duration,
        kind: (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0,
      });
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    collections,
    async stop() {
      await new Promise((resolve) => setImmediate(resolve)); // the observer's last entries
      observer.disconnect();
    },
  };
}
