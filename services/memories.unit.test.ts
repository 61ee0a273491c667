import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { METADATA_MAX_BYTES } from '../core/limits.js';
import type { Memory } from '../core/memory-model.js';
import { NO_FILTER } from '../core/memory-filter.js';
import { fakeStore, FakeOrchestrator, memoryRecord, rejectsWith, silentLogger } from '../test/support/fakes/index.js';
import { createCollectionService } from './collections.js';
import { createMemoryService, type CreateMemoryInput } from './memories.js';

const A = 'tenant-a';
const B = 'tenant-b';
const FUTURE = new Date(Date.now() + 3_600_000);

/** A memory service over in-memory repositories: tenant A has `a1`, `a2` and an imported (ephemeral) `eph`; tenant B has `b1`. */
function setup(options: { maxCollectionsPerMemory?: number } = {}) {
  const store = fakeStore();
  const orchestrator = new FakeOrchestrator(store.journal);
  store.collections.seed(A, 'a1');
  store.collections.seed(A, 'a2');
  store.collections.seed(A, 'eph', FUTURE);
  store.collections.seed(B, 'b1');
  const forgotten: string[] = [];
  const service = createMemoryService({
    store,
    orchestrator,
    collections: createCollectionService(store),
    uploads: {
      take: () => Promise.reject(new Error('no uploads in these tests')),
      untake: () => Promise.resolve(),
      attached: () => Promise.resolve(),
    },
    searchIndex: {
      forget: (ids) => void forgotten.push(...ids),
    },
    logger: silentLogger(),
    ...options,
  });
  const seed = (overrides: Partial<Memory> & Pick<Memory, 'tenant_id' | 'collection_ids'>): Memory => {
    const memory = memoryRecord(overrides);
    store.memories.rows.set(memory.id, structuredClone(memory));
    return memory;
  };
  return { store, orchestrator, service, seed, forgotten };
}

const textInput = (collectionId: string, text = 'hello'): CreateMemoryInput => ({
  collectionId,
  kind: 'document',
  name: null,
  metadata: {},
  occurredAt: null,
  content: { raw_text: text },
});

const conversation = (tenant: string, collection: string, overrides: Partial<Memory> = {}) => ({
  tenant_id: tenant,
  collection_ids: [collection],
  kind: 'conversation' as const,
  content: { messages: [{ role: 'user', content: 'hi' }] },
  ...overrides,
});

describe("memory service: another tenant's ids answer 404, as if they did not exist", () => {
  const cases: [string, (s: ReturnType<typeof setup>, foreign: Memory) => Promise<unknown>, string, string | undefined][] = [
    ['get', (s, m) => s.service.get(A, m.id), 'memory_not_found', undefined],
    ['update name', (s, m) => s.service.update(A, m.id, { name: 'x', mergeMetadata: false }), 'memory_not_found', undefined],
    [
      'append',
      (s, m) => s.service.append(A, m.id, { collectionId: 'b1', messages: [{ role: 'user', content: 'x' }] }),
      'memory_not_found',
      undefined,
    ],
    ['open a file', (s, m) => s.service.openFile(A, m.id, 0), 'memory_not_found', undefined],
    ['create in their collection', (s) => s.service.create(A, textInput('b1'), null), 'collection_not_found', 'collection_id'],
    [
      'list their collection',
      (s) => s.service.list(A, { collectionIds: ['b1'], filter: NO_FILTER, offset: 0, limit: 10 }),
      'collection_not_found',
      'collection_ids',
    ],
    [
      'move a memory into their collection',
      (s) =>
        s.service.update(A, s.seed({ tenant_id: A, collection_ids: ['a1'] }).id, { collectionIds: ['a1', 'b1'], mergeMetadata: false }),
      'collection_not_found',
      'collection_ids',
    ],
  ];
  for (const [label, call, code, field] of cases) {
    it(label, async () => {
      const setupResult = setup();
      const foreign = setupResult.seed(conversation(B, 'b1'));
      await rejectsWith(call(setupResult, foreign), 404, code, field);
      assert.deepEqual(setupResult.store.memories.row(foreign.id), foreign, 'their memory is untouched');
    });
  }

  it('delete: their ids are reported not found and nothing of theirs is removed', async () => {
    const { service, seed, store, orchestrator } = setup();
    const theirs = seed({ tenant_id: B, collection_ids: ['b1'] });
    const mine = seed({ tenant_id: A, collection_ids: ['a1'] });
    const result = await service.delete(A, [theirs.id, mine.id]);
    assert.deepEqual(result, { deleted: [mine.id], notFound: [theirs.id] });
    assert.ok(store.memories.row(theirs.id));
    assert.deepEqual(orchestrator.stopped, [mine.workflow_id]);
    assert.deepEqual(store.journal.argsOf('chunks.deleteForMemories'), [[[mine.id]]]);
  });

  it("list shows only the tenant's memories, without naming collections", async () => {
    const { service, seed } = setup();
    const mine = seed({ tenant_id: A, collection_ids: ['a1'] });
    seed({ tenant_id: B, collection_ids: ['b1'] });
    const listed = await service.list(A, { collectionIds: [], filter: NO_FILTER, offset: 0, limit: 10 });
    assert.deepEqual(
      listed.items.map((item) => item.id),
      [mine.id],
    );
    assert.equal(listed.total, 1);
  });
});

