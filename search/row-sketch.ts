/**
 * An 8-bit sketch of a large vector partition's rows, which picks the rows an exact scan has to
 * score and proves that no other row can be among the best.
 *
 * A 100k x 384 partition streams 150 MB of float32 rows per query (search/row-store.ts): on these
 * machines about 5 ms alone, and two to three times that when other processes share the memory
 * bus. The sketch holds each row as int8 (a quarter of the bytes) with its step (the row's
 * largest magnitude / 127) and its L1 norm. A scan of the sketch (a WebAssembly SIMD kernel of
 * i16 dot products) gives every row an approximate score and a bound on its error:
 *
 *   x·y − (a·q)·(b·p) = x·(y − b·p) + (x − a·q)·(b·p)
 *   |error| ≤ ‖x‖₁·b/2 + (a/2)·‖b·p‖₁
 *
 * where a·q is the row rounded to steps of a, and b·p the query rounded to steps of b (each
 * value off by at most half a step). Once `need` rows have a lower bound of at least `cut`, a
 * row whose upper bound is below `cut` cannot be among the best `need`: only the others are
 * scored exactly, by the float32 kernel, so the result is exactly the full scan's (same rows,
 * same scores, same order). Nothing is approximated in what a search returns.
 */
import { instantiateKernel, lazyKernel, op, PAGE_BYTES, ROW, rowKernel, type CompiledKernel, type WasmMemory } from './wasm-asm.js';
import { TopSlots } from './top-slots.js';

/** scan8(query, rows, count, rowBytes, out): out[r] = Σ rows[r][i] · query[i] (int8 · int16, as int32), for r < count. */
type SketchScan = (query: number, rows: number, count: number, rowBytes: number, out: number) => void;

/** Largest magnitude of a quantized value: the row and the query both use [-127, 127]. */
const LEVELS = 127;
/**
 * Added to every bound: float32 rounding of the stored step and norm, of the exact kernel's sums
 * (384 products of values below 1: under 1e-5) and of the quantizer's division.
 */
const SLACK = 1e-4;

/**
 * The kernel (search/wasm-asm.ts): per row, 64 int8 values per step, each 16 widened to two
 * i16x8 halves and multiplied by the query's int16 values with i32x4.dot_i16x8_s into four i32x4
 * accumulators, which are summed at the row's end. rowBytes must be a non-zero multiple of 64; the
 * query is rowBytes int16 values. Exact: |sum| ≤ 127 · 127 · rowBytes, far inside int32.
 */
function sketchModuleBytes(): Uint8Array {
  const { get, set, simd, v128Load } = op;
  const { rows, q, acc } = ROW;
  const values = ROW.extra(0);
  const [extendLow, extendHigh, dot, i32x4Add] = [simd(0x87), simd(0x88), simd(0xba), simd(0xae)];
  return rowKernel({
    exported: 'scan8',
    // values = rows[16i..16i+15]; acc[i] += dot(low 8 of them, q[16i..]) + dot(high 8, q[16i+8..])
    step: [0, 1, 2, 3].flatMap((i) => [
      ...get(rows),
      ...v128Load(16 * i),
      ...set(values),
      ...get(acc(i)),
      ...get(values),
      ...extendLow,
      ...get(q),
      ...v128Load(32 * i),
      ...dot,
      ...i32x4Add,
      ...get(values),
      ...extendHigh,
      ...get(q),
      ...v128Load(32 * i + 16),
      ...dot,
      ...i32x4Add,
      ...set(acc(i)),
    ]),
    rowStep: 64,
    queryStep: 128,
    vectorAdd: i32x4Add,
    lane: (index) => [...simd(0x1b), index],
    scalarAdd: op.i32Add,
    store: op.i32Store,
    extraV128: 1,
  });
}

const compiledSketchModule = lazyKernel(sketchModuleBytes);

/** Values per sketch row: the partition's stride rounded up to the kernel's step (zeros after). */
const widthOf = (stride: number): number => Math.ceil(stride / 64) * 64;

/** Bytes a sketch of `capacity` rows of `stride` values holds (what a partition counts against the index budget). */
export function sketchBytes(stride: number, capacity: number): number {
  // int8 rows, the int32 results, and each row's step and norm (float32).
  return capacity * (widthOf(stride) + 4 + 8);
}

/**
 * The sketch of one partition's rows. Rows are quantized from the partition's float32 rows
 * (`refresh`), which the partition calls before a scan; it tells the sketch which rows changed
 * (`invalidate`) and where its rows end (`truncate`).
 */
export class RowSketch {
  capacity: number;
  /** Values per row here: `stride` rounded up to 64. */
  private readonly width: number;
  private readonly memory: WasmMemory;
  private readonly scanRows: SketchScan;
  private queryView!: Int16Array;
  private rows!: Int8Array;
  private out!: Int32Array;
  /** Per row: its step (largest magnitude / LEVELS) and its L1 norm, as the bound needs them. */
  private steps: Float32Array;
  private norms: Float32Array;
  /** Rows [0, built) are quantized, except those in `stale`. */
  private built = 0;
  private readonly stale = new Set<number>();

  /** A sketch for rows of `stride` floats (a multiple of 16), or null when WebAssembly SIMD is not available. */
  static create(stride: number, capacity: number): RowSketch | null {
    const kernel = compiledSketchModule();
    if (!kernel) return null;
    try {
      return new RowSketch(stride, capacity, kernel);
    } catch {
      return null; // no address space for another wasm memory: the partition scans in full
    }
  }

