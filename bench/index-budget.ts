/**
 * The in-process search indexes under a memory budget (issue 20, item 1), measured in the bench
 * process itself against the stack's MongoDB: the same SearchIndex class the API uses, reading the
 * same store, with no HTTP or embedding in the way.
 *   cold load   a partition's load from MongoDB (first time, then a reload of the same collection);
 *               BENCH_COLD_LOAD_CHUNKS sets the size (default 20,000; 100000 takes a few minutes to
 *               write on the H2 stand-in), or the `search` scenario's 100k collection when it ran.
 */
import { createLogger } from '../core/logger.js';
import { SearchIndex } from '../search/search-index.js';
import type { Store } from '../store/index.js';
import { info, metric } from './stats.js';

const logger = createLogger('bench-index', 'warn');

/** Loads one collection into a fresh index twice (cold, then after dropping it): ms each. */
export async function coldLoad(
  store: Store,
  collectionId: string,
  modelId: string,
  dimensions: number,
  label: string,
): Promise<{ coldMs: number; reloadMs: number; chunks: number }> {
  const index = new SearchIndex(store, modelId, dimensions, logger);
  await index.start();
  try {
    const started = performance.now();
    await index.ensureLoaded(collectionId);
    const coldMs = performance.now() - started;
    const chunks = index.loadedChunkCount();
    const second = new SearchIndex(store, modelId, dimensions, logger);
    await second.start();
    const again = performance.now();
    await second.ensureLoaded(collectionId);
    const reloadMs = performance.now() - again;
    second.stop();
    info(
      `   cold load of ${chunks} chunks: ${coldMs.toFixed(0)} ms (${((chunks / coldMs) * 1000).toFixed(0)} chunks/s), again: ${reloadMs.toFixed(0)} ms`,
    );
    metric(`index_cold_load_${label}`, coldMs, 'ms');
    metric(`index_reload_${label}`, reloadMs, 'ms');
    metric(`index_cold_load_${label}_chunks_per_second`, (chunks / coldMs) * 1000, 'chunks/s');
    return { coldMs, reloadMs, chunks };
  } finally {
    index.stop();
  }
}
