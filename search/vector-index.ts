/**
 * Exact in-memory vector search over normalised embeddings (dot product = cosine), partitioned
 * by collection. Brute force, so it never returns a wrong top-k; at 100k x 384 the scan has to
 * stream 150 MB per query, which scalar JS cannot do in under ~30 ms, so the rows live in a
 * WebAssembly memory and a small hand-assembled SIMD kernel (f32x4) scores them at close to
 * memory bandwidth (~6-9 ms at 100k on one core). Partitions of up to 1024 rows, and any where
 * WebAssembly is unavailable (--jitless) or its memory cannot be reserved, are scanned by an
 * unrolled JS loop over the same layout instead.
 */
import { PartitionedIndex } from './partitioned-index.js';
import { TopSlots } from './top-slots.js';

export interface VectorHit {
  chunkId: string;
  memoryId: string;
  score: number;
}

/** Which kernel scores a partition: the WebAssembly SIMD one, or the plain JS fallback. */
export type ScanBackend = 'wasm-simd' | 'js';
/** 'auto' (the default): JS while small, wasm once the partition grows past WASM_MIN_ROWS. */
export type PartitionBackend = 'auto' | ScanBackend;

/**
 * Floats per inner-loop step of both kernels (4 independent f32x4 accumulators in wasm, two
 * 8-wide passes in JS). Rows are zero-padded to a multiple of this, so neither loop has a tail.
 */
const STEP = 16;

/** Packed rows with a scan that writes every row's dot product with the query into `scores`. */
interface RowStore {
  readonly backend: ScanBackend;
  readonly capacity: number;
  /** `capacity` rows of `stride` floats; a new view after every `grow`. */
  readonly rows: Float32Array;
  grow(capacity: number): void;
  /** Scores rows [0, count) against `query` (already `stride` long); the result is valid until the next call or grow. */
  scan(query: Float32Array, count: number): Float32Array;
}

class JsRows implements RowStore {
  readonly backend = 'js';
  rows: Float32Array;
  private scores: Float32Array;

  constructor(
    private readonly stride: number,
    public capacity: number,
  ) {
    this.rows = new Float32Array(capacity * stride);
    this.scores = new Float32Array(capacity);
  }

  grow(capacity: number): void {
    const rows = new Float32Array(capacity * this.stride);
    rows.set(this.rows);
    this.rows = rows;
    this.scores = new Float32Array(capacity);
    this.capacity = capacity;
  }

  scan(query: Float32Array, count: number): Float32Array {
    const { rows, scores, stride } = this;
    // Eight independent accumulators break the add dependency chain: 2x faster than one `score +=`.
    for (let slot = 0, offset = 0; slot < count; slot++, offset += stride) {
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0,
        s4 = 0,
        s5 = 0,
        s6 = 0,
        s7 = 0;
      for (let d = 0; d < stride; d += 8) {
        const o = offset + d;
        s0 += rows[o]! * query[d]!;
        s1 += rows[o + 1]! * query[d + 1]!;
        s2 += rows[o + 2]! * query[d + 2]!;
        s3 += rows[o + 3]! * query[d + 3]!;
        s4 += rows[o + 4]! * query[d + 4]!;
        s5 += rows[o + 5]! * query[d + 5]!;
        s6 += rows[o + 6]! * query[d + 6]!;
        s7 += rows[o + 7]! * query[d + 7]!;
      }
      scores[slot] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
    }
    return scores;
  }
}

// --- WebAssembly kernel -------------------------------------------------------------------------

/** The slice of the WebAssembly JS API used here (the project's lib settings do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  validate(bytes: Uint8Array): boolean;
}
/** scan(query, rows, count, rowBytes, out): out[r] = dot(rows[r], query) as f32, for r < count. */
type ScanFunction = (query: number, rows: number, count: number, rowBytes: number, out: number) => void;

const PAGE_BYTES = 65536;

const uleb = (value: number): number[] => {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
};
/** Signed LEB128 (i32.const immediates): 64 must be [0xc0, 0x00], not [0x40], which reads as -64. */
const sleb = (value: number): number[] => {
  const bytes: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    const done = (value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0);
    bytes.push(done ? byte : byte | 0x80);
    if (done) return bytes;
  }
};
const name = (text: string): number[] => [...uleb(text.length), ...[...text].map((char) => char.charCodeAt(0))];
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

