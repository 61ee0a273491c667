/**
 * In-memory fakes of the store's repositories, for fast unit tests of the rules above them
 * (services/, the store's own cascades), in immich's style.
 *
 * Why here, in test/support/fakes/, and not beside the services: they are test support shared by
 * every layer's unit tests (services, activities, runtime, api), they never ship with the service,
 * and test/support is already where shared test helpers live. Each fake implements exactly the
 * methods some module's narrow store interface names (for example `MemoryServiceStore` in
 * services/memories.ts), and behaves as the MongoDB repository does where a rule depends on it:
 * tenant scoping, expiry (liveness), duplicate keys (code 11000), ordering, conditional writes.
 * A fake that accepted what MongoDB refuses would make the tests lie; where a fake does not
 * evaluate what the repository queries (what an export reads), the test sets the answer.
 *
 * Every fake records its writes in a shared Journal, so a test can check what a use case did and
 * in which order (a delete's cascade, a rollback).
 */
export { Journal, duplicateKeyError, type JournalEntry } from './journal.js';
export { FakeMemories, matchesFilter, type MemoryRecords } from './memories.js';
export { FakeCollections, type CollectionRecords } from './collections.js';
export * from './derived.js';
export { fakeStore, FakeOrchestrator, silentLogger, type FakeStore } from './store.js';
export { memoryRecord, rejectsWith, streamOptions } from './fixtures.js';
export { FakeSnapshots } from './snapshots.js';
