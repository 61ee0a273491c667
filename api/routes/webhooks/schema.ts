import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../../../core/webhook-model.js';
import { intParam, pagination, uuid } from '../common-schema.js';

const url = z
  .string({ error: 'url is required and must be a string' })
  .max(2048, 'url must be at most 2048 characters')
  .refine((value) => URL.canParse(value), 'url must be an absolute https URL');

const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES, { error: `event types are ${WEBHOOK_EVENT_TYPES.join(', ')}` }), {
    error: 'event_types must be an array of event types',
  })
  .max(WEBHOOK_EVENT_TYPES.length * 2, 'event_types is too long')
  .meta({ description: 'Event types to deliver; empty or absent: every type, including ones added later' });

const collectionIds = z
  .array(uuid, { error: 'collection_ids must be an array of collection ids' })
  .max(100, 'collection_ids may name at most 100 collections')
  .meta({ description: 'Only events of these collections; empty or absent: every collection of the tenant' });

const description = z.string().max(500, 'description must be at most 500 characters').nullish();

export const createWebhookBody = z.strictObject({
  url: url.meta({ description: 'The https endpoint; checked against the outbound SSRF policy now and at every delivery' }),
  event_types: eventTypes.optional(),
  collection_ids: collectionIds.optional(),
  description,
});

export const updateWebhookBody = z
  .strictObject({
    url: url.optional(),
    event_types: eventTypes.optional(),
    collection_ids: collectionIds.optional(),
    description,
    enabled: z
      .boolean({ error: 'enabled must be a boolean' })
      .optional()
      .meta({ description: 'false: stop delivering; true: resume a disabled subscription from its cursor' }),
  })
  .refine((body) => Object.keys(body).length > 0, 'give at least one field to change');

export const replayWebhookBody = z
  .strictObject({
    from_seq: z
      .number({ error: 'from_seq must be an integer' })
      .int('from_seq must be an integer')
      .min(1, 'from_seq must be at least 1')
      .optional()
      .meta({ description: 'Send again every event of the subscription with seq ≥ this' }),
    from_time: z.iso
      .datetime({ offset: true, error: 'from_time must be an ISO 8601 date-time' })
      .optional()
      .meta({ description: 'Send again every event of the subscription appended at or after this time' }),
  })
  .refine((body) => (body.from_seq === undefined) !== (body.from_time === undefined), 'give exactly one of from_seq and from_time');

export const webhookIdParams = z.object({ webhook_id: uuid });
export const listWebhooksQuery = z.object(pagination(100, 50));
export const listAttemptsQuery = z.object({ limit: intParam('limit', 1, 200, 50) });
