/**
 * The Model Context Protocol face of the memory service: tools an AI assistant calls to add,
 * search, read, list and delete memories, list collections and read workflow patterns. Every
 * tool is a call of the REST client (client/rest.ts) with the caller's own API key, so tenant
 * scoping, validation and limits are exactly the REST API's. Served over stdio (bin/mcp.ts, for
 * desktop assistants) and over Streamable HTTP at /mcp on the API (api/routes/mcp).
 *
 * Built on the SDK's low-level Server rather than McpServer so that every failure, a bad argument
 * included, reaches the model in one shape: a tool result with isError and a JSON body
 * `{ error: { code, message, details: [{ field, issue }] } }`, never a stack trace.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ApiError, type MemoryServiceClient, type SearchInput } from '../client/rest.js';

export const MCP_SERVER_NAME = 'engram-memory';
const VERSION = '0.1.0';

const uuid = z.uuid({ error: 'must be a UUID' });
const metadataFilters = z
  .record(z.string(), z.record(z.string(), z.unknown()))
  .describe(
    'Filter on memory metadata, e.g. {"metadata.team": {"$eq": "core"}}. Keys start with "metadata."; ' +
      'operators: $eq $ne $in $nin $exists $gt $gte $lt $lte.',
  );
const limit = (max: number, fallback: number) =>
  z.number().int().min(1).max(max).optional().describe(`How many results at most (1-${max}, default ${fallback}).`);
const offset = z.number().int().min(0).optional().describe('How many results to skip, for paging (default 0).');

const messageSchema = z.strictObject({
  role: z.enum(['user', 'assistant', 'system', 'tool']),
  content: z.string().min(1),
});

/** Longest a tool waits for ingestion, kept under the API's request deadline (REQUEST_TIMEOUT_MS, 30 s by default). */
const MAX_WAIT_SECONDS = 20;

const addMemoryInput = z
  .strictObject({
    collection_id: uuid.describe('The collection to store the memory in (see list_collections).'),
    text: z.string().min(1).optional().describe('A document or note to remember, as plain text. Give either text or messages.'),
    messages: z
      .array(messageSchema)
      .min(1)
      .optional()
      .describe('A conversation to remember, in order: [{"role": "user", "content": "..."}, ...]. Give either text or messages.'),
    name: z.string().max(200).optional().describe('A short title for the memory.'),
    metadata: z.record(z.string(), z.unknown()).optional().describe('Free-form JSON labels, usable later in metadata_filters.'),
    wait_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .optional()
      .describe(
        `Seconds to wait for ingestion to finish before answering (0-${MAX_WAIT_SECONDS}, default 0). ` +
          'A memory becomes searchable only once its status is "complete".',
      ),
  })
  .superRefine((input, ctx) => {
    if ((input.text === undefined) === (input.messages === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['text'], message: 'give exactly one of text or messages' });
    }
  });

const searchInput = z.strictObject({
  query: z.string().min(1).max(4000).describe('What to look for, in natural language.'),
  collection_ids: z.array(uuid).min(1).max(100).describe('The collections to search (see list_collections).'),
  limit: limit(100, 10),
  metadata_filters: metadataFilters.optional(),
  kind: z.enum(['document', 'conversation']).optional().describe('Only memories of this kind.'),
  as_of: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Answer as the facts stood at this time (ISO 8601 with a zone), e.g. where someone worked then.'),
  include_history: z.boolean().optional().describe('Also return facts that a later one replaced, marked as superseded.'),
});

const memoryIdInput = z.strictObject({ memory_id: uuid.describe('The memory id, as returned by add_memory, search or list.') });

const getMemoryInput = memoryIdInput.extend({
  include_chunks: z
    .boolean()
    .optional()
    .describe('Include the memory text, chunk by chunk, with where each chunk came from (default true).'),
});

const listMemoriesInput = z.strictObject({
  collection_ids: z.array(uuid).min(1).max(100).optional().describe('Only memories in these collections (default: all you can see).'),
  limit: limit(100, 20),
  offset,
  metadata_filters: metadataFilters.optional(),
});

const listCollectionsInput = z.strictObject({ limit: limit(100, 50), offset });

const listPatternsInput = z.strictObject({
  collection_id: uuid.describe('The collection whose recurring workflows to list.'),
  limit: limit(100, 20),
  offset,
});

