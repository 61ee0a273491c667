import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../core/fact-lexicon.js';
import { NO_FILTER, type MemoryFilter } from '../core/memory-filter.js';
import type { Memory } from '../core/memory-model.js';
import type { Embedder } from '../models/embedder.js';
import type { SignalName } from '../search/fusion.js';
import { IndexBudgetError } from '../search/search-index.js';
import type { VectorHit } from '../search/vector-index.js';
import { fakeStore, memoryRecord, rejectsWith, silentLogger } from '../test/support/fakes/index.js';
import { createCollectionService } from './collections.js';
import { createSearchService, type SearchIndexReads, type SearchInput, type SearchTuning } from './search.js';

const A = 'tenant-a';
const B = 'tenant-b';
const PRINCIPAL = { tenantId: A, keyId: 'key-a' };

/**
 * The in-memory indexes, faked: the vector signal answers the hits the test placed in each
 * collection, best first, at most k, and only from the collections searched (as the real index
 * does). The other signals are not used by these tests and say so if called.
 */
class FakeSearchIndex implements SearchIndexReads {
  readonly placed: { collectionId: string; hit: VectorHit }[] = [];
  readonly prepared: string[][] = [];
  readonly released: string[][] = [];
  readonly asked: number[] = [];
  prepareError: Error | null = null;

  async prepare(collectionIds: string[]): Promise<void> {
    this.prepared.push([...collectionIds]);
    if (this.prepareError) throw this.prepareError;
  }

  release(collectionIds: string[]): void {
    this.released.push([...collectionIds]);
  }

  vectorSearch(_query: Float32Array, collectionIds: string[], k: number): VectorHit[] {
    this.asked.push(k);
    return this.placed
      .filter((entry) => collectionIds.includes(entry.collectionId))
      .map((entry) => entry.hit)
      .sort((a, b) => b.score - a.score)
      .slice(0, k);
  }

  lexicalSearch(): ReturnType<SearchIndexReads['lexicalSearch']> {
    return { hits: [], stats: { terms: [], matchedTerms: 0, maxRarity: 0 } };
  }

  queryTermMatches(): never {
    throw new Error('turn ranking is not used by these tests');
  }

  graphTimelines(): ReturnType<SearchIndexReads['graphTimelines']> {
    return new Map();
  }

  turnSource(): never {
    throw new Error('turn ranking is not used by these tests');
  }

  speakers(): never {
    throw new Error('turn ranking is not used by these tests');
  }

  graphMatch(): never {
    throw new Error('the graph signal is not used by these tests');
  }

  hitGraph(): never {
    throw new Error('the graph signal is not used by these tests');
  }
}

/** Deterministic, no model: the query's vector does not matter to the fake index. */
const embedder = (embedQuery: Embedder['embedQuery'] = async () => new Float32Array([1, 0, 0, 0])): Embedder => ({
  modelId: 'test/model',
  dimensions: 4,
  embedPassages: async (texts) => texts.map(() => new Float32Array(4)),
  embedQuery,
});

const TUNING: SearchTuning = { minSimilarity: 0.5, minActivation: 0, minFactConfidence: 0 };

