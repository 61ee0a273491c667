/**
 * The memory graph, end to end: what the structuring stage extracts from known sentences, how
 * entities merge across memories of a collection (and never across collections or tenants),
 * re-ingestion, and orphan removal on delete. The graph is read from the database, since "no
 * orphans" is a statement about what is stored; search responses show the same graph to clients.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemory, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database, terminalEventOf } from '../support/db.js';

after(closeDatabase);

interface EntityRow {
  _id: string;
  key: string;
  name: string;
  category: string;
  aliases: string[];
  alias_keys: string[];
}
interface FactRow {
  _id: string;
  subject_id: string;
  object_id: string;
  predicate: string;
  confidence: number;
}

const ALICE =
  'Alice Smith manages the Berlin office of Acme Corp. She moved to Berlin in March 2024 and paid $40 for 3 kg of coffee. ' +
  'Write to alice@acme.io or visit https://acme.io for details.';
const BOB = 'Alice met Bob Jones at Acme Corp in Paris last week.';

async function graphOf(tenantId: string, collectionId: string) {
  const db = await database();
  const filter = { tenant_id: tenantId, collection_id: collectionId };
  const [entities, facts, mentions] = await Promise.all([
    db.collection<EntityRow>('graph_entities').find(filter).toArray(),
    db.collection<FactRow>('graph_facts').find(filter).toArray(),
    db.collection<{ target_id: string; memory_id: string; count: number }>('graph_mentions').find(filter).toArray(),
  ]);
  const byKey = (pattern: RegExp) => entities.filter((entity) => entity.alias_keys.some((key) => pattern.test(key)));
  const weightOf = (targetId: string) => mentions.filter((row) => row.target_id === targetId).reduce((sum, row) => sum + row.count, 0);
  return { entities, facts, mentions, byKey, weightOf };
}

async function ingest(tenant: TenantFixture, body: Record<string, unknown>, collectionId = tenant.collectionId): Promise<string> {
  const id = await createMemory(tenant, { ...body, collection_id: collectionId });
  await waitForStatus(tenant.api, id, ['complete']);
  return id;
}

describe('structure extraction and the graph', () => {
  let tenant: TenantFixture;
  const ids: Record<string, string> = {};

  before(async () => {
    tenant = await newTenant('graph');
    ids.alice = await ingest(tenant, { raw_text: ALICE });
  });

  it('extracts entities with categories and a subject–predicate–object fact, and reports it as progress', async () => {
    const graph = await graphOf(tenant.tenantId, tenant.collectionId);
    const expectCategory = (pattern: RegExp, category: string) => {
      const found = graph.byKey(pattern);
      assert.ok(
        found.length >= 1,
        `an entity matching ${pattern} (have: ${graph.entities.map((e) => `${e.key}:${e.category}`).join(', ')})`,
      );
      assert.ok(
        found.some((entity) => entity.category === category),
        `${pattern} is a ${category} (got ${found.map((e) => e.category).join(', ')})`,
      );
    };
    expectCategory(/^alice smith$/, 'person');
    expectCategory(/^acme corp$/, 'organization');
    expectCategory(/^berlin$/, 'place');
    expectCategory(/march 2024/, 'date');
    expectCategory(/40/, 'money');
    expectCategory(/3 ?kg/, 'quantity');
    expectCategory(/^alice@acme\.io$/, 'email');
    expectCategory(/acme\.io/, 'url');
    expectCategory(/^berlin office$/, 'concept');

    const alice = graph.byKey(/^alice smith$/)[0]!;
    const office = graph.byKey(/^berlin office$/)[0]!;
    const manages = graph.facts.find((fact) => fact.subject_id === alice._id && fact.object_id === office._id);
    assert.ok(manages, `alice smith —?→ berlin office among ${JSON.stringify(graph.facts.map((f) => f.predicate))}`);
    assert.match(manages.predicate, /^manage/);
    assert.ok(manages.confidence > 0 && manages.confidence <= 1);

    const structuring = await (
      await database()
    )
      .collection<{ payload: { stage: string; message: string | null } }>('memory_events')
      .findOne(
        { 'payload.engram_id': ids.alice, 'payload.stage': 'structure', 'payload.user_stage': 'structuring' },
        { sort: { seq: -1 } },
      );
    assert.match(structuring?.payload.message ?? '', /\d+ entities, \d+ facts/);
  });

  it('merges the same entity across memories of a collection, by alias and by name part', async () => {
    ids.bob = await ingest(tenant, { raw_text: BOB });
    const graph = await graphOf(tenant.tenantId, tenant.collectionId);
    const alices = graph.entities.filter(
      (entity) => entity.category === 'person' && entity.alias_keys.some((key) => key.startsWith('alice')),
    );
    assert.equal(alices.length, 1, `one Alice: ${JSON.stringify(alices.map((e) => e.alias_keys))}`);
    assert.ok(alices[0]!.alias_keys.includes('alice'), 'the short form became an alias');
    const acme = graph.byKey(/^acme corp$/);
    assert.equal(acme.length, 1);
    const acmeMemories = new Set(graph.mentions.filter((row) => row.target_id === acme[0]!._id).map((row) => row.memory_id));
    assert.deepEqual([...acmeMemories].sort(), [ids.alice, ids.bob].sort());
    assert.equal(graph.byKey(/^bob jones$/)[0]?.category, 'person');
  });

  it('re-ingesting the same text adds no node or fact, and strengthens their weight', async () => {
    const before = await graphOf(tenant.tenantId, tenant.collectionId);
    const alice = before.byKey(/^alice smith$/)[0]!;
    const manages = before.facts.find((fact) => fact.subject_id === alice._id && /^manage/.test(fact.predicate))!;
    ids.again = await ingest(tenant, { raw_text: ALICE });
    const after = await graphOf(tenant.tenantId, tenant.collectionId);
    assert.deepEqual(after.entities.map((e) => e._id).sort(), before.entities.map((e) => e._id).sort());
    assert.deepEqual(after.facts.map((f) => f._id).sort(), before.facts.map((f) => f._id).sort());
    assert.ok(after.weightOf(manages._id) > before.weightOf(manages._id), 'fact weight grew');
    assert.ok(after.weightOf(alice._id) > before.weightOf(alice._id), 'entity weight grew');

    const search = await tenant.api.search([tenant.collectionId], 'Who manages the Berlin office?');
    const relationship = search.body.results.relationships.find((r: { id: string }) => r.id === manages._id);
    assert.ok(relationship, 'the fact is among the relationships of a search about it');
    assert.equal(relationship.weight, after.weightOf(manages._id));
  });

  it('deleting a memory removes its provenance and every entity or fact left without one', async () => {
    const before = await graphOf(tenant.tenantId, tenant.collectionId);
    const bob = before.byKey(/^bob jones$/)[0]!;
    const acme = before.byKey(/^acme corp$/)[0]!;
    const acmeWeight = before.weightOf(acme._id);

    assert.equal((await tenant.api.delete(`/v1/memories/${ids.bob}`)).status, 200);
    const afterBob = await graphOf(tenant.tenantId, tenant.collectionId);
    assert.equal(
      afterBob.entities.find((e) => e._id === bob._id),
      undefined,
      'Bob Jones was only in the deleted memory',
    );
    assert.ok(afterBob.byKey(/^paris$/).length === 0, 'Paris too');
    assert.ok(
      afterBob.entities.some((e) => e._id === acme._id),
      'Acme Corp is still mentioned elsewhere',
    );
    assert.ok(afterBob.weightOf(acme._id) < acmeWeight, 'and its weight was recomputed');
    assert.equal(afterBob.mentions.filter((row) => row.memory_id === ids.bob).length, 0);

    const remaining = [ids.alice!, ids.again!];
    const deleted = await tenant.api.post('/v1/memories/delete', remaining);
    assert.equal(deleted.body.results.deleted_count, 2);
    const empty = await graphOf(tenant.tenantId, tenant.collectionId);
    assert.deepEqual([empty.entities.length, empty.facts.length, empty.mentions.length], [0, 0, 0]);
  });

  it('attributes first-person statements in a conversation to the speaker role', async () => {
    const id = await ingest(tenant, {
      messages: [
        { role: 'user', content: 'I moved to Lisbon in 2023.' },
        { role: 'assistant', content: 'Lisbon is a lovely city.' },
      ],
    });
    const graph = await graphOf(tenant.tenantId, tenant.collectionId);
    const user = graph.byKey(/^user$/)[0];
    const lisbon = graph.byKey(/^lisbon$/)[0];
    assert.ok(user && lisbon, `user and lisbon entities among ${graph.entities.map((e) => e.key).join(', ')}`);
    const moved = graph.facts.find((fact) => fact.subject_id === user._id && fact.object_id === lisbon._id);
    assert.ok(moved, `user —move to→ lisbon among ${JSON.stringify(graph.facts)}`);
    assert.match(moved.predicate, /move/);
    const last = await terminalEventOf(id);
    assert.equal(last?.payload.user_stage, 'complete');
    await tenant.api.delete(`/v1/memories/${id}`);
  });
});

describe('graph isolation', () => {
  it('never merges across collections or tenants, and search shows only the searched graph', async () => {
    const first = await newTenant('graph-iso-a');
    const second = await newTenant('graph-iso-b');
    const otherCollection = (await first.api.post('/v1/collections', { name: 'elsewhere' })).body.results.id as string;
    const text = 'Zoltan Kovacs founded Quillfeather Labs in Budapest.';
    await ingest(first, { raw_text: text });
    await ingest(first, { raw_text: text }, otherCollection);
    await ingest(second, { raw_text: text });

    const graphs = [
      await graphOf(first.tenantId, first.collectionId),
      await graphOf(first.tenantId, otherCollection),
      await graphOf(second.tenantId, second.collectionId),
    ];
    const zoltans = graphs.map((graph) => graph.byKey(/^zoltan kovacs$/));
    for (const found of zoltans) assert.equal(found.length, 1);
    assert.equal(new Set(zoltans.map((found) => found[0]!._id)).size, 3, 'three separate nodes');
    for (const graph of graphs) assert.equal(graph.weightOf(zoltans[graphs.indexOf(graph)]![0]!._id), 1, 'each mentioned once');

    const search = await first.api.search([first.collectionId], 'Who founded Quillfeather Labs?');
    assert.equal(search.status, 200);
    const entityIds = search.body.results.entities.map((entity: { id: string }) => entity.id);
    assert.ok(entityIds.includes(zoltans[0]![0]!._id), 'the searched collection’s node');
    assert.ok(!entityIds.includes(zoltans[1]![0]!._id) && !entityIds.includes(zoltans[2]![0]!._id), 'no other collection’s or tenant’s');
  });
});