describe('memory service: an imported (ephemeral) collection is read-only on every path', () => {
  const cases: [string, (s: ReturnType<typeof setup>, imported: Memory, own: Memory) => Promise<unknown>, string][] = [
    ['create into it', (s) => s.service.create(A, textInput('eph'), null), 'collection_id'],
    ['rename an imported memory', (s, m) => s.service.update(A, m.id, { name: 'x', mergeMetadata: false }), 'name'],
    ['replace its metadata', (s, m) => s.service.update(A, m.id, { metadata: { a: 1 }, mergeMetadata: false }), 'metadata'],
    ['merge into its metadata', (s, m) => s.service.update(A, m.id, { metadata: { a: 1 }, mergeMetadata: true }), 'metadata'],
    [
      'attach it to a permanent collection',
      (s, m) => s.service.update(A, m.id, { collectionIds: ['eph', 'a1'], mergeMetadata: false }),
      'collection_ids',
    ],
    [
      'move a permanent memory into it',
      (s, _m, own) => s.service.update(A, own.id, { collectionIds: ['a1', 'eph'], mergeMetadata: false }),
      'collection_ids',
    ],
    [
      'append to it',
      (s, m) => s.service.append(A, m.id, { collectionId: 'eph', messages: [{ role: 'user', content: 'x' }] }),
      'collection_id',
    ],
    ['delete it', (s, m) => s.service.delete(A, [m.id]), 'memory_ids'],
    ['delete it among others', (s, m, own) => s.service.delete(A, [own.id, m.id]), 'memory_ids'],
  ];
  for (const [label, call, field] of cases) {
    it(label, async () => {
      const setupResult = setup();
      const imported = setupResult.seed(conversation(A, 'eph', { expires_at: FUTURE }));
      const own = setupResult.seed({ tenant_id: A, collection_ids: ['a1'] });
      const rowsBefore = structuredClone([...setupResult.store.memories.rows.entries()]);
      await rejectsWith(call(setupResult, imported, own), 409, 'collection_read_only', field);
      assert.deepEqual([...setupResult.store.memories.rows.entries()], rowsBefore, 'nothing was written');
      assert.deepEqual(setupResult.store.journal.names(), [], 'no repository was written to');
    });
  }

  it("the expiry sweep and an import's cleanup delete imported memories (purge skips the check)", async () => {
    const { service, seed, store } = setup();
    const imported = seed({ tenant_id: A, collection_ids: ['eph'], expires_at: FUTURE });
    assert.deepEqual(await service.purge(A, [imported.id], { indexNotices: 'by_caller' }), { deleted: [imported.id], notFound: [] });
    assert.equal(store.memories.row(imported.id), undefined);
    assert.deepEqual(store.journal.argsOf('indexChanges.publishRemoves'), [], 'by_caller: the caller publishes the collection drop');
  });
});