function setup(
  options: {
    unconfidentRate?: { perMinute: number; burst: number };
    tenantConcurrency?: { limit: number; maxWaiting: number };
    embedQuery?: Embedder['embedQuery'];
  } = {},
) {
  const store = fakeStore();
  store.collections.seed(A, 'a1');
  store.collections.seed(A, 'a2');
  store.collections.seed(B, 'b1');
  const index = new FakeSearchIndex();
  const service = createSearchService({
    store,
    collections: createCollectionService(store),
    searchIndex: index,
    embedder: async () => embedder(options.embedQuery),
    extractor: { id: 'unused', extract: () => Promise.reject(new Error('no graph signal in these tests')) },
    classifier: new PredicateClassifier(DEFAULT_FACT_LEXICON),
    tuning: TUNING,
    unconfidentRate: options.unconfidentRate ?? { perMinute: 60, burst: 10 },
    tenantConcurrency: options.tenantConcurrency ?? { limit: 4, maxWaiting: 4 },
    logger: silentLogger(),
  });
  /** A memory with one chunk per score, each placed in the index of its first collection with that cosine. */
  const place = (scores: number[], overrides: Partial<Memory> & Pick<Memory, 'tenant_id' | 'collection_ids'>): Memory => {
    const memory = memoryRecord({ chunk_count: scores.length, indexed_chunk_count: scores.length, ...overrides });
    store.memories.rows.set(memory.id, memory);
    store.chunks.seed(
      memory,
      scores.map((score, index) => `chunk ${index} of ${memory.id} (${score})`),
    );
    scores.forEach((score, chunkIndex) =>
      index.placed.push({
        collectionId: memory.collection_ids[0]!,
        hit: { chunkId: `${memory.id}:${chunkIndex}`, memoryId: memory.id, score },
      }),
    );
    return memory;
  };
  return { store, index, service, place };
}

const input = (overrides: Partial<SearchInput> = {}): SearchInput => ({
  query: 'where is the office',
  collectionIds: ['a1'],
  limit: 10,
  signals: new Set<SignalName>(['vector']),
  trackAccess: false,
  filters: NO_FILTER,
  validity: { asOf: null, includeHistory: false },
  ...overrides,
});

const hitIds = (outcome: { hits: { memory: { id: string }; chunkIndex: number }[] }) =>
  outcome.hits.map((hit) => `${hit.memory.id}:${hit.chunkIndex}`);

describe('search service: tenant scoping and the index budget', () => {
  it('a collection of another tenant among collection_ids is 404 on collection_ids, before any partition is loaded', async () => {
    const { service, index } = setup();
    await rejectsWith(service.search(PRINCIPAL, input({ collectionIds: ['a1', 'b1'] })), 404, 'collection_not_found', 'collection_ids');
    assert.deepEqual(index.prepared, []);
  });

  const budget: [kind: 'exceeded' | 'exhausted', status: number, code: string][] = [
    ['exceeded', 422, 'index_budget_exceeded'],
    ['exhausted', 503, 'index_budget_exhausted'],
  ];
  for (const [kind, status, code] of budget) {
    it(`a budget ${kind} while loading is ${status} ${code}, and the partitions held are released`, async () => {
      const { service, index } = setup();
      index.prepareError = new IndexBudgetError(kind, 2000, 1000);
      const error = await rejectsWith(service.search(PRINCIPAL, input()), status, code);
      if (kind === 'exceeded') assert.equal(error.details?.[0]?.field, 'collection_ids');
      else assert.equal(error.headers?.['Retry-After'], '1');
      assert.deepEqual(index.released, [['a1']]);
    });
  }

  it('a failed query embedding still releases the partitions', async () => {
    const { service, index } = setup({ embedQuery: () => Promise.reject(new Error('model failed')) });
    await assert.rejects(service.search(PRINCIPAL, input()), /model failed/);
    assert.deepEqual(index.released, [['a1']]);
  });
});

