/**
 * Bookkeeping of the in-process index memory budget: which collections' partitions to evict to
 * stay within it, and how many bytes running searches pin. Pure, so it is unit-tested on its own;
 * SearchIndex measures the sizes, does the dropping and refuses loads that would pin too much.
 *
 * Eviction order: while over the budget, the tenant holding the most bytes beyond its fair share
 * (the budget divided by the tenants with loaded partitions) loses its least recently searched
 * partition first. A tenant within its share keeps its partitions while they are in use: only
 * one not searched for `idleMs` is evicted for room beyond that, least recently searched first.
 * So one tenant cycling through many collections, or pinning them with concurrent searches,
 * evicts its own, not another tenant's hot ones (SearchIndex refuses its load instead). Held
 * (searched right now) and loading partitions are never evicted; they are "pinned".
 */
export class PartitionBudget {
  /** Collections by recency, least recently searched first (a Map keeps insertion order), with when. */
  private readonly recency = new Map<string, number>();
  /** Searches holding each collection. */
  private readonly holds = new Map<string, number>();
  /** The tenant owning each known collection (collections are never shared between tenants). */
  private readonly owners = new Map<string, string>();

  constructor(
    readonly maxBytes: number,
    /** Unsearched this long, a partition within its tenant's share may go too. */
    private readonly idleMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The collection was just searched (or loaded): it becomes the last to go. */
  touch(collectionId: string, tenantId?: string): void {
    this.recency.delete(collectionId);
    this.recency.set(collectionId, this.now());
    if (tenantId !== undefined) this.owners.set(collectionId, tenantId);
  }

  hold(collectionId: string, tenantId?: string): void {
    this.holds.set(collectionId, (this.holds.get(collectionId) ?? 0) + 1);
    this.touch(collectionId, tenantId);
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
    if (!this.isHeld(collectionId)) this.owners.delete(collectionId);
  }

  /** Bytes that cannot be evicted now: held collections and those `busy` names (being loaded). */
  pinnedBytes(sizes: ReadonlyMap<string, number>, busy: (collectionId: string) => boolean = () => false): number {
    let pinned = 0;
    for (const [collectionId, bytes] of sizes) if (this.isHeld(collectionId) || busy(collectionId)) pinned += bytes;
    return pinned;
  }

  /**
   * The collections to evict, in order, so that the rest fit `maxBytes` (see the class comment
   * for the order), skipping held ones and those `busy` names. Fewer than needed when what
   * remains is pinned, or in use by tenants within their share.
   */
  victims(sizes: ReadonlyMap<string, number>, busy: (collectionId: string) => boolean = () => false): string[] {
    let total = 0;
    const byTenant = new Map<string, number>();
    for (const [collectionId, bytes] of sizes) {
      total += bytes;
      const tenant = this.owner(collectionId);
      byTenant.set(tenant, (byTenant.get(tenant) ?? 0) + bytes);
    }
    const victims: string[] = [];
    if (total <= this.maxBytes) return victims;
    // Loaded but never touched (should not happen) count as the oldest.
    const order = [...[...sizes.keys()].filter((id) => !this.recency.has(id)), ...this.recency.keys()];
    const evictable = order.filter((id) => sizes.has(id) && !this.isHeld(id) && !busy(id));
    const evict = (at: number): void => {
      const [victim] = evictable.splice(at, 1) as [string];
      const bytes = sizes.get(victim)!;
      victims.push(victim);
      total -= bytes;
      const tenant = this.owner(victim);
      const left = byTenant.get(tenant)! - bytes;
      if (left > 0) byTenant.set(tenant, left);
      else byTenant.delete(tenant);
    };
    // First the tenants over their fair share: the oldest partition of the one furthest over
    // (ties: the older partition).
    while (total > this.maxBytes) {
      const fairShare = this.maxBytes / byTenant.size;
      let at = -1;
      let worstExcess = 0;
      for (const [index, id] of evictable.entries()) {
        const excess = (byTenant.get(this.owner(id)) ?? 0) - fairShare;
        if (excess > worstExcess) {
          at = index;
          worstExcess = excess;
        }
      }
      if (at < 0) break;
      evict(at);
    }
    // Then idle partitions of anyone, least recently searched first.
    const idleBefore = this.now() - this.idleMs;
    while (total > this.maxBytes) {
      const at = evictable.findIndex((id) => (this.recency.get(id) ?? -Infinity) <= idleBefore);
      if (at < 0) break;
      evict(at);
    }
    return victims;
  }

  /** Collections of unknown owner (loaded outside a search) share one pseudo-tenant. */
  private owner(collectionId: string): string {
    return this.owners.get(collectionId) ?? '';
  }
}
