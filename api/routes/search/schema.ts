import { z } from 'zod';
import { ALL_SIGNALS, type SignalName } from '../../../search/fusion.js';
import { isoTimestamp, uuid } from '../common-schema.js';
import { snapshotObject, snapshotRef } from '../device-memory/schema.js';
import { metadataFiltersBody } from '../memories/schema.js';

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
    snapshot: snapshotObject.optional(),
    snapshot_ref: snapshotRef.optional(),
    limit: z
      .number({ error: 'limit must be an integer' })
      .int('limit must be an integer')
      .min(1, 'limit must be at least 1')
      .max(100, 'limit must be at most 100')
      .optional(),
    signals: z
      .array(z.enum(ALL_SIGNALS as [SignalName, ...SignalName[]], { error: `each signal must be one of ${ALL_SIGNALS.join(', ')}` }), {
        error: 'signals must be an array of signal names',
      })
      .min(1, 'signals must name at least one signal')
      .refine(
        (signals) => signals.some((signal) => signal !== 'activation'),
        'activation only re-ranks: name at least one of vector, lexical, graph',
      )
      .optional(),
    track_access: z.boolean({ error: 'track_access must be a boolean' }).optional(),
    metadata_filters: metadataFiltersBody.optional(),
    created_after: isoTimestamp('created_after').optional(),
    created_before: isoTimestamp('created_before').optional(),
    kind: z.enum(['document', 'conversation'], { error: 'kind must be "document" or "conversation"' }).optional(),
    // Validity time, not record time: facts as they held then, whenever the service learned them.
    as_of: z
      .union([z.iso.datetime({ offset: true }), z.iso.date()], {
        error: 'as_of must be an ISO 8601 date (2025-03-01, read as UTC midnight) or timestamp with a time zone',
      })
      .transform((value) => new Date(value.length === 10 ? `${value}T00:00:00Z` : value))
      .refine((date) => !Number.isNaN(date.getTime()), 'as_of is not a real date')
      .optional(),
    include_history: z.boolean({ error: 'include_history must be a boolean' }).optional(),
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
      for (const field of modes)
        ctx.addIssue({ code: 'custom', path: [field], message: `${modes.join(', ')} are mutually exclusive; send only one` });
    }
    if (body.snapshot_ref !== undefined && body.snapshot_ref.get_url === undefined) {
      ctx.addIssue({ code: 'custom', path: ['snapshot_ref', 'get_url'], message: 'get_url is required to search a referenced snapshot' });
    }
    if (body.snapshot !== undefined || body.snapshot_ref !== undefined) {
      // Device mode answers a SnapshotSearchResult from the graph: collection-mode options do not apply.
      for (const field of ['limit', 'signals', 'track_access', 'metadata_filters', 'created_after', 'created_before', 'kind'] as const) {
        if (body[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `${field} is not accepted in device mode` });
      }
    }
    if (body.created_after && body.created_before && body.created_after >= body.created_before) {
      ctx.addIssue({ code: 'custom', path: ['created_before'], message: 'created_before must be later than created_after' });
    }
  });

export type SearchBody = z.infer<typeof searchBody>;
