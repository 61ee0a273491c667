/**
 * No text of a deleted memory survives: an entity or fact first described by a memory that is
 * later deleted is described by the memories that still mention it, in search responses and in
 * the store; nothing anywhere in the database holds the deleted memory's words. And the graph
 * part of a search response shows only what memories passing the request's filters say.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemory, eventually, newTenant, sleep, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';

after(closeDatabase);

let tenant: TenantFixture;
before(async () => {
  tenant = await newTenant('deleted-text');
});

interface GraphView {
  entities: { name: string; description: string }[];
  relationships: { predicate: string; description: string }[];
}

async function graphOf(collectionId: string, query: string, extra: Record<string, unknown> = {}): Promise<GraphView> {
  const response = await tenant.api.search([collectionId], query, extra);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  // Only the graph part: the response also echoes the query.
  const { entities, relationships } = response.body.results as GraphView;
  return { entities, relationships };
}

/** Every document of every collection of the database, as text, that contains `marker`. */
async function documentsContaining(marker: string): Promise<string[]> {
  const db = await database();
  const found: string[] = [];
  for (const { name } of await db.listCollections().toArray()) {
    for await (const doc of db.collection(name).find({})) {
      const text = JSON.stringify(doc);
      if (text.includes(marker)) found.push(`${name}: ${text.slice(0, 300)}`);
    }
  }
  return found;
}

describe('text of a deleted memory', () => {
  it('leaves the descriptions of entities and facts that other memories still mention', async () => {
    // The first memory to mention Bob Jones writes his description; its marker word is unique.
    const first = await createMemory(tenant, { raw_text: 'Bob Jones leads the Quarnvik warehouse near Madrid.' });
    await waitForStatus(tenant.api, first, ['complete']);
    const second = await createMemory(tenant, { raw_text: 'Bob Jones leads the Madrid team on Mondays.' });
    await waitForStatus(tenant.api, second, ['complete']);
    const before = await graphOf(tenant.collectionId, 'Bob Jones');
    assert.ok(
      before.entities.some((entity) => entity.name.toLowerCase() === 'bob jones'),
      JSON.stringify(before),
    );
    // The first memory to mention him wrote the stored entity's description.
    const db = await database();
    const stored = await db.collection('graph_entities').findOne({ collection_id: tenant.collectionId, alias_keys: 'bob jones' });
    assert.match(String(stored?.description), /Quarnvik/, 'described by the first memory while it exists');

    assert.equal((await tenant.api.delete(`/v1/memories/${first}`)).status, 200);
    const afterDelete = await graphOf(tenant.collectionId, 'Bob Jones');
    const survivor = afterDelete.entities.find((entity) => entity.name.toLowerCase() === 'bob jones');
    assert.ok(survivor, 'still known through the second memory');
    assert.equal(survivor.description, 'Bob Jones leads the Madrid team on Mondays.');
    assert.ok(!JSON.stringify(afterDelete).includes('Quarnvik'), JSON.stringify(afterDelete));
    // The store itself holds nothing of it either (what an export or another process reads).
    await eventually(
      async () =>
        assert.deepEqual(await documentsContaining('Quarnvik'), [], 'no document of any collection holds the deleted memory’s words'),
      10_000,
      200,
    );
  });
});