describe('memory service: create and its Idempotency-Key', () => {
  it('the same key and body again answers the first memory, replayed, with one record and one workflow', async () => {
    const { service, store, orchestrator } = setup();
    const first = await service.create(A, textInput('a1'), 'key-1');
    const again = await service.create(A, textInput('a1'), 'key-1');
    assert.equal(first.replayed, false);
    assert.equal(again.replayed, true);
    assert.equal(again.memory.id, first.memory.id);
    assert.equal(store.memories.rows.size, 1);
    assert.equal(orchestrator.started.size, 1);
    assert.equal(first.memory.status, 'queued');
  });

  it('the same key with another body is refused: 422 idempotency_key_reused on Idempotency-Key', async () => {
    const { service, store } = setup();
    await service.create(A, textInput('a1', 'one'), 'key-1');
    await rejectsWith(service.create(A, textInput('a1', 'two'), 'key-1'), 422, 'idempotency_key_reused', 'Idempotency-Key');
    assert.equal(store.memories.rows.size, 1);
  });

  it("keys are per tenant: another tenant's identical key creates its own memory", async () => {
    const { service } = setup();
    const mine = await service.create(A, textInput('a1'), 'shared-key');
    const theirs = await service.create(B, textInput('b1'), 'shared-key');
    assert.equal(theirs.replayed, false);
    assert.notEqual(theirs.memory.id, mine.memory.id);
    assert.equal(theirs.memory.tenant_id, B);
  });

  it('a retry after the first attempt died before writing finishes the work under the claimed id', async () => {
    const { service, store } = setup();
    const first = await service.create(A, textInput('a1'), 'key-1');
    // The first attempt's record never made it (the process died after the claim).
    store.memories.rows.delete(first.memory.id);
    const retry = await service.create(A, textInput('a1'), 'key-1');
    assert.equal(retry.memory.id, first.memory.id);
    assert.equal(retry.replayed, false);
    assert.ok(store.memories.row(first.memory.id));
  });

  it('a replay of a memory still queued starts its workflow again (starting is idempotent)', async () => {
    const { service, orchestrator } = setup();
    const first = await service.create(A, textInput('a1'), 'key-1');
    orchestrator.started.clear(); // the first start never reached Temporal
    await service.create(A, textInput('a1'), 'key-1');
    assert.ok(orchestrator.started.has(first.memory.workflow_id));
  });

  it('Temporal unreachable: 503, nothing half-written, and the key is free for the retry', async () => {
    const { service, store, orchestrator } = setup();
    orchestrator.failing = true;
    await rejectsWith(service.create(A, textInput('a1'), 'key-1'), 503, 'orchestrator_unavailable');
    assert.equal(store.memories.rows.size, 0);
    assert.equal(store.idempotency.rows.size, 0);
    orchestrator.failing = false;
    const retry = await service.create(A, textInput('a1'), 'key-1');
    assert.equal(retry.replayed, false);
    assert.equal(store.memories.rows.size, 1);
  });

  it('Temporal unreachable: inline files stored for the request are deleted again', async () => {
    const { service, store, orchestrator } = setup();
    orchestrator.failing = true;
    const input: CreateMemoryInput = {
      ...textInput('a1'),
      content: {},
      files: [{ bytes: Buffer.from('plain words, nothing more'), filename: 'notes.txt', mediaType: 'text/plain', partIndex: 0 }],
    };
    await rejectsWith(service.create(A, input, null), 503, 'orchestrator_unavailable');
    assert.equal(store.files.rows.size, 0);
    assert.deepEqual(store.journal.names('files.'), ['files.put', 'files.deleteIds']);
  });
});