describe('search service: only what the tenant can see now is returned', () => {
  // [case, memory as stored (placed in a1 with cosine 0.9), whether its hit is shown]
  const visibility: [string, (s: ReturnType<typeof setup>) => Memory, boolean][] = [
    ['a complete memory of the tenant', (s) => s.place([0.9], { tenant_id: A, collection_ids: ['a1'] }), true],
    ["another tenant's memory an index still holds", (s) => s.place([0.9], { tenant_id: B, collection_ids: ['a1'] }), false],
    [
      'a memory deleted since it was indexed',
      (s) => {
        const memory = s.place([0.9], { tenant_id: A, collection_ids: ['a1'] });
        s.store.memories.rows.delete(memory.id);
        return memory;
      },
      false,
    ],
    [
      'a memory still being indexed',
      (s) => s.place([0.9], { tenant_id: A, collection_ids: ['a1'], status: 'indexing', indexed_chunk_count: 0 }),
      false,
    ],
    [
      'an import past its expiry',
      (s) => s.place([0.9], { tenant_id: A, collection_ids: ['a1'], expires_at: new Date(Date.now() - 1) }),
      false,
    ],
    [
      'a memory being appended to: its earlier chunks stay searchable',
      (s) => s.place([0.9], { tenant_id: A, collection_ids: ['a1'], status: 'queued', indexed_chunk_count: 1 }),
      true,
    ],
  ];
  for (const [label, make, shown] of visibility) {
    it(`${label}: ${shown ? 'shown' : 'not shown'}`, async () => {
      const setupResult = setup();
      const memory = make(setupResult);
      const outcome = await setupResult.service.search(PRINCIPAL, input());
      assert.deepEqual(hitIds(outcome), shown ? [`${memory.id}:0`] : []);
    });
  }

  it("a chunk past its memory's indexed range is skipped (an append in progress)", async () => {
    const { service, place } = setup();
    const memory = place([0.8, 0.9], { tenant_id: A, collection_ids: ['a1'], status: 'queued', indexed_chunk_count: 1 });
    assert.deepEqual(hitIds(await service.search(PRINCIPAL, input())), [`${memory.id}:0`]);
  });

  it('a chunk found only by the vector signal must be at least minSimilarity close', async () => {
    const { service, place } = setup();
    const close = place([TUNING.minSimilarity + 0.01], { tenant_id: A, collection_ids: ['a1'] });
    place([TUNING.minSimilarity - 0.01], { tenant_id: A, collection_ids: ['a1'] });
    assert.deepEqual(hitIds(await service.search(PRINCIPAL, input())), [`${close.id}:0`]);
  });

  it("only the searched collections: a hit in another of the tenant's collections is not returned", async () => {
    const { service, place } = setup();
    const inA1 = place([0.7], { tenant_id: A, collection_ids: ['a1'] });
    place([0.9], { tenant_id: A, collection_ids: ['a2'] });
    assert.deepEqual(hitIds(await service.search(PRINCIPAL, input())), [`${inA1.id}:0`]);
  });

  it('the best `limit` hits, best first', async () => {
    const { service, place } = setup();
    const memory = place([0.6, 0.95, 0.7, 0.9, 0.8], { tenant_id: A, collection_ids: ['a1'] });
    const outcome = await service.search(PRINCIPAL, input({ limit: 3 }));
    assert.deepEqual(
      hitIds(outcome),
      [1, 3, 4].map((index) => `${memory.id}:${index}`),
    );
    assert.ok(outcome.hits[0]!.score >= outcome.hits[1]!.score && outcome.hits[1]!.score >= outcome.hits[2]!.score);
    assert.equal(outcome.hits[0]!.raw.cosine, 0.95);
  });
});

describe('search service: filters', () => {
  const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));
  const filters: [string, MemoryFilter, (memory: Memory) => boolean][] = [
    ['kind', { metadata: [], kind: 'conversation' }, (memory) => memory.kind === 'conversation'],
    ['a metadata equality', { metadata: [{ path: ['team'], op: 'eq', value: 'berlin' }] }, (memory) => memory.metadata.team === 'berlin'],
    ['a metadata range', { metadata: [{ path: ['year'], op: 'gte', value: 2025 }] }, (memory) => (memory.metadata.year as number) >= 2025],
    [
      'created before',
      { metadata: [], createdBefore: new Date(Date.UTC(2026, 0, 1, 0, 0, 30)) },
      (memory) => memory.created_at < new Date(Date.UTC(2026, 0, 1, 0, 0, 30)),
    ],
  ];
  for (const [label, filter, keeps] of filters) {
    it(`${label}: only matching memories are returned`, async () => {
      const { service, place } = setup();
      const memories = [
        place([0.9], {
          tenant_id: A,
          collection_ids: ['a1'],
          kind: 'conversation',
          metadata: { team: 'berlin', year: 2024 },
          created_at: at(10),
        }),
        place([0.8], { tenant_id: A, collection_ids: ['a1'], metadata: { team: 'paris', year: 2025 }, created_at: at(20) }),
        place([0.7], { tenant_id: A, collection_ids: ['a1'], metadata: { year: 2026 }, created_at: at(40) }),
      ];
      const outcome = await service.search(PRINCIPAL, input({ filters: filter }));
      assert.deepEqual(
        hitIds(outcome),
        memories.filter(keeps).map((memory) => `${memory.id}:0`),
      );
    });
  }

  it('a filtered search draws a larger pool from each signal, since filters apply after retrieval', async () => {
    const { service, index } = setup();
    await service.search(PRINCIPAL, input({ limit: 30 }));
    await service.search(PRINCIPAL, input({ limit: 30, filters: { metadata: [], kind: 'document' } }));
    assert.deepEqual(index.asked, [150, 2000]);
  });
});

