/**
 * Where one top-level member's value lies in a JSON text, found without parsing the text: a device
 * call sends the same megabytes of snapshot again and again beside a short query, and a snapshot
 * whose exact bytes this process already opened need not be parsed, hashed as JSON and copied to
 * the event loop again (api/middleware/pooled-json-body.ts).
 *
 * The scan follows the grammar of the top-level object only: `{`, then members `"key" : value`
 * separated by commas, then `}`; a member's value is skipped by matching brackets outside strings.
 * It is a locator, not a validator: whoever uses the span parses everything around it with a real
 * parser, and uses the span's bytes only when they are bytes it parsed before. Anything it does not
 * read plainly (the key twice, a key written with escapes, a value that is not an object, bytes
 * past the top-level object) answers null, and the caller parses the whole text as before.
 */

import { isUtf8 } from 'node:buffer';
import { sha256Hex } from './hash.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

const isSpace = (byte: number | undefined): boolean => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

export interface JsonSpan {
  /** Offset of the value's first byte (its `{`). */
  start: number;
  /** Offset just past its last byte (its `}`). */
  end: number;
}

/** The offset just past the string whose opening quote is at `at`, or -1 when it does not end. */
function skipString(bytes: Uint8Array, at: number): number {
  let index = at + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, index);
    if (quote < 0) return -1;
    // A quote preceded by an odd number of backslashes is escaped.
    let backslashes = 0;
    for (let before = quote - 1; before > at && bytes[before] === BACKSLASH; before--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    index = quote + 1;
  }
}

/** The offset just past the value starting at `at` (no leading space), or -1 when it does not end. */
function skipValue(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return skipString(bytes, at);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number, true, false or null: up to the next delimiter.
    let index = at;
    while (index < bytes.length && !isSpace(bytes[index]) && bytes[index] !== COMMA && bytes[index] !== CLOSE_BRACE) index++;
    return index > at ? index : -1;
  }
  let depth = 0;
  let index = at;
  while (index < bytes.length) {
    const byte = bytes[index]!;
    if (byte === QUOTE) {
      index = skipString(bytes, index);
      if (index < 0) return -1;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth++;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return index + 1;
    }
    index++;
  }
  return -1;
}

function skipSpace(bytes: Uint8Array, at: number): number {
  let index = at;
  while (isSpace(bytes[index])) index++;
  return index;
}

/** The span of the object value of the top-level member `key` in `bytes` (UTF-8 JSON text), or null. */
export function topLevelObjectSpan(bytes: Uint8Array, key: string): JsonSpan | null {
  const wanted = Buffer.from(JSON.stringify(key));
  let index = 0;
  // co-body drops a UTF-8 byte order mark.
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) index = 3;
  index = skipSpace(bytes, index);
  if (bytes[index] !== OPEN_BRACE) return null;
  index = skipSpace(bytes, index + 1);
  let found: JsonSpan | null = null;
  if (bytes[index] === CLOSE_BRACE) return null;
  for (;;) {
    if (bytes[index] !== QUOTE) return null;
    const keyEnd = skipString(bytes, index);
    if (keyEnd < 0) return null;
    const keyBytes = bytes.subarray(index, keyEnd);
    // An escape could spell the key another way ("snap\u0073hot"): not read plainly.
    if (keyBytes.includes(BACKSLASH)) return null;
    const isWanted = Buffer.compare(keyBytes, wanted) === 0;
    index = skipSpace(bytes, keyEnd);
    if (bytes[index] !== COLON) return null;
    index = skipSpace(bytes, index + 1);
    const valueEnd = skipValue(bytes, index);
    if (valueEnd < 0) return null;
    if (isWanted) {
      // JSON.parse keeps the last of a repeated key: a second one is not read plainly.
      if (found !== null || bytes[index] !== OPEN_BRACE) return null;
      found = { start: index, end: valueEnd };
    }
    index = skipSpace(bytes, valueEnd);
    if (bytes[index] === COMMA) {
      index = skipSpace(bytes, index + 1);
      continue;
    }
    if (bytes[index] !== CLOSE_BRACE) return null;
    return skipSpace(bytes, index + 1) === bytes.length ? found : null;
  }
}

/** A member's object value located, with the SHA-256 of its exact bytes. */
export interface HashedJsonSpan extends JsonSpan {
  digest: string;
}

/**
 * `topLevelObjectSpan` with the digest of the span's bytes (run on a worker thread: a scan and a
 * hash of megabytes). Null also for bytes that are not valid UTF-8, which a decoder would replace:
 * their length would not be the decoded text's.
 */
export function locateObjectSpan(bytes: Uint8Array, key: string): HashedJsonSpan | null {
  const span = topLevelObjectSpan(bytes, key);
  if (span === null) return null;
  const value = bytes.subarray(span.start, span.end);
  return isUtf8(value) ? { ...span, digest: `sha256:${sha256Hex(value)}` } : null;
}

/** The text with the span replaced by `{}`: what is left to parse when the span's value is already known. */
export function withoutSpan(bytes: Uint8Array, span: JsonSpan): Buffer {
  return Buffer.concat([bytes.subarray(0, span.start), Buffer.from('{}'), bytes.subarray(span.end)]);
}
