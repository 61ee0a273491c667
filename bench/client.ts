/** A minimal HTTP client for the memory API, on node's global fetch. */

export interface MemoryRecord {
  id: string;
  status: string;
  status_message: string | null;
  chunk_count: number;
  embedding_model: string | null;
  workflow_id: string;
}

export type SearchSignal = 'vector' | 'lexical' | 'graph' | 'activation';

export interface SearchOptions {
  /** 1..100; the server's default when absent. */
  limit?: number;
  /** Which signals rank the hits; all four (the fused ranking) when absent. */
  signals?: SearchSignal[];
  /** false: the search does not count as a use of the memories it returns (no activation change). */
  track_access?: boolean;
}

export interface SearchHit {
  memory_id: string;
  chunk_index: number;
  text: string;
  score: number;
  score_breakdown: Partial<Record<SearchSignal, number>>;
  source: { type: string; role?: string; message_index?: number; [field: string]: unknown };
  memory?: { name: string | null; kind: string; metadata: Record<string, unknown>; collection_ids: string[]; created_at: string };
}

export interface SearchResults {
  query?: string;
  hits: SearchHit[];
  total_hits: number;
  /** total_ms always; the per-stage figures depend on the server version. */
  timings_ms: { total_ms: number; embed_ms?: number; index_ms?: number; fetch_ms?: number; [stage: string]: number | undefined };
  entities?: unknown[];
  relationships?: unknown[];
  confidence?: Record<string, unknown>;
}

export interface ConversationMessage {
  role: 'user' | 'assistant';
  content: string;
  /** ISO 8601 with a zone: when the message was said. */
  timestamp?: string;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string,
  ) {}

  private async request<T>(method: string, path: string, body?: unknown, expect: number[] = [200]): Promise<T> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${this.apiKey}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!expect.includes(response.status)) {
      throw new Error(`${method} ${path} → ${response.status}: ${text.slice(0, 500)}`);
    }
    return (JSON.parse(text) as { results: T }).results;
  }

  createCollection(name: string, description?: string): Promise<{ id: string; name: string }> {
    return this.request('POST', '/v1/collections', { name, ...(description ? { description } : {}) }, [201]);
  }

  createMemory(collectionId: string, rawText: string, name?: string): Promise<{ id: string; status: string; workflow_id: string }> {
    return this.request('POST', '/v1/memories', { collection_id: collectionId, raw_text: rawText, ...(name ? { name } : {}) }, [202]);
  }

  /** A conversation memory: each message becomes one or more chunks with source { type: "message", role, message_index }. */
  createConversation(
    collectionId: string,
    messages: ConversationMessage[],
    name?: string,
    metadata?: Record<string, unknown>,
    occurredAt?: string,
  ): Promise<{ id: string; status: string; workflow_id: string }> {
    return this.request(
      'POST',
      '/v1/memories',
      {
        collection_id: collectionId,
        kind: 'conversation',
        messages,
        ...(name ? { name } : {}),
        ...(metadata ? { metadata } : {}),
        ...(occurredAt ? { occurred_at: occurredAt } : {}),
      },
      [202],
    );
  }

  getMemory(id: string): Promise<MemoryRecord> {
    return this.request('GET', `/v1/memories/${id}`);
  }

  /** `options` as a number is the limit (the original signature). */
  search(query: string, collectionIds: string[], options?: number | SearchOptions): Promise<SearchResults> {
    const { limit, signals, track_access } = typeof options === 'number' ? { limit: options } : (options ?? {});
    return this.request('POST', '/v1/memories/search', {
      query,
      collection_ids: collectionIds,
      ...(limit ? { limit } : {}),
      ...(signals ? { signals } : {}),
      ...(track_access === undefined ? {} : { track_access }),
    });
  }
}
