/**
 * JSON parsed on a worker thread (models/json-tasks.ts `parseJsonBody`, called through `parseJson`
 * there), for request bodies large enough that parsing them on the event loop held every other
 * request of the process (api/middleware/pooled-json-body.ts), and for snapshots a device call
 * downloads from a signed URL (services/device-memory.ts). The bytes are decoded and parsed by
 * co-body, the parser @koa/bodyparser runs on the loop for every other body: the same decoding (a
 * UTF-8 BOM dropped), the same strict check (an object or an array), the same `__proto__` refusal
 * and the same error messages, so a body answers the same whichever side parsed it.
 *
 * Beside the value, the thread works out the SHA-256 of the JSON text of values at given paths
 * (a device snapshot's `body`: what its signed digest covers), which the loop then need not write
 * out and hash again.
 */
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import coBody from 'co-body';
import { sha256Hex } from './hash.js';
import { splitJson, valueAt, type JsonPath, type JsonPieces } from './json-pieces.js';

/** The JSON text of a value as JSON.stringify writes it: its digest and UTF-8 length. */
export interface JsonTextDigest {
  digest: string;
  bytes: number;
}

export type ParsedJsonBody =
  | {
      ok: true;
      pieces: JsonPieces;
      /** UTF-8 bytes of the decoded text (what Buffer.byteLength of the body parser's rawBody gives). */
      textBytes: number;
      /** For each path asked for that holds an object or an array. */
      digests: { path: JsonPath; text: JsonTextDigest }[];
    }
  /** What co-body threw: its status (400) and message, for the error handler to map as it maps the loop's. */
  | { ok: false; status: number; message: string };

export function jsonTextDigest(value: unknown): JsonTextDigest {
  const text = JSON.stringify(value);
  return { digest: `sha256:${sha256Hex(text)}`, bytes: Buffer.byteLength(text) };
}

/** JSON bytes decoded and parsed as co-body parses a request body (the value and the decoded text), or what it threw. */
export type DecodedJson = { ok: true; value: unknown; text: string } | { ok: false; status: number; message: string };

/**
 * JSON bytes (already inflated) decoded and parsed by co-body, as the body parser parses a
 * request: on a worker thread (`parseJsonBody`) or, below 1 MiB, on the loop. `strict`:
 * only an object or an array (an empty text is then `{}`); otherwise any JSON value (an empty text
 * is then the empty string).
 */
export async function decodeJson(bytes: Uint8Array, strict: boolean): Promise<DecodedJson> {
  // co-body reads a request: these bytes, already inflated, as one (headers: identity encoding).
  const request = Object.assign(Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]), {
    headers: {},
  });
  try {
    // The stream stands in for the IncomingMessage co-body reads: it uses only the stream and its headers.
    const parsed = (await coBody.json(request as unknown as IncomingMessage, {
      strict,
      returnRawBody: true,
      limit: Number.MAX_SAFE_INTEGER,
      encoding: 'utf-8',
    })) as { parsed: unknown; raw: string };
    return { ok: true, value: parsed.parsed, text: parsed.raw };
  } catch (error) {
    const failure = error as { status?: number; message?: string };
    return { ok: false, status: failure.status ?? 400, message: failure.message ?? 'invalid JSON' };
  }
}

export async function parseJsonBody(input: {
  bytes: Uint8Array;
  strict: boolean;
  digestPaths: JsonPath[];
  pieceBytes?: number;
}): Promise<ParsedJsonBody> {
  const decoded = await decodeJson(input.bytes, input.strict);
  if (!decoded.ok) return decoded;
  const digests: { path: JsonPath; text: JsonTextDigest }[] = [];
  for (const path of input.digestPaths) {
    const value = valueAt(decoded.value, path);
    if (typeof value === 'object' && value !== null) digests.push({ path, text: jsonTextDigest(value) });
  }
  return { ok: true, pieces: splitJson(decoded.value, input.pieceBytes), textBytes: Buffer.byteLength(decoded.text), digests };
}
