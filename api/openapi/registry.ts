/**
 * The one registry of public HTTP routes for the OpenAPI export. Request schemas are the very zod
 * schemas the routes validate with; response schemas are written here and checked against real
 * responses by test/e2e/openapi.test.ts, and api/openapi/routes.unit.test.ts fails when a route
 * the Koa routers register is neither described here nor listed in SCHEMA_EXCLUDED (or the reverse).
 *
 * Adding a route: append one entry to `describeRoutes` (or a pattern to SCHEMA_EXCLUDED when the
 * spec keeps it out of the export), then `npm run openapi`.
 */
import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { collectionIdParams, collectionNameParams, createCollectionBody, listCollectionsQuery } from '../routes/collections/schema.js';
import {
  appendMessagesBody,
  contentQuery,
  createMemoryBody,
  deleteManyBody,
  listMemoriesQuery,
  memoryIdParams,
  updateMemoryBody,
} from '../routes/memories/schema.js';
import { exportBody, importBody } from '../routes/device-memory/schema.js';
import { searchBody } from '../routes/search/schema.js';
import { createUploadBody, signedUrlQuery, uploadIdParams } from '../routes/uploads/schema.js';
import {
  createWebhookBody,
  listAttemptsQuery,
  listWebhooksQuery,
  replayWebhookBody,
  updateWebhookBody,
  webhookIdParams,
} from '../routes/webhooks/schema.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type Limits = Pick<Config, 'MAX_TEXT_CHARS' | 'MAX_CHUNKS_PER_MEMORY' | 'MAX_CONTENT_PARTS'>;

export interface RouteDoc {
  method: HttpMethod;
  /** Koa-style path, e.g. /v1/memories/:memory_id. */
  path: string;
  operationId: string;
  tag: 'collections' | 'memories' | 'search' | 'device-memory' | 'uploads' | 'events' | 'webhooks' | 'operations';
  summary: string;
  description?: string;
  /** bearer: API key; none: probes; signed_url: the query signature is the credential. */
  auth: 'bearer' | 'none' | 'signed_url';
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** A raw (non-JSON) request body, e.g. the presigned PUT. */
  rawBody?: string;
  idempotencyKey?: boolean;
  success: { status: number; description: string; schema?: z.ZodType; contentType?: string; headers?: Record<string, string> };
  /** Other success answers (e.g. device mode of POST /v1/memories answers 200 with a snapshot). */
  alsoSuccess?: { status: number; description: string; schema: z.ZodType }[];
  /** Error statuses this route answers with besides the ones every authenticated route has. */
  errors: number[];
}

/** Routes the spec keeps out of the generated export ("Versioning" 5), and the export itself. */
export const SCHEMA_EXCLUDED: { pattern: RegExp; reason: string }[] = [
  { pattern: /^\/v1\/workflows(\/|$)/, reason: 'workflow reads (spec Versioning 5)' },
  { pattern: /^\/v1\/workflow-patterns(\/|$)/, reason: 'workflow reads (spec Versioning 5)' },
  { pattern: /^\/v1\/ws\/memory-events$/, reason: 'the WebSocket event endpoint (spec Versioning 5)' },
  { pattern: /^\/v1\/memory-events\/signing-keys$/, reason: 'the signing-keys endpoint (spec Versioning 5)' },
  { pattern: /^\/metrics$/, reason: 'the operator metrics endpoint (docs/operations.md)' },
  { pattern: /^\/mcp$/, reason: 'the MCP endpoint: JSON-RPC whose tools MCP lists itself (docs/mcp.md)' },
  { pattern: /^\/v1\/openapi\.json$|^\/v1\/events\.schema\.json$|^\/docs(\/|$)/, reason: 'the schema export and the docs page themselves' },
];

export const isExcluded = (path: string): boolean => SCHEMA_EXCLUDED.some(({ pattern }) => pattern.test(path));