/**
 * The scan kernel as a wasm binary, assembled here rather than shipped as an opaque blob. It
 * imports its memory (env.memory) and exports `scan`. Per row: four f32x4 accumulators over
 * 16 floats per step (rowBytes must be a non-zero multiple of 64), then a horizontal sum.
 */
function scanModuleBytes(): Uint8Array {
  const i32 = 0x7f;
  const v128 = 0x7b;
  // Parameters, then locals, by index.
  const [query, rows, count, rowBytes, out, rowEnd, q] = [0, 1, 2, 3, 4, 5, 6];
  const acc = (i: number): number => 7 + i;
  const get = (local: number): number[] => [0x20, local];
  const set = (local: number): number[] => [0x21, local];
  const tee = (local: number): number[] => [0x22, local];
  const i32Const = (value: number): number[] => [0x41, ...sleb(value)];
  const [i32Add, i32Sub, i32Eqz, i32Ne, f32Add] = [[0x6a], [0x6b], [0x45], [0x47], [0x92]];
  const [block, loop, end] = [[0x02, 0x40], [0x03, 0x40], [0x0b]];
  const br = (depth: number): number[] => [0x0c, depth];
  const brIf = (depth: number): number[] => [0x0d, depth];
  const f32Store = [0x38, 2, 0]; // align 4, offset 0
  const simd = (opcode: number): number[] => [0xfd, ...uleb(opcode)];
  const v128Load = (offset: number): number[] => [...simd(0x00), 4, ...uleb(offset)]; // align 16
  const v128Zero = [...simd(0x0c), ...new Array<number>(16).fill(0)];
  const [f32x4Add, f32x4Mul] = [simd(0xe4), simd(0xe6)];
  const f32x4Lane = (lane: number): number[] => [...simd(0x1f), lane];

  // One logical statement per line; the stack effects read left to right.
  const body: number[] = [
    [...block, ...loop], // for each row:
    [...get(count), ...i32Eqz, ...brIf(1)], //   if (count == 0) return
    [0, 1, 2, 3].flatMap((i) => [...v128Zero, ...set(acc(i))]), //   acc[0..3] = 0
    [...get(query), ...set(q)], //   q = query
    [...get(rows), ...get(rowBytes), ...i32Add, ...set(rowEnd)], //   rowEnd = rows + rowBytes
    loop, //   do {
    // acc[i] += rows[4i..4i+3] * q[4i..4i+3], for i in 0..3 (one 16-float step)
    [0, 1, 2, 3].flatMap((i) => [
      ...get(acc(i)),
      ...get(rows),
      ...v128Load(16 * i),
      ...get(q),
      ...v128Load(16 * i),
      ...f32x4Mul,
      ...f32x4Add,
      ...set(acc(i)),
    ]),
    [...get(rows), ...i32Const(64), ...i32Add, ...tee(rows)], //     rows += 64 bytes
    [...get(q), ...i32Const(64), ...i32Add, ...set(q)], //     q += 64 bytes
    [...get(rowEnd), ...i32Ne, ...brIf(0), ...end], //   } while (rows != rowEnd)
    [...get(acc(0)), ...get(acc(1)), ...f32x4Add, ...get(acc(2)), ...get(acc(3)), ...f32x4Add, ...f32x4Add, ...set(acc(0))], // acc[0] = sum of the four
    [...get(out), ...get(acc(0)), ...f32x4Lane(0), ...get(acc(0)), ...f32x4Lane(1), ...f32Add], //   *out = lane 0 + lane 1
    [...get(acc(0)), ...f32x4Lane(2), ...f32Add, ...get(acc(0)), ...f32x4Lane(3), ...f32Add, ...f32Store], //     + lane 2 + lane 3
    [...get(out), ...i32Const(4), ...i32Add, ...set(out)], //   out += 4 bytes
    [...get(count), ...i32Const(1), ...i32Sub, ...set(count)], //   count -= 1
    [...br(0), ...end, ...end], // next row
    end, // end of function
  ].flat();
  const code = [
    ...vec([
      [2, i32],
      [4, v128],
    ]),
    ...body,
  ];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    ...section(1, vec([[0x60, ...vec([[i32], [i32], [i32], [i32], [i32]]), 0]])), // type 0: (i32 x5) -> ()
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])), // import memory, min 1 page
    ...section(3, vec([[0]])), // one function of type 0
    ...section(7, vec([[...name('scan'), 0x00, 0]])), // export it as "scan"
    ...section(10, vec([[...uleb(code.length), ...code]])),
  ]);
}

