/**
 * The packed rows of a vector partition and the scan that scores them all against a query
 * (search/vector-index.ts is its client): a WebAssembly memory with a small hand-assembled SIMD
 * kernel (f32x4) that scores them at close to memory bandwidth, or an unrolled JS loop over the
 * same layout for small partitions and where WebAssembly is unavailable (--jitless) or its memory
 * cannot be reserved.
 */
import { instantiateKernel, lazyKernel, op, PAGE_BYTES, ROW, rowKernel, type CompiledKernel, type WasmMemory } from './wasm-asm.js';

/** Which kernel scores a partition: the WebAssembly SIMD one, or the plain JS fallback. */
export type ScanBackend = 'wasm-simd' | 'js';
/** 'auto' (the default): JS while small, wasm once the partition grows past WASM_MIN_ROWS. */
export type PartitionBackend = 'auto' | ScanBackend;

/**
 * Floats per inner-loop step of both kernels (4 independent f32x4 accumulators in wasm, two
 * 8-wide passes in JS). Rows are zero-padded to a multiple of this, so neither loop has a tail.
 */
export const STEP = 16;

/** Packed rows with a scan that writes every row's dot product with the query into `scores`. */
export interface RowStore {
  readonly backend: ScanBackend;
  readonly capacity: number;
  /** `capacity` rows of `stride` floats; a new view after every `grow`. */
  readonly rows: Float32Array;
  grow(capacity: number): void;
  /** Scores rows [0, count) against `query` (already `stride` long); the result is valid until the next call or grow. */
  scan(query: Float32Array, count: number): Float32Array;
  /** Scores the rows at `slots` the same way, bit for bit; score i is the row at slots[i]'s. Valid as `scan`'s. */
  scoreSlots(query: Float32Array, slots: Int32Array): Float32Array;
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
    for (let slot = 0; slot < count; slot++) this.scores[slot] = this.dot(query, slot);
    return this.scores;
  }

  scoreSlots(query: Float32Array, slots: Int32Array): Float32Array {
    for (let i = 0; i < slots.length; i++) this.scores[i] = this.dot(query, slots[i]!);
    return this.scores;
  }

  private dot(query: Float32Array, slot: number): number {
    const { rows, stride } = this;
    const offset = slot * stride;
    // Eight independent accumulators break the add dependency chain: 2x faster than one `score +=`.
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
    return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
  }
}

// --- WebAssembly kernel -------------------------------------------------------------------------

/** scan(query, rows, count, rowBytes, out): out[r] = dot(rows[r], query) as f32, for r < count. */
type ScanFunction = (query: number, rows: number, count: number, rowBytes: number, out: number) => void;

/**
 * The scan kernel as a wasm binary (search/wasm-asm.ts). Per row: four f32x4 accumulators over
 * 16 floats per step (rowBytes must be a non-zero multiple of 64), then a horizontal sum.
 */
function scanModuleBytes(): Uint8Array {
  const { get, set, simd, v128Load } = op;
  const { rows, q, acc } = ROW;
  const [f32x4Add, f32x4Mul] = [simd(0xe4), simd(0xe6)];
  return rowKernel({
    exported: 'scan',
    // acc[i] += rows[4i..4i+3] * q[4i..4i+3], for i in 0..3 (one 16-float step)
    step: [0, 1, 2, 3].flatMap((i) => [
      ...get(acc(i)),
      ...get(rows),
      ...v128Load(16 * i),
      ...get(q),
      ...v128Load(16 * i),
      ...f32x4Mul,
      ...f32x4Add,
      ...set(acc(i)),
    ]),
    rowStep: 64,
    queryStep: 64,
    vectorAdd: f32x4Add,
    lane: (index) => [...simd(0x1f), index],
    scalarAdd: op.f32Add,
    store: op.f32Store,
    extraV128: 0,
  });
}

/** Compiled once per process; null when WebAssembly (or its SIMD) is not available. */
const compiledScanModule = lazyKernel(scanModuleBytes);

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
    wasm: CompiledKernel,
  ) {
    this.memory = new wasm.api.Memory({ initial: Math.ceil(this.bytesFor(capacity) / PAGE_BYTES) });
    this.scanRows = instantiateKernel<ScanFunction>(wasm, this.memory, 'scan');
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

  scoreSlots(query: Float32Array, slots: Int32Array): Float32Array {
    this.queryView.set(query);
    const rowBytes = this.stride * 4;
    const out = this.scores.byteOffset;
    // The same kernel over one row at a time: the same sums in the same order as a full scan's.
    for (let i = 0; i < slots.length; i++) this.scanRows(0, rowBytes * (1 + slots[i]!), 1, rowBytes, out + 4 * i);
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
export function createRowStore(stride: number, capacity: number, backend: PartitionBackend): RowStore {
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
