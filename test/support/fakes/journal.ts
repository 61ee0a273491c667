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
 * A fake that accepted what MongoDB refuses would make the tests lie; where a fake does less than
 * the repository (a query it does not evaluate), it throws instead of answering wrongly.
 *
 * Every fake records its writes in a shared Journal, so a test can check what a use case did and
 * in which order (a delete's cascade, a rollback).
 */

/** One call a fake recorded: `at` is `repository.method`. */
export interface JournalEntry {
  at: string;
  args: unknown[];
}

export class Journal {
  readonly entries: JournalEntry[] = [];

  record(at: string, ...args: unknown[]): void {
    this.entries.push({ at, args });
  }

  /** The calls' names, in order, optionally only those starting with `prefix`. */
  names(prefix = ''): string[] {
    return this.entries.map((entry) => entry.at).filter((at) => at.startsWith(prefix));
  }

  /** The arguments of every call to `at`, in order. */
  argsOf(at: string): unknown[][] {
    return this.entries.filter((entry) => entry.at === at).map((entry) => entry.args);
  }

  clear(): void {
    this.entries.length = 0;
  }
}

/** What the MongoDB driver throws for a unique index violation (store/db.ts isDuplicateKeyError reads `code`). */
export const duplicateKeyError = (what: string): Error => Object.assign(new Error(`E11000 duplicate key error: ${what}`), { code: 11000 });

/** A deep copy, as a document read from or written to MongoDB is: the caller's object and the stored row never alias. */
export const copy = <T>(value: T): T => structuredClone(value);