/** Compiled once per process; null when WebAssembly (or its SIMD) is not available. */
let scanModule: { api: WasmApi; module: object } | null | undefined;

function compiledScanModule(): { api: WasmApi; module: object } | null {
  if (scanModule !== undefined) return scanModule;
  scanModule = null;
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api) {
    const bytes = scanModuleBytes();
    if (api.validate(bytes)) scanModule = { api, module: new api.Module(bytes) };
  }
  return scanModule;
}

/**
 * Rows in a WebAssembly memory of their own. Layout: [query: stride floats][rows: capacity x
 * stride floats][scores: capacity floats]. Growing never moves the rows (memory.grow extends in
 * place); the scores are scratch and simply move to the new end.
 */
class WasmRows implements RowStore {
  readonly backend = 'wasm-simd';
  rows!: Float32Array;
  private queryView!: Float32Array;
  private scores!: Float32Array;
  private readonly memory: WasmMemory;
  private readonly scanRows: ScanFunction;

  constructor(
    private readonly stride: number,
    public capacity: number,
    wasm: { api: WasmApi; module: object },
  ) {
    this.memory = new wasm.api.Memory({ initial: Math.ceil(this.bytesFor(capacity) / PAGE_BYTES) });
    const scan = new wasm.api.Instance(wasm.module, { env: { memory: this.memory } }).exports['scan'];
    if (typeof scan !== 'function') throw new Error('scan kernel did not export scan');
    this.scanRows = scan as ScanFunction;
    this.mapViews();
  }

  private bytesFor(capacity: number): number {
    return (1 + capacity) * this.stride * 4 + capacity * 4;
  }

  /** Views go stale whenever the memory grows (its old ArrayBuffer is detached). */
  private mapViews(): void {
    const buffer = this.memory.buffer;
    const rowBytes = this.stride * 4;
    this.queryView = new Float32Array(buffer, 0, this.stride);
    this.rows = new Float32Array(buffer, rowBytes, this.capacity * this.stride);
    this.scores = new Float32Array(buffer, rowBytes * (1 + this.capacity), this.capacity);
  }

  grow(capacity: number): void {
    const missing = this.bytesFor(capacity) - this.memory.buffer.byteLength;
    if (missing > 0) this.memory.grow(Math.ceil(missing / PAGE_BYTES));
    this.capacity = capacity;
    this.mapViews();
  }

  scan(query: Float32Array, count: number): Float32Array {
    this.queryView.set(query);
    const rowBytes = this.stride * 4;
    this.scanRows(0, rowBytes, count, rowBytes, this.scores.byteOffset);
    return this.scores;
  }
}

/**
 * 'auto' keeps partitions of up to this many rows in JS: they scan in under ~0.4 ms anyway, and
 * each wasm memory reserves ~10 GB of address space (V8's guard regions), which runs out at
 * ~13k memories per process; only partitions that outgrow this get one.
 */
const WASM_MIN_ROWS = 1024;
/** When a wasm memory could not be had, V8 had already spent ~1 s in GCs trying: don't retry for a while. */
const WASM_RETRY_MS = 60_000;
let wasmRetryAfter = 0;

/** The wasm store when asked for (or, for 'auto', when large enough) and available, else the JS one. */
function createRowStore(stride: number, capacity: number, backend: PartitionBackend): RowStore {
  const wanted = backend === 'wasm-simd' || (backend === 'auto' && capacity > WASM_MIN_ROWS);
  const wasm = wanted && Date.now() >= wasmRetryAfter ? compiledScanModule() : null;
  if (wasm) {
    try {
      return new WasmRows(stride, capacity, wasm);
    } catch {
      wasmRetryAfter = Date.now() + WASM_RETRY_MS;
    }
  }
  return new JsRows(stride, capacity);
}