const getPatternInput = z.strictObject({
  collection_id: uuid.describe('The collection the pattern belongs to.'),
  pattern_id: z.string().min(1).max(200).describe('The pattern id, from list_workflow_patterns.'),
});

type ToolHandler = (client: MemoryServiceClient, input: never) => Promise<unknown>;

interface ToolDefinition {
  name: string;
  description: string;
  schema: z.ZodType;
  annotations: Tool['annotations'];
  run: ToolHandler;
}

function tool<S extends z.ZodType>(
  name: string,
  description: string,
  schema: S,
  annotations: Tool['annotations'],
  run: (client: MemoryServiceClient, input: z.output<S>) => Promise<unknown>,
): ToolDefinition {
  return { name, description, schema, annotations, run: run as ToolHandler };
}

/** The search body the REST API takes; the one place a new search option (as_of) is forwarded. */
function searchRequest(input: z.output<typeof searchInput>): SearchInput {
  return {
    query: input.query,
    collection_ids: input.collection_ids,
    ...(input.limit === undefined ? {} : { limit: input.limit }),
    ...(input.metadata_filters === undefined ? {} : { metadata_filters: input.metadata_filters }),
    ...(input.kind === undefined ? {} : { kind: input.kind }),
    ...(input.as_of === undefined ? {} : { as_of: input.as_of }),
    ...(input.include_history === undefined ? {} : { include_history: input.include_history }),
  };
}

