/**
 * Exact in-memory vector search over normalised embeddings (dot product = cosine), partitioned
 * by collection. Brute force, so it never returns a wrong top-k; at 100k x 384 the scan has to
 * stream 150 MB per query, which scalar JS cannot do in under ~30 ms, so the rows live in a
 * WebAssembly memory and a small hand-assembled SIMD kernel (f32x4) scores them at close to
 * memory bandwidth (~6-9 ms at 100k on one core). Partitions of up to 1024 rows, and any where
 * WebAssembly is unavailable (--jitless) or its memory cannot be reserved, are scanned by an
 * unrolled JS loop over the same layout instead. The rows and both scans are search/row-store.ts.
 */
import { PartitionedIndex } from './partitioned-index.js';
import { createRowStore, STEP, type PartitionBackend, type RowStore, type ScanBackend } from './row-store.js';
import { RowSketch, sketchBytes } from './row-sketch.js';
import type { RowsSink } from './partition-snapshot.js';
import { TopSlots } from './top-slots.js';

export type { PartitionBackend, ScanBackend } from './row-store.js';

export interface VectorHit {
  chunkId: string;
  memoryId: string;
  score: number;
}

// --- Partitions ---------------------------------------------------------------------------------

/** A partition being given its rows (Partition.receivingRows), as a streamed snapshot's sink. */
export interface RowsReceiver extends RowsSink {
  readonly partition: Partition;
}

export class Partition {
  private chunkIds: string[] = [];
  private memoryIds: string[] = [];
  /** Floats per stored row: `dimensions` zero-padded to a multiple of STEP. */
  private readonly stride: number;
  private store: RowStore;
  private readonly requested: PartitionBackend;
  /** The query padded to `stride`, reused across searches. */
  private readonly paddedQuery: Float32Array;
  private readonly slotOf = new Map<string, number>();
  private readonly chunksOfMemory = new Map<string, Set<string>>();
  /** A byte view of the row store's rows, remade when they move (grow). */
  private rowBytes: Uint8Array | null = null;
  private rowBytesOf: Float32Array | null = null;
  /** From this many rows on, a WebAssembly partition keeps an 8-bit sketch of its rows (search/row-sketch.ts). */
  private sketchMinRows: number;
  private sketch: RowSketch | null = null;
  /** Whether a background build of the sketch is under way. */
  private sketchBuilding = false;

  constructor(
    readonly dimensions: number,
    initialCapacity = 1024,
    options: { backend?: PartitionBackend; sketchMinRows?: number } = {},
  ) {
    this.stride = Math.max(STEP, Math.ceil(dimensions / STEP) * STEP);
    this.requested = options.backend ?? 'auto';
    this.sketchMinRows = options.sketchMinRows ?? SKETCH_MIN_ROWS;
    this.store = createRowStore(this.stride, Math.max(1, initialCapacity), this.requested);
    this.paddedQuery = new Float32Array(this.stride);
  }

  hasChunk(chunkId: string): boolean {
    return this.slotOf.has(chunkId);
  }

  get size(): number {
    return this.chunkIds.length;
  }

  /**
   * Bytes held by this partition's row store (allocated capacity, not only live rows), and by its
   * sketch once the partition is large enough to have one (counted from then on, built or not).
   */
  get bytes(): number {
    const rows = this.store.rows.byteLength;
    if (this.sketch) return rows + this.sketch.bytes;
    return this.sketched ? rows + sketchBytes(this.stride, this.store.capacity) : rows;
  }

  /** The kernel actually in use (the wasm one can fall back to JS, see createRowStore). */
  get backend(): ScanBackend {
    return this.store.backend;
  }

  /** Whether searches go through a sketch (once it is built): WebAssembly partitions from SKETCH_MIN_ROWS rows. */
  private get sketched(): boolean {
    return this.store.backend === 'wasm-simd' && this.chunkIds.length >= this.sketchMinRows;
  }

