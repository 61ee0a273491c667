/**
 * Canonical JSON, scheme `json-sort-keys-v1`: the byte form that event signatures cover.
 * docs/event-signing.md states the same rules for implementers in other languages.
 *
 * - Objects: own enumerable string keys, sorted by UTF-16 code unit order (plain JS
 *   `Array.prototype.sort`), recursively. A property whose value is `undefined` is omitted, as
 *   JSON.stringify omits it, so a frame sent with JSON.stringify verifies against what was signed.
 *   Symbol-keyed and non-enumerable properties are ignored (as JSON.stringify ignores them).
 *   Only plain objects (prototype Object.prototype or null) are accepted: Date, Map, Buffer,
 *   class instances and anything with a `toJSON` are rejected, so nothing is converted silently.
 * - Arrays keep their order; an `undefined` element or a hole is rejected (JSON.stringify would
 *   turn it into `null`, a silent change).
 * - Strings are escaped exactly as JSON.stringify escapes them: `"` and `\`, the short escapes
 *   \b \f \n \r \t, other code points below U+0020 as \u00xx (lowercase hex); everything else,
 *   including `/`, U+007F, non-ASCII, U+2028 and U+2029, is emitted as is (UTF-8 in the signed
 *   bytes). Strings and keys containing a lone surrogate are rejected: they have no UTF-8 form.
 * - Numbers must be finite; they are written as JSON.stringify writes them (ECMAScript
 *   Number::toString: integers as plain digits below 1e21, -0 as `0`, fractions in the shortest
 *   round-trip form). NaN and ±Infinity are rejected.
 * - `true`, `false`, `null` as literals. No whitespace anywhere.
 * - `undefined` at the top level, functions, symbols and BigInt are rejected.
 *
 * Key order note: UTF-16 code unit order equals Unicode code point order (Python's `sort_keys`,
 * Go's byte-wise string order) except between a key with an astral-plane character (U+10000 and
 * above, stored as a surrogate pair D800–DFFF) and one with a character in U+E000–U+FFFF at the
 * same position: UTF-16 order puts the astral key first, code point order puts it last.
 */

