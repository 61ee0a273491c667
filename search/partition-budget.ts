/**
 * Which collections' partitions to evict to stay within a memory budget: least recently searched
 * first, never one a running search holds or one being loaded. Pure bookkeeping, so it is
 * unit-tested on its own; SearchIndex measures the sizes and does the dropping.
 */
export class PartitionBudget {
  /** Collections by recency, least recently searched first (a Map keeps insertion order). */
  private readonly recency = new Map<string, true>();
  /** Searches holding each collection. */
  private readonly holds = new Map<string, number>();

  constructor(readonly maxBytes: number) {}

  /** The collection was just searched (or loaded): it becomes the last to go. */
  touch(collectionId: string): void {
    this.recency.delete(collectionId);
    this.recency.set(collectionId, true);
  }

  hold(collectionId: string): void {
    this.holds.set(collectionId, (this.holds.get(collectionId) ?? 0) + 1);
    this.touch(collectionId);
  }

  release(collectionId: string): void {
    const held = (this.holds.get(collectionId) ?? 0) - 1;
    if (held > 0) this.holds.set(collectionId, held);
    else this.holds.delete(collectionId);
  }

  isHeld(collectionId: string): boolean {
    return this.holds.has(collectionId);
  }

  /** The collection's partitions are gone (evicted, or dropped after a failed load). */
  forget(collectionId: string): void {
    this.recency.delete(collectionId);
  }

  /**
   * The collections to evict, in order, so that the rest fit `maxBytes`: least recently used
   * first, skipping held ones and those `busy` names (being loaded). Fewer than needed when only
   * held or busy ones remain: the budget is then exceeded until their searches end.
   */
  victims(sizes: ReadonlyMap<string, number>, busy: (collectionId: string) => boolean = () => false): string[] {
    let total = 0;
    for (const bytes of sizes.values()) total += bytes;
    const victims: string[] = [];
    if (total <= this.maxBytes) return victims;
    // Loaded but never touched (should not happen) count as the oldest.
    const order = [...[...sizes.keys()].filter((id) => !this.recency.has(id)), ...this.recency.keys()];
    for (const collectionId of order) {
      if (total <= this.maxBytes) break;
      const bytes = sizes.get(collectionId);
      if (bytes === undefined || this.isHeld(collectionId) || busy(collectionId)) continue;
      victims.push(collectionId);
      total -= bytes;
    }
    return victims;
  }
}