describe('memory service: delete is one cascade that reaches everything derived', () => {
  /** The steps in store/memory-purge.ts order, with stopping the workflow between the record and the rest. */
  const CASCADE = [
    'intents.record',
    'memories.deleteMany',
    'orchestrator.stopIngestion',
    'chunks.deleteForMemories',
    'factEvents.removeMemories',
    'procedures.removeMemories',
    'files.deleteForMemories',
    'uploads.forgetMemories',
    'idempotency.forgetMemories',
    'indexChanges.publishRemoves',
    'indexSnapshots.removeForTenant',
    'intents.remove',
  ];

  it("runs every step, in order, drops the memory from this process's index at once, and announces the graph records it rewrote with their removal", async () => {
    const { service, seed, store, forgotten } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'] });
    store.chunks.seed(memory, ['one', 'two']);
    // An entity and a fact other memories still mention: the delete rewrites their names and descriptions.
    store.factEvents.rewrites.set(memory.id, ['entity-1', 'fact-1']);
    const result = await service.delete(A, [memory.id, memory.id]);
    assert.deepEqual(result, { deleted: [memory.id], notFound: [] });
    const cascade = [...CASCADE];
    cascade.splice(cascade.indexOf('factEvents.removeMemories') + 1, 0, 'indexChanges.publishGraphRefresh');
    assert.deepEqual(store.journal.names(), cascade);
    assert.deepEqual(forgotten, [memory.id]);
    assert.equal(store.chunks.rows.size, 0);
    assert.equal(store.intents.rows.size, 0);
    assert.deepEqual(store.indexChanges.notices, [
      { op: 'refresh_graph', tenantId: A, memoryId: memory.id, targetIds: ['entity-1', 'fact-1'] },
      { op: 'remove', tenantId: A, memoryId: memory.id },
    ]);
  });

  it("the memory's idempotency key goes too: the same key afterwards creates a new memory", async () => {
    const { service, store } = setup();
    const first = await service.create(A, textInput('a1'), 'key-1');
    await store.memories.setStatus(first.memory.id, 'complete');
    await service.delete(A, [first.memory.id]);
    const again = await service.create(A, textInput('a1'), 'key-1');
    assert.equal(again.replayed, false);
    assert.notEqual(again.memory.id, first.memory.id);
  });

  it('Temporal unreachable: the data is still purged (the workflow stops itself when it finds its memory gone)', async () => {
    const { service, seed, store, orchestrator } = setup();
    orchestrator.failing = true;
    const memory = seed({ tenant_id: A, collection_ids: ['a1'] });
    await service.delete(A, [memory.id]);
    assert.deepEqual(
      store.journal.names(),
      CASCADE.filter((step) => step !== 'orchestrator.stopIngestion'),
    );
  });

  it('a delete interrupted after its intent is finished by the sweep, record included', async () => {
    const { service, seed, store } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'] });
    await store.purge.begin(A, [memory.id]);
    // Crash before the record went: put it back, as if step 2 had not run.
    store.memories.rows.set(memory.id, structuredClone(memory));
    for (const intent of store.intents.rows.values()) intent.requestedAt = new Date(Date.now() - 60_000);
    store.journal.clear();
    assert.equal(await service.sweepDeletions(30_000), 1);
    assert.equal(store.memories.row(memory.id), undefined);
    assert.equal(store.intents.rows.size, 0);
    // The sweep stops the workflow first, then resumes the steps from the record on; last, the
    // memory's collections are reloaded everywhere: the interrupted run may have rewritten shared
    // entities and died before announcing them, and this run finds nothing left to announce.
    assert.deepEqual(store.journal.names(), [
      'orchestrator.stopIngestion',
      'memories.deleteMany',
      ...CASCADE.slice(3),
      'indexChanges.publishCollectionReload',
    ]);
    assert.deepEqual(store.indexChanges.notices.at(-1), { op: 'reload_collection', tenantId: A, collectionId: 'a1' });
  });

  it('the sweep leaves recent intents to the delete still running them', async () => {
    const { service, seed, store } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'] });
    await store.purge.begin(A, [memory.id]);
    assert.equal(await service.sweepDeletions(30_000), 0);
    assert.equal(store.intents.rows.size, 1);
  });
});

