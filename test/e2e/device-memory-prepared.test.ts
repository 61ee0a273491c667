/**
 * Prepared device snapshots (docs/device-memory.md): a snapshot sent again is not parsed, checked
 * and indexed again, yet every check that guards it still answers first, one tenant's prepared
 * snapshot never serves another, and what is kept counts in the index budget. The suite runs its
 * own API process so the lookup counters it reads are its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { Api, createMemory, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

const TEXTS = [
  'Alice Chen manages the Berlin office of Acme Corp.',
  'Bob Patel runs the Paris office for Acme Corp.',
  'Alice Chen joined the board of the Berlin Tennis Club in 2021.',
];
const OTHER_TEXTS = ['Mallory Stone runs the Lisbon depot of Globex.', 'Mallory Stone hired Trent Moss in Lisbon.'];

type Snapshot = Record<string, unknown> & { digest: string; body: { entities: { name: string }[] } };

describe('prepared device snapshots', () => {
  let proc: ApiProcess;
  let owner: TenantFixture;
  let stranger: TenantFixture;
  let ownerApi: Api;
  let strangerApi: Api;
  let snapshot: Snapshot;
  let strangers: Snapshot;

  async function lookups(): Promise<{ hit: number; miss: number }> {
    const text = await (await fetch(`${proc.baseUrl}/metrics`)).text();
    const value = (result: string): number => {
      const line = text.split('\n').find((row) => row.startsWith(`engram_device_snapshot_cache_lookups_total{result="${result}"}`));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    assert.match(text, /# TYPE engram_device_snapshot_cache_lookups_total counter/);
    return { hit: value('hit'), miss: value('miss') };
  }

  const search = (api: Api, body: unknown, query = 'Who manages the Berlin office?') =>
    api.post('/v1/memories/search', { query, snapshot: body });

  before(async () => {
    [owner, stranger] = await Promise.all([newTenant('device-prepared'), newTenant('device-prepared-other')]);
    for (const [fixture, texts] of [
      [owner, TEXTS],
      [stranger, OTHER_TEXTS],
    ] as const) {
      for (const raw_text of texts) await waitForStatus(fixture.api, await createMemory(fixture, { raw_text }), ['complete']);
    }
    proc = await startApiProcess('api-device-prepared');
    ownerApi = new Api(proc.baseUrl, owner.apiKey);
    strangerApi = new Api(proc.baseUrl, stranger.apiKey);
    const exported = await ownerApi.post('/v1/device-memory/snapshot/export', { collection_id: owner.collectionId });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    snapshot = exported.body.results as Snapshot;
    const theirs = await strangerApi.post('/v1/device-memory/snapshot/export', { collection_id: stranger.collectionId });
    strangers = theirs.body.results as Snapshot;
  });

  after(async () => {
    await stopChild(proc?.child);
  });

  it('answers a snapshot sent again from its prepared index, the same as the first time and as collection search', async () => {
    const health = async (): Promise<number> =>
      ((await ownerApi.get('/v1/health')).body as { results: { index: { bytes: number } } }).results.index.bytes;
    const bytesBefore = await health();
    const start = await lookups();
    const first = await search(ownerApi, snapshot);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const afterFirst = await lookups();
    assert.deepEqual(afterFirst, { hit: start.hit, miss: start.miss + 1 }, 'opened in full once');
    assert.ok((await health()) > bytesBefore, 'the prepared snapshot counts in the index budget (GET /v1/health index.bytes)');

    const second = await search(ownerApi, snapshot);
    assert.equal(second.status, 200);
    assert.deepEqual(await lookups(), { hit: afterFirst.hit + 1, miss: afterFirst.miss }, 'served prepared');
    assert.deepEqual(second.body, first.body);
    const collection = await ownerApi.search([owner.collectionId], 'Who manages the Berlin office?');
    const named = (collection.body.results.entities as { name: string; found_by?: string }[])
      .filter((entity) => entity.found_by !== 'hits')
      .slice(0, 5)
      .map((entity) => entity.name);
    assert.deepEqual(
      (second.body.results.entities as { name: string }[]).slice(0, 5).map((entity) => entity.name),
      named,
    );
  });

  it('keeps what a device create answers prepared: the next call with it opens prepared', async () => {
    const created = await ownerApi.post('/v1/memories', { snapshot, raw_text: 'Carol Diaz inspects the Hamburg warehouse.' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const updated = created.body.results.snapshot as Snapshot;
    const before = await lookups();
    const found = await search(ownerApi, updated, 'the Hamburg warehouse');
    assert.equal(found.status, 200);
    assert.deepEqual(await lookups(), { hit: before.hit + 1, miss: before.miss });
    assert.ok((found.body.results.entities as { name: string }[]).some((entity) => entity.name.includes('Hamburg')));
  });

  it("never serves one tenant's prepared snapshot to another, nor a changed snapshot, whatever is swapped", async () => {
    // Both tenants' snapshots are prepared now.
    assert.equal((await search(ownerApi, snapshot)).status, 200);
    assert.equal((await search(strangerApi, strangers, 'Lisbon depot')).status, 200);
    const renamed = {
      ...snapshot.body,
      entities: [{ ...snapshot.body.entities[0]!, name: 'Mallory' }, ...snapshot.body.entities.slice(1)],
    };
    const cases: [string, Api, Record<string, unknown>, string][] = [
      ["the owner's snapshot, sent by another tenant", strangerApi, snapshot, 'snapshot_tenant_mismatch'],
      [
        "another tenant's snapshot carrying the owner's digest",
        strangerApi,
        { ...strangers, digest: snapshot.digest },
        'snapshot_signature_invalid',
      ],
      ["another tenant's header over the owner's body", strangerApi, { ...strangers, body: snapshot.body }, 'snapshot_digest_mismatch'],
      ["the owner's header over another tenant's body", ownerApi, { ...snapshot, body: strangers.body }, 'snapshot_digest_mismatch'],
      ['the owner’s snapshot with an entity renamed', ownerApi, { ...snapshot, body: renamed }, 'snapshot_digest_mismatch'],
      [
        "the owner's header with another tenant's signature",
        ownerApi,
        { ...snapshot, signature: strangers.signature },
        'snapshot_signature_invalid',
      ],
    ];
    for (const [name, api, body, code] of cases) {
      const before = await lookups();
      for (const [path, request] of [
        ['/v1/memories/search', { query: 'Who manages the Berlin office?', snapshot: body }],
        ['/v1/memories', { snapshot: body, raw_text: 'Mallory takes over the Berlin office.' }],
      ] as const) {
        const response = await api.post(path, request);
        assert.equal(response.status, 400, `${name} at ${path}: ${JSON.stringify(response.body)}`);
        assert.equal(response.body.error.code, code, `${name} at ${path}`);
      }
      assert.equal((await lookups()).hit, before.hit, `${name}: nothing was served prepared`);
    }
    // Each tenant still gets its own answer.
    const own = await search(strangerApi, strangers, 'Lisbon depot');
    const names = (own.body.results.entities as { name: string }[]).map((entity) => entity.name).join(', ');
    assert.match(names, /Lisbon|Mallory/);
    assert.doesNotMatch(names, /Alice|Berlin/);
  });
});
