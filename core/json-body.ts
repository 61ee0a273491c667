/**
 * A request body's JSON parsed on a worker thread (models/cpu-tasks.ts `parseJsonBody`), for the
 * bodies large enough that parsing them on the event loop held every other request of the process
 * (api/middleware/pooled-json-body.ts). The bytes are decoded and parsed by co-body, the parser
 * @koa/bodyparser runs on the loop for every other body: the same decoding (a UTF-8 BOM dropped),
 * the same strict check (an object or an array), the same `__proto__` refusal and the same error
 * messages, so a body answers the same whichever side parsed it.
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

export async function parseJsonBody(input: {
  bytes: Uint8Array;
  strict: boolean;
  digestPaths: JsonPath[];
  pieceBytes?: number;
}): Promise<ParsedJsonBody> {
  // co-body reads a request: these bytes, already inflated, as one (headers: identity encoding).
  const request = Object.assign(Readable.from([Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength)]), {
    headers: {},
  });
  let parsed: { parsed: unknown; raw: string };
  try {
    // The stream stands in for the IncomingMessage co-body reads: it uses only the stream and its headers.
    parsed = (await coBody.json(request as unknown as IncomingMessage, {
      strict: input.strict,
      returnRawBody: true,
      limit: Number.MAX_SAFE_INTEGER,
      encoding: 'utf-8',
    })) as { parsed: unknown; raw: string };
  } catch (error) {
    const failure = error as { status?: number; message?: string };
    return { ok: false, status: failure.status ?? 400, message: failure.message ?? 'invalid JSON' };
  }
  const digests: { path: JsonPath; text: JsonTextDigest }[] = [];
  for (const path of input.digestPaths) {
    const value = valueAt(parsed.parsed, path);
    if (typeof value === 'object' && value !== null) digests.push({ path, text: jsonTextDigest(value) });
  }
  return { ok: true, pieces: splitJson(parsed.parsed, input.pieceBytes), textBytes: Buffer.byteLength(parsed.raw), digests };
}