describe('memory service: update rules', () => {
  it('a merge keeps the other keys; a replace drops them', async () => {
    const { service, seed } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'], metadata: { keep: 1, change: 'old' } });
    const merged = await service.update(A, memory.id, { metadata: { change: 'new' }, mergeMetadata: true });
    assert.deepEqual(merged.metadata, { keep: 1, change: 'new' });
    const replaced = await service.update(A, memory.id, { metadata: { only: true }, mergeMetadata: false });
    assert.deepEqual(replaced.metadata, { only: true });
  });

  const refusals: [string, Partial<Memory>, Parameters<ReturnType<typeof setup>['service']['update']>[2], number, string, string][] = [
    [
      'a merge that would grow the metadata past its limit',
      { metadata: { big: 'x'.repeat(METADATA_MAX_BYTES - 100) } },
      { metadata: { more: 'y'.repeat(200) }, mergeMetadata: true },
      400,
      'validation_failed',
      'metadata',
    ],
    [
      'more collections than MAX_COLLECTIONS_PER_MEMORY',
      {},
      { collectionIds: ['a1', 'a2', 'a3'], mergeMetadata: false },
      400,
      'validation_failed',
      'collection_ids',
    ],
    [
      'a collection change while the memory is processed',
      { status: 'indexing' },
      { collectionIds: ['a1', 'a2'], mergeMetadata: false },
      409,
      'memory_busy',
      'collection_ids',
    ],
  ];
  for (const [label, stored, change, status, code, field] of refusals) {
    it(`refuses ${label}: ${status} ${code} on ${field}`, async () => {
      const { service, seed, store } = setup({ maxCollectionsPerMemory: 2 });
      store.collections.seed(A, 'a3');
      const memory = seed({ tenant_id: A, collection_ids: ['a1'], ...stored });
      await rejectsWith(service.update(A, memory.id, change), status, code, field);
      assert.deepEqual(store.memories.row(memory.id), memory);
    });
  }

  it('a merge raced by other merges every time gives up with 409 memory_busy on metadata', async () => {
    const { service, seed, store } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'], metadata: { n: 0 } });
    const update = store.memories.update.bind(store.memories);
    let raced = 0;
    store.memories.update = async (...args) => {
      // Another request's merge lands between this one's read and its write.
      store.memories.rows.get(memory.id)!.metadata = { n: ++raced };
      return update(...args);
    };
    await rejectsWith(service.update(A, memory.id, { metadata: { mine: true }, mergeMetadata: true }), 409, 'memory_busy', 'metadata');
    assert.equal(raced, 5);
    assert.equal(store.memories.row(memory.id)!.metadata.mine, undefined, 'no merge was written onto metadata it did not check');
  });

  it('a merge raced once is checked again and then written onto the new metadata', async () => {
    const { service, seed, store } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'], metadata: { n: 0 } });
    const update = store.memories.update.bind(store.memories);
    let raced = false;
    store.memories.update = async (...args) => {
      if (!raced) store.memories.rows.get(memory.id)!.metadata = { n: 1, other: 'theirs' };
      raced = true;
      return update(...args);
    };
    const updated = await service.update(A, memory.id, { metadata: { mine: true }, mergeMetadata: true });
    assert.deepEqual(updated.metadata, { n: 1, other: 'theirs', mine: true });
  });

  it('a collection change is carried through: chunks follow, the graph leaves, the index hears, the graph is projected where it joined', async () => {
    const { service, seed, store, orchestrator } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'] });
    store.chunks.seed(memory, ['one']);
    const updated = await service.update(A, memory.id, { collectionIds: ['a2'], mergeMetadata: false });
    assert.deepEqual(updated.collection_ids, ['a2']);
    assert.deepEqual(store.chunks.rows.get(`${memory.id}:0`)?.collection_ids, ['a2']);
    assert.deepEqual(store.journal.argsOf('factEvents.removeMemories'), [[[memory.id], ['a1']]]);
    assert.deepEqual(store.journal.argsOf('procedures.removeMemories'), [[[memory.id], ['a1']]]);
    assert.deepEqual(store.indexChanges.notices, [{ op: 'upsert', tenantId: A, memoryId: memory.id, collectionIds: ['a2'] }]);
    assert.deepEqual(orchestrator.projections, [{ memoryId: memory.id, tenantId: A, collectionIds: ['a2'] }]);
    assert.equal(store.memories.row(memory.id)!.collections_sync, undefined, 'the pending change is cleared last');
  });

  it('a collection change Temporal cannot carry now is kept, and the reconciler finishes it', async () => {
    const { service, seed, store, orchestrator } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'] });
    orchestrator.failing = true;
    const updated = await service.update(A, memory.id, { collectionIds: ['a1', 'a2'], mergeMetadata: false });
    assert.deepEqual(updated.collection_ids, ['a1', 'a2']);
    assert.deepEqual(store.memories.row(memory.id)!.collections_sync?.added, ['a2']);
    orchestrator.failing = false;
    assert.equal(await service.reconcileCollectionChanges(-1000), 1);
    assert.deepEqual(orchestrator.projections, [{ memoryId: memory.id, tenantId: A, collectionIds: ['a2'] }]);
    assert.equal(store.memories.row(memory.id)!.collections_sync, undefined);
  });
});