describe('search service: confidence and side effects', () => {
  it('no results: unconfident (no_results), with one memory_unconfident event naming every searched collection once', async () => {
    const { service, store } = setup();
    const outcome = await service.search(PRINCIPAL, input({ collectionIds: ['a1', 'a2', 'a1'] }));
    assert.equal(outcome.confidence.unconfident, true);
    assert.equal(outcome.confidence.reason, 'no_results');
    assert.equal(store.events.appended.length, 1);
    assert.equal(store.events.appended[0]?.type, 'memory_unconfident');
    assert.equal(store.events.appended[0]?.tenantId, A);
    assert.deepEqual(store.events.appended[0]?.collectionIds, ['a1', 'a2']);
    assert.deepEqual(store.events.appended[0]?.payload.collection_ids, ['a1', 'a2']);
  });

  it('a confident search appends no event', async () => {
    const { service, store, place } = setup();
    place([0.9], { tenant_id: A, collection_ids: ['a1'] });
    const outcome = await service.search(PRINCIPAL, input());
    assert.equal(outcome.confidence.unconfident, false);
    assert.equal(store.events.appended.length, 0);
  });

  it("beyond the key's event rate, weak searches still answer unconfident but append no more events", async () => {
    const { service, store } = setup({ unconfidentRate: { perMinute: 1, burst: 2 } });
    for (let i = 0; i < 5; i++) assert.equal((await service.search(PRINCIPAL, input())).confidence.unconfident, true);
    assert.equal(store.events.appended.length, 2);
    // The budget is the key's: another key of the tenant has its own.
    await service.search({ tenantId: A, keyId: 'key-2' }, input());
    assert.equal(store.events.appended.length, 3);
  });

  const access: [boolean, number][] = [
    [true, 1],
    [false, 0],
  ];
  for (const [trackAccess, recorded] of access) {
    it(`track_access ${trackAccess}: ${recorded ? 'each returned memory is recorded once as used' : 'no use is recorded'}`, async () => {
      const { service, store, place } = setup();
      const memory = place([0.9, 0.8], { tenant_id: A, collection_ids: ['a1'] });
      await service.search(PRINCIPAL, input({ trackAccess }));
      assert.deepEqual(store.journal.argsOf('memories.recordAccess'), recorded ? [[[memory.id]]] : []);
      assert.equal(store.memories.row(memory.id)!.accessed_at?.length ?? 0, recorded);
    });
  }
});

describe('search service: searches of one tenant at once', () => {
  it('beyond the running and waiting limit a search is 429 rate_limited; another tenant is not held up', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const { service } = setup({
      tenantConcurrency: { limit: 1, maxWaiting: 0 },
      embedQuery: async () => {
        // The first search waits in its embedding; the others go straight on.
        if (++calls === 1) await held;
        return new Float32Array([1, 0, 0, 0]);
      },
    });
    const first = service.search(PRINCIPAL, input());
    await new Promise((resolve) => setImmediate(resolve));
    const error = await rejectsWith(service.search(PRINCIPAL, input()), 429, 'rate_limited');
    assert.equal(error.headers?.['Retry-After'], '1');
    await service.search({ tenantId: B, keyId: 'key-b' }, input({ collectionIds: ['b1'] }));
    release();
    await first;
    // Its turn given back, the tenant searches again.
    await service.search(PRINCIPAL, input());
  });
});
