import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../core/fact-lexicon.js';
import { OutboundRefusal } from '../core/outbound/policy.js';
import { generateKeysetEntry, type SigningKeyset } from '../core/signing-keyset.js';
import { jsonTextDigest } from '../core/json-body.js';
import { WorkerPool } from '../core/worker-pool.js';
import { cpuThreadScript, type CpuTasks } from '../models/cpu-tasks.js';
import { POOLED_JSON_MIN_BYTES } from '../models/json-tasks.js';
import type { Embedder } from '../models/embedder.js';
import { encodeFloat16, type SnapshotBody } from '../snapshot/format.js';
import { PreparedSnapshotCache } from '../snapshot/prepared-cache.js';
import { sealSnapshot } from '../snapshot/seal.js';
import type { PurgeOptions } from '../store/memory-purge.js';
import { ExportBudgetExceeded } from '../store/snapshots.js';
import { fakeStore, memoryRecord, rejectsWith, silentLogger } from '../test/support/fakes/index.js';
import { createCollectionService } from './collections.js';
import { createDeviceMemoryService, type DeviceMemoryOptions } from './device-memory.js';

const A = 'tenant-a';
const B = 'tenant-b';
const MODEL = 'test/model';
const DIMS = 4;
const TTL_SECONDS = 3600;
const CAPS = { maxEpisodes: 10, maxEntities: 10, maxFacts: 10, maxMentions: 20, maxChunks: 10 };

/** A deterministic embedder: no model is loaded. */
const embedder: Embedder = {
  modelId: MODEL,
  dimensions: DIMS,
  embedPassages: async (texts) => texts.map((text) => new Float32Array([text.length % 7, 1, 0, 0])),
  embedQuery: async (text) => new Float32Array([text.length % 7, 1, 0, 0]),
};

let keysetPromise: Promise<SigningKeyset> | undefined;
const keyset = () =>
  (keysetPromise ??= generateKeysetEntry('Ed25519').then((entry) => ({ keys: [{ ...entry, status: 'active' as const }] })));

function body(episodes = 2): SnapshotBody {
  return {
    episodes: Array.from({ length: episodes }, (_, index) => ({
      id: randomUUID(),
      kind: 'document' as const,
      name: null,
      metadata: { n: index },
      created_at: '2026-11-24T10:00:00.000Z',
      chunks: [
        {
          index: 0,
          text: `Episode ${index} text.`,
          source: { type: 'text' },
          vector: encodeFloat16(new Float32Array([0.5, -0.5, 0.5, -0.5])),
        },
      ],
    })),
    entities: [],
    facts: [],
    mentions: [],
  };
}

async function snapshotOf(tenantId: string, snapshotBody: SnapshotBody = body()): Promise<unknown> {
  const sealed = await sealSnapshot({ graphId: randomUUID(), tenantId, embeddingModel: MODEL, body: snapshotBody }, await keyset());
  return JSON.parse(Buffer.concat(sealed.pieces).toString('utf8'));
}

function setup(overrides: Partial<DeviceMemoryOptions> = {}, pool: Pick<WorkerPool<CpuTasks>, 'run'> | null = null) {
  const store = fakeStore();
  store.collections.seed(A, 'a1');
  store.collections.seed(B, 'b1');
  const outbound = {
    puts: [] as string[],
    refuse: null as OutboundRefusal | null,
    /** What a GET answers (a fresh copy each time, as a download is: the service may move its buffer to a thread). */
    download: null as Buffer | null,
    precheck(url: string) {
      if (this.refuse) throw this.refuse;
      void url;
    },
    async get(): Promise<Buffer> {
      if (!this.download) throw new Error('no GET in this test');
      return Buffer.from(this.download);
    },
    async put(url: string): Promise<{ status: number }> {
      this.puts.push(url);
      return { status: 200 };
    },
  };
  const deletes: { tenantId: string; ids: string[]; options: PurgeOptions | undefined }[] = [];
  const service = createDeviceMemoryService({
    store,
    collections: createCollectionService(store),
    embedder: async () => embedder,
    extractor: { id: 'unused', extract: () => Promise.reject(new Error('no extraction on these paths')) },
    classifier: new PredicateClassifier(DEFAULT_FACT_LEXICON),
    // A device create extracts on the pool and a large download is parsed there; the tests that need it hand one in.
    cpu: { pool: pool ?? { run: () => Promise.reject(new Error('no pool in this test')) } },
    keys: { current: keyset },
    snapshotCache: new PreparedSnapshotCache(10),
    outbound,
    deleteMemories: async (tenantId, ids, options) => {
      deletes.push({ tenantId, ids: [...ids], options });
      await store.purge.finish(await store.purge.begin(tenantId, ids), options);
    },
    options: {
      caps: CAPS,
      maxBytes: 1 << 20,
      chunkMaxChars: 1000,
      entitySimilarityThreshold: 0.9,
      ephemeralTtlSeconds: TTL_SECONDS,
      maxConcurrency: 4,
      maxConcurrencyPerTenant: 2,
      ...overrides,
    },
    logger: silentLogger(),
  });
  return { store, service, outbound, deletes };
}

