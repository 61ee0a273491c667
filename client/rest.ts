/**
 * A typed REST client for the memory service (the OpenAPI document is docs/openapi.json):
 * collections, memories (text, chunks, messages, files inline or through the presigned upload
 * flow with progress), get, list, update, append, delete, search. Failures are ApiError with the
 * service's stable code; 429 and 503 are retried with backoff, honouring Retry-After; memory
 * creation always sends an Idempotency-Key, so a retry never makes a second memory.
 */
import { randomUUID } from 'node:crypto';
import type { ProcedurePattern } from '../core/procedure-model.js';
import { backoffDelay } from './backoff.js';
import { endpoint } from './http.js';

/** The error codes the service answers with (api/openapi/registry.ts ERROR_CODES; a unit test keeps them equal). */
export const API_ERROR_CODES = [
  'validation_failed',
  'invalid_json',
  'request_aborted',
  'body_length_mismatch',
  'upload_size_mismatch',
  'unauthenticated',
  'invalid_upload_signature',
  'upload_url_expired',
  'memory_not_found',
  'collection_not_found',
  'workflow_instance_not_found',
  'workflow_pattern_not_found',
  'upload_not_found',
  'route_not_found',
  'collection_name_taken',
  'collection_limit_reached',
  'memory_not_conversation',
  'upload_already_used',
  'upload_incomplete',
  'payload_too_large',
  'upload_too_large',
  'unsupported_media_type',
  'upload_collection_mismatch',
  'idempotency_key_reused',
  'rate_limited',
  'internal_error',
  'upstream_failed',
  'upstream_redirect',
  'device_busy',
  'server_busy',
  'upstream_timeout',
  'snapshot_invalid',
  'snapshot_version_unsupported',
  'snapshot_signature_invalid',
  'snapshot_digest_mismatch',
  'snapshot_model_mismatch',
  'snapshot_tenant_mismatch',
  'snapshot_url_refused',
  'snapshot_too_large',
  'collection_read_only',
  'orchestrator_unavailable',
  'request_timeout',
  'graph_read_backend_unavailable',
  'index_budget_exhausted',
  'index_budget_exceeded',
  'webhook_url_refused',
  'webhook_not_found',
  'webhook_limit_reached',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export interface FieldIssue {
  field: string;
  issue: string;
}

/** A refusal from the service (status ≥ 400), or status 0 when the request never got an answer. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    /** One of ApiErrorCode; a newer server may send others. */
    readonly code: ApiErrorCode | (string & {}) | undefined,
    message: string,
    readonly details: FieldIssue[] = [],
    readonly requestId: string | undefined = undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  is(code: ApiErrorCode): boolean {
    return this.code === code;
  }
}

export interface RetryPolicy {
  /** Retries after the first attempt (default 4); 0 turns retrying off. */
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
}

export interface RestClientOptions {
  baseUrl: string;
  apiKey: string;
  retry?: Partial<RetryPolicy>;
  /** Per-attempt timeout (default 30 s; uploads have none). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Called before each retry (for logs and tests). */
  onRetry?: (info: { attempt: number; delayMs: number; status: number; code?: string }) => void;
}

export type MemoryStatus = 'queued' | 'reading' | 'structuring' | 'indexing' | 'complete' | 'failed';