  /** Whether a search now would go through the sketch: it exists and holds every row. */
  get sketchReady(): boolean {
    return this.sketched && this.sketch !== null && this.sketch.pending(this.chunkIds.length) === 0;
  }

  upsert(chunkId: string, memoryId: string, vector: Float32Array): void {
    if (vector.length !== this.dimensions) throw new Error(`vector has ${vector.length} dimensions, index has ${this.dimensions}`);
    // The padding after `dimensions` is never written, so it stays zero and adds nothing to a dot product.
    const slot = this.slotFor(chunkId, memoryId); // first: making room may replace the row store
    this.store.rows.set(vector, slot * this.stride);
    this.sketch?.invalidate(slot);
  }

  /** The chunk's slot, appended (with room made) when it is new. */
  private slotFor(chunkId: string, memoryId: string): number {
    let slot = this.slotOf.get(chunkId);
    if (slot === undefined) {
      slot = this.chunkIds.length;
      this.ensureCapacity(slot + 1);
      this.append(chunkId, memoryId);
    }
    return slot;
  }

  /** Takes the next slot for a new chunk of this memory (the caller has made room and writes the row). */
  private append(chunkId: string, memoryId: string): void {
    this.slotOf.set(chunkId, this.chunkIds.length);
    this.chunkIds.push(chunkId);
    this.memoryIds.push(memoryId);
    let chunks = this.chunksOfMemory.get(memoryId);
    if (!chunks) this.chunksOfMemory.set(memoryId, (chunks = new Set()));
    chunks.add(chunkId);
  }

