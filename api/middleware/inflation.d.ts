/** inflation 2.1.0 ships no types: it returns the stream, or a decompressing one for its Content-Encoding (415 when unknown). */
declare module 'inflation' {
  import type { Readable } from 'node:stream';
  export default function inflate(stream: Readable & { headers?: Record<string, string | string[] | undefined> }): Readable;
}
