import { z } from 'zod';
import { metadataObject, pagination, uuid } from '../common-schema.js';

export const createCollectionBody = z.strictObject({
  name: z
    .string({ error: 'name is required and must be a string' })
    .trim()
    .min(1, 'name must not be empty')
    .max(200, 'name must be at most 200 characters'),
  description: z.string().max(2000, 'description must be at most 2000 characters').nullish(),
  metadata: metadataObject.optional(),
});

export const collectionIdParams = z.object({ collection_id: uuid });
export const collectionNameParams = z.object({ name: z.string().min(1).max(200) });
export const listCollectionsQuery = z.object(pagination(1000, 100));