export const TOOLS: ToolDefinition[] = [
  tool(
    'add_memory',
    'Store something to remember: a text (note, document, fact) or a conversation (a list of messages). ' +
      'Ingestion runs in the background; the answer has the memory id and its status. Pass wait_seconds to wait until it is searchable.',
    addMemoryInput,
    { title: 'Add a memory', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    async (client, input) => {
      const common = {
        collection_id: input.collection_id,
        ...(input.name === undefined ? {} : { name: input.name }),
        ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
      };
      const accepted = input.messages
        ? await client.memories.create({ ...common, kind: 'conversation', messages: input.messages })
        : await client.memories.create({ ...common, raw_text: input.text ?? '' });
      if (!input.wait_seconds) return { id: accepted.id, status: accepted.status, kind: accepted.kind };
      try {
        const settled = await client.memories.waitUntilSettled(accepted.id, { timeoutMs: input.wait_seconds * 1000, intervalMs: 200 });
        return { id: settled.id, status: settled.status, status_message: settled.status_message, chunk_count: settled.chunk_count };
      } catch (error) {
        // Still ingesting when the wait ran out: not a failure, the memory is stored.
        if (error instanceof ApiError && error.status === 0) return { id: accepted.id, status: 'ingesting', kind: accepted.kind };
        throw error;
      }
    },
  ),
  tool(
    'search_memories',
    'Search memories by meaning and keywords in one or more collections. Returns the best matching passages, ' +
      'each with its memory id, score, text and where it came from (file, page, sheet and cells, slide, message).',
    searchInput,
    { title: 'Search memories', readOnlyHint: true },
    async (client, input) => {
      const result = await client.memories.search(searchRequest(input));
      return {
        total_hits: result.total_hits,
        hits: result.hits.map((hit) => ({
          memory_id: hit.memory_id,
          chunk_index: hit.chunk_index,
          score: hit.score,
          text: hit.text,
          source: hit.source,
          memory_name: hit.memory.name,
          memory_kind: hit.memory.kind,
          metadata: hit.memory.metadata,
          created_at: hit.memory.created_at,
        })),
      };
    },
  ),
  tool(
    'get_memory',
    'Read one memory by id: its status, name, metadata, collections and (by default) its text chunk by chunk.',
    getMemoryInput,
    { title: 'Get a memory', readOnlyHint: true },
    async (client, input) => {
      const memory = await client.memories.get(input.memory_id);
      if (input.include_chunks === false) {
        const { chunks: _chunks, chunk_sources: _sources, ...summary } = memory;
        return summary;
      }
      return memory;
    },
  ),
  tool(
    'list_memories',
    'List memories, newest first, optionally only in some collections or matching metadata filters. Use offset to page.',
    listMemoriesInput,
    { title: 'List memories', readOnlyHint: true },
    async (client, input) =>
      client.memories.list({
        ...(input.collection_ids === undefined ? {} : { collectionIds: input.collection_ids }),
        ...(input.limit === undefined ? {} : { limit: input.limit }),
        ...(input.offset === undefined ? {} : { offset: input.offset }),
        ...(input.metadata_filters === undefined ? {} : { metadataFilters: input.metadata_filters }),
      }),
  ),
  tool(
    'delete_memory',
    'Delete a memory for good: its text, chunks, files and everything derived from it. This cannot be undone.',
    memoryIdInput,
    { title: 'Delete a memory', readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    async (client, input) => client.memories.delete(input.memory_id),
  ),
  tool(
    'list_collections',
    'List the collections this API key can use, with their ids and names. Memories live in collections; the other tools take collection ids.',
    listCollectionsInput,
    { title: 'List collections', readOnlyHint: true },
    async (client, input) => client.collections.list({ limit: input.limit, offset: input.offset }),
  ),
  tool(
    'list_workflow_patterns',
    'List the recurring workflows (procedures seen several times, such as "order -> ship -> invoice") found in a collection.',
    listPatternsInput,
    { title: 'List workflow patterns', readOnlyHint: true },
    async (client, input) => client.workflows.patterns(input.collection_id, { limit: input.limit, offset: input.offset }),
  ),
  tool(
    'get_workflow_pattern',
    'Read one workflow pattern: its steps (canonical signature), how often and how confidently it was seen, and its instances.',
    getPatternInput,
    { title: 'Get a workflow pattern', readOnlyHint: true },
    async (client, input) => client.workflows.pattern(input.collection_id, input.pattern_id),
  ),
];

const TOOLS_BY_NAME = new Map(TOOLS.map((definition) => [definition.name, definition]));

export interface ToolErrorBody {
  error: { code: string; message: string; details: { field: string; issue: string }[] };
}

const errorResult = (body: ToolErrorBody): CallToolResult => ({ isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] });

function validationError(issues: z.core.$ZodIssue[]): ToolErrorBody {
  const details = issues.map((issue) => ({ field: issue.path.map(String).join('.') || '(arguments)', issue: issue.message }));
  const message = details.map((detail) => `${detail.field}: ${detail.issue}`).join('; ');
  return { error: { code: 'validation_failed', message, details } };
}

export interface McpServerOptions {
  /** Where unexpected failures are recorded (the model only sees `internal_error`). */
  onUnexpectedError?: (error: unknown, toolName: string) => void;
}

/** One MCP server whose tools call the service through `client` (which carries the caller's API key). */
export function createMcpServer(client: MemoryServiceClient, options: McpServerOptions = {}): Server {
  const server = new Server({ name: MCP_SERVER_NAME, version: VERSION }, { capabilities: { tools: {} } });

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((definition) => ({
      name: definition.name,
      description: definition.description,
      inputSchema: z.toJSONSchema(definition.schema, { io: 'input' }) as Tool['inputSchema'],
      annotations: definition.annotations,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const definition = TOOLS_BY_NAME.get(request.params.name);
    if (!definition) {
      return errorResult({
        error: {
          code: 'tool_not_found',
          message: `there is no tool ${request.params.name}; the tools are ${TOOLS.map((entry) => entry.name).join(', ')}`,
          details: [{ field: 'name', issue: 'unknown tool' }],
        },
      });
    }
    const parsed = definition.schema.safeParse(request.params.arguments ?? {});
    if (!parsed.success) return errorResult(validationError(parsed.error.issues));
    try {
      const result = await definition.run(client, parsed.data as never);
      return { content: [{ type: 'text', text: JSON.stringify(result) }] };
    } catch (error) {
      if (error instanceof ApiError && error.status === 0) {
        // No answer (service down, wrong ENGRAM_URL): the cause goes to the log, not to the model.
        options.onUnexpectedError?.(error, definition.name);
        return errorResult({
          error: { code: 'service_unreachable', message: 'the memory service did not answer; try again later', details: [] },
        });
      }
      if (error instanceof ApiError) {
        return errorResult({ error: { code: error.code ?? 'upstream_failed', message: error.message, details: error.details } });
      }
      options.onUnexpectedError?.(error, definition.name);
      return errorResult({
        error: { code: 'internal_error', message: `${definition.name} failed unexpectedly; the server logged the cause`, details: [] },
      });
    }
  });
  return server;
}
