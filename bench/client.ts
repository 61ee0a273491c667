/** A minimal HTTP client for the memory API, on node's global fetch. */

export interface MemoryRecord {
  id: string;
  status: string;
  status_message: string | null;
  chunk_count: number;
  embedding_model: string | null;
  workflow_id: string;
}

export interface SearchResults {
  hits: { memory_id: string; score: number }[];
  total_hits: number;
  timings_ms: { embed_ms: number; index_ms: number; fetch_ms: number; total_ms: number };
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
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

  createMemory(collectionId: string, rawText: string, name?: string): Promise<{ id: string; status: string; workflow_id: string }> {
    return this.request('POST', '/v1/memories', { collection_id: collectionId, raw_text: rawText, ...(name ? { name } : {}) }, [202]);
  }

  getMemory(id: string): Promise<MemoryRecord> {
    return this.request('GET', `/v1/memories/${id}`);
  }

  search(query: string, collectionIds: string[], limit?: number): Promise<SearchResults> {
    return this.request('POST', '/v1/memories/search', { query, collection_ids: collectionIds, ...(limit ? { limit } : {}) });
  }
}
