import { createHash } from 'node:crypto';

/** Hex sha256 of bytes or a UTF-8 string: key and ticket hashes, file digests, request hashes. */
export const sha256Hex = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');