export class CanonicalJsonError extends TypeError {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`cannot canonicalise ${path}: ${reason}`);
    this.name = 'CanonicalJsonError';
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function encodeString(value: string, path: string): string {
  if (LONE_SURROGATE.test(value)) throw new CanonicalJsonError(path, 'string contains a lone surrogate (not representable in UTF-8)');
  return JSON.stringify(value);
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function assertPlainObject(value: object, path: string): asserts value is Record<string, unknown> {
  if (!isPlainObject(value)) {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    const what = typeof name === 'string' && name ? name : 'non-plain object';
    throw new CanonicalJsonError(path, `${what} is not a plain object (convert it first, e.g. a Date to an ISO string)`);
  }
  if (typeof value.toJSON === 'function') throw new CanonicalJsonError(path, 'objects with toJSON are not accepted');
}

function encode(value: unknown, path: string, ancestors: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return encodeString(value, path);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(path, `${value} is not a finite number`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      throw new CanonicalJsonError(path, 'undefined is not a JSON value');
    case 'bigint':
      throw new CanonicalJsonError(path, 'BigInt is not supported (convert it to a string or a safe integer first)');
    case 'function':
    case 'symbol':
      throw new CanonicalJsonError(path, `${typeof value} is not a JSON value`);
    case 'object':
      break;
  }
  if (value === null) return 'null';
  if (ancestors.has(value)) throw new CanonicalJsonError(path, 'circular reference');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const items: string[] = [];
      for (let index = 0; index < value.length; index += 1) {
        const itemPath = `${path}[${index}]`;
        if (!(index in value)) throw new CanonicalJsonError(itemPath, 'sparse array hole');
        items.push(encode(value[index], itemPath, ancestors));
      }
      return `[${items.join(',')}]`;
    }
    assertPlainObject(value, path);
    const members: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const member = value[key];
      if (member === undefined) continue;
      const memberPath = childPath(path, key);
      members.push(`${encodeString(key, memberPath)}:${encode(member, memberPath, ancestors)}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    ancestors.delete(value);
  }
}

/** Thrown by canonicalCopy where the fast path cannot stand in for `encode`, which then runs (and names the problem, if any). */
const UNSUITABLE = new (class Unsuitable {})();

/**
 * A copy of `value` that JSON.stringify writes as its canonical JSON: every object rebuilt with
 * its keys inserted in sorted order, every value checked against the rules above. Throws
 * UNSUITABLE on anything the rules refuse, and on an object with array-index keys ("0", "12"),
 * which every JS object lists first, in numeric order. The native writer is faster than `encode`:
 * a 3.5 MB snapshot body took ~18 ms of CPU against ~33 on these machines.
 */
function canonicalCopy(value: unknown, ancestors: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
      if (LONE_SURROGATE.test(value)) throw UNSUITABLE;
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw UNSUITABLE;
      return value;
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      throw UNSUITABLE;
  }
  if (value === null) return null;
  if (ancestors.has(value)) throw UNSUITABLE;
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const copy: unknown[] = [];
      for (let index = 0; index < value.length; index += 1) {
        if (!(index in value)) throw UNSUITABLE;
        copy.push(canonicalCopy(value[index], ancestors));
      }
      return copy;
    }
    if (!isPlainObject(value) || typeof value.toJSON === 'function') throw UNSUITABLE;
    // Without a prototype, a "__proto__" key is an own property like any other.
    const copy = Object.create(null) as Record<string, unknown>;
    let indexLike = false;
    for (const key of Object.keys(value).sort()) {
      const member = value[key];
      if (member === undefined) continue;
      if (LONE_SURROGATE.test(key)) throw UNSUITABLE;
      const first = key.charCodeAt(0);
      if (first >= 48 && first <= 57) indexLike = true;
      copy[key] = canonicalCopy(member, ancestors);
    }
    if (indexLike) {
      const kept = Object.keys(copy);
      const sorted = [...kept].sort();
      if (kept.some((key, index) => key !== sorted[index])) throw UNSUITABLE;
    }
    return copy;
  } finally {
    ancestors.delete(value);
  }
}

/** canonicalJson through the native writer, or undefined where only `encode` can say (see canonicalCopy). */
function fastCanonical(value: unknown, ancestors: Set<object>): string | undefined {
  try {
    return JSON.stringify(canonicalCopy(value, ancestors));
  } catch (error) {
    if (error === UNSUITABLE) return undefined;
    throw error;
  }
}

/** The canonical JSON text of `value`. Throws CanonicalJsonError for anything outside the rules above. */
export function canonicalJson(value: unknown): string {
  const ancestors = new Set<object>();
  return fastCanonical(value, ancestors) ?? encode(value, '$', ancestors);
}

/** The signed bytes: the UTF-8 encoding of canonicalJson(value). */
export function canonicalJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/**
 * A string longer than this is written in pieces of at most this many characters (before
 * escaping) when it lies within the opened levels: the mention rows of a 2M-character device
 * episode are one 8 MB string, which took 23-29 ms of CPU to check and escape in one step, and as
 * much again to encode and hash with the piece it ended up in.
 */
export const STRING_PIECE_CHARS = 64 * 1024;

/** encodeString(value) in pieces of at most STRING_PIECE_CHARS characters, a surrogate pair never split (its halves would read as lone surrogates). */
function* stringPieces(value: string, path: string): Generator<string> {
  yield '"';
  for (let start = 0; start < value.length;) {
    let end = Math.min(value.length, start + STRING_PIECE_CHARS);
    const last = value.charCodeAt(end - 1);
    if (end < value.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    yield encodeString(value.slice(start, end), path).slice(1, -1);
    start = end;
  }
  yield '"';
}

/** The pieces of canonicalJson(value), its arrays and objects opened down to `depth` levels (see canonicalJsonPieces). */
function* piecesOf(
  value: unknown,
  path: string,
  ancestors: Set<object>,
  depth: number,
  level: number,
  worthOpening: (container: object, level: number) => boolean,
): Generator<string> {
  if (depth > 0 && typeof value === 'string' && value.length > STRING_PIECE_CHARS) {
    yield* stringPieces(value, path);
    return;
  }
  if (depth <= 0 || value === null || typeof value !== 'object' || !worthOpening(value, level)) {
    yield fastCanonical(value, ancestors) ?? encode(value, path, ancestors);
    return;
  }
  if (ancestors.has(value)) throw new CanonicalJsonError(path, 'circular reference');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      yield '[';
      for (let index = 0; index < value.length; index += 1) {
        const itemPath = `${path}[${index}]`;
        if (!(index in value)) throw new CanonicalJsonError(itemPath, 'sparse array hole');
        if (index > 0) yield ',';
        yield* piecesOf(value[index], itemPath, ancestors, depth - 1, level + 1, worthOpening);
      }
      yield ']';
      return;
    }
    assertPlainObject(value, path);
    yield '{';
    let first = true;
    for (const key of Object.keys(value).sort()) {
      const member = value[key];
      if (member === undefined) continue;
      const memberPath = childPath(path, key);
      yield `${first ? '' : ','}${encodeString(key, memberPath)}:`;
      first = false;
      yield* piecesOf(member, memberPath, ancestors, depth - 1, level + 1, worthOpening);
    }
    yield '}';
  } finally {
    ancestors.delete(value);
  }
}

/**
 * canonicalJson(value) as a sequence of pieces whose concatenation is exactly that text, the
 * arrays and objects of the first `depth` levels opened member by member: a caller producing the
 * canonical JSON of a large document (a device snapshot) can stop between pieces to let the event
 * loop run (core/time-slice.ts). A string longer than STRING_PIECE_CHARS within those levels comes
 * in pieces too. Same rules and errors as canonicalJson. `worthOpening` (the value itself at level 0)
 * may keep a small container in one piece: each piece costs a call of its own.
 */
export function canonicalJsonPieces(
  value: unknown,
  depth: number,
  worthOpening: (container: object, level: number) => boolean = () => true,
): Iterable<string> {
  return piecesOf(value, '$', new Set(), depth, 0, worthOpening);
}