export interface Collection {
  id: string;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface MemorySummary {
  id: string;
  collection_id: string | null;
  collection_ids: string[];
  kind: 'document' | 'conversation';
  name: string | null;
  metadata: Record<string, unknown>;
  status: MemoryStatus;
  status_message: string | null;
  chunk_count: number | null;
  embedding_model: string | null;
  workflow_id: string | null;
  created_at: string;
  updated_at: string | null;
  completed_at: string | null;
}

export interface MemoryRecord extends MemorySummary {
  files?: { part: number; filename: string; media_type: string; size: number; sha256: string; download_path: string }[];
  chunks: string[];
  chunk_sources: unknown[];
}

export interface MemoryAccepted {
  id: string;
  status: MemoryStatus;
  collection_id: string | null;
  kind: 'document' | 'conversation';
  workflow_id: string | null;
  created_at: string;
}

export interface Message {
  role: 'user' | 'assistant' | 'system' | 'tool';
  content: string;
}

export type ContentPart = { type: 'document'; media_type?: string; filename?: string } & ({ data: string } | { upload_id: string });

export type MemoryContent = { raw_text: string } | { chunks: string[] } | { messages: Message[] } | { content_parts: ContentPart[] };

export type CreateMemoryInput = MemoryContent & {
  collection_id: string;
  kind?: 'document' | 'conversation';
  name?: string | null;
  metadata?: Record<string, unknown>;
};

export interface ListMemoriesQuery {
  collectionIds?: string[];
  limit?: number;
  offset?: number;
  /** `{ "metadata.team": { "$eq": "core" } }` (operators: $eq $ne $in $nin $exists $gt $gte $lt $lte). */
  metadataFilters?: Record<string, Record<string, unknown>>;
}

export interface ListEnvelope<T> {
  results: T[];
  total_entries: number;
}

/** Workflow reads (docs/workflows.md). */
export interface WorkflowInstanceSummary {
  id: string;
  collection_id: string;
  pattern_id: string | null;
  current_state_description: string;
  last_activity_at: string;
  trace_count: number;
}

export interface WorkflowState {
  node_id: string;
  description: string;
  entered_at: string | null;
  members: {
    entities: { id: string; name: string }[];
    facts: { id: string; predicate: string; subject: string; object: string; description: string }[];
  };
}

export interface WorkflowTrace {
  id: string;
  verb_class: string;
  description: string;
  occurred_at: string;
  extraction_confidence: number;
  occurred_at_source?: 'explicit' | 'memory_time';
  verb?: string;
}

export interface WorkflowInstanceDetail extends WorkflowInstanceSummary {
  current_state: WorkflowState;
  position?: { step: number; of: number };
  history: { state: WorkflowState; trace: WorkflowTrace | null }[];
  history_truncated: boolean;
  similar_instances: Pick<WorkflowInstanceSummary, 'id' | 'pattern_id' | 'current_state_description' | 'last_activity_at'>[];
}

/** A pattern as listed: the stored pattern's own fields (core/procedure-model.ts), those the wire shows. */
export type WorkflowPatternSummary = Pick<
  ProcedurePattern,
  'id' | 'collection_id' | 'name' | 'description' | 'confidence' | 'instance_count' | 'pattern_size'
>;

export interface WorkflowPatternDetail
  extends WorkflowPatternSummary, Pick<ProcedurePattern, 'canonical_signature' | 'weighted_frequency' | 'canonical_instance_id'> {
  instance_ids: string[];
  instance_ids_total: number;
}

/** One chunk of a search's answer, best first (docs/api.md, search). */
export interface SearchHit {
  memory_id: string;
  chunk_index: number;
  text: string;
  score: number;
  /** Each enabled signal normalised to 0..1. */
  score_breakdown: Record<string, number>;
  /** The cosine and BM25 behind them; null where that signal did not retrieve the chunk. */
  raw_scores: Record<string, unknown>;
  /** Where in the memory the chunk came from (page, time range, heading, message index), where known. */
  source: unknown;
  memory: { name: string | null; kind: string; metadata: Record<string, unknown>; collection_ids: string[]; created_at: string };
}

/** The collection search result (MemoryResponse). */
export interface MemoryResponse {
  query: string;
  hits: SearchHit[];
  entities: unknown[];
  relationships: unknown[];
  confidence: unknown;
  query_stats: unknown;
  total_hits: number;
  timings_ms: Record<string, number>;
}

export interface SearchInput {
  query: string;
  collection_ids: string[];
  limit?: number;
  [field: string]: unknown;
}

export interface UploadProgress {
  sentBytes: number;
  totalBytes: number;
}

export interface FileInput {
  collectionId: string;
  filename: string;
  mediaType: string;
  data: Uint8Array;
  onProgress?: (progress: UploadProgress) => void;
}

const DEFAULT_RETRY: RetryPolicy = { retries: 4, minDelayMs: 200, maxDelayMs: 10_000 };
const RETRYABLE = new Set([429, 503]);
/** 503s that a retry cannot fix: the deployment is configured that way. */
const PERMANENT_CODES = new Set<string>(['graph_read_backend_unavailable']);
const UPLOAD_CHUNK_BYTES = 64 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Seconds or an HTTP date, as Retry-After allows; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** A raw body (the presigned PUT) instead of JSON. */
  raw?: { bytes: Uint8Array; contentType: string; onProgress?: (progress: UploadProgress) => void };
  authenticated?: boolean;
  timeoutMs?: number | null;
}

export class MemoryServiceClient {
  readonly #options: RestClientOptions;
  readonly #retry: RetryPolicy;