// --- Partitions ---------------------------------------------------------------------------------

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

  constructor(
    readonly dimensions: number,
    initialCapacity = 1024,
    options: { backend?: PartitionBackend } = {},
  ) {
    this.stride = Math.max(STEP, Math.ceil(dimensions / STEP) * STEP);
    this.requested = options.backend ?? 'auto';
    this.store = createRowStore(this.stride, Math.max(1, initialCapacity), this.requested);
    this.paddedQuery = new Float32Array(this.stride);
  }

  hasChunk(chunkId: string): boolean {
    return this.slotOf.has(chunkId);
  }

  get size(): number {
    return this.chunkIds.length;
  }

  /** The kernel actually in use (the wasm one can fall back to JS, see createRowStore). */
  /** Bytes held by this partition's row store (allocated capacity, not only live rows). */
  get bytes(): number {
    return this.store.rows.byteLength;
  }

  get backend(): ScanBackend {
    return this.store.backend;
  }

  upsert(chunkId: string, memoryId: string, vector: Float32Array): void {
    if (vector.length !== this.dimensions) throw new Error(`vector has ${vector.length} dimensions, index has ${this.dimensions}`);
    // The padding after `dimensions` is never written, so it stays zero and adds nothing to a dot product.
    const slot = this.slotFor(chunkId, memoryId); // first: making room may replace the row store
    this.store.rows.set(vector, slot * this.stride);
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
    const count = chunkIds.length;
    const floats = rows instanceof Float32Array ? rows.length : rows.reduce((sum, piece) => sum + piece.byteLength, 0) / 4;
    if (memoryIds.length !== count || floats !== count * dimensions) throw new Error('vector rows: inconsistent lengths');
    const partition = new Partition(dimensions, Math.max(count, capacity));
    const target = partition.store.rows;
    const stride = partition.stride;
    if (!(rows instanceof Float32Array) && stride === dimensions) {
      const bytes = new Uint8Array(target.buffer, target.byteOffset, target.byteLength);
      let at = 0;
      for (const piece of rows) {
        bytes.set(piece, at);
        at += piece.byteLength;
      }
    } else {
      const values = rows instanceof Float32Array ? rows : joinedFloats(rows, floats);
      if (stride === dimensions) target.set(values);
      else for (let slot = 0; slot < count; slot++) target.set(values.subarray(slot * dimensions, (slot + 1) * dimensions), slot * stride);
    }
    for (let slot = 0; slot < count; slot++) {
      const chunkId = chunkIds[slot]!;
      if (partition.slotOf.has(chunkId)) throw new Error(`vector rows: chunk ${chunkId} twice`);
      partition.append(chunkId, memoryIds[slot]!);
    }
    return partition;
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
    }
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
    const next = store.backend === 'wasm-simd' ? new JsRows(this.stride, capacity) : createRowStore(this.stride, capacity, this.requested);
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

  /** Adds this partition's best `k` into `top` (kept sorted by descending score). */
  collectTop(query: Float32Array, k: number, top: VectorHit[], seen: Set<string>): void {
    if (query.length !== this.dimensions) throw new Error(`query has ${query.length} dimensions, index has ${this.dimensions}`);
    const count = this.chunkIds.length;
    if (k <= 0 || count === 0) return;
    this.paddedQuery.set(query);
    const scores = this.store.scan(this.paddedQuery, count);

    // Only hits beating both what `top` already holds and this partition's k-th best so far get
    // past the first comparison; for k = 10 over 100k rows that is ~100 rows, so `seen` is rarely asked.
    const floor = top.length >= k ? top[top.length - 1]!.score : -Infinity;
    const best = new TopSlots(Math.min(k, count));
    let threshold = floor;
    const chunkIds = this.chunkIds;
    for (let slot = 0; slot < count; slot++) {
      const score = scores[slot]!;
      if (!(score > threshold)) continue; // also skips NaN
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

/** Float32 values from their bytes in pieces (copied into one array). */
function joinedFloats(pieces: readonly Uint8Array[], count: number): Float32Array {
  const values = new Float32Array(count);
  const bytes = new Uint8Array(values.buffer);
  let at = 0;
  for (const piece of pieces) {
    bytes.set(piece, at);
    at += piece.byteLength;
  }
  return values;
}

const INITIAL_PARTITION_ROWS = 64;

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
    let capacity = INITIAL_PARTITION_ROWS;
    while (capacity < chunkIds.length) capacity *= 2;
    return Partition.fromRows(this.dimensions, chunkIds, memoryIds, rows, capacity);
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