describe('names of a deleted memory', () => {
  it('leave an entity that other memories still mention: it keeps only the names they gave it', async () => {
    // The first memory creates the person under its full name; the second's shorter name joins it.
    const first = await createMemory(tenant, { raw_text: 'Ingrid Marit Halvorsen leads the lab near Tromso.' });
    await waitForStatus(tenant.api, first, ['complete']);
    const second = await createMemory(tenant, { raw_text: 'Ingrid Halvorsen joined the board of the museum on Monday.' });
    await waitForStatus(tenant.api, second, ['complete']);
    const db = await database();
    const stored = await db.collection('graph_entities').findOne({ collection_id: tenant.collectionId, alias_keys: 'ingrid halvorsen' });
    assert.equal(stored?.name, 'Ingrid Marit Halvorsen', JSON.stringify(stored));

    assert.equal((await tenant.api.delete(`/v1/memories/${first}`)).status, 200);
    // At once: the delete's refresh_graph notice is on the feed before DELETE answers, and every
    // search reads the feed first, so no process shows the old name after that (docs/consistency.md).
    const view = await graphOf(tenant.collectionId, 'Ingrid Halvorsen');
    assert.ok(
      view.entities.some((entity) => entity.name === 'Ingrid Halvorsen'),
      JSON.stringify(view),
    );
    assert.ok(!JSON.stringify(view).includes('Marit'), JSON.stringify(view));
    await eventually(
      async () => assert.deepEqual(await documentsContaining('Marit'), [], 'no document of any collection holds the deleted memory’s name'),
      10_000,
      200,
    );
    const renamed = await db.collection('graph_entities').findOne({ collection_id: tenant.collectionId, alias_keys: 'ingrid halvorsen' });
    assert.equal(renamed?.name, 'Ingrid Halvorsen', JSON.stringify(renamed));
    assert.equal(renamed?.key, 'ingrid halvorsen');
  });
});

describe('the graph of a filtered search', () => {
  let red: string;
  let blue: string;
  let between: string;

  before(async () => {
    red = await createMemory(tenant, {
      raw_text: 'Dana Scully investigates the Roswell incident.',
      metadata: { team: 'red' },
    });
    await waitForStatus(tenant.api, red, ['complete']);
    await sleep(50);
    between = new Date().toISOString();
    await sleep(50);
    blue = await createMemory(tenant, {
      kind: 'conversation',
      messages: [{ role: 'user', content: 'Fox Mulder investigates the Roswell incident.' }],
      metadata: { team: 'blue' },
    });
    await waitForStatus(tenant.api, blue, ['complete']);
  });

  /** Whether an entity's name contains the surname (the extractor may keep "Mulder" of "Fox Mulder"). */
  const names = (view: GraphView, surname: string) => view.entities.some((entity) => entity.name.toLowerCase().includes(surname));
  const says = (view: GraphView, words: string) => JSON.stringify(view).includes(words);

  it('shows both memories’ entities without filters', async () => {
    const view = await graphOf(tenant.collectionId, 'Dana Scully and Fox Mulder, Roswell incident');
    assert.ok(names(view, 'scully') && names(view, 'mulder'), JSON.stringify(view));
  });

  for (const [label, filter, kept, dropped] of [
    ['metadata_filters', { metadata_filters: { 'metadata.team': { $eq: 'blue' } } }, 'Mulder', 'Scully'],
    ['kind', { kind: 'document' }, 'Scully', 'Mulder'],
  ] as const) {
    it(`honours ${label}: entities, relationships and descriptions come only from matching memories`, async () => {
      const view = await graphOf(tenant.collectionId, 'Dana Scully and Fox Mulder, Roswell incident', filter);
      assert.ok(names(view, kept.toLowerCase()), JSON.stringify(view));
      assert.ok(!names(view, dropped.toLowerCase()), JSON.stringify(view));
      assert.ok(!says(view, dropped), `no text naming ${dropped}: ${JSON.stringify(view)}`);
      const roswell = view.entities.find((entity) => entity.name.toLowerCase() === 'roswell incident');
      if (roswell) assert.match(roswell.description, new RegExp(kept));
    });
  }

  it('honours created_before and created_after', async () => {
    const early = await graphOf(tenant.collectionId, 'Dana Scully and Fox Mulder, Roswell incident', { created_before: between });
    assert.ok(names(early, 'scully') && !says(early, 'Mulder'), JSON.stringify(early));
    const late = await graphOf(tenant.collectionId, 'Dana Scully and Fox Mulder, Roswell incident', { created_after: between });
    assert.ok(names(late, 'mulder') && !says(late, 'Scully'), JSON.stringify(late));
  });
});
