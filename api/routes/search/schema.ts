import { z } from 'zod';
import { uuid } from '../common-schema.js';

export const searchBody = z
  .strictObject({
    query: z
      .string({ error: 'query is required and must be a string' })
      .max(4000, 'query must be at most 4000 characters')
      .refine((value) => value.trim().length > 0, 'query must not be empty'),
    collection_ids: z
      .array(uuid, { error: 'collection_ids must be an array of UUIDs' })
      .min(1, 'collection_ids must name at least one collection')
      .max(100, 'at most 100 collection_ids')
      .optional(),
    snapshot: z.record(z.string(), z.unknown()).optional(),
    snapshot_ref: z.record(z.string(), z.unknown()).optional(),
    limit: z
      .number({ error: 'limit must be an integer' })
      .int('limit must be an integer')
      .min(1, 'limit must be at least 1')
      .max(100, 'limit must be at most 100')
      .optional(),
  })
  .superRefine((body, ctx) => {
    const modes = (['collection_ids', 'snapshot', 'snapshot_ref'] as const).filter((field) => body[field] !== undefined);
    if (modes.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['collection_ids'],
        message: 'collection_ids is required (or snapshot / snapshot_ref in device mode)',
      });
    if (modes.length > 1) {
      for (const field of modes.slice(1))
        ctx.addIssue({ code: 'custom', path: [field], message: `${modes.join(', ')} are mutually exclusive; send only one` });
    }
  });

export type SearchBody = z.infer<typeof searchBody>;
