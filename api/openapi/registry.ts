/**
 * The one registry of public HTTP routes for the OpenAPI export. Request schemas are the very zod
 * schemas the routes validate with; response schemas and error codes are api/openapi/responses.ts,
 * checked against real responses by test/e2e/openapi.test.ts; and api/openapi/routes.unit.test.ts fails when a route
 * the Koa routers register is neither described here nor listed in SCHEMA_EXCLUDED (or the reverse).
 *
 * Adding a route: append one entry to `describeRoutes` (or a pattern to SCHEMA_EXCLUDED when the
 * spec keeps it out of the export), then `npm run openapi`.
 */
import { z } from 'zod';
import type { Config } from '../../config/index.js';
import {
  Collection,
  isoTime,
  listEnvelope,
  MemoryAccepted,
  MemoryRecord,
  MemoryResponse,
  MemorySummary,
  results,
  Snapshot,
  SnapshotReceipt,
  SnapshotSearchResult,
  Webhook,
  WebhookAttempt,
} from './responses.js';
import * as collections from '../routes/collections/schema.js';
import * as memories from '../routes/memories/schema.js';
import * as deviceMemory from '../routes/device-memory/schema.js';
import * as search from '../routes/search/schema.js';
import * as uploads from '../routes/uploads/schema.js';
import * as webhooks from '../routes/webhooks/schema.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type Limits = Pick<Config, 'MAX_TEXT_CHARS' | 'MAX_CHUNKS_PER_MEMORY' | 'MAX_CONTENT_PARTS'>;

export interface RouteDescription {
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

/** The public routes, with the request schemas built from the running limits. */
export function describeRoutes(limits: Limits): RouteDescription[] {
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
      body: collections.createCollectionBody,
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
      query: collections.listCollectionsQuery,
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
      params: collections.collectionNameParams,
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
      params: collections.collectionIdParams,
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
      body: memories.createMemoryBody(limits),
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
      query: memories.listMemoriesQuery,
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
      body: search.searchBody,
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
      body: memories.deleteManyBody,
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
      params: memories.memoryIdParams,
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
      params: memories.memoryIdParams,
      query: memories.contentQuery,
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
      params: memories.memoryIdParams,
      body: memories.updateMemoryBody,
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
      params: memories.memoryIdParams,
      body: memories.appendMessagesBody(limits),
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
      params: memories.memoryIdParams,
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
      body: deviceMemory.exportBody,
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
      body: deviceMemory.importBody,
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
      body: uploads.createUploadBody,
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
      params: uploads.uploadIdParams,
      query: uploads.signedUrlQuery,
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
      body: webhooks.createWebhookBody,
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
      query: webhooks.listWebhooksQuery,
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
      params: webhooks.webhookIdParams,
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
      params: webhooks.webhookIdParams,
      body: webhooks.updateWebhookBody,
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
      params: webhooks.webhookIdParams,
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
      params: webhooks.webhookIdParams,
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
      params: webhooks.webhookIdParams,
      body: webhooks.replayWebhookBody,
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
      params: webhooks.webhookIdParams,
      query: webhooks.listAttemptsQuery,
      success: { status: 200, description: 'Attempts', schema: results(z.array(WebhookAttempt)) },
      errors: [400, 404],
    },
  ];
}
