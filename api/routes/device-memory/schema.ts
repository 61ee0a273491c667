/** Device memory request bodies (docs/device-memory.md). Snapshots themselves are checked by snapshot/seal.ts. */
import { z } from 'zod';
import { uuid } from '../common-schema.js';

const signedUrl = (field: string) =>
  z
    .string({ error: `${field} must be a URL string` })
    .min(1, `${field} must not be empty`)
    .max(8192, `${field} must be at most 8192 characters`);
const headers = (field: string) =>
  z.record(z.string(), z.string({ error: `${field} values must be strings` }), {
    error: `${field} must be an object of header names to strings`,
  });
const signedUrlType = z.literal('signed_url', { error: 'type must be "signed_url" (the only reference type)' });

/** A client's snapshot, passed through as is: its checks need the raw object (signature, digest). */
export const snapshotObject = z.record(z.string(), z.unknown(), { error: 'snapshot must be a JSON object' });

export const snapshotRef = z.strictObject(
  {
    type: signedUrlType.optional(),
    collection_id: uuid,
    get_url: signedUrl('get_url').optional(),
    put_url: signedUrl('put_url').optional(),
    get_headers: headers('get_headers').optional(),
    put_headers: headers('put_headers').optional(),
  },
  { error: 'snapshot_ref must be an object {type, collection_id, get_url, put_url, get_headers, put_headers}' },
);

export const exportBody = z.strictObject({
  collection_id: uuid,
  destination: z
    .strictObject(
      {
        type: signedUrlType.optional(),
        collection_id: uuid,
        put_url: signedUrl('put_url'),
        put_headers: headers('put_headers').optional(),
      },
      { error: 'destination must be an object {type, collection_id, put_url}' },
    )
    .optional(),
});

export const importBody = z
  .strictObject({ snapshot: snapshotObject.optional(), snapshot_ref: snapshotRef.optional() })
  .superRefine((body, ctx) => {
    if (body.snapshot === undefined && body.snapshot_ref === undefined) {
      ctx.addIssue({ code: 'custom', path: ['snapshot'], message: 'send snapshot or snapshot_ref' });
    }
    if (body.snapshot !== undefined && body.snapshot_ref !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['snapshot_ref'], message: 'snapshot and snapshot_ref are mutually exclusive; send only one' });
    }
  });
