/**
 * Exact in-memory vector search over normalised embeddings (dot product = cosine), partitioned
 * by collection. Brute force over a packed Float32Array scores 10k x 384 in a few milliseconds
 * on one core; it needs no approximate structure at this scale and never returns a wrong top-k.
 */
export interface VectorHit {
  chunkId: string;
  memoryId: string;
  score: number;
}

export class Partition {
  private chunkIds: string[] = [];
  private memoryIds: string[] = [];
  private data: Float32Array;
  private readonly slotOf = new Map<string, number>();
  private readonly chunksOfMemory = new Map<string, Set<string>>();

  constructor(
    readonly dimensions: number,
    initialCapacity = 1024,
  ) {
    this.data = new Float32Array(initialCapacity * dimensions);
  }

  get size(): number {
    return this.chunkIds.length;
  }

  upsert(chunkId: string, memoryId: string, vector: Float32Array): void {
    if (vector.length !== this.dimensions) throw new Error(`vector has ${vector.length} dimensions, index has ${this.dimensions}`);
    let slot = this.slotOf.get(chunkId);
    if (slot === undefined) {
      slot = this.chunkIds.length;
      this.ensureCapacity(slot + 1);
      this.chunkIds.push(chunkId);
      this.memoryIds.push(memoryId);
      this.slotOf.set(chunkId, slot);
      let chunks = this.chunksOfMemory.get(memoryId);
      if (!chunks) this.chunksOfMemory.set(memoryId, (chunks = new Set()));
      chunks.add(chunkId);
    }
    this.data.set(vector, slot * this.dimensions);
  }

  removeMemory(memoryId: string): void {
    const chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) return;
    for (const chunkId of chunks) this.removeChunk(chunkId);
    this.chunksOfMemory.delete(memoryId);
  }

  hasMemory(memoryId: string): boolean {
    return this.chunksOfMemory.has(memoryId);
  }

  /** Swap-remove: the last entry moves into the freed slot, so the array stays packed. */
  private removeChunk(chunkId: string): void {
    const slot = this.slotOf.get(chunkId);
    if (slot === undefined) return;
    const last = this.chunkIds.length - 1;
    if (slot !== last) {
      const movedId = this.chunkIds[last]!;
      this.chunkIds[slot] = movedId;
      this.memoryIds[slot] = this.memoryIds[last]!;
      this.data.copyWithin(slot * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions);
      this.slotOf.set(movedId, slot);
    }
    this.chunkIds.pop();
    this.memoryIds.pop();
    this.slotOf.delete(chunkId);
  }

  private ensureCapacity(entries: number): void {
    if (entries * this.dimensions <= this.data.length) return;
    const grown = new Float32Array(Math.max(entries, (this.data.length / this.dimensions) * 2) * this.dimensions);
    grown.set(this.data);
    this.data = grown;
  }

  /** Adds this partition's best `k` into `top` (kept sorted by descending score). */
  collectTop(query: Float32Array, k: number, top: VectorHit[], seen: Set<string>): void {
    const dims = this.dimensions;
    const data = this.data;
    for (let slot = 0; slot < this.chunkIds.length; slot++) {
      let score = 0;
      const offset = slot * dims;
      for (let d = 0; d < dims; d++) score += data[offset + d]! * query[d]!;
      if (top.length >= k && score <= top[top.length - 1]!.score) continue;
      const chunkId = this.chunkIds[slot]!;
      if (seen.has(chunkId)) continue;
      insertSorted(top, { chunkId, memoryId: this.memoryIds[slot]!, score }, k);
      seen.add(chunkId);
    }
  }
}

function insertSorted(top: VectorHit[], hit: VectorHit, k: number): void {
  let position = top.length;
  while (position > 0 && top[position - 1]!.score < hit.score) position--;
  top.splice(position, 0, hit);
  if (top.length > k) top.pop();
}

export class VectorIndex {
  private readonly partitions = new Map<string, Partition>();

  constructor(readonly dimensions: number) {}

  partition(collectionId: string): Partition | undefined {
    return this.partitions.get(collectionId);
  }

  createPartition(collectionId: string): Partition {
    const partition = new Partition(this.dimensions);
    this.partitions.set(collectionId, partition);
    return partition;
  }

  dropPartition(collectionId: string): void {
    this.partitions.delete(collectionId);
  }

  loadedCollections(): string[] {
    return [...this.partitions.keys()];
  }

  removeMemory(memoryId: string): void {
    for (const partition of this.partitions.values()) partition.removeMemory(memoryId);
  }

  search(query: Float32Array, collectionIds: string[], k: number): VectorHit[] {
    const top: VectorHit[] = [];
    const seen = new Set<string>();
    for (const collectionId of new Set(collectionIds)) this.partitions.get(collectionId)?.collectTop(query, k, top, seen);
    return top;
  }
}
