/**
 * Pairs of 32-bit integers met during one pass over a memory's rows (search/graph-index.ts: has
 * this target been met in this chunk yet?), forgotten all at once by `clear`. Open addressing over
 * typed arrays with a generation stamp, so a cold load's 138,000 rows make no object per row and
 * clearing between memories costs nothing.
 */
export class PairSet {
  private first = new Int32Array(64);
  private second = new Int32Array(64);
  /** The generation each slot was written in; a slot of an older generation is empty. */
  private stamps = new Uint32Array(64);
  private generation = 1;

  /** Forgets every pair, with room for `expected` new ones without degrading the probes. */
  clear(expected = 0): void {
    let capacity = this.stamps.length;
    while (capacity < expected * 2) capacity *= 2;
    if (capacity !== this.stamps.length) {
      this.first = new Int32Array(capacity);
      this.second = new Int32Array(capacity);
      this.stamps = new Uint32Array(capacity);
      this.generation = 0;
    }
    this.generation++;
    if (this.generation === 0xffffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /**
   * Adds the pair; true when it was not there since the last `clear`. The caller clears with at
   * least the number of pairs it will add (a full table would never find an empty slot).
   */
  add(a: number, b: number): boolean {
    const mask = this.stamps.length - 1;
    let at = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b)) & mask;
    for (;;) {
      if (this.stamps[at] !== this.generation) {
        this.stamps[at] = this.generation;
        this.first[at] = a;
        this.second[at] = b;
        return true;
      }
      if (this.first[at] === a && this.second[at] === b) return false;
      at = (at + 1) & mask;
    }
  }
}