  /**
   * `upsert` from the vector's stored bytes (little-endian float32, as store/chunks.ts keeps it):
   * copied straight into the row, with no Float32Array made per row (a cold load does 100k of these).
   */
  upsertBytes(chunkId: string, memoryId: string, bytes: Uint8Array): void {
    if (bytes.byteLength !== this.dimensions * 4) {
      throw new Error(`vector has ${bytes.byteLength / 4} dimensions, index has ${this.dimensions}`);
    }
    const slot = this.slotFor(chunkId, memoryId);
    const rows = this.store.rows;
    // Every grow makes a new `rows` view (a wasm one may keep its buffer but get longer): follow it.
    if (this.rowBytesOf !== rows || !this.rowBytes) {
      this.rowBytes = new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength);
      this.rowBytesOf = rows;
    }
    this.rowBytes.set(bytes, slot * this.stride * 4);
    this.sketch?.invalidate(slot);
  }

  /** Every row in slot order, `dimensions` floats each (the padding left out): what a snapshot keeps. */
  exportRows(): { chunkIds: string[]; memoryIds: string[]; rows: Float32Array } {
    const count = this.chunkIds.length;
    const rows = new Float32Array(count * this.dimensions);
    const stored = this.store.rows;
    if (this.stride === this.dimensions) rows.set(stored.subarray(0, count * this.stride));
    else
      for (let slot = 0; slot < count; slot++)
        rows.set(stored.subarray(slot * this.stride, slot * this.stride + this.dimensions), slot * this.dimensions);
    return { chunkIds: this.chunkIds.slice(), memoryIds: this.memoryIds.slice(), rows };
  }

  /**
   * A partition holding exactly these rows in this slot order (exportRows' output), sized to them:
   * a load from a snapshot copies them in at once instead of one chunk at a time. The rows may come
   * as their bytes (little-endian float32) in pieces of any size, as a snapshot's parts hold them:
   * copied straight into the row store.
   */
  static fromRows(
    dimensions: number,
    chunkIds: readonly string[],
    memoryIds: readonly string[],
    rows: Float32Array | readonly Uint8Array[],
    capacity = chunkIds.length,
  ): Partition {
    const receiving = Partition.receivingRows(dimensions, chunkIds, memoryIds, capacity);
    for (const piece of rows instanceof Float32Array ? [new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength)] : rows)
      receiving.receive(piece);
    receiving.finish();
    return receiving.partition;
  }

  /**
   * A partition of these chunks, in this slot order, whose rows come afterwards: their bytes
   * (little-endian float32, `dimensions` a row, row after row) in pieces of any size, each copied
   * into the row store as it is received. A snapshot's parts are then let go as they are read
   * (search/partition-snapshot.ts streamPartitionSnapshot). `finish` checks that every row came.
   * The partition is the caller's alone until then: nothing else may grow it meanwhile.
   */
  static receivingRows(
    dimensions: number,
    chunkIds: readonly string[],
    memoryIds: readonly string[],
    capacity = chunkIds.length,
  ): RowsReceiver {
    const count = chunkIds.length;
    if (memoryIds.length !== count) throw new Error('vector rows: inconsistent lengths');
    const partition = new Partition(dimensions, Math.max(count, capacity));
    for (let slot = 0; slot < count; slot++) {
      const chunkId = chunkIds[slot]!;
      if (partition.slotOf.has(chunkId)) throw new Error(`vector rows: chunk ${chunkId} twice`);
      partition.append(chunkId, memoryIds[slot]!);
    }
    const rows = partition.store.rows;
    const target = new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength);
    const rowLength = dimensions * 4;
    const strideLength = partition.stride * 4;
    const total = count * rowLength;
    let received = 0;
    return {
      partition,
      receive(piece: Uint8Array): void {
        if (received + piece.byteLength > total) throw new Error('vector rows: inconsistent lengths');
        if (strideLength === rowLength) {
          target.set(piece, received);
          received += piece.byteLength;
          return;
        }
        // Padded rows: each row's bytes go to the start of its stride (the padding stays zero).
        for (let at = 0; at < piece.byteLength;) {
          const within = received % rowLength;
          const step = Math.min(rowLength - within, piece.byteLength - at);
          target.set(piece.subarray(at, at + step), ((received - within) / rowLength) * strideLength + within);
          at += step;
          received += step;
        }
      },
      finish(): void {
        if (received !== total) throw new Error('vector rows: inconsistent lengths');
      },
    };
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
      this.store.rows.copyWithin(slot * this.stride, last * this.stride, (last + 1) * this.stride);
      this.slotOf.set(movedId, slot);
      this.sketch?.invalidate(slot);
    }
    this.sketch?.truncate(last);
    this.chunkIds.pop();
    this.memoryIds.pop();
    this.slotOf.delete(chunkId);
  }

  private ensureCapacity(entries: number): void {
    const store = this.store;
    if (entries <= store.capacity) return;
    const capacity = Math.max(entries, store.capacity * 2);
    if (store.backend === 'wasm-simd') {
      try {
        store.grow(capacity);
        return;
      } catch {
        // wasm32 memory stops at 4 GB (~2.7M rows of 384): carry on in a JS array.
      }
    } else if (this.requested === 'js') {
      store.grow(capacity);
      return;
    }
    // A JS store that may now move to wasm (or a wasm one that could not grow): same layout, so copy the rows.
    const next = createRowStore(this.stride, capacity, store.backend === 'wasm-simd' ? 'js' : this.requested);
    next.rows.set(store.rows.subarray(0, this.size * this.stride));
    this.store = next;
  }

  /** Every chunk held here, with its memory. */
  *entries(): Generator<[string, string]> {
    for (let slot = 0; slot < this.chunkIds.length; slot++) yield [this.chunkIds[slot]!, this.memoryIds[slot]!];
  }

  /** Cosine of the query to each of `chunkIds` held here (rows are normalised), into `into`. */
  similarities(query: Float32Array, chunkIds: Iterable<string>, into: Map<string, number>): void {
    const rows = this.store.rows;
    const dimensions = this.dimensions;
    for (const chunkId of chunkIds) {
      const slot = this.slotOf.get(chunkId);
      if (slot === undefined) continue;
      const base = slot * this.stride;
      let dot = 0;
      for (let i = 0; i < dimensions; i++) dot += query[i]! * rows[base + i]!;
      const seen = into.get(chunkId);
      if (seen === undefined || dot > seen) into.set(chunkId, dot);
    }
  }

  /**
   * The rows the sketch cannot rule out for the `need` best above `floor` (search/row-sketch.ts),
   * or null to scan them all: the partition is too small for a sketch, or its sketch is not
   * complete. A few changed rows are quantized here; more (a load, a bulk import) are left to a
   * build in the background, and searches scan in full until it is done.
   */
  private sketchCandidates(count: number, need: number, floor: number): Int32Array | null {
    if (!this.sketched) {
      this.sketch = null; // shrunk below the size (deletes), or moved to the JS rows: its memory goes
      return null;
    }
    if (!this.sketch) {
      this.sketch = RowSketch.create(this.stride, this.store.capacity);
      if (!this.sketch) {
        this.sketchMinRows = Infinity; // no WebAssembly memory to be had: full scans, as before
        return null;
      }
    }
    const pending = this.sketch.pending(count);
    if (pending > SKETCH_INLINE_ROWS) {
      this.buildSketch();
      return null;
    }
    if (pending > 0) this.sketch.refresh(this.store.rows, count, pending);
    return this.sketch.candidates(this.paddedQuery, count, need, floor);
  }

  /** Quantizes the sketch's pending rows, a slice per turn of the event loop. */
  private buildSketch(): void {
    if (this.sketchBuilding) return;
    this.sketchBuilding = true;
    const slice = (): void => {
      if (this.sketch?.refresh(this.store.rows, this.chunkIds.length, SKETCH_SLICE_ROWS) === false) setImmediate(slice);
      else this.sketchBuilding = false;
    };
    setImmediate(slice);
  }

  /** Adds this partition's best `k` into `top` (kept sorted by descending score). */
  collectTop(query: Float32Array, k: number, top: VectorHit[], seen: Set<string>): void {
    if (query.length !== this.dimensions) throw new Error(`query has ${query.length} dimensions, index has ${this.dimensions}`);
    const count = this.chunkIds.length;
    if (k <= 0 || count === 0) return;
    this.paddedQuery.set(query);
    // Only hits beating both what `top` already holds and this partition's k-th best so far get
    // past the first comparison; for k = 10 over 100k rows that is ~100 rows, so `seen` is rarely asked.
    const floor = top.length >= k ? top[top.length - 1]!.score : -Infinity;
    // With a sketch only the rows it cannot rule out are scored: k + |seen| rows are sure to hold
    // the k best that the `seen` check leaves. Either way rows are visited in slot order.
    const slots = this.sketchCandidates(count, k + seen.size, floor);
    const scores = slots ? this.store.scoreSlots(this.paddedQuery, slots) : this.store.scan(this.paddedQuery, count);
    const scored = slots ? slots.length : count;

    const best = new TopSlots(Math.min(k, count));
    let threshold = floor;
    const chunkIds = this.chunkIds;
    for (let i = 0; i < scored; i++) {
      const score = scores[i]!;
      if (!(score > threshold)) continue; // also skips NaN
      const slot = slots ? slots[i]! : i;
      if (seen.has(chunkIds[slot]!)) continue;
      best.push(score, slot);
      threshold = Math.max(floor, best.weakest);
    }
    if (best.size === 0) return;

    // Merge into `top`; on equal scores earlier partitions' hits stay first.
    const merged: VectorHit[] = [];
    let i = 0;
    for (const position of best.ranked()) {
      const score = best.scores[position]!;
      while (merged.length < k && i < top.length && top[i]!.score >= score) merged.push(top[i++]!);
      if (merged.length >= k) break;
      const slot = best.slots[position]!;
      const chunkId = chunkIds[slot]!;
      merged.push({ chunkId, memoryId: this.memoryIds[slot]!, score });
      seen.add(chunkId);
    }
    while (merged.length < k && i < top.length) merged.push(top[i++]!);
    // Copied back one by one: a spread of a large k could exceed the argument limit.
    top.length = 0;
    for (const hit of merged) top.push(hit);
  }
}