  private constructor(
    private readonly stride: number,
    capacity: number,
    kernel: CompiledKernel,
  ) {
    this.width = widthOf(stride);
    this.capacity = capacity;
    this.memory = new kernel.api.Memory({ initial: Math.ceil(this.memoryBytes(capacity) / PAGE_BYTES) });
    this.scanRows = instantiateKernel<SketchScan>(kernel, this.memory, 'scan8');
    this.steps = new Float32Array(capacity);
    this.norms = new Float32Array(capacity);
    this.mapViews();
  }

  get bytes(): number {
    return sketchBytes(this.stride, this.capacity);
  }

  private memoryBytes(capacity: number): number {
    return this.width * 2 + capacity * this.width + capacity * 4;
  }

  /** Views go stale whenever the memory grows (its old ArrayBuffer is detached). */
  private mapViews(): void {
    const buffer = this.memory.buffer;
    const queryBytes = this.width * 2;
    this.queryView = new Int16Array(buffer, 0, this.width);
    this.rows = new Int8Array(buffer, queryBytes, this.capacity * this.width);
    this.out = new Int32Array(buffer, queryBytes + this.capacity * this.width, this.capacity);
  }

  /** Room for `capacity` rows; the quantized rows stay where they are. */
  ensureCapacity(capacity: number): void {
    if (capacity <= this.capacity) return;
    const missing = this.memoryBytes(capacity) - this.memory.buffer.byteLength;
    if (missing > 0) this.memory.grow(Math.ceil(missing / PAGE_BYTES));
    const grown = (from: Float32Array): Float32Array => {
      const next = new Float32Array(capacity);
      next.set(from);
      return next;
    };
    this.steps = grown(this.steps);
    this.norms = grown(this.norms);
    this.capacity = capacity;
    this.mapViews();
  }

  /** The row at `slot` changed. */
  invalidate(slot: number): void {
    if (slot < this.built) this.stale.add(slot);
  }

  /** The partition now holds `count` rows: those after are gone (a slot reused later is quantized again). */
  truncate(count: number): void {
    if (count < this.built) this.built = count;
  }

  /** Rows to quantize before the first `count` rows can be scanned. */
  pending(count: number): number {
    return Math.max(0, count - this.built) + this.stale.size;
  }

  /**
   * Quantizes at most `maxRows` of the rows a scan of the first `count` needs, from the partition's
   * float32 `source` rows; true when none is left.
   */
  refresh(source: Float32Array, count: number, maxRows: number): boolean {
    // As much room as the rows have: a partition's capacity doubles, so the sketch's does too.
    this.ensureCapacity(Math.max(count, source.length / this.stride));
    let budget = maxRows;
    for (const slot of this.stale) {
      if (budget <= 0) return false;
      this.stale.delete(slot);
      if (slot < count) {
        this.quantize(source, slot);
        budget--;
      }
    }
    while (this.built < count) {
      if (budget <= 0) return false;
      this.quantize(source, this.built++);
      budget--;
    }
    return true;
  }

  private quantize(source: Float32Array, slot: number): void {
    const { stride, width } = this;
    const base = slot * stride;
    const at = slot * width;
    let largest = 0;
    let norm = 0;
    for (let i = 0; i < stride; i++) {
      const magnitude = Math.abs(source[base + i]!);
      norm += magnitude;
      if (magnitude > largest) largest = magnitude;
    }
    const step = Math.fround(largest / LEVELS);
    // × the inverse, not ÷ the step: a few ulps off at most, which SLACK covers.
    const inverse = step > 0 ? 1 / step : 0;
    const rows = this.rows;
    for (let i = 0; i < stride; i++) rows[at + i] = Math.round(source[base + i]! * inverse);
    this.steps[slot] = step;
    this.norms[slot] = norm;
  }

  /**
   * The rows among the first `count` that can be among the `need` best for `query` (a float32
   * row of the partition's stride) scoring above `floor`, in slot order; null when the sketch
   * would not save a full scan (fewer rows than `need`, or a quarter of the rows or more left
   * in). Every pending row must have been refreshed.
   */
  candidates(query: Float32Array, count: number, need: number, floor: number): Int32Array | null {
    if (need <= 0 || count < need || this.pending(count) > 0) return null;
    const { stride, queryView, steps, norms, out } = this;
    let largest = 0;
    for (let i = 0; i < stride; i++) largest = Math.max(largest, Math.abs(query[i]!));
    const step = Math.fround(largest / LEVELS);
    let queryNorm = 0;
    for (let i = 0; i < stride; i++) {
      const level = step > 0 ? Math.round(query[i]! / step) : 0;
      queryView[i] = level;
      queryNorm += Math.abs(level);
    }
    queryNorm *= step;
    this.scanRows(0, queryView.byteLength, count, this.width, out.byteOffset);

    // The need-th best lower bound: `need` rows score at least this.
    const lows = new TopSlots(need);
    let weakest = -Infinity;
    const halfStep = step / 2;
    const halfNorm = queryNorm / 2;
    for (let slot = 0; slot < count; slot++) {
      const rowStep = steps[slot]!;
      const estimate = rowStep * step * out[slot]!;
      const error = norms[slot]! * halfStep + rowStep * halfNorm + SLACK;
      const low = estimate - error;
      if (low > weakest) {
        lows.push(low, slot);
        weakest = lows.weakest; // -Infinity until `need` rows are in
      }
    }
    const cut = Math.max(floor, weakest);
    // The rows whose upper bound reaches the cut.
    const kept: number[] = [];
    const most = count >> 2;
    for (let slot = 0; slot < count; slot++) {
      const rowStep = steps[slot]!;
      if (rowStep * step * out[slot]! + norms[slot]! * halfStep + rowStep * halfNorm + SLACK < cut) continue;
      if (kept.push(slot) > most) return null;
    }
    return Int32Array.from(kept);
  }
}
