import { z } from 'zod';
import type { Config } from '../../../config/index.js';
import { MAX_OFFSET } from '../../../core/limits.js';
import { METADATA_OPERATORS, type MetadataCondition, type MetadataOperator } from '../../../core/memory-filter.js';
import { intParam, isoTimestamp, listParam, metadataObject, uuid } from '../common-schema.js';
import { snapshotObject, snapshotRef } from '../device-memory/schema.js';

type Limits = Pick<Config, 'MAX_TEXT_CHARS' | 'MAX_CHUNKS_PER_MEMORY' | 'MAX_CONTENT_PARTS'>;

/**
 * A file: inline as base64 `data` (checked and decoded by the route, whose size limit is a 413),
 * or an `upload_id` from the presigned upload flow.
 */
const contentPart = z
  .strictObject({
    type: z.literal('document', { error: 'type must be "document"' }),
    data: z.string({ error: 'data must be a base64 string' }).min(1, 'data must not be empty').optional(),
    upload_id: uuid.optional(),
    media_type: z
      .string({ error: 'media_type must be a string' })
      .regex(/^[\w.+-]+\/[\w.+-]+(;.*)?$/, 'media_type must be a MIME type such as application/pdf')
      .max(255)
      .optional(),
    filename: z.string({ error: 'filename must be a string' }).trim().min(1, 'filename must not be empty').max(255).optional(),
  })
  .superRefine((part, ctx) => {
    if ((part.data === undefined) === (part.upload_id === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['data'], message: 'send exactly one of data (base64) or upload_id' });
    }
  });

