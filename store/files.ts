/**
 * Original files, kept in GridFS so their owner can download them and a retried read stage can
 * extract them again. Each file records its tenant and memory; deleting a memory deletes them.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GridFSBucket, ObjectId, type Db } from 'mongodb';
import { sha256Hex } from '../core/hash.js';

export interface StoredFileMetadata {
  tenant_id: string;
  /** Null while an upload is not yet attached to a memory. */
  memory_id: string | null;
  filename: string;
  media_type: string;
  size: number;
  sha256: string;
}

export interface StoredFile extends StoredFileMetadata {
  file_id: string;
}

export class FileRepository {
  private readonly bucket: GridFSBucket;

  constructor(private readonly db: Db) {
    this.bucket = new GridFSBucket(db, { bucketName: 'files' });
  }

  async ensureIndexes(): Promise<void> {
    await this.db.collection('files.files').createIndex({ 'metadata.memory_id': 1 });
    await this.db.collection('files.files').createIndex({ 'metadata.tenant_id': 1, uploadDate: 1 });
  }

  /** Stores bytes and returns the record to keep on the memory. */
  async put(bytes: Uint8Array, meta: Omit<StoredFileMetadata, 'size' | 'sha256'>): Promise<StoredFile> {
    const id = new ObjectId();
    const metadata: StoredFileMetadata = {
      ...meta,
      size: bytes.byteLength,
      sha256: sha256Hex(bytes),
    };
    await pipeline(
      Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]),
      this.bucket.openUploadStreamWithId(id, meta.filename, { metadata }),
    );
    return { file_id: id.toHexString(), ...metadata };
  }

  /**
   * Streams a body into GridFS, refusing more than `maxBytes` (the upload is aborted and nothing
   * stays behind). Returns the stored record; the caller checks the size it expected.
   */
  async putStream(
    source: AsyncIterable<Uint8Array>,
    maxBytes: number,
    meta: Omit<StoredFileMetadata, 'size' | 'sha256'>,
  ): Promise<StoredFile> {
    const id = new ObjectId();
    const hash = createHash('sha256');
    let size = 0;
    const upload = this.bucket.openUploadStreamWithId(id, meta.filename, { metadata: { ...meta } });
    try {
      for await (const part of source) {
        size += part.byteLength;
        if (size > maxBytes) throw new TooLargeError(maxBytes);
        hash.update(part);
        if (!upload.write(part)) await new Promise((resolve) => upload.once('drain', resolve));
      }
      await new Promise<void>((resolve, reject) => upload.end((error?: Error | null) => (error ? reject(error) : resolve())));
    } catch (error) {
      await upload.abort().catch(() => undefined);
      throw error;
    }
    const metadata: StoredFileMetadata = { ...meta, size, sha256: hash.digest('hex') };
    await this.db.collection('files.files').updateOne({ _id: id }, { $set: { metadata } });
    return { file_id: id.toHexString(), ...metadata };
  }

  async attach(fileId: string, memoryId: string): Promise<void> {
    await this.db.collection('files.files').updateOne({ _id: new ObjectId(fileId) }, { $set: { 'metadata.memory_id': memoryId } });
  }

  async read(fileId: string): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of this.bucket.openDownloadStream(new ObjectId(fileId))) parts.push(part as Buffer);
    return Buffer.concat(parts);
  }

  openDownload(fileId: string): Readable {
    return this.bucket.openDownloadStream(new ObjectId(fileId));
  }

  async deleteIds(fileIds: string[]): Promise<void> {
    for (const fileId of fileIds) {
      try {
        await this.bucket.delete(new ObjectId(fileId));
      } catch (error) {
        // Already gone (a retried delete): deleting is idempotent for us.
        if (!/not found/i.test(String(error))) throw error;
      }
    }
  }

  async deleteForMemories(memoryIds: string[]): Promise<void> {
    if (memoryIds.length === 0) return;
    const files = await this.db
      .collection('files.files')
      .find({ 'metadata.memory_id': { $in: memoryIds } }, { projection: { _id: 1 } })
      .toArray();
    await this.deleteIds(files.map((file) => (file._id as ObjectId).toHexString()));
  }
}

export class TooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
  }
}