  constructor(options: RestClientOptions) {
    if (!options.baseUrl) throw new TypeError('MemoryServiceClient: baseUrl is required');
    if (!options.apiKey) throw new TypeError('MemoryServiceClient: apiKey is required');
    this.#options = options;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  // ---- collections ----
  readonly collections = {
    create: (input: { name: string; description?: string | null; metadata?: Record<string, unknown> }) =>
      this.#results<Collection>('POST', '/v1/collections', { body: input }),
    list: (page: { limit?: number; offset?: number } = {}) =>
      this.#json<ListEnvelope<Collection>>('GET', `/v1/collections${query({ limit: page.limit, offset: page.offset })}`),
    get: (id: string) => this.#results<Collection>('GET', `/v1/collections/${encodeURIComponent(id)}`),
    getByName: (name: string) => this.#results<Collection>('GET', `/v1/collections/by-name/${encodeURIComponent(name)}`),
  };

  // ---- memories ----
  readonly memories = {
    /** 202: ingestion continues in the background. An idempotency key is generated when none is given. */
    create: (input: CreateMemoryInput, options: { idempotencyKey?: string } = {}) =>
      this.#results<MemoryAccepted>('POST', '/v1/memories', {
        body: input,
        headers: { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() },
      }),
    /** A file: inline (base64) up to `inlineMaxBytes`, otherwise through the presigned upload flow. */
    createFromFile: async (
      file: FileInput & { name?: string; metadata?: Record<string, unknown>; inlineMaxBytes?: number; idempotencyKey?: string },
    ) => {
      const part: ContentPart =
        file.data.byteLength <= (file.inlineMaxBytes ?? 4 * 1024 * 1024)
          ? { type: 'document', media_type: file.mediaType, filename: file.filename, data: Buffer.from(file.data).toString('base64') }
          : { type: 'document', media_type: file.mediaType, filename: file.filename, upload_id: await this.uploads.upload(file) };
      if ('data' in part) file.onProgress?.({ sentBytes: file.data.byteLength, totalBytes: file.data.byteLength });
      return this.memories.create(
        {
          collection_id: file.collectionId,
          content_parts: [part],
          ...(file.name !== undefined ? { name: file.name } : {}),
          ...(file.metadata ? { metadata: file.metadata } : {}),
        },
        { idempotencyKey: file.idempotencyKey },
      );
    },
    get: (id: string) => this.#results<MemoryRecord>('GET', `/v1/memories/${encodeURIComponent(id)}`),
    list: (filter: ListMemoriesQuery = {}) =>
      this.#json<ListEnvelope<MemorySummary>>(
        'GET',
        `/v1/memories${query({
          collection_ids: filter.collectionIds?.join(','),
          limit: filter.limit,
          offset: filter.offset,
          metadata_filters: filter.metadataFilters ? JSON.stringify(filter.metadataFilters) : undefined,
        })}`,
      ),
    update: (
      id: string,
      patch: { name?: string | null; metadata?: Record<string, unknown>; merge_metadata?: boolean; collection_ids?: string[] },
    ) => this.#results<MemorySummary>('PATCH', `/v1/memories/${encodeURIComponent(id)}`, { body: patch }),
    append: (id: string, input: { collection_id: string; messages: Message[] }) =>
      this.#results<MemorySummary & { appended_messages: number }>('POST', `/v1/memories/${encodeURIComponent(id)}/messages`, {
        body: input,
      }),
    delete: (id: string) => this.#results<{ id: string; deleted: true }>('DELETE', `/v1/memories/${encodeURIComponent(id)}`),
    deleteMany: (ids: string[]) =>
      this.#results<{ deleted: string[]; not_found: string[]; deleted_count: number }>('POST', '/v1/memories/delete', { body: ids }),
    search: (input: SearchInput) => this.#results<MemoryResponse>('POST', '/v1/memories/search', { body: input }),
    /** Polls until the memory is complete or failed (or the timeout passes). */
    waitUntilSettled: async (id: string, options: { timeoutMs?: number; intervalMs?: number } = {}) => {
      const deadline = Date.now() + (options.timeoutMs ?? 120_000);
      for (;;) {
        const memory = await this.memories.get(id);
        if (memory.status === 'complete' || memory.status === 'failed') return memory;
        if (Date.now() > deadline) throw new ApiError(0, undefined, `memory ${id} still ${memory.status} after the timeout`);
        await sleep(options.intervalMs ?? 250);
      }
    },
  };

  // ---- workflow reads (per collection) ----
  readonly workflows = {
    list: (collectionId: string, filter: { patternId?: string; includeUnpatterned?: boolean; limit?: number; offset?: number } = {}) =>
      this.#json<ListEnvelope<WorkflowInstanceSummary>>(
        'GET',
        `/v1/workflows${query({
          collection_id: collectionId,
          pattern_id: filter.patternId,
          include_unpatterned: filter.includeUnpatterned === undefined ? undefined : String(filter.includeUnpatterned),
          limit: filter.limit,
          offset: filter.offset,
        })}`,
      ),
    /** An instance by its id or by the id of any of its traces. */
    get: (collectionId: string, instanceId: string, options: { historyLimit?: number; similarLimit?: number } = {}) =>
      this.#results<WorkflowInstanceDetail>(
        'GET',
        `/v1/workflows/${encodeURIComponent(instanceId)}${query({
          collection_id: collectionId,
          history_limit: options.historyLimit,
          similar_limit: options.similarLimit,
        })}`,
      ),
    patterns: (collectionId: string, page: { limit?: number; offset?: number } = {}) =>
      this.#json<ListEnvelope<WorkflowPatternSummary>>(
        'GET',
        `/v1/workflow-patterns${query({ collection_id: collectionId, limit: page.limit, offset: page.offset })}`,
      ),
    pattern: (collectionId: string, patternId: string, page: { instanceLimit?: number; instanceOffset?: number } = {}) =>
      this.#results<WorkflowPatternDetail>(
        'GET',
        `/v1/workflow-patterns/${encodeURIComponent(patternId)}${query({
          collection_id: collectionId,
          instance_limit: page.instanceLimit,
          instance_offset: page.instanceOffset,
        })}`,
      ),
  };

  // ---- presigned uploads ----
  readonly uploads = {
    /** POST /v1/uploads, then PUT the bytes with progress; resolves with the upload_id for content_parts. */
    upload: async (file: FileInput): Promise<string> => {
      const issued = await this.#results<{ upload_id: string; upload_url: string; headers: Record<string, string> }>(
        'POST',
        '/v1/uploads',
        {
          body: { collection_id: file.collectionId, filename: file.filename, media_type: file.mediaType, size: file.data.byteLength },
        },
      );
      await this.#request('PUT', issued.upload_url, {
        raw: { bytes: file.data, contentType: issued.headers['Content-Type'] ?? file.mediaType, onProgress: file.onProgress },
        authenticated: false,
        timeoutMs: null,
      });
      return issued.upload_id;
    },
  };

  /** POST /v1/users/ws-ticket (the events client in client/memory-events.ts does this itself). */
  wsTicket = () => this.#results<{ ticket: string; expires_at: string; ws_url: string }>('POST', '/v1/users/ws-ticket');

  async #results<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.#json<{ results: T }>(method, path, options)).results;
  }

  async #json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.#request(method, path, options);
    return (await response.json()) as T;
  }

  async #request(method: string, pathOrUrl: string, options: RequestOptions): Promise<Response> {
    const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : endpoint(this.#options.baseUrl, pathOrUrl);
    const doFetch = this.#options.fetch ?? fetch;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
      if (options.authenticated !== false) headers.Authorization = `Bearer ${this.#options.apiKey}`;
      let body: RequestInit['body'];
      if (options.raw) {
        headers['Content-Type'] = options.raw.contentType;
        headers['Content-Length'] = String(options.raw.bytes.byteLength);
        body = progressStream(options.raw.bytes, options.raw.onProgress);
      } else if (options.body !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(options.body);
      }
      const timeoutMs = options.timeoutMs === undefined ? (this.#options.timeoutMs ?? 30_000) : options.timeoutMs;
      let response: Response;
      try {
        response = await doFetch(url, {
          method,
          headers,
          body,
          ...(options.raw ? { duplex: 'half' } : {}),
          ...(timeoutMs !== null ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
        } as RequestInit);
      } catch (error) {
        throw new ApiError(0, undefined, `${method} ${url} failed: ${(error as Error).message}`, [], undefined, { cause: error });
      }
      if (response.ok) return response;
      const failure = await toApiError(response);
      if (!RETRYABLE.has(response.status) || PERMANENT_CODES.has(failure.code ?? '') || attempt >= this.#retry.retries) throw failure;
      const delayMs = Math.min(
        this.#retry.maxDelayMs,
        retryAfterMs(response.headers.get('Retry-After')) ??
          backoffDelay({ minDelayMs: this.#retry.minDelayMs, maxDelayMs: this.#retry.maxDelayMs }, attempt),
      );
      this.#options.onRetry?.({ attempt: attempt + 1, delayMs, status: response.status, code: failure.code });
      await sleep(delayMs);
    }
  }
}

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function toApiError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let parsed: { error?: { code?: string; message?: string; details?: FieldIssue[]; request_id?: string } } = {};
  try {
    parsed = text ? (JSON.parse(text) as typeof parsed) : {};
  } catch {
    // not JSON: keep the text as the message
  }
  const error = parsed.error ?? {};
  return new ApiError(
    response.status,
    error.code,
    `HTTP ${response.status}${error.code ? ` ${error.code}` : ''}: ${error.message ?? (text.slice(0, 200) || response.statusText)}`,
    error.details ?? [],
    error.request_id ?? response.headers.get('X-Request-Id') ?? undefined,
  );
}

/** The bytes as a stream of 64 KiB chunks, reporting what has been handed to the socket. */
function progressStream(bytes: Uint8Array, onProgress?: (progress: UploadProgress) => void): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) {
        controller.close();
        return;
      }
      const chunk = bytes.subarray(offset, Math.min(bytes.byteLength, offset + UPLOAD_CHUNK_BYTES));
      offset += chunk.byteLength;
      controller.enqueue(chunk);
      onProgress?.({ sentBytes: offset, totalBytes: bytes.byteLength });
    },
  });
}