describe('device memory: export', () => {
  it("another tenant's collection is 404 on collection_id, and nothing of it is counted or read", async () => {
    const { service, store } = setup();
    await rejectsWith(service.exportSnapshot(A, 'b1'), 404, 'collection_not_found', 'collection_id');
    assert.deepEqual(store.journal.names('snapshots.'), []);
  });

  it("a destination in another tenant's collection is 404 on destination.collection_id, before its URL is touched", async () => {
    const { service, store, outbound } = setup();
    await rejectsWith(
      service.exportSnapshot(A, 'a1', { collection_id: 'b1', put_url: 'https://example.com/put' }),
      404,
      'collection_not_found',
      'destination.collection_id',
    );
    assert.deepEqual(outbound.puts, []);
    assert.deepEqual(store.journal.names('snapshots.'), []);
  });

  it('a refused destination URL is 400 snapshot_url_refused on destination.put_url, before any read', async () => {
    const { service, store, outbound } = setup();
    outbound.refuse = new OutboundRefusal('private_address', 'host', 'resolves to a private address');
    await rejectsWith(
      service.exportSnapshot(A, 'a1', { collection_id: 'a1', put_url: 'https://10.0.0.1/put' }),
      400,
      'snapshot_url_refused',
      'destination.put_url',
    );
    assert.deepEqual(store.journal.names('snapshots.'), []);
  });

  const overCaps: [what: string, counts: { episodes: number; entities: number; facts: number; mentions: number }, setting: string][] = [
    ['episodes', { episodes: 11, entities: 0, facts: 0, mentions: 0 }, 'SNAPSHOT_MAX_EPISODES'],
    ['entities', { episodes: 1, entities: 11, facts: 0, mentions: 0 }, 'SNAPSHOT_MAX_ENTITIES'],
    ['facts', { episodes: 1, entities: 1, facts: 11, mentions: 0 }, 'SNAPSHOT_MAX_FACTS'],
    ['mentions', { episodes: 1, entities: 1, facts: 1, mentions: 21 }, 'SNAPSHOT_MAX_MENTIONS'],
  ];
  for (const [what, counts, setting] of overCaps) {
    it(`a collection over the ${what} cap is 413 naming ${setting}, refused from its counts before any row is read`, async () => {
      const { service, store } = setup();
      store.snapshots.counts = counts;
      const error = await rejectsWith(service.exportSnapshot(A, 'a1'), 413, 'snapshot_too_large', 'collection_id');
      assert.match(error.message, new RegExp(setting));
      assert.deepEqual(store.journal.names('snapshots.'), ['snapshots.countCollection']);
    });
  }

  it('a read that passes the byte budget is 413 naming SNAPSHOT_MAX_BYTES, and the budget given is the cap', async () => {
    const { service, store } = setup({ maxBytes: 5000 });
    store.snapshots.readError = new ExportBudgetExceeded(5000);
    const error = await rejectsWith(service.exportSnapshot(A, 'a1'), 413, 'snapshot_too_large', 'collection_id');
    assert.match(error.message, /SNAPSHOT_MAX_BYTES/);
    assert.equal(store.journal.argsOf('snapshots.readCollection')[0]?.[3], 5000);
  });

  it('an export is sealed for the tenant and the collection; with a destination it answers a receipt instead', async () => {
    const { service, outbound } = setup();
    const inline = await service.exportSnapshot(A, 'a1');
    assert.ok('snapshot' in inline);
    assert.equal(inline.snapshot.header.graph_id, 'a1');
    const delivered = await service.exportSnapshot(A, 'a1', { collection_id: 'a1', put_url: 'https://example.com/put' });
    assert.ok('receipt' in delivered);
    assert.equal(delivered.receipt.collection_id, 'a1');
    assert.equal(delivered.receipt.graph_id, 'a1');
    assert.deepEqual(outbound.puts, ['https://example.com/put']);
  });
});