/** Every error code the API answers with, and its status (the `code` of the error body). */
export const ERROR_CODES: Record<string, number> = {
  validation_failed: 400,
  invalid_json: 400,
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

// ---- response bodies (checked against real traffic in test/e2e/openapi.test.ts) ----------------
const isoTime = z.string().meta({ format: 'date-time' });
const nullableTime = isoTime.nullable();
const metadata = z.record(z.string(), z.unknown());
const memoryStatus = z.enum(['queued', 'reading', 'structuring', 'indexing', 'complete', 'failed']);

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
const relationshipValidity = {
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

const results = <T extends z.ZodType>(schema: T) => z.strictObject({ results: schema });

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

const WebhookAttempt = z
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

const listEnvelope = <T extends z.ZodType>(schema: T) => z.strictObject({ results: z.array(schema), total_entries: z.number().int() });

/** The public routes, with the request schemas built from the running limits. */
export function describeRoutes(limits: Limits): RouteDoc[] {
  return [
    {
      method: 'get',
      path: '/v1/health',
      operationId: 'health',
      tag: 'operations',
      summary: 'Liveness probe',
      auth: 'none',
      success: {
        status: 200,
        description: 'The process is up; an API process also reports its in-process search indexes against their memory budget',
        schema: results(
          z.strictObject({
            status: z.literal('ok'),
            index: z
              .strictObject({
                bytes: z.number().int().meta({ description: 'Estimated bytes of the loaded index partitions' }),
                max_bytes: z.number().int().nullable().meta({ description: 'SEARCH_INDEX_MAX_BYTES; null when unbounded' }),
                collections: z.number().int().meta({ description: 'Collections loaded in this process' }),
                evictions: z.number().int().meta({ description: 'Collections evicted to stay within the budget since start' }),
                loads: z.number().int().meta({ description: 'Collection loads from the database since start' }),
                entries: z.strictObject({ vector: z.number().int(), lexical: z.number().int(), graph: z.number().int() }),
              })
              .optional(),
          }),
        ),
      },
      errors: [],
    },
    {
      method: 'get',
      path: '/v1/ready',
      operationId: 'ready',
      tag: 'operations',
      summary: 'Readiness probe (MongoDB and Temporal reachable); 503 with the same body when not ready',
      auth: 'none',
      success: {
        status: 200,
        description: 'Ready',
        schema: results(z.strictObject({ status: z.enum(['ready', 'not_ready']), checks: z.record(z.string(), z.boolean()) })),
      },
      errors: [],
    },
    {
      method: 'post',
      path: '/v1/collections',
      operationId: 'createCollection',
      tag: 'collections',
      summary: 'Create a collection',
      auth: 'bearer',
      body: createCollectionBody,
      success: { status: 201, description: 'Created', schema: results(Collection) },
      errors: [400, 409],
    },
    {
      method: 'get',
      path: '/v1/collections',
      operationId: 'listCollections',
      tag: 'collections',
      summary: 'List collections',
      auth: 'bearer',
      query: listCollectionsQuery,
      success: { status: 200, description: 'List envelope', schema: listEnvelope(Collection) },
      errors: [400],
    },
    {
      method: 'get',
      path: '/v1/collections/by-name/:name',
      operationId: 'getCollectionByName',
      tag: 'collections',
      summary: 'Retrieve a collection by name',
      auth: 'bearer',
      params: collectionNameParams,
      success: { status: 200, description: 'The collection', schema: results(Collection) },
      errors: [400, 404],
    },
    {
      method: 'get',
      path: '/v1/collections/:collection_id',
      operationId: 'getCollection',
      tag: 'collections',
      summary: 'Retrieve a collection',
      auth: 'bearer',
      params: collectionIdParams,
      success: { status: 200, description: 'The collection', schema: results(Collection) },
      errors: [400, 404],
    },
    {
      method: 'post',
      path: '/v1/memories',
      operationId: 'createMemory',
      tag: 'memories',
      summary: 'Create a memory (202: accepted, ingestion runs as a workflow)',
      description:
        'Accepted memories are processed asynchronously; follow `ingestion_progress` events or poll GET /v1/memories/{memory_id}. ' +
        'An Idempotency-Key replays the first answer (header Idempotent-Replayed: true). Inline file parts above the inline limit are a 413. ' +
        'In device mode an Idempotency-Key names the episode: a retry whose episode the snapshot already holds adds nothing (Idempotent-Replayed: true).',
      auth: 'bearer',
      idempotencyKey: true,
      body: createMemoryBody(limits),
      success: {
        status: 202,
        description: 'Accepted; ingestion continues in the background',
        schema: results(MemoryAccepted),
        headers: { Location: 'The memory URL', 'Idempotent-Replayed': '"true" when an Idempotency-Key replayed an earlier answer' },
      },
      alsoSuccess: [
        {
          status: 200,
          description: 'Device mode (snapshot or snapshot_ref): the updated snapshot, or the receipt of its PUT to snapshot_ref.put_url',
          schema: results(z.union([z.looseObject({ snapshot: Snapshot }), SnapshotReceipt])),
        },
      ],
      errors: [400, 404, 409, 413, 415, 422, 502, 503, 504],
    },
    {
      method: 'get',
      path: '/v1/memories',
      operationId: 'listMemories',
      tag: 'memories',
      summary: 'List memories',
      auth: 'bearer',
      query: listMemoriesQuery,
      success: { status: 200, description: 'List envelope', schema: listEnvelope(MemorySummary) },
      errors: [400, 404],
    },
    {
      method: 'post',
      path: '/v1/memories/search',
      operationId: 'searchMemories',
      tag: 'search',
      summary: 'Search memories (collection mode answers a MemoryResponse, device mode a SnapshotSearchResult)',
      auth: 'bearer',
      body: searchBody,
      success: {
        status: 200,
        description: 'MemoryResponse or SnapshotSearchResult',
        schema: results(z.union([MemoryResponse, SnapshotSearchResult])),
      },
      errors: [400, 404, 413, 422, 502, 503, 504],
    },
    {
      method: 'post',
      path: '/v1/memories/delete',
      operationId: 'deleteMemories',
      tag: 'memories',
      summary: 'Delete many memories permanently',
      auth: 'bearer',
      body: deleteManyBody,
      success: {
        status: 200,
        description: 'Which ids were deleted and which were not found',
        schema: results(z.strictObject({ deleted: z.array(z.string()), not_found: z.array(z.string()), deleted_count: z.number().int() })),
      },
      errors: [400, 409],
    },
    {
      method: 'get',
      path: '/v1/memories/:memory_id',
      operationId: 'getMemory',
      tag: 'memories',
      summary: 'Retrieve a memory with its chunks',
      auth: 'bearer',
      params: memoryIdParams,
      success: { status: 200, description: 'The memory record', schema: results(MemoryRecord) },
      errors: [400, 404],
    },
    {
      method: 'get',
      path: '/v1/memories/:memory_id/content',
      operationId: 'getMemoryContent',
      tag: 'memories',
      summary: 'Download an original file of a memory',
      auth: 'bearer',
      params: memoryIdParams,
      query: contentQuery,
      success: { status: 200, description: 'The file bytes, with its media type', contentType: 'application/octet-stream' },
      errors: [400, 404],
    },
    {
      method: 'patch',
      path: '/v1/memories/:memory_id',
      operationId: 'updateMemory',
      tag: 'memories',
      summary: 'Update name, metadata (merge_metadata) or collection associations',
      auth: 'bearer',
      params: memoryIdParams,
      body: updateMemoryBody,
      success: { status: 200, description: 'The updated memory', schema: results(MemorySummary) },
      errors: [400, 404, 409],
    },
    {
      method: 'post',
      path: '/v1/memories/:memory_id/messages',
      operationId: 'appendMessages',
      tag: 'memories',
      summary: 'Append messages to a conversation memory (202: re-ingested in the background)',
      auth: 'bearer',
      params: memoryIdParams,
      body: appendMessagesBody(limits),
      success: {
        status: 202,
        description: 'Accepted',
        schema: results(MemorySummary.extend({ appended_messages: z.number().int() })),
        headers: { Location: 'The memory URL' },
      },
      errors: [400, 404, 409, 503],
    },
    {
      method: 'delete',
      path: '/v1/memories/:memory_id',
      operationId: 'deleteMemory',
      tag: 'memories',
      summary: 'Delete one memory permanently',
      auth: 'bearer',
      params: memoryIdParams,
      success: {
        status: 200,
        description: 'Deleted',
        schema: results(z.strictObject({ id: z.string(), deleted: z.literal(true) })),
      },
      errors: [400, 404, 409],
    },
    {
      method: 'post',
      path: '/v1/device-memory/snapshot/export',
      operationId: 'exportSnapshot',
      tag: 'device-memory',
      summary: "Export a collection's graph as a signed snapshot (inline, or PUT to a signed URL)",
      auth: 'bearer',
      body: exportBody,
      success: {
        status: 200,
        description: 'The snapshot, or the receipt of its PUT to destination.put_url',
        schema: results(z.union([Snapshot, SnapshotReceipt])),
      },
      errors: [400, 404, 413, 502, 503, 504],
    },
    {
      method: 'post',
      path: '/v1/device-memory/snapshot/import',
      operationId: 'importSnapshot',
      tag: 'device-memory',
      summary: 'Import a snapshot into an ephemeral, read-only collection that expires',
      auth: 'bearer',
      body: importBody,
      success: {
        status: 201,
        description: 'The ephemeral collection',
        schema: results(z.strictObject({ ephemeral_collection_id: z.string(), expires_at: isoTime })),
        headers: { Location: 'The collection URL' },
      },
      errors: [400, 404, 413, 502, 503, 504],
    },
    {
      method: 'get',
      path: '/v1/device-memory/signing-keys',
      operationId: 'snapshotSigningKeys',
      tag: 'device-memory',
      summary: 'The public keys (JWKS) that verify snapshot signatures, retired ones included',
      auth: 'bearer',
      success: { status: 200, description: 'JWKS', schema: z.looseObject({ keys: z.array(z.record(z.string(), z.unknown())) }) },
      errors: [],
    },
    {
      method: 'post',
      path: '/v1/uploads',
      operationId: 'createUpload',
      tag: 'uploads',
      summary: 'Start a presigned upload for a file above the inline limit',
      auth: 'bearer',
      body: createUploadBody,
      success: {
        status: 201,
        description: 'PUT the bytes to upload_url, then create the memory with content_parts: [{type: "document", upload_id}]',
        schema: results(
          z.strictObject({
            upload_id: z.string(),
            upload_url: z.string(),
            method: z.literal('PUT'),
            headers: z.record(z.string(), z.string()),
            expires_at: isoTime,
            size: z.number().int(),
          }),
        ),
      },
      errors: [400, 404, 413, 409],
    },
    {
      method: 'put',
      path: '/v1/uploads/:upload_id',
      operationId: 'putUpload',
      tag: 'uploads',
      summary: 'Upload the bytes to a presigned URL (no API key: the signature is the credential)',
      auth: 'signed_url',
      params: uploadIdParams,
      query: signedUrlQuery,
      rawBody: 'application/octet-stream',
      success: {
        status: 200,
        description: 'Stored',
        schema: results(
          z.strictObject({ upload_id: z.string(), size: z.number().int(), sha256: z.string(), status: z.literal('uploaded') }),
        ),
      },
      errors: [400, 403, 404, 409, 413, 429],
    },
    {
      method: 'post',
      path: '/v1/users/ws-ticket',
      operationId: 'createWsTicket',
      tag: 'events',
      summary: 'Mint a single-use ticket for the live-event WebSocket',
      auth: 'bearer',
      success: {
        status: 201,
        description: 'The ticket and the WebSocket URL to connect to',
        schema: results(z.strictObject({ ticket: z.string(), expires_at: isoTime, ws_url: z.string() })),
      },
      errors: [],
    },
    {
      method: 'post',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      tag: 'webhooks',
      summary: 'Create a webhook subscription; the answer carries its whsec_ secret, shown only this once',
      auth: 'bearer',
      body: createWebhookBody,
      success: {
        status: 201,
        description: 'Created; delivery starts with the events appended from now on',
        schema: results(Webhook.extend({ secret: z.string().meta({ description: 'whsec_…: verifies the v1 signatures; shown once' }) })),
        headers: { Location: 'The subscription URL' },
      },
      errors: [400, 404, 409],
    },
    {
      method: 'get',
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      tag: 'webhooks',
      summary: 'List webhook subscriptions',
      auth: 'bearer',
      query: listWebhooksQuery,
      success: { status: 200, description: 'List envelope', schema: listEnvelope(Webhook) },
      errors: [400],
    },
    {
      method: 'get',
      path: '/v1/webhooks/:webhook_id',
      operationId: 'getWebhook',
      tag: 'webhooks',
      summary: 'Retrieve a webhook subscription',
      auth: 'bearer',
      params: webhookIdParams,
      success: { status: 200, description: 'The subscription', schema: results(Webhook) },
      errors: [400, 404],
    },
    {
      method: 'patch',
      path: '/v1/webhooks/:webhook_id',
      operationId: 'updateWebhook',
      tag: 'webhooks',
      summary: 'Change a subscription (URL, filters, description), or disable / re-enable it',
      auth: 'bearer',
      params: webhookIdParams,
      body: updateWebhookBody,
      success: { status: 200, description: 'The updated subscription', schema: results(Webhook) },
      errors: [400, 404],
    },
    {
      method: 'delete',
      path: '/v1/webhooks/:webhook_id',
      operationId: 'deleteWebhook',
      tag: 'webhooks',
      summary: 'Delete a subscription and its attempt history',
      auth: 'bearer',
      params: webhookIdParams,
      success: { status: 200, description: 'Deleted', schema: results(z.strictObject({ id: z.string(), deleted: z.literal(true) })) },
      errors: [400, 404],
    },
    {
      method: 'post',
      path: '/v1/webhooks/:webhook_id/rotate-secret',
      operationId: 'rotateWebhookSecret',
      tag: 'webhooks',
      summary: 'Rotate the secret: the new one is shown once; the previous one still signs until previous_secret_expires_at',
      auth: 'bearer',
      params: webhookIdParams,
      success: {
        status: 200,
        description: 'The new secret',
        schema: results(z.strictObject({ id: z.string(), secret: z.string(), previous_secret_expires_at: isoTime })),
      },
      errors: [400, 404],
    },
    {
      method: 'post',
      path: '/v1/webhooks/:webhook_id/replay',
      operationId: 'replayWebhook',
      tag: 'webhooks',
      summary: 'Send the subscription’s events again, in order, from a seq or a time (as far as the event log retains them)',
      auth: 'bearer',
      params: webhookIdParams,
      body: replayWebhookBody,
      success: {
        status: 202,
        description: 'The cursor was moved; delivery continues from it in the background',
        schema: results(z.strictObject({ id: z.string(), cursor: z.number().int() })),
      },
      errors: [400, 404],
    },
    {
      method: 'get',
      path: '/v1/webhooks/:webhook_id/attempts',
      operationId: 'listWebhookAttempts',
      tag: 'webhooks',
      summary: 'Recent delivery attempts, newest first, with their status codes',
      auth: 'bearer',
      params: webhookIdParams,
      query: listAttemptsQuery,
      success: { status: 200, description: 'Attempts', schema: results(z.array(WebhookAttempt)) },
      errors: [400, 404],
    },
  ];
}