const nonBlank = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string` })
    .max(max, `${field} must be at most ${max} characters`)
    .refine((value) => value.trim().length > 0, `${field} must not be empty`);

const messageSchema = (limits: Limits) =>
  z.strictObject({
    role: z.enum(['user', 'assistant', 'system', 'tool'], { error: 'role must be one of user, assistant, system, tool' }),
    content: nonBlank('content', limits.MAX_TEXT_CHARS),
    /** When the message was said (optional, additive): a turn's time for retrieval and dates. */
    timestamp: isoTimestamp('timestamp').optional(),
  });

export function createMemoryBody(limits: Limits) {
  const message = messageSchema(limits);
  return z
    .strictObject({
      collection_id: uuid.optional(),
      snapshot: snapshotObject.optional(),
      snapshot_ref: snapshotRef.optional(),
      kind: z.enum(['document', 'conversation'], { error: 'kind must be "document" or "conversation"' }).optional(),
      name: z.string().trim().min(1, 'name must not be empty').max(256, 'name must be at most 256 characters').nullish(),
      raw_text: nonBlank('raw_text', limits.MAX_TEXT_CHARS).optional(),
      chunks: z
        .array(nonBlank('chunk', limits.MAX_TEXT_CHARS), { error: 'chunks must be an array of strings' })
        .min(1, 'chunks must not be empty')
        .max(limits.MAX_CHUNKS_PER_MEMORY, `chunks must have at most ${limits.MAX_CHUNKS_PER_MEMORY} items`)
        .optional(),
      messages: z
        .array(message, { error: 'messages must be an array of {role, content, timestamp?}' })
        .min(1, 'messages must not be empty')
        .max(limits.MAX_CHUNKS_PER_MEMORY, `messages must have at most ${limits.MAX_CHUNKS_PER_MEMORY} items`)
        .optional(),
      content_parts: z
        .array(contentPart, { error: 'content_parts must be an array of {type, data, media_type, filename}' })
        .min(1, 'content_parts must not be empty')
        .max(limits.MAX_CONTENT_PARTS, `content_parts must have at most ${limits.MAX_CONTENT_PARTS} items`)
        .optional(),
      metadata: metadataObject.optional(),
      /** When the content happened (optional, additive); messages without a timestamp take it. */
      occurred_at: isoTimestamp('occurred_at').optional(),
    })
    .superRefine((body, ctx) => {
      const modes = (['collection_id', 'snapshot', 'snapshot_ref'] as const).filter((field) => body[field] !== undefined);
      if (modes.length > 1) {
        for (const field of modes) {
          ctx.addIssue({ code: 'custom', path: [field], message: `${modes.join(', ')} are mutually exclusive; send only one` });
        }
      }
      if (modes.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['collection_id'],
          message: 'collection_id is required (or snapshot / snapshot_ref in device mode)',
        });
      }
      const contents = (['raw_text', 'chunks', 'messages', 'content_parts'] as const).filter((field) => body[field] !== undefined);
      if (body.snapshot !== undefined || body.snapshot_ref !== undefined) {
        // Device mode: raw_text and metadata only (the spec's device-mode row).
        if (body.raw_text === undefined)
          ctx.addIssue({ code: 'custom', path: ['raw_text'], message: 'raw_text is required in device mode' });
        for (const field of ['chunks', 'messages', 'content_parts', 'kind', 'name', 'occurred_at'] as const) {
          if (body[field] !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: [field],
              message: `${field} is not accepted in device mode (send raw_text and optional metadata)`,
            });
          }
        }
        return;
      }
      if (contents.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['raw_text'],
          message: 'content is missing: send one of raw_text, chunks, messages, content_parts',
        });
      } else if (contents.length > 1) {
        ctx.addIssue({ code: 'custom', path: [contents[1]!], message: `send only one of ${contents.join(', ')}` });
      }
      if (body.kind === 'conversation' && body.messages === undefined && contents.length === 1) {
        ctx.addIssue({ code: 'custom', path: ['kind'], message: 'kind "conversation" requires messages' });
      }
      if (body.kind === 'document' && body.messages !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['kind'], message: 'messages are a conversation: use kind "conversation" or omit kind' });
      }
      const totalChars =
        (body.raw_text?.length ?? 0) +
        (body.chunks ?? []).reduce((sum, chunk) => sum + chunk.length, 0) +
        (body.messages ?? []).reduce((sum, item) => sum + item.content.length, 0);
      if (totalChars > limits.MAX_TEXT_CHARS) {
        ctx.addIssue({
          code: 'custom',
          path: [contents[0] ?? 'raw_text'],
          message: `content must be at most ${limits.MAX_TEXT_CHARS} characters in total`,
        });
      }
    });
}

export type CreateMemoryBody = z.infer<ReturnType<typeof createMemoryBody>>;

export const memoryIdParams = z.object({ memory_id: uuid });

export const contentQuery = z.object({ part: intParam('part', 0, 99, 0) });

export const deleteManyBody = z
  .array(uuid, { error: 'body must be a JSON array of memory ids' })
  .min(1, 'at least one memory id is required')
  .max(1000, 'at most 1000 memory ids per request');

const FILTER_KEY = /^metadata\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const WIRE_OPERATORS = METADATA_OPERATORS.map((operator) => `$${operator}`);
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const isOperator = (operator: string): operator is MetadataOperator => (METADATA_OPERATORS as readonly string[]).includes(operator);

/** One wire operator and its value as a condition, or what is wrong with it. */
function conditionOf(path: string[], wireOperator: string, value: unknown): MetadataCondition | string {
  const operator = wireOperator.startsWith('$') ? wireOperator.slice(1) : '';
  if (!isOperator(operator)) return `unknown operator ${wireOperator}; use one of ${WIRE_OPERATORS.join(', ')}`;
  if (operator === 'exists') {
    return typeof value === 'boolean' ? { path, op: operator, value } : `${wireOperator} takes a boolean`;
  }
  if (operator === 'in' || operator === 'nin') {
    const values = z.array(scalar).max(1000).safeParse(value);
    return values.success ? { path, op: operator, values: values.data } : `${wireOperator} takes an array of scalars`;
  }
  const single = scalar.safeParse(value);
  return single.success ? { path, op: operator, value: single.data } : `${wireOperator} takes a string, number, boolean or null`;
}

/**
 * Checks a parsed `metadata_filters` object and reads it into the service's filter conditions:
 * keys are `metadata.<field>`, values an operator object or a bare scalar meaning `$eq`. Shared by
 * list (a JSON string in the query) and search (an object in the body).
 */
export function parseMetadataFilters(parsed: unknown, ctx: z.RefinementCtx, field = 'metadata_filters'): MetadataCondition[] {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    ctx.addIssue({ code: 'custom', message: `${field} must be a JSON object` });
    return [];
  }
  const conditions: MetadataCondition[] = [];
  for (const [key, condition] of Object.entries(parsed)) {
    if (!FILTER_KEY.test(key)) {
      ctx.addIssue({ code: 'custom', message: `${field} key "${key}" must look like metadata.<field>` });
      continue;
    }
    const path = key.split('.').slice(1);
    const operators: [string, unknown][] =
      condition !== null && typeof condition === 'object' && !Array.isArray(condition) ? Object.entries(condition) : [['$eq', condition]];
    if (operators.length === 0) ctx.addIssue({ code: 'custom', message: `${field}.${key}: operator object must not be empty` });
    for (const [operator, value] of operators) {
      const parsedCondition = conditionOf(path, operator, value);
      if (typeof parsedCondition === 'string') ctx.addIssue({ code: 'custom', message: `${field}.${key}: ${parsedCondition}` });
      else conditions.push(parsedCondition);
    }
  }
  return conditions;
}

/** `metadata_filters` as a query parameter: a JSON object in a string. */
export const metadataFilters = z
  .string()
  .optional()
  .transform((raw, ctx) => (raw === undefined || raw.trim() === '' ? [] : metadataFiltersFromJson(raw, ctx)));

/** `metadata_filters` in a JSON body: the object itself (a JSON string is accepted too). */
export const metadataFiltersBody = z.unknown().transform((raw, ctx) => {
  if (raw === undefined || raw === null) return [];
  return typeof raw === 'string' ? metadataFiltersFromJson(raw, ctx) : parseMetadataFilters(raw, ctx);
});

/** Filters sent as JSON text; text that is not JSON is an issue naming the field. */
function metadataFiltersFromJson(raw: string, ctx: z.RefinementCtx): MetadataCondition[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `metadata_filters is not valid JSON: ${(error as Error).message}` });
    return z.NEVER;
  }
  return parseMetadataFilters(parsed, ctx);
}

export const listMemoriesQuery = z.object({
  collection_ids: listParam(uuid).pipe(z.array(uuid).max(100, 'at most 100 collection_ids')),
  limit: intParam('limit', 1, 1000, 100),
  offset: intParam('offset', 0, MAX_OFFSET, 0),
  metadata_filters: metadataFilters,
});

/** PATCH /v1/memories/{id}: only the fields given change; chunks are read-only. */
export const updateMemoryBody = z
  .strictObject({
    name: z
      .string({ error: 'name must be a string or null' })
      .trim()
      .min(1, 'name must not be empty')
      .max(256, 'name must be at most 256 characters')
      .nullable()
      .optional(),
    metadata: metadataObject.optional(),
    merge_metadata: z.boolean({ error: 'merge_metadata must be a boolean' }).optional(),
    collection_ids: z
      .array(uuid, { error: 'collection_ids must be an array of UUIDs' })
      .min(1, 'a memory must belong to at least one collection')
      .max(100, 'at most 100 collection_ids')
      .optional(),
  })
  .superRefine((body, ctx) => {
    if (body.name === undefined && body.metadata === undefined && body.collection_ids === undefined) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'nothing to update: send name, metadata or collection_ids' });
    }
    if (body.merge_metadata !== undefined && body.metadata === undefined) {
      ctx.addIssue({ code: 'custom', path: ['merge_metadata'], message: 'merge_metadata needs metadata' });
    }
  });

/** POST /v1/memories/{id}/messages: messages appended to a conversation memory. */
export function appendMessagesBody(limits: Limits) {
  return z.strictObject({
    collection_id: uuid,
    messages: z
      .array(messageSchema(limits), { error: 'messages must be an array of {role, content, timestamp?}' })
      .min(1, 'messages must not be empty')
      .max(limits.MAX_CHUNKS_PER_MEMORY, `messages must have at most ${limits.MAX_CHUNKS_PER_MEMORY} items`)
      .superRefine((messages, ctx) => {
        const total = messages.reduce((sum, message) => sum + message.content.length, 0);
        if (total > limits.MAX_TEXT_CHARS)
          ctx.addIssue({ code: 'custom', message: `messages must be at most ${limits.MAX_TEXT_CHARS} characters in total` });
      }),
  });
}