describe('device memory: concurrency bounds', () => {
  /** An export that waits in its count until released: it holds its slot meanwhile. */
  function holdExports(store: ReturnType<typeof setup>['store']) {
    const releases: (() => void)[] = [];
    const count = store.snapshots.countCollection.bind(store.snapshots);
    store.snapshots.countCollection = async (...args) => {
      await new Promise<void>((resolve) => releases.push(resolve));
      return count(...args);
    };
    return () => {
      store.snapshots.countCollection = count;
      releases.splice(0).forEach((release) => release());
    };
  }

  it("beyond the tenant's limit: 503 device_busy with Retry-After; another tenant still gets in", async () => {
    const { service, store } = setup({ maxConcurrency: 4, maxConcurrencyPerTenant: 2 });
    const release = holdExports(store);
    const held = [service.exportSnapshot(A, 'a1'), service.exportSnapshot(A, 'a1')];
    const error = await rejectsWith(service.exportSnapshot(A, 'a1'), 503, 'device_busy');
    assert.equal(error.headers?.['Retry-After'], '1');
    assert.match(error.message, /DEVICE_MAX_CONCURRENCY_PER_TENANT/);
    const other = service.exportSnapshot(B, 'b1');
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await Promise.all([...held, other]);
    // The slots are given back: the tenant gets in again.
    await service.exportSnapshot(A, 'a1');
  });

  it("beyond the process's limit: 503 device_busy naming DEVICE_MAX_CONCURRENCY", async () => {
    const { service, store } = setup({ maxConcurrency: 1, maxConcurrencyPerTenant: 1 });
    const release = holdExports(store);
    const held = service.exportSnapshot(A, 'a1');
    const error = await rejectsWith(service.exportSnapshot(B, 'b1'), 503, 'device_busy');
    assert.match(error.message, /DEVICE_MAX_CONCURRENCY\)/);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await held;
  });
});

