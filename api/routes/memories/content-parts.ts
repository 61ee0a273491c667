/** Decodes inline content parts: strict base64, size limit per part (413 points at uploads). */
import { AppError, validationError } from '../../../core/errors.js';
import type { UploadedFile, UploadReference } from '../../../services/memories.js';
import type { CreateMemoryBody } from './schema.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

export function decodeContentParts(
  parts: NonNullable<CreateMemoryBody['content_parts']>,
  maxBytes: number,
): (UploadedFile | UploadReference)[] {
  return parts.map((part, index) => {
    if (part.upload_id !== undefined) return { uploadId: part.upload_id, partIndex: index };
    const field = `content_parts.${index}.data`;
    const compact = (part.data ?? '').replace(/\s+/g, '');
    const standard = BASE64.test(compact) && compact.length % 4 === 0;
    if (!standard && !BASE64URL.test(compact)) {
      throw validationError([{ field, issue: 'data is not valid base64' }]);
    }
    // Decoded size is known before decoding: reject oversize parts without allocating them.
    const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
    const size = Math.floor((compact.length * 3) / 4) - padding;
    if (size > maxBytes) {
      throw new AppError(
        413,
        'content_part_too_large',
        `content part ${index} is ${size} bytes, above the ${maxBytes} byte inline limit; upload larger files with POST /v1/uploads`,
        [{ field, issue: `decoded size ${size} exceeds ${maxBytes} bytes` }],
      );
    }
    const bytes = Buffer.from(compact, standard ? 'base64' : 'base64url');
    if (bytes.byteLength === 0) throw validationError([{ field, issue: 'the file is empty' }]);
    return { bytes, filename: part.filename ?? `part-${index}`, mediaType: part.media_type, partIndex: index };
  });
}
