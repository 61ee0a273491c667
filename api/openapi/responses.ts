/**
 * The response bodies of the OpenAPI export (the request bodies are the routes' own zod schemas):
 * written here, checked against real traffic by test/e2e/openapi.test.ts.
 */
import { z } from 'zod';

/** Every error code the API answers with, and its status (the `code` of the error body). */
export const ERROR_CODES: Record<string, number> = {
  validation_failed: 400,
  invalid_json: 400,
  request_aborted: 400,
  body_length_mismatch: 400,
  upload_size_mismatch: 400,
  unauthenticated: 401,
  invalid_upload_signature: 403,
  upload_url_expired: 403,
  snapshot_invalid: 400,
  snapshot_version_unsupported: 400,
  snapshot_signature_invalid: 400,
  snapshot_digest_mismatch: 400,
  snapshot_model_mismatch: 400,
  snapshot_tenant_mismatch: 400,
  snapshot_url_refused: 400,
  webhook_url_refused: 400,
  memory_not_found: 404,
  collection_not_found: 404,
  workflow_instance_not_found: 404,
  workflow_pattern_not_found: 404,
  upload_not_found: 404,
  webhook_not_found: 404,
  route_not_found: 404,
  collection_name_taken: 409,
  collection_limit_reached: 409,
  webhook_limit_reached: 409,
  memory_not_conversation: 409,
  collection_read_only: 409,
  upload_already_used: 409,
  upload_incomplete: 409,
  payload_too_large: 413,
  upload_too_large: 413,
  snapshot_too_large: 413,
  unsupported_media_type: 415,
  upload_collection_mismatch: 422,
  idempotency_key_reused: 422,
  index_budget_exceeded: 422,
  rate_limited: 429,
  internal_error: 500,
  upstream_failed: 502,
  upstream_redirect: 502,
  device_busy: 503,
  server_busy: 503,
  upstream_timeout: 504,
  orchestrator_unavailable: 503,
  request_timeout: 503,
  graph_read_backend_unavailable: 503,
  index_budget_exhausted: 503,
};

export const isoTime = z.string().meta({ format: 'date-time' });
export const nullableTime = isoTime.nullable();
export const metadata = z.record(z.string(), z.unknown());
export const memoryStatus = z.enum(['queued', 'reading', 'structuring', 'indexing', 'complete', 'failed']);

export const MemorySummary = z
  .looseObject({
    id: z.string(),
    collection_id: z.string().nullable(),
    collection_ids: z.array(z.string()),
    kind: z.enum(['document', 'conversation']),
    name: z.string().nullable(),
    metadata,
    occurred_at: nullableTime.meta({ description: 'When the content happened, as given at creation; null when not given' }),
    status: memoryStatus,
    status_message: z.string().nullable(),
    chunk_count: z.number().int().nullable(),
    embedding_model: z.string().nullable(),
    workflow_id: z.string().nullable(),
    created_at: isoTime,
    updated_at: nullableTime,
    completed_at: nullableTime,
  })
  .meta({ id: 'MemorySummary' });

export const MemoryRecord = MemorySummary.extend({
  files: z
    .array(
      z.looseObject({
        part: z.number().int(),
        filename: z.string(),
        media_type: z.string(),
        size: z.number().int(),
        sha256: z.string(),
        download_path: z.string(),
      }),
    )
    .optional(),
  chunks: z.array(z.string()),
  chunk_sources: z.array(z.unknown()),
}).meta({ id: 'MemoryRecord' });

export const MemoryAccepted = z
  .looseObject({
    id: z.string(),
    status: memoryStatus,
    collection_id: z.string().nullable(),
    kind: z.enum(['document', 'conversation']),
    workflow_id: z.string().nullable(),
    created_at: isoTime,
  })
  .meta({ id: 'MemoryAccepted' });

export const Collection = z
  .looseObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    metadata,
    created_at: isoTime,
  })
  .meta({ id: 'Collection' });

/** When a relationship held (docs/search.md, "Facts that change over time"). */
export const relationshipValidity = {
  predicate_class: z
    .string()
    .nullable()
    .meta({ description: 'Functional class of the predicate (employer, residence, …); null: multi-valued' }),
  status: z
    .enum(['current', 'superseded', 'ended', 'not_yet_valid'])
    .meta({ description: 'Standing at as_of (now when absent); only current ones are returned unless include_history is set' }),
  valid_from: isoTime.nullable().meta({ description: 'Start of the interval shown; null: unknown start' }),
  valid_to: isoTime.nullable().meta({ description: 'End of the interval shown; null: still holds' }),
  closed_by: z
    .strictObject({ reason: z.enum(['superseded', 'ended']), fact_id: z.string(), memory_id: z.string() })
    .nullable()
    .meta({ description: 'The fact that superseded or ended the interval shown, and the memory that says so' }),
};

