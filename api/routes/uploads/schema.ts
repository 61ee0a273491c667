import { z } from 'zod';
import { uuid } from '../common-schema.js';

export const createUploadBody = z.strictObject({
  collection_id: uuid,
  filename: z
    .string({ error: 'filename is required' })
    .trim()
    .min(1, 'filename must not be empty')
    .max(255, 'filename must be at most 255 characters'),
  media_type: z
    .string({ error: 'media_type is required' })
    .regex(/^[\w.+-]+\/[\w.+-]+$/, 'media_type must be a MIME type such as application/pdf'),
  size: z.number({ error: 'size must be the file size in bytes' }).int('size must be an integer').min(1, 'size must be at least 1 byte'),
});

export const uploadIdParams = z.object({ upload_id: uuid });

export const signedUrlQuery = z.object({
  expires: z.coerce.number({ error: 'expires is required' }).int(),
  signature: z.string({ error: 'signature is required' }).min(1),
});
