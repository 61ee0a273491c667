import type { Memory } from '../core/memory-model.js';
import type { Stored } from './stored.js';

/**
 * A memory as the `memories` collection stores it. Its own module so that the repository and the
 * filter translation (memory-filter.ts) both use it without importing each other.
 */
export type MemoryDoc = Stored<Memory>;