const INITIAL_PARTITION_ROWS = 64;

/** The room a partition grown row by row from INITIAL_PARTITION_ROWS has once it holds `rows`. */
function grownCapacity(rows: number): number {
  let capacity = INITIAL_PARTITION_ROWS;
  while (capacity < rows) capacity *= 2;
  return capacity;
}

/**
 * Partitions of this many rows and more get a sketch: below it a full scan takes under ~1.5 ms,
 * and the sketch would add a quarter to the partition's bytes for little.
 */
const SKETCH_MIN_ROWS = 32_768;
/** Changed rows quantized inside a search (about 2 µs each); more are built in the background. */
const SKETCH_INLINE_ROWS = 512;
/** Rows quantized per turn of the event loop by a background build (about 2 ms on these machines). */
const SKETCH_SLICE_ROWS = 1024;

export class VectorIndex extends PartitionedIndex<Partition> {
  constructor(readonly dimensions: number) {
    super();
  }

  createPartition(collectionId: string): Partition {
    // Small at first: a collection of a few memories must not reserve 1.5 MB of rows (384 dims x
    // 1024) against the memory budget; big ones double their way up, which costs little next to
    // reading them from the database.
    const partition = new Partition(this.dimensions, INITIAL_PARTITION_ROWS);
    this.partitions.set(collectionId, partition);
    return partition;
  }