describe('device memory: import into an ephemeral collection', () => {
  it('copies the snapshot under ids of its own into a new read-only collection that expires after the TTL', async () => {
    const { service, store } = setup();
    const snapshotBody = body(2);
    const before = Date.now();
    const result = await service.importSnapshot(A, { snapshot: await snapshotOf(A, snapshotBody) });
    const collection = store.collections.rows.get(result.ephemeralCollectionId);
    assert.ok(collection?.expires_at);
    assert.equal(collection.tenant_id, A);
    assert.ok(Math.abs(collection.expires_at.getTime() - (before + TTL_SECONDS * 1000)) < 60_000);
    const [imported] = store.snapshots.imports;
    assert.deepEqual(imported?.scope, { tenantId: A, collectionId: result.ephemeralCollectionId });
    const episodeIds = new Set(snapshotBody.episodes.map((episode) => episode.id));
    assert.equal(imported?.memories.length, 2);
    assert.ok(
      imported.memories.every((memory) => !episodeIds.has(memory.id)),
      'memory ids are new',
    );
    // The copy is read-only: writing into it is refused like any imported collection.
    await rejectsWith(
      createCollectionService(store).assertWritable(A, [result.ephemeralCollectionId], 'collection_id'),
      409,
      'collection_read_only',
    );
  });

  it('a snapshot sealed for another tenant is refused before anything is created', async () => {
    const { service, store } = setup();
    await rejectsWith(service.importSnapshot(A, { snapshot: await snapshotOf(B) }), 400, 'snapshot_tenant_mismatch');
    assert.deepEqual(store.journal.names('collections.'), []);
  });

  it('an import that fails part-way leaves nothing: its memories, leftovers, collection and partitions all go', async () => {
    const { service, store, deletes } = setup();
    store.snapshots.failWrite = new Error('write failed');
    await assert.rejects(service.importSnapshot(A, { snapshot: await snapshotOf(A, body(4)) }), /write failed/);
    const created = store.journal.argsOf('collections.create')[0]?.[0] as string;
    assert.equal(store.collections.rows.has(created), false);
    assert.equal(store.memories.rows.size, 0);
    assert.deepEqual(deletes[0]?.options, { indexNotices: 'by_caller' });
    assert.deepEqual(store.journal.argsOf('snapshots.removeLeftoversOf'), [[A, created]]);
    assert.deepEqual(store.indexChanges.notices, [{ op: 'drop_collection', tenantId: A, collectionId: created }]);
  });

  it('an import beyond MAX_COLLECTIONS_PER_TENANT is refused (409 collection_limit_reached)', async () => {
    const store = fakeStore();
    store.collections.seed(A, 'a1');
    const collections = createCollectionService(store, { maxCollectionsPerTenant: 1 });
    await rejectsWith(collections.createEphemeral(A, TTL_SECONDS), 409, 'collection_limit_reached', 'name');
  });
});

/** The CPU pool, with the kind of each task it ran and what the thread answered. */
function recordingPool(pool: WorkerPool<CpuTasks>) {
  const ran: { kind: string; output: unknown }[] = [];
  const recording: Pick<WorkerPool<CpuTasks>, 'run'> = {
    run: (kind, input, options) => {
      const running = pool.run(kind, input, options);
      // Recorded before the caller takes the answer (this reaction is registered first).
      running.then(
        (output) => ran.push({ kind, output }),
        () => undefined,
      );
      return running;
    },
  };
  return { pool: recording, ran };
}

/** A sealed snapshot of one episode whose chunk holds `chars` characters, as a signed URL would serve it. */
async function sealedBytes(tenantId: string, chars: number): Promise<Buffer> {
  const snapshotBody = body(1);
  snapshotBody.episodes[0]!.chunks[0]!.text = 'Alice Chen visits Berlin. '.repeat(Math.ceil(chars / 26)).slice(0, chars);
  const sealed = await sealSnapshot({ graphId: randomUUID(), tenantId, embeddingModel: MODEL, body: snapshotBody }, await keyset());
  return Buffer.concat(sealed.pieces);
}

