/**
 * Device memory as a client meets it, with inline snapshots (signed-URL references have their own
 * suite, device-memory-urls.test.ts): export, import into an ephemeral collection, stateless create
 * and search, the same answers as collection mode, and every refusal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemory, eventually, newTenant, sleep, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';

after(closeDatabase);

const TEXTS = [
  'Alice Chen manages the Berlin office of Acme Corp.',
  'Bob Patel runs the Paris office for Acme Corp.',
  'Carol Diaz inspects the warehouse in Hamburg every month.',
  'Alice Chen joined the board of the Berlin Tennis Club in 2021.',
  'Dave Kim manages the Tokyo office and reports to Alice Chen.',
];
const QUERIES = ['Who manages the Berlin office?', 'Acme Corp offices', 'the Hamburg warehouse', 'Alice Chen'];

type Entity = { id: string; name: string; category: string; description: string; score: number; found_by?: 'query' | 'hits' };
/** The graph's answer to the query itself: a collection search also shows what its hits mention (found_by "hits"). */
const names = (entities: Entity[] | null | undefined, top = 5): string[] =>
  (entities ?? [])
    .filter((entity) => entity.found_by !== 'hits')
    .slice(0, top)
    .map((entity) => entity.name);

/** Every document in every collection of the database, by collection. */
async function countEverything(): Promise<Record<string, number>> {
  const db = await database();
  const counts: Record<string, number> = {};
  for (const { name } of await db.listCollections().toArray()) counts[name] = await db.collection(name).countDocuments({});
  return counts;
}

/** Counts once the database is quiet (two equal readings): other suites' background work has settled. */
async function quietCounts(): Promise<Record<string, number>> {
  let previous = await countEverything();
  try {
    return await eventually(
      async () => {
        await sleep(500);
        const current = await countEverything();
        const settled = JSON.stringify(current) === JSON.stringify(previous);
        previous = current;
        if (!settled) throw new Error('the database is still changing');
        return current;
      },
      10_000,
      0,
    );
  } catch {
    return previous;
  }
}

