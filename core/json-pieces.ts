/**
 * A parsed JSON value carried from a worker thread to the event loop in pieces, so that taking
 * it in runs in slices (core/time-slice.ts) instead of one stretch. A thread that parses a large
 * request body (models/json-tasks.ts) cannot hand the value over as one message: deserialising a
 * message is one synchronous step of the receiving loop, as long as the JSON.parse it replaces
 * (about 1.2x, measured on a 21 MiB snapshot body).
 *
 * `splitJson` (on the thread) empties the large arrays of the value, in the shell, and sends
 * their items in batches of about `pieceBytes` (`fills`, each with the path of its array);
 * `joinJson` (on the loop) deserialises the shell, then appends each batch to its array, giving
 * the loop a turn whenever a slice is spent. Pieces are V8's serialisation format (node:v8), the
 * structured clone that a message would use: every value comes back exactly as JSON.parse made it
 * (-0, Infinity of an overflowing number literal, own `__proto__` keys), which a JSON text of the
 * pieces would not give. Only arrays are split: an object keeps its keys, in their order, in one piece.
 */
import v8 from 'node:v8';
import type { TimeSlicer } from './time-slice.js';

export type JsonPath = (string | number)[];

export interface JsonPieces {
  /** The value with its large arrays emptied (node:v8 serialisation). */
  shell: Uint8Array;
  /** Items to append, in order: a batch for an array comes after the batch that placed the array. */
  fills: { path: JsonPath; items: Uint8Array }[];
}

/** About this many bytes of JSON per piece: a few milliseconds to deserialise. */
export const DEFAULT_PIECE_BYTES = 256 * 1024;

interface Visited {
  /** The value, or a copy whose large arrays are empty. */
  shell: unknown;
  /** Its JSON size, estimated (strings by length, other scalars by a few bytes). */
  weight: number;
  /** Items of its large arrays, as in JsonPieces (not yet serialised). */
  fills: { path: JsonPath; items: unknown[] }[];
}

/** A value's estimated JSON size (Visited.weight), with nothing allocated. */
function weigh(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value !== 'object' || value === null) return 8;
  let weight = 2;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) weight += weigh(value[index]) + 1;
    return weight;
  }
  for (const key in value) if (Object.hasOwn(value, key)) weight += key.length + 4 + weigh((value as Record<string, unknown>)[key]);
  return weight;
}

/**
 * A value within the piece size is whole in its parent's shell (no array in it can be split), so
 * only values above it are walked with their paths; the rest are only weighed. Walking every value
 * with its path took 15 ms of a 2.9 MB device search request's 34 ms on the thread (CPU profile).
 */
function visit(value: unknown, path: JsonPath, pieceBytes: number, known?: number): Visited {
  const weighed = known ?? weigh(value);
  if (weighed <= pieceBytes || typeof value !== 'object' || value === null) return { shell: value, weight: weighed, fills: [] };
  const child = (item: unknown, key: string | number): Visited => {
    const weight = weigh(item);
    return weight <= pieceBytes ? { shell: item, weight, fills: [] } : visit(item, [...path, key], pieceBytes, weight);
  };
  if (Array.isArray(value)) {
    const items = value.map((item, index) => child(item, index));
    const weight = weighed;
    // Batches in order; an item with fills of its own ends its batch, so it is placed before them.
    const fills: Visited['fills'] = [];
    let batch: unknown[] = [];
    let batchWeight = 0;
    const flush = (): void => {
      if (batch.length > 0) fills.push({ path, items: batch });
      batch = [];
      batchWeight = 0;
    };
    for (const item of items) {
      if (batchWeight > 0 && batchWeight + item.weight > pieceBytes) flush();
      batch.push(item.shell);
      batchWeight += item.weight;
      if (item.fills.length > 0) {
        flush();
        fills.push(...item.fills);
      }
    }
    flush();
    return { shell: [], weight, fills };
  }
  const entries = Object.entries(value).map(([key, item]) => [key, child(item, key)] as const);
  const weight = weighed;
  const fills = entries.flatMap(([, item]) => item.fills);
  if (fills.length === 0) return { shell: value, weight, fills };
  // A copy only on the way to a split array. defineProperty: a key named __proto__ stays a key.
  const shell: Record<string, unknown> = {};
  for (const [key, item] of entries) {
    Object.defineProperty(shell, key, { value: item.shell, enumerable: true, writable: true, configurable: true });
  }
  return { shell, weight, fills };
}

/** The value in pieces (run where it was parsed: a worker thread). */
export function splitJson(value: unknown, pieceBytes = DEFAULT_PIECE_BYTES): JsonPieces {
  const { shell, fills } = visit(value, [], pieceBytes);
  return { shell: v8.serialize(shell), fills: fills.map(({ path, items }) => ({ path, items: v8.serialize(items) })) };
}

/** The value again, from its pieces, with a turn of the event loop whenever `slicer`'s slice is spent. */
export async function joinJson(pieces: JsonPieces, slicer: TimeSlicer): Promise<unknown> {
  const root: unknown = v8.deserialize(pieces.shell);
  for (const { path, items } of pieces.fills) {
    if (slicer.due()) await slicer.pause();
    const target = valueAt(root, path);
    if (!Array.isArray(target)) throw new Error(`json pieces: no array at ${path.join('.')}`);
    for (const item of v8.deserialize(items) as unknown[]) target.push(item);
  }
  return root;
}

/** What lies at `path` inside `value` (undefined when the path leaves it). */
export function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let node = value;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}
