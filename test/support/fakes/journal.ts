/** The shared record of what the fakes were asked to write, in order; and the driver's duplicate-key error. */

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
