/**
 * The k best of a stream of (score, slot) pairs, for the vector and lexical partitions: a bounded
 * min-heap whose root is the weakest kept hit, evicted first. On equal scores `tieWeaker` says
 * which slot counts as weaker; by default the later slot, so ties keep the earliest slots (as a
 * stable sort would).
 */
export class TopSlots {
  readonly scores: Float64Array;
  readonly slots: Int32Array;
  size = 0;

  constructor(
    readonly limit: number,
    private readonly tieWeaker: (slotA: number, slotB: number) => boolean = (slotA, slotB) => slotA > slotB,
  ) {
    this.scores = new Float64Array(limit);
    this.slots = new Int32Array(limit);
  }

  private weaker(a: number, b: number): boolean {
    const sa = this.scores[a]!;
    const sb = this.scores[b]!;
    return sa < sb || (sa === sb && this.tieWeaker(this.slots[a]!, this.slots[b]!));
  }

  private swap(a: number, b: number): void {
    const score = this.scores[a]!;
    const slot = this.slots[a]!;
    this.scores[a] = this.scores[b]!;
    this.slots[a] = this.slots[b]!;
    this.scores[b] = score;
    this.slots[b] = slot;
  }

  /** Adds the hit, evicting the weakest when full; callers only push hits stronger than the weakest (see offer). */
  push(score: number, slot: number): void {
    if (this.size < this.limit) {
      let at = this.size++;
      this.scores[at] = score;
      this.slots[at] = slot;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (!this.weaker(at, parent)) break;
        this.swap(at, parent);
        at = parent;
      }
      return;
    }
    this.scores[0] = score;
    this.slots[0] = slot;
    for (let at = 0; ;) {
      const left = 2 * at + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.weaker(right, left) ? right : left;
      if (!this.weaker(child, at)) break;
      this.swap(child, at);
      at = child;
    }
  }

  /** Keeps the hit when there is room or it beats the weakest kept one (ties by `tieWeaker`). */
  offer(score: number, slot: number): void {
    if (this.limit === 0) return;
    if (this.size === this.limit) {
      const weakest = this.scores[0]!;
      if (score < weakest || (score === weakest && !this.tieWeaker(this.slots[0]!, slot))) return;
    }
    this.push(score, slot);
  }

  get weakest(): number {
    return this.size < this.limit ? -Infinity : this.scores[0]!;
  }

  /** Heap positions ordered strongest first (score descending, then the tie order). */
  ranked(): number[] {
    const order = Array.from({ length: this.size }, (_, i) => i);
    return order.sort((a, b) => this.scores[b]! - this.scores[a]! || (this.tieWeaker(this.slots[a]!, this.slots[b]!) ? 1 : -1));
  }
}
