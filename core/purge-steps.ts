/**
 * The steps of a memory delete, in order (store/memory-purge.ts runs them). Named here, below the
 * store and the config, so the test-only fault injection setting can name a step to crash after.
 */
export const PURGE_STEPS = [
  'intent',
  'record',
  'chunks',
  'graph',
  'workflows',
  'files',
  'uploads',
  'idempotency',
  'index_feed',
  'index_snapshots',
  'done',
] as const;
export type PurgeStep = (typeof PURGE_STEPS)[number];
