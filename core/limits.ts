/** Size limits shared by the request schemas (api/) and the services that enforce them on stored state. */

/** JSON bytes a memory's or collection's metadata may hold: sent whole, or grown by merging PATCHes. */
export const METADATA_MAX_BYTES = 16 * 1024;

/** Deepest page offset of any list: past it each request would skip (scan) that many rows; filter instead. */
export const MAX_OFFSET = 100_000;

export const metadataBytes = (metadata: Record<string, unknown>): number => Buffer.byteLength(JSON.stringify(metadata));
