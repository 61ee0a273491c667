import type { SearchIndex } from '../search/search-index.js';
import type { Store } from '../store/index.js';
import type { Orchestrator } from './orchestrator.js';

export interface Readiness {
  ready: boolean;
  checks: { mongodb: boolean; temporal: boolean };
}

/** This process's in-process search indexes against their memory budget (SEARCH_INDEX_MAX_BYTES). */
export interface IndexHealth {
  /** Estimated bytes of every loaded partition: what the budget bounds. */
  bytes: number;
  /** The budget; null when unbounded. */
  max_bytes: number | null;
  /** Collections whose partitions are loaded. */
  collections: number;
  /** Collections evicted (least recently searched first) to stay within the budget, since start. */
  evictions: number;
  /** Partition loads from MongoDB (first searches and reloads after an eviction), since start. */
  loads: number;
  /** Vector rows, lexical postings, graph entities plus facts. */
  entries: { vector: number; lexical: number; graph: number };
}

export function createHealthService(store: Store, orchestrator: Orchestrator, searchIndex: SearchIndex | null = null) {
  return {
    liveness(): { status: 'ok'; index?: IndexHealth } {
      if (!searchIndex) return { status: 'ok' };
      const budget = searchIndex.budgetStats();
      const entries = Object.fromEntries(searchIndex.sizes().map((size) => [size.index, size.entries])) as IndexHealth['entries'];
      return {
        status: 'ok',
        index: {
          bytes: budget.bytes,
          max_bytes: Number.isFinite(budget.maxBytes) ? budget.maxBytes : null,
          collections: budget.collections,
          evictions: budget.evictions,
          loads: budget.loads,
          entries,
        },
      };
    },

    async readiness(): Promise<Readiness> {
      const [mongodb, temporal] = await Promise.all([
        store.ping().then(
          () => true,
          () => false,
        ),
        orchestrator.healthy(),
      ]);
      return { ready: mongodb && temporal, checks: { mongodb, temporal } };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