  /**
   * A partition of these rows (Partition.fromRows), with the room a partition grown row by row
   * from INITIAL_PARTITION_ROWS would have: the same bytes against the budget as a load that read
   * them one by one, and no doubling at the next upsert.
   */
  partitionOfRows(chunkIds: readonly string[], memoryIds: readonly string[], rows: Float32Array | readonly Uint8Array[]): Partition {
    return Partition.fromRows(this.dimensions, chunkIds, memoryIds, rows, grownCapacity(chunkIds.length));
  }

  /** A partition of these chunks whose rows come afterwards (Partition.receivingRows), with partitionOfRows' room. */
  partitionReceivingRows(chunkIds: readonly string[], memoryIds: readonly string[]): RowsReceiver {
    return Partition.receivingRows(this.dimensions, chunkIds, memoryIds, grownCapacity(chunkIds.length));
  }

  /** Puts a partition built elsewhere (partitionOfRows) in place of any the collection had. */
  setPartition(collectionId: string, partition: Partition): void {
    if (partition.dimensions !== this.dimensions)
      throw new Error(`partition has ${partition.dimensions} dimensions, index has ${this.dimensions}`);
    this.partitions.set(collectionId, partition);
  }

  /** Cosine of the query to the given chunks of the named partitions (absent: not indexed there). */
  similarities(query: Float32Array, collectionIds: string[], chunkIds: Iterable<string>): Map<string, number> {
    const found = new Map<string, number>();
    const ids = [...chunkIds];
    for (const partition of this.partitionsOf(collectionIds)) partition.similarities(query, ids, found);
    return found;
  }

  /** Every chunk of the named partitions (a chunk in several of them once per partition). */
  *entries(collectionIds: string[]): Generator<[string, string]> {
    for (const partition of this.partitionsOf(collectionIds)) yield* partition.entries();
  }

  search(query: Float32Array, collectionIds: string[], k: number): VectorHit[] {
    const top: VectorHit[] = [];
    const seen = new Set<string>();
    for (const partition of this.partitionsOf(collectionIds)) partition.collectTop(query, k, top, seen);
    return top;
  }
}