export const MemoryResponse = z
  .looseObject({
    query: z.string(),
    hits: z.array(
      z.looseObject({
        memory_id: z.string(),
        chunk_index: z.number().int(),
        text: z.string(),
        score: z.number(),
        score_breakdown: z.record(z.string(), z.number()),
        raw_scores: z.record(z.string(), z.unknown()),
        source: z.unknown(),
        occurred_at: isoTime.meta({
          description: "The chunk's time: its message's timestamp, else the memory's occurred_at, else its creation",
        }),
        memory: z.looseObject({
          name: z.string().nullable(),
          kind: z.string(),
          metadata,
          collection_ids: z.array(z.string()),
          created_at: isoTime,
          occurred_at: nullableTime,
        }),
      }),
    ),
    entities: z.array(z.unknown()),
    relationships: z.array(
      z.looseObject({
        id: z.string(),
        subject_id: z.string(),
        object_id: z.string(),
        predicate: z.string(),
        description: z.string(),
        weight: z.number(),
        confidence: z.number(),
        found_by: z
          .enum(['query', 'hits'])
          .optional()
          .meta({ description: 'With the graph signal: named by the query, or only mentioned by the top hits (after those of the query)' }),
        ...relationshipValidity,
      }),
    ),
    confidence: z.unknown(),
    query_stats: z.unknown(),
    total_hits: z.number().int(),
    timings_ms: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'MemoryResponse', description: 'Collection search result: ranked chunks with a per-signal score breakdown.' });

export const ErrorBody = z
  .strictObject({
    error: z.strictObject({
      status: z.number().int(),
      code: z.string().meta({ description: `Stable machine-readable code: ${Object.keys(ERROR_CODES).join(', ')}` }),
      message: z.string(),
      details: z.array(z.strictObject({ field: z.string(), issue: z.string() })).optional(),
      request_id: z.string(),
    }),
  })
  .meta({ id: 'Error' });

// ---- device memory (docs/device-memory.md; the snapshot is opaque to clients) -------------------
export const Snapshot = z
  .looseObject({
    format: z.string(),
    format_version: z.string(),
    graph_id: z.string(),
    embedding_model: z.string(),
    created_at: isoTime,
    counts: z.record(z.string(), z.number().int()),
    digest: z.string(),
    body: z.record(z.string(), z.unknown()),
    signature: z.string(),
  })
  .meta({ id: 'Snapshot', description: 'A signed graph snapshot; treat it as opaque (format: docs/device-memory.md)' });

export const SnapshotReceipt = z
  .strictObject({
    destination: z.literal('signed_url'),
    collection_id: z.string(),
    bytes: z.number().int(),
    digest: z.string(),
    format_version: z.string(),
    graph_id: z.string(),
    counts: z.record(z.string(), z.number().int()),
    created_at: isoTime,
  })
  .meta({ id: 'SnapshotReceipt', description: 'What a PUT of a snapshot to a signed URL answers' });

export const SnapshotSearchResult = z
  .strictObject({
    entities: z.array(
      z.strictObject({ id: z.string(), name: z.string(), category: z.string(), description: z.string(), score: z.number() }),
    ),
    relationships: z.array(
      z.strictObject({
        id: z.string(),
        subject_id: z.string(),
        object_id: z.string(),
        predicate: z.string(),
        description: z.string(),
        weight: z.number(),
        ...relationshipValidity,
      }),
    ),
  })
  .meta({ id: 'SnapshotSearchResult' });

export const results = <T extends z.ZodType>(schema: T) => z.strictObject({ results: schema });

export const Webhook = z
  .strictObject({
    id: z.string(),
    url: z.string(),
    event_types: z.array(z.string()),
    collection_ids: z.array(z.string()),
    description: z.string().nullable(),
    status: z.enum(['active', 'disabled']),
    disabled_reason: z.enum(['gone', 'failing', 'user']).nullable(),
    disabled_at: nullableTime,
    cursor: z.number().int().meta({ description: 'The seq of the last event this subscription is done with' }),
    failed_attempts: z.number().int().meta({ description: 'Failed attempts at the event held back after the cursor' }),
    failing_since: nullableTime,
    next_attempt_at: nullableTime,
    last_delivered_at: nullableTime,
    previous_secret_expires_at: nullableTime.meta({ description: 'During a rotation: when the previous secret stops signing' }),
    created_at: isoTime,
    updated_at: isoTime,
  })
  .meta({ id: 'Webhook' });

export const WebhookAttempt = z
  .strictObject({
    id: z.string(),
    event_id: z.string(),
    seq: z.number().int(),
    attempt: z.number().int(),
    status_code: z.number().int().nullable().meta({ description: 'null: no HTTP answer (refused, DNS, connect, timeout)' }),
    outcome: z.enum(['delivered', 'retry', 'gone']),
    error: z.string().nullable(),
    duration_ms: z.number().int(),
    at: isoTime,
  })
  .meta({ id: 'WebhookAttempt' });

export const listEnvelope = <T extends z.ZodType>(schema: T) =>
  z.strictObject({ results: z.array(schema), total_entries: z.number().int() });
