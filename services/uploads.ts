/**
 * Presigned uploads for files above the inline limit (up to UPLOAD_MAX_BYTES):
 *   1. POST /v1/uploads {collection_id, filename, media_type, size} → a short-lived URL whose
 *      HMAC signature binds the upload id and the expiry (what the URL carries, so a PUT is
 *      verified before any database read; tenant, collection, size and type live in the record
 *      the random id names, which only this service writes);
 *   2. PUT <url> with the bytes: streamed into GridFS, never buffered whole; single use;
 *   3. POST /v1/memories with content_parts [{type: "document", upload_id}].
 * Every refusal leaves nothing stored: an oversize or short body aborts the GridFS upload.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { uploadLookups } from '../core/metrics.js';
import { TooLargeError } from '../store/files.js';
import type { Store } from '../store/index.js';
import type { MemoryFile } from '../store/memories.js';
import type { Upload } from '../core/content-model.js';
import type { CollectionService } from './collections.js';

export interface UploadRequest {
  collection_id: string;
  filename: string;
  media_type: string;
  size: number;
}

export interface UploadServiceOptions {
  secret: string;
  ttlSeconds: number;
  maxBytes: number;
}

const signatureOf = (secret: string, uploadId: string, expires: number): string =>
  createHmac('sha256', secret).update(['upload-put', uploadId, expires].join('\n')).digest('base64url');

const sameSignature = (expected: string, given: string): boolean => {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
};

const mediaTypeOf = (header: string | undefined): string => (header ?? '').split(';')[0]!.trim().toLowerCase();

export function createUploadService(deps: { store: Store; collections: CollectionService; options: UploadServiceOptions; logger: Logger }) {
  const { store, options } = deps;

  return {
    async issue(tenantId: string, request: UploadRequest) {
      await deps.collections.assertWritable(tenantId, [request.collection_id], 'collection_id');
      if (request.size > options.maxBytes) {
        throw new AppError(413, 'upload_too_large', `size ${request.size} exceeds the ${options.maxBytes} byte upload limit`, [
          { field: 'size', issue: `must be at most ${options.maxBytes}` },
        ]);
      }
      const now = Date.now();
      const upload: Upload = {
        id: newId(),
        tenant_id: tenantId,
        collection_id: request.collection_id,
        filename: request.filename,
        media_type: mediaTypeOf(request.media_type),
        size: request.size,
        expires_at: new Date(now + options.ttlSeconds * 1000),
        created_at: new Date(now),
        file_id: null,
        sha256: null,
        memory_id: null,
      };
      await store.uploads.create(upload);
      const expires = Math.floor(upload.expires_at.getTime() / 1000);
      return { upload, path: `/v1/uploads/${upload.id}?expires=${expires}&signature=${signatureOf(options.secret, upload.id, expires)}` };
    },

    /** Handles the PUT of a presigned URL; the signature is its only credential. */
    async receive(
      uploadId: string,
      expires: number,
      signature: string,
      contentType: string | undefined,
      contentLength: number | undefined,
      body: AsyncIterable<Uint8Array>,
    ) {
      // The signature is checked before any read: a forged URL costs no database query.
      if (!sameSignature(signatureOf(options.secret, uploadId, expires), signature)) {
        throw new AppError(403, 'invalid_upload_signature', 'The upload URL is not valid (tampered, or not issued by this service)');
      }
      if (expires * 1000 < Date.now()) {
        throw new AppError(
          403,
          'upload_url_expired',
          `The upload URL expired at ${new Date(expires * 1000).toISOString()}; request a new one`,
        );
      }
      uploadLookups.inc();
      const upload = await store.uploads.find(uploadId);
      // Issued by us, but its record is gone (swept after expiry, or its memory deleted).
      if (!upload) throw notFound('upload', uploadId);
      if (upload.expires_at.getTime() < Date.now()) {
        throw new AppError(403, 'upload_url_expired', `The upload URL expired at ${upload.expires_at.toISOString()}; request a new one`);
      }
      if (contentType !== undefined && mediaTypeOf(contentType) !== upload.media_type) {
        throw new AppError(
          415,
          'upload_media_type_mismatch',
          `Content-Type ${mediaTypeOf(contentType)} does not match the declared ${upload.media_type}`,
          [{ field: 'Content-Type', issue: `must be ${upload.media_type}` }],
        );
      }
      if (contentLength !== undefined && contentLength !== upload.size) {
        throw new AppError(400, 'upload_size_mismatch', `Content-Length ${contentLength} does not match the declared size ${upload.size}`, [
          { field: 'Content-Length', issue: `must be ${upload.size}` },
        ]);
      }
      if (!(await store.uploads.claim(uploadId, 'put'))) {
        throw new AppError(409, 'upload_already_used', 'This upload URL has already been used');
      }
      try {
        const stored = await store.files.putStream(body, upload.size, {
          tenant_id: upload.tenant_id,
          memory_id: null,
          filename: upload.filename,
          media_type: upload.media_type,
        });
        if (stored.size !== upload.size) {
          await store.files.deleteIds([stored.file_id]);
          throw new AppError(400, 'upload_size_mismatch', `Received ${stored.size} bytes, but the upload declared ${upload.size}`);
        }
        await store.uploads.markStored(uploadId, stored.file_id, stored.sha256);
        return { upload, size: stored.size, sha256: stored.sha256 };
      } catch (error) {
        // A failed attempt does not use up the URL: the client may retry it until it expires.
        await store.uploads.release(uploadId, 'put');
        if (error instanceof TooLargeError) {
          throw new AppError(413, 'upload_too_large', `The body is larger than the declared size ${upload.size}`);
        }
        throw error;
      }
    },

    /** Gives a stored upload to a new memory, once. Returns what the memory records. */
    async take(tenantId: string, collectionId: string, uploadId: string, field: string): Promise<MemoryFile> {
      const upload = await store.uploads.find(uploadId);
      if (!upload || upload.tenant_id !== tenantId) throw notFound('upload', uploadId, field);
      if (upload.collection_id !== collectionId) {
        throw new AppError(422, 'upload_collection_mismatch', `Upload ${uploadId} was issued for another collection`, [
          { field, issue: 'issued for another collection' },
        ]);
      }
      if (!upload.file_id || !upload.sha256) {
        throw new AppError(409, 'upload_incomplete', `Upload ${uploadId} has not received its bytes yet`, [
          { field, issue: 'PUT the file to its upload URL first' },
        ]);
      }
      if (!(await store.uploads.claim(uploadId, 'attach'))) {
        throw new AppError(409, 'upload_already_used', `Upload ${uploadId} already belongs to a memory`, [
          { field, issue: 'already used' },
        ]);
      }
      return {
        file_id: upload.file_id,
        filename: upload.filename,
        media_type: upload.media_type,
        size: upload.size,
        sha256: upload.sha256,
      };
    },

    async attached(uploadId: string, memoryId: string, fileId: string): Promise<void> {
      await store.files.attach(fileId, memoryId);
      await store.uploads.markAttached(uploadId, memoryId);
    },

    /** Lets a failed memory creation give its uploads back. */
    async untake(uploadId: string): Promise<void> {
      await store.uploads.release(uploadId, 'attach');
    },

    /** Removes uploads whose URL expired long ago without a memory taking them. */
    async sweep(graceMs: number): Promise<number> {
      const abandoned = await store.uploads.findAbandoned(new Date(Date.now() - graceMs), 100);
      await store.files.deleteIds(abandoned.flatMap((upload) => (upload.file_id ? [upload.file_id] : [])));
      await store.uploads.remove(abandoned.map((upload) => upload.id));
      if (abandoned.length > 0) deps.logger.info({ count: abandoned.length }, 'removed abandoned uploads');
      return abandoned.length;
    },
  };
}

export type UploadService = ReturnType<typeof createUploadService>;