describe('device memory: a snapshot downloaded by snapshot_ref', () => {
  const threads = new WorkerPool<CpuTasks>(cpuThreadScript, 1);
  after(() => threads.close());
  const ref = { collection_id: 'a1', get_url: 'https://objects.example/snapshot' };
  const MAX_BYTES = 4 << 20;

  it("from 1 MiB on is parsed on the worker-thread pool, which also works out its body's digest (nothing of it on the event loop)", async () => {
    const { pool, ran } = recordingPool(threads);
    const { service, store, outbound } = setup({ maxBytes: MAX_BYTES }, pool);
    outbound.download = await sealedBytes(A, 1_200_000);
    assert.ok(outbound.download.length >= POOLED_JSON_MIN_BYTES, `${outbound.download.length} bytes`);
    const document = JSON.parse(outbound.download.toString('utf8')) as { body: unknown };
    await service.importSnapshot(A, { snapshotRef: ref });
    assert.equal(store.snapshots.imports[0]?.memories[0]?.chunks[0]?.text.length, 1_200_000, 'the whole snapshot was imported');
    assert.deepEqual(
      ran.map((task) => task.kind),
      ['parseJsonBody'],
      'the download was parsed on a pool thread',
    );
    const answer = ran[0]!.output as { ok: true; digests: { path: unknown[]; text: unknown }[] };
    assert.deepEqual(answer.digests, [{ path: ['body'], text: jsonTextDigest(document.body) }], "the body's digest was worked out there");
  });

  it('below 1 MiB is parsed on the loop, by the same parser (no trip to a thread)', async () => {
    const { pool, ran } = recordingPool(threads);
    const { service, store, outbound } = setup({ maxBytes: MAX_BYTES }, pool);
    outbound.download = await sealedBytes(A, 1000);
    await service.importSnapshot(A, { snapshotRef: ref });
    assert.equal(store.snapshots.imports[0]?.memories[0]?.chunks[0]?.text.length, 1000);
    assert.deepEqual(ran, []);
  });

  // What is not a snapshot answers the same whichever side parsed it: each case small (on the loop)
  // and padded past 1 MiB with the whitespace JSON allows (on a thread).
  const pad = ' '.repeat(POOLED_JSON_MIN_BYTES);
  const notSnapshots: [string, (whole: Buffer) => string, string, string][] = [
    ['a truncated snapshot', (whole) => whole.subarray(0, whole.length >> 1).toString('utf8'), 'snapshot_ref.get_url', 'not valid JSON'],
    ['an empty download', () => '', 'snapshot_ref.get_url', 'not valid JSON'],
    ['a stray token', (whole) => `${whole.toString('utf8')},`, 'snapshot_ref.get_url', 'not valid JSON'],
    ['a __proto__ key (refused as the body parser refuses it)', () => '{"__proto__":{"a":1}}', 'snapshot_ref.get_url', 'not valid JSON'],
    ['a JSON number', () => '123', 'snapshot_ref', 'must be a JSON object'],
    ['a JSON array', () => '[]', 'snapshot_ref', 'must be a JSON object'],
  ];
  for (const [name, make, field, issue] of notSnapshots) {
    it(`${name} is 400 snapshot_invalid on ${field}, parsed on the loop or on a thread, and nothing is imported`, async () => {
      const whole = await sealedBytes(A, 1000);
      for (const [side, text] of [
        ['loop', make(whole)],
        ['thread', `${make(whole)}${pad}`],
      ] as const) {
        const { pool, ran } = recordingPool(threads);
        const { service, store, outbound } = setup({ maxBytes: MAX_BYTES }, pool);
        outbound.download = Buffer.from(text, 'utf8');
        const error = await rejectsWith(service.importSnapshot(A, { snapshotRef: ref }), 400, 'snapshot_invalid', field);
        assert.match(error.message, new RegExp(issue), side);
        assert.equal(ran.length, side === 'thread' ? 1 : 0, side);
        assert.deepEqual(store.journal.names('collections.'), [], `${side}: no ephemeral collection`);
      }
    });
  }
});

describe('device memory: the expiry sweep', () => {
  it('removes expired collections through the one delete cascade, one notice per collection, and leaves live ones', async () => {
    const { service, store, deletes } = setup();
    const past = new Date(Date.now() - 1000);
    store.collections.seed(A, 'expired', past);
    store.collections.seed(A, 'live', new Date(Date.now() + 60_000));
    const expiredMemories = Array.from({ length: 3 }, () => memoryRecord({ tenant_id: A, collection_ids: ['expired'], expires_at: past }));
    const liveMemory = memoryRecord({ tenant_id: A, collection_ids: ['live'], expires_at: new Date(Date.now() + 60_000) });
    for (const memory of [...expiredMemories, liveMemory]) store.memories.rows.set(memory.id, memory);
    assert.equal(await service.sweepExpired(), 1);
    assert.deepEqual([...store.memories.rows.keys()], [liveMemory.id]);
    assert.ok(store.collections.rows.has('live'));
    assert.equal(store.collections.rows.has('expired'), false);
    assert.ok(deletes.every((call) => call.options?.indexNotices === 'by_caller'));
    assert.deepEqual(store.indexChanges.notices, [{ op: 'drop_collection', tenantId: A, collectionId: 'expired' }]);
    assert.deepEqual(store.journal.argsOf('snapshots.removeLeftoversOf'), [[A, 'expired']]);
  });
});
