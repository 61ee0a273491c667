export { Journal, duplicateKeyError, type JournalEntry } from './journal.js';
export { FakeMemories, matchesFilter, type MemoryRecords } from './memories.js';
export { FakeCollections, type CollectionRecords } from './collections.js';
export {
  FakeChunks,
  FakeFactEvents,
  FakeFiles,
  FakeIdempotency,
  FakeIndexChanges,
  FakeIndexSnapshots,
  FakeProcedures,
  FakePurgeIntents,
  FakeUploads,
  type FakeChunk,
  type FakeIndexNotice,
} from './derived.js';
export { fakeStore, FakeOrchestrator, silentLogger, type FakeStore } from './store.js';
export { memoryRecord } from './fixtures.js';
export { FakeSnapshots } from './snapshots.js';