describe('memory service: append', () => {
  const cases: [string, Partial<Memory>, string, number, string, string | undefined][] = [
    ['to a document', { kind: 'document', content: { raw_text: 'x' } }, 'a1', 409, 'memory_not_conversation', undefined],
    ['naming a collection the memory is not in', {}, 'a2', 400, 'validation_failed', 'collection_id'],
    ['while the memory is processed', { status: 'structuring' }, 'a1', 409, 'memory_busy', undefined],
  ];
  for (const [label, stored, collectionId, status, code, field] of cases) {
    it(`refuses an append ${label}: ${status} ${code}`, async () => {
      const { service, seed, store } = setup();
      const memory = seed(conversation(A, 'a1', stored));
      await rejectsWith(service.append(A, memory.id, { collectionId, messages: [{ role: 'user', content: 'more' }] }), status, code, field);
      assert.deepEqual(store.memories.row(memory.id), memory);
    });
  }

  it('a busy memory answers with Retry-After', async () => {
    const { service, seed } = setup();
    const memory = seed(conversation(A, 'a1', { status: 'queued' }));
    const error = await rejectsWith(
      service.append(A, memory.id, { collectionId: 'a1', messages: [{ role: 'user', content: 'x' }] }),
      409,
      'memory_busy',
    );
    assert.equal(error.headers?.['Retry-After'], '1');
  });

  it('starts a run of its own for the new messages only', async () => {
    const { service, seed, orchestrator } = setup();
    const memory = seed(conversation(A, 'a1', { chunk_count: 3, indexed_chunk_count: 3 }));
    const claimed = await service.append(A, memory.id, { collectionId: 'a1', messages: [{ role: 'user', content: 'more' }] });
    assert.equal(claimed.status, 'queued');
    assert.equal(claimed.content.messages?.length, 2);
    assert.deepEqual([...orchestrator.started.values()][0]?.append, { workflowId: claimed.workflow_id, fromMessage: 1, fromChunk: 3 });
  });

  it('Temporal unreachable: 503, and the memory is as it was (messages out, status and message back)', async () => {
    const { service, seed, store, orchestrator } = setup();
    const memory = seed(conversation(A, 'a1', { status_message: 'earlier note' }));
    orchestrator.failing = true;
    await rejectsWith(
      service.append(A, memory.id, { collectionId: 'a1', messages: [{ role: 'user', content: 'more' }] }),
      503,
      'orchestrator_unavailable',
    );
    const row = store.memories.row(memory.id)!;
    assert.deepEqual(row.content.messages, memory.content.messages);
    assert.equal(row.status, 'complete');
    assert.equal(row.status_message, 'earlier note');
  });
});

describe('memory service: reads and reconciliation', () => {
  it('a content part that does not exist is 404 content_not_found on part', async () => {
    const { service, seed } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['a1'] });
    await rejectsWith(service.openFile(A, memory.id, 0), 404, 'content_not_found', 'part');
  });

  it('an expired import is invisible to get at once, before any sweep', async () => {
    const { service, seed } = setup();
    const memory = seed({ tenant_id: A, collection_ids: ['eph'], expires_at: new Date(Date.now() - 1) });
    await rejectsWith(service.get(A, memory.id), 404, 'memory_not_found');
  });

  it('a read counts as a use of the memory only once search can find it, not while a client polls its first run', async () => {
    // [status, chunks already searchable (an append's run keeps the earlier ones), counted]
    const cases: [Memory['status'], number, boolean][] = [
      ['queued', 0, false],
      ['reading', 0, false],
      ['structuring', 0, false],
      ['indexing', 0, false],
      ['failed', 0, false],
      ['complete', 1, true],
      ['structuring', 3, true],
    ];
    for (const [status, indexed, counted] of cases) {
      const { service, seed, store } = setup();
      const memory = seed({ tenant_id: A, collection_ids: ['a1'], status, indexed_chunk_count: indexed, accessed_at: [] });
      await service.get(A, memory.id);
      await new Promise((resolve) => setImmediate(resolve)); // the use is recorded without holding up the read
      assert.equal(store.memories.rows.get(memory.id)!.accessed_at?.length ?? 0, counted ? 1 : 0, status);
    }
  });

  it('reconcileQueued hands stale queued memories to their workflow and counts only the new starts', async () => {
    const { service, seed, orchestrator } = setup();
    const old = new Date(Date.now() - 120_000);
    const lost = seed({ tenant_id: A, collection_ids: ['a1'], status: 'queued', created_at: old });
    const running = seed({ tenant_id: A, collection_ids: ['a1'], status: 'queued', created_at: old });
    seed({ tenant_id: A, collection_ids: ['a1'], status: 'queued', created_at: new Date() }); // recent: its create may still be starting it
    await orchestrator.startIngestion({ memoryId: running.id, tenantId: A, collectionIds: ['a1'] });
    assert.equal(await service.reconcileQueued(60_000), 1);
    assert.ok(orchestrator.started.has(lost.workflow_id));
  });
});