describe('device memory (inline snapshots)', () => {
  let tenant: TenantFixture;
  let exported: Record<string, unknown>;

  before(async () => {
    tenant = await newTenant('device');
    for (const raw_text of TEXTS) {
      const id = await createMemory(tenant, { raw_text });
      await waitForStatus(tenant.api, id, ['complete']);
    }
  });

  it('exports a collection as a signed snapshot whose device search ranks like collection search', async () => {
    const response = await tenant.api.post('/v1/device-memory/snapshot/export', { collection_id: tenant.collectionId });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    exported = response.body.results;
    assert.equal(exported.format, 'engram.graph-snapshot');
    assert.equal(exported.format_version, '2.0');
    assert.match(String(exported.digest), /^sha256:[0-9a-f]{64}$/);
    assert.equal((exported.counts as { episodes: number }).episodes, TEXTS.length);
    assert.ok(!JSON.stringify(exported).includes(tenant.tenantId), 'the tenant id never appears in a snapshot');

    for (const query of QUERIES) {
      const collection = await tenant.api.search([tenant.collectionId], query);
      const device = await tenant.api.post('/v1/memories/search', { query, snapshot: exported });
      assert.equal(device.status, 200, JSON.stringify(device.body));
      assert.deepEqual(names(device.body.results.entities), names(collection.body.results.entities), query);
      assert.ok(Array.isArray(device.body.results.relationships));
    }
  });

  it('a snapshot sent again byte for byte answers as when parsed, for its own tenant only, and changed bytes are checked in full', async () => {
    // Padded past 1 MiB: bodies that large are parsed on the request-body thread, where bytes already opened are recognised unparsed.
    const pad = ' '.repeat(1024 * 1024);
    const text = JSON.stringify(exported);
    const search = (api: TenantFixture['api'], query: string, snapshot = text) =>
      api.post('/v1/memories/search', `{"query":${JSON.stringify(query)},"snapshot":${snapshot}}${pad}`);
    const first = await search(tenant.api, 'Alice Chen');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    for (const query of QUERIES) {
      const again = await search(tenant.api, query);
      const parsed = await tenant.api.post('/v1/memories/search', { query, snapshot: exported });
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.deepEqual(again.body.results, parsed.body.results, query);
    }
    const created = await tenant.api.post('/v1/memories', `{"raw_text":"Alice Chen opened the Rome office.","snapshot":${text}}${pad}`);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((created.body.results.snapshot.counts as { episodes: number }).episodes, TEXTS.length + 1);

    // The same bytes from another tenant are opened in full, and refused.
    const stranger = await newTenant('device-bytes');
    const foreign = await search(stranger.api, 'Alice');
    assert.equal(foreign.status, 400, JSON.stringify(foreign.body));
    assert.equal(foreign.body.error.code, 'snapshot_tenant_mismatch');
    // One changed letter in the body (the same length): not the bytes known, so checked, and refused.
    const name = (exported.body as { entities: { name: string }[] }).entities[0]!.name;
    const tampered = text.replace(`"name":${JSON.stringify(name)}`, `"name":${JSON.stringify(`X${name.slice(1)}`)}`);
    assert.notEqual(tampered, text);
    const changed = await search(tenant.api, 'Alice', tampered);
    assert.equal(changed.status, 400, JSON.stringify(changed.body));
    assert.equal(changed.body.error.code, 'snapshot_digest_mismatch');
  });

  it('imports a snapshot into an ephemeral collection that lists, gets and searches like the source, read-only', async () => {
    const response = await tenant.api.post('/v1/device-memory/snapshot/import', { snapshot: exported });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    const ephemeral = response.body.results.ephemeral_collection_id as string;
    assert.ok(Date.parse(response.body.results.expires_at) > Date.now());

    const listed = await tenant.api.get(`/v1/memories?collection_ids=${ephemeral}&limit=100`);
    assert.equal(listed.body.total_entries, TEXTS.length);
    const one = await tenant.api.get(`/v1/memories/${listed.body.results[0].id}`);
    assert.equal(one.status, 200);
    assert.ok(TEXTS.includes(one.body.results.chunks[0]));

    // The index feed reaches this process's index asynchronously: wait for the copy to be searchable.
    for (const query of QUERIES) {
      const source = await tenant.api.search([tenant.collectionId], query);
      const copy = await eventually(
        async () => {
          const found = await tenant.api.search([ephemeral], query);
          assert.ok(found.body.results.hits.length >= source.body.results.hits.length, `the copy finds as much: ${query}`);
          return found;
        },
        10_000,
        100,
      );
      const texts = (result: { body: { results: { hits: { text: string }[] } } }) => result.body.results.hits.map((hit) => hit.text);
      assert.deepEqual(texts(copy), texts(source), query);
      assert.deepEqual(names(copy.body.results.entities), names(source.body.results.entities), query);
    }

    const write = await tenant.api.post('/v1/memories', { collection_id: ephemeral, raw_text: 'Erin joined.' });
    assert.equal(write.status, 409);
    assert.equal(write.body.error.code, 'collection_read_only');
    const original = await createMemory(tenant, { raw_text: 'Frank inspects the Oslo depot.' });
    const moved = await tenant.api.patch(`/v1/memories/${original}`, { collection_ids: [tenant.collectionId, ephemeral] });
    assert.equal(moved.status, 409);
    assert.equal(moved.body.error.code, 'collection_read_only');
    await waitForStatus(tenant.api, original, ['complete']);
    await tenant.api.delete(`/v1/memories/${original}`);
  });

  it('creates statelessly: from {} and then from its own output it accumulates and merges, and persists nothing', async () => {
    const before = await quietCounts();
    let snapshot: Record<string, unknown> = {};
    for (const raw_text of TEXTS) {
      const response = await tenant.api.post('/v1/memories', { snapshot, raw_text, metadata: { via: 'device' } });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      snapshot = response.body.results.snapshot;
    }
    const counts = snapshot.counts as { episodes: number; entities: number };
    assert.equal(counts.episodes, TEXTS.length);
    const body = snapshot.body as { entities: { name: string; weight: number }[] };
    const alice = body.entities.filter((entity) => entity.name === 'Alice Chen');
    assert.equal(alice.length, 1, 'a repeated name merges into one entity');
    assert.equal(alice[0]!.weight, 3, 'mentioned by three memories');
    assert.equal(body.entities.filter((entity) => entity.name === 'Acme Corp').length, 1);

    for (const query of QUERIES) {
      const collection = await tenant.api.search([tenant.collectionId], query);
      const device = await tenant.api.post('/v1/memories/search', { query, snapshot });
      assert.deepEqual(names(device.body.results.entities), names(collection.body.results.entities), `same text both ways: ${query}`);
    }
    assert.deepEqual(await quietCounts(), before, 'device create and search wrote nothing to any collection');
  });

  it('refuses tampered, truncated, foreign and malformed snapshots with a stable code naming the field', async () => {
    const body = exported.body as { entities: { name: string }[]; episodes: { mentions: unknown[] }[] };
    const [first, ...rest] = body.episodes;
    const cases: [string, Record<string, unknown>, number, string, RegExp][] = [
      [
        'a renamed entity',
        { ...exported, body: { ...body, entities: [{ ...body.entities[0]!, name: 'Mallory' }, ...body.entities.slice(1)] } },
        400,
        'snapshot_digest_mismatch',
        /snapshot\.body/,
      ],
      [
        'a truncated mention list',
        { ...exported, body: { ...body, episodes: [{ ...first!, mentions: first!.mentions.slice(0, -1) }, ...rest] } },
        400,
        'snapshot_digest_mismatch',
        /snapshot\.body/,
      ],
      [
        'a changed header',
        { ...exported, graph_id: '00000000-0000-4000-8000-000000000000' },
        400,
        'snapshot_signature_invalid',
        /snapshot\.signature/,
      ],
      [
        'a forged signature',
        { ...exported, signature: 'eyJhbGciOiJFZERTQSJ9.e30.AAAA' },
        400,
        'snapshot_signature_invalid',
        /snapshot\.signature/,
      ],
      ['a newer major version', { ...exported, format_version: '3.0' }, 400, 'snapshot_version_unsupported', /format_version/],
      ['no body', { ...exported, body: undefined }, 400, 'snapshot_invalid', /snapshot\.body/],
    ];
    for (const [name, snapshot, status, code, field] of cases) {
      for (const [path, request] of [
        ['/v1/memories/search', { query: 'Alice', snapshot }],
        ['/v1/memories', { snapshot, raw_text: 'Alice runs the Rome office.' }],
        ['/v1/device-memory/snapshot/import', { snapshot }],
      ] as const) {
        const response = await tenant.api.post(path, request);
        assert.equal(response.status, status, `${name} at ${path}: ${JSON.stringify(response.body)}`);
        assert.equal(response.body.error.code, code, name);
        assert.match(response.body.error.details[0].field, field, name);
      }
    }
    const stranger = await newTenant('device-stranger');
    const foreign = await stranger.api.post('/v1/memories/search', { query: 'Alice', snapshot: exported });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 'snapshot_tenant_mismatch');
    const exportForeign = await stranger.api.post('/v1/device-memory/snapshot/export', { collection_id: tenant.collectionId });
    assert.equal(exportForeign.status, 404);
    assert.equal(exportForeign.body.error.code, 'collection_not_found');
    const missing = await stranger.api.post('/v1/device-memory/snapshot/export', { collection_id: '00000000-0000-4000-8000-000000000001' });
    assert.deepEqual(
      { ...missing.body.error, request_id: null, message: null, details: null },
      { ...exportForeign.body.error, request_id: null, message: null, details: null },
    );
  });

  it('answers every mode and field mistake with 400 naming the field', async () => {
    const ref = { collection_id: tenant.collectionId, get_url: 'https://storage.example.com/a' };
    const cases: [string, Record<string, unknown>, string][] = [
      ['/v1/memories', { snapshot: {}, collection_id: tenant.collectionId, raw_text: 'x y' }, 'collection_id'],
      ['/v1/memories', { snapshot: {}, snapshot_ref: ref, raw_text: 'x y' }, 'snapshot_ref'],
      ['/v1/memories', { snapshot_ref: ref, collection_id: tenant.collectionId, raw_text: 'x y' }, 'snapshot_ref'],
      ['/v1/memories', { snapshot: {} }, 'raw_text'],
      ['/v1/memories', { snapshot: {}, chunks: ['a'] }, 'raw_text'],
      ['/v1/memories', { snapshot: {}, raw_text: 'x y', messages: [{ role: 'user', content: 'hi' }] }, 'messages'],
      ['/v1/memories', { snapshot: {}, raw_text: 'x y', kind: 'document' }, 'kind'],
      ['/v1/memories', { snapshot: [], raw_text: 'x y' }, 'snapshot'],
      ['/v1/memories', { snapshot_ref: { ...ref, type: 'presigned' }, raw_text: 'x y' }, 'snapshot_ref.type'],
      ['/v1/memories', { snapshot_ref: { get_url: ref.get_url }, raw_text: 'x y' }, 'snapshot_ref.collection_id'],
      ['/v1/memories', { snapshot_ref: { ...ref, extra: 1 }, raw_text: 'x y' }, 'snapshot_ref'],
      ['/v1/memories/search', { query: 'a', snapshot: {}, collection_ids: [tenant.collectionId] }, 'snapshot'],
      ['/v1/memories/search', { query: 'a', snapshot: {}, snapshot_ref: ref }, 'snapshot_ref'],
      ['/v1/memories/search', { query: 'a', snapshot_ref: { collection_id: tenant.collectionId } }, 'snapshot_ref.get_url'],
      ['/v1/memories/search', { query: 'a', snapshot: {}, limit: 5 }, 'limit'],
      ['/v1/memories/search', { snapshot: {} }, 'query'],
      ['/v1/device-memory/snapshot/import', {}, 'snapshot'],
      ['/v1/device-memory/snapshot/import', { snapshot: {}, snapshot_ref: ref }, 'snapshot_ref'],
      ['/v1/device-memory/snapshot/export', {}, 'collection_id'],
      ['/v1/device-memory/snapshot/export', { collection_id: 'nope' }, 'collection_id'],
      [
        '/v1/device-memory/snapshot/export',
        { collection_id: tenant.collectionId, destination: { put_url: 'https://a.example/x' } },
        'destination.collection_id',
      ],
    ];
    for (const [path, body, field] of cases) {
      const response = await tenant.api.post(path, body);
      assert.equal(response.status, 400, `${path} ${JSON.stringify(body)} → ${JSON.stringify(response.body)}`);
      const fields = (response.body.error.details ?? []).map((detail: { field: string }) => detail.field);
      assert.ok(fields.includes(field), `${path} ${JSON.stringify(body)}: expected ${field} among ${fields.join(', ')}`);
    }
  });

  it('publishes the snapshot verification keys without private parts', async () => {
    const response = await tenant.api.get('/v1/device-memory/signing-keys');
    assert.equal(response.status, 200);
    assert.ok(response.body.keys.length >= 1);
    for (const key of response.body.keys) {
      assert.equal(key.d, undefined);
      assert.equal(key.alg, 'EdDSA');
    }
  });
});
