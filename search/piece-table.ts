/**
 * A hash table keyed by a slice of a larger string, looked up without making the slice: the
 * caller gives the text, the bounds and a hash of the slice's char codes (tokenize.ts hashRun),
 * and a hit is confirmed with `startsWith` at that position. Open addressing, linear probing.
 */
export class PieceTable<V> {
  private keys: (string | undefined)[] = [];
  private hashes = new Int32Array(0);
  private values: (V | undefined)[] = [];
  private mask = -1;
  size = 0;

  constructor(private readonly initialCapacity = 1024) {
    this.clear();
  }

  get(text: string, start: number, end: number, hash: number): V | undefined {
    const length = end - start;
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const key = this.keys[slot];
      if (key === undefined) return undefined;
      if (this.hashes[slot] === hash && key.length === length && text.startsWith(key, start)) return this.values[slot];
    }
  }

  /** Adds a key that `get` did not find (the caller looked first). */
  set(key: string, hash: number, value: V): void {
    if ((this.size + 1) * 2 > this.keys.length) this.resize(this.keys.length * 2);
    this.place(key, hash, value);
    this.size++;
  }

  clear(): void {
    this.keys = new Array<string | undefined>(this.initialCapacity).fill(undefined);
    this.values = new Array<V | undefined>(this.initialCapacity).fill(undefined);
    this.hashes = new Int32Array(this.initialCapacity);
    this.mask = this.initialCapacity - 1;
    this.size = 0;
  }

  private place(key: string, hash: number, value: V): void {
    let slot = hash & this.mask;
    while (this.keys[slot] !== undefined) slot = (slot + 1) & this.mask;
    this.keys[slot] = key;
    this.hashes[slot] = hash;
    this.values[slot] = value;
  }

  private resize(capacity: number): void {
    const { keys, hashes, values } = this;
    this.keys = new Array<string | undefined>(capacity).fill(undefined);
    this.values = new Array<V | undefined>(capacity).fill(undefined);
    this.hashes = new Int32Array(capacity);
    this.mask = capacity - 1;
    for (let slot = 0; slot < keys.length; slot++) {
      const key = keys[slot];
      if (key !== undefined) this.place(key, hashes[slot]!, values[slot]!);
    }
  }
}
