/**
 * Just enough of a WebAssembly assembler for the scan kernels of the vector partitions
 * (search/row-store.ts, search/row-sketch.ts): the binary encodings, the instructions they use,
 * and the one module shape they share. The kernels are assembled here rather than shipped as
 * opaque blobs, so every byte of them can be read in the source.
 */

/** The slice of the WebAssembly JS API used here (the project's lib settings do not declare it). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { readonly exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  validate(bytes: Uint8Array): boolean;
}

export const PAGE_BYTES = 65536;

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

/** Value types. */
const I32 = 0x7f;
const V128 = 0x7b;

/** The instructions the kernels use, each as its bytes. */
export const op = {
  get: (local: number): number[] => [0x20, local],
  set: (local: number): number[] => [0x21, local],
  tee: (local: number): number[] => [0x22, local],
  i32Const: (value: number): number[] => [0x41, ...sleb(value)],
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32Eqz: [0x45],
  i32Ne: [0x47],
  f32Add: [0x92],
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  end: [0x0b],
  br: (depth: number): number[] => [0x0c, depth],
  brIf: (depth: number): number[] => [0x0d, depth],
  /** align 4, offset 0 */
  f32Store: [0x38, 2, 0],
  /** align 4, offset 0 */
  i32Store: [0x36, 2, 0],
  simd: (opcode: number): number[] => [0xfd, ...uleb(opcode)],
  /** align 16 */
  v128Load: (offset: number): number[] => [0xfd, ...uleb(0x00), 4, ...uleb(offset)],
  v128Zero: [0xfd, ...uleb(0x0c), ...new Array<number>(16).fill(0)],
};

/**
 * A module that imports its memory (env.memory) and exports one function, `exported`, of five i32
 * parameters and no result, whose extra locals are `locals` ([count, type] groups) and whose
 * instructions are `body` (its final `end` included).
 */
function kernelModule(exported: string, locals: [number, number][], body: number[]): Uint8Array {
  const code = [...vec(locals), ...body];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), 0]])), // type 0: (i32 x5) -> ()
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])), // import memory, min 1 page
    ...section(3, vec([[0]])), // one function of type 0
    ...section(7, vec([[...name(exported), 0x00, 0]])), // export it
    ...section(10, vec([[...uleb(code.length), ...code]])),
  ]);
}

export interface CompiledKernel {
  api: WasmApi;
  module: object;
}

/**
 * A kernel module compiled on first use, once per process; null when WebAssembly (or the SIMD it
 * uses) is not available.
 */
export function lazyKernel(build: () => Uint8Array): () => CompiledKernel | null {
  let compiled: CompiledKernel | null | undefined;
  return () => {
    if (compiled === undefined) {
      const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
      const bytes = api ? build() : null;
      compiled = api && bytes && api.validate(bytes) ? { api, module: new api.Module(bytes) } : null;
    }
    return compiled;
  };
}

/**
 * The locals of a row kernel (`rowKernel`), by index: its five parameters (query, rows, count,
 * rowBytes, out), the end of the current row, the query pointer, four v128 accumulators, then the
 * step's own v128 locals (`extra`).
 */
export const ROW = {
  query: 0,
  rows: 1,
  count: 2,
  rowBytes: 3,
  out: 4,
  rowEnd: 5,
  q: 6,
  acc: (i: number): number => 7 + i,
  extra: (i: number): number => 11 + i,
};

/** What tells one row kernel from another: its step over a row, and the lanes' arithmetic. */
export interface RowKernelShape {
  exported: string;
  /** Adds rows[0..rowStep) · q[0..queryStep) into the four accumulators (ROW.acc). */
  step: number[];
  rowStep: number;
  queryStep: number;
  /** The v128 add of the accumulators' lane type, a lane's extraction, the scalar add, and the store of a row's result. */
  vectorAdd: number[];
  lane: (index: number) => number[];
  scalarAdd: number[];
  store: number[];
  /** v128 locals the step uses beyond the accumulators. */
  extraV128: number;
}

/**
 * A kernel `exported(query, rows, count, rowBytes, out)` that, for each of `count` rows of
 * rowBytes bytes (a non-zero multiple of rowStep), zeroes four accumulators, runs `step` until
 * the row's end, and stores the sum of the accumulators' lanes at `out`, one result after another.
 */
export function rowKernel(shape: RowKernelShape): Uint8Array {
  const { get, set, tee, i32Const, i32Add, i32Sub, i32Eqz, i32Ne, block, loop, end, br, brIf, v128Zero } = op;
  const { query, rows, count, rowBytes, out, rowEnd, q, acc } = ROW;
  const { vectorAdd, lane, scalarAdd } = shape;
  // One logical statement per line; the stack effects read left to right.
  const body: number[] = [
    [...block, ...loop], // for each row:
    [...get(count), ...i32Eqz, ...brIf(1)], //   if (count == 0) return
    [0, 1, 2, 3].flatMap((i) => [...v128Zero, ...set(acc(i))]), //   acc[0..3] = 0
    [...get(query), ...set(q)], //   q = query
    [...get(rows), ...get(rowBytes), ...i32Add, ...set(rowEnd)], //   rowEnd = rows + rowBytes
    loop, //   do {
    shape.step, //     acc[0..3] += rows[0..rowStep) · q[0..queryStep)
    [...get(rows), ...i32Const(shape.rowStep), ...i32Add, ...tee(rows)], //     rows += rowStep
    [...get(q), ...i32Const(shape.queryStep), ...i32Add, ...set(q)], //     q += queryStep
    [...get(rowEnd), ...i32Ne, ...brIf(0), ...end], //   } while (rows != rowEnd)
    [...get(acc(0)), ...get(acc(1)), ...vectorAdd, ...get(acc(2)), ...get(acc(3)), ...vectorAdd, ...vectorAdd, ...set(acc(0))], //   acc[0] = sum of the four
    [...get(out), ...get(acc(0)), ...lane(0), ...get(acc(0)), ...lane(1), ...scalarAdd], //   *out = lane 0 + lane 1
    [...get(acc(0)), ...lane(2), ...scalarAdd, ...get(acc(0)), ...lane(3), ...scalarAdd, ...shape.store], //     + lane 2 + lane 3
    [...get(out), ...i32Const(4), ...i32Add, ...set(out)], //   out += 4 bytes
    [...get(count), ...i32Const(1), ...i32Sub, ...set(count)], //   count -= 1
    [...br(0), ...end, ...end], // next row
    end, // end of function
  ].flat();
  return kernelModule(
    shape.exported,
    [
      [2, I32],
      [4 + shape.extraV128, V128],
    ],
    body,
  );
}

/** The kernel's function, instantiated over `memory`. */
export function instantiateKernel<F>(kernel: CompiledKernel, memory: WasmMemory, exported: string): F {
  const fn = new kernel.api.Instance(kernel.module, { env: { memory } }).exports[exported];
  if (typeof fn !== 'function') throw new Error(`kernel did not export ${exported}`);
  return fn as F;
}
