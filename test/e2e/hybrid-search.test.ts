/**
 * Hybrid search over HTTP: each fusion signal changes the ranking in a scenario built for it,
 * memory_unconfident for weak results, filters, and bad input. Every test works in its own
 * collection so the corpora do not disturb each other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemory, eventually, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';

after(closeDatabase);

interface Hit {
  memory_id: string;
  chunk_index: number;
  score: number;
  score_breakdown: Record<string, number>;
  raw_scores: { cosine: number | null; bm25: number | null };
}

let tenant: TenantFixture;

async function collectionWith(
  texts: Record<string, string | Record<string, unknown>>,
): Promise<{ collectionId: string; ids: Record<string, string> }> {
  const created = await tenant.api.post('/v1/collections', { name: `c-${Math.random().toString(36).slice(2, 10)}` });
  const collectionId = created.body.results.id as string;
  const ids: Record<string, string> = {};
  for (const [name, body] of Object.entries(texts)) {
    ids[name] = await createMemory(tenant, { collection_id: collectionId, ...(typeof body === 'string' ? { raw_text: body } : body) });
  }
  for (const id of Object.values(ids)) await waitForStatus(tenant.api, id, ['complete']);
  return { collectionId, ids };
}

async function ranked(collectionId: string, query: string, signals?: string[]): Promise<Hit[]> {
  const response = await tenant.api.search([collectionId], query, { limit: 20, ...(signals ? { signals } : {}) });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.results.hits as Hit[];
}

const rankOf = (hits: Hit[], memoryId: string): number => {
  const index = hits.findIndex((hit) => hit.memory_id === memoryId);
  return index < 0 ? Number.POSITIVE_INFINITY : index + 1;
};

before(async () => {
  tenant = await newTenant('hybrid');
});

describe('fusion signals', () => {
  it('lexical: an exact ticket code outranks look-alike tickets that only the lexical index tells apart', async () => {
    const { collectionId, ids } = await collectionWith({
      target: 'Ticket QX-88213: the printer on floor 3 jams.',
      a: 'Ticket QX-82813: the printer on floor 3 jams again.',
      b: 'Ticket QX-88231: the printer on floor 2 jams.',
      c: 'Ticket XQ-88213: the scanner on floor 3 jams.',
      d: 'Ticket QX-83218: the printer on floor 4 jams.',
      e: 'Ticket QZ-88213: the copier on floor 3 jams.',
    });
    const query = 'What is ticket QX-88213 about?';
    // The graph knows the code as an entity too, so it stays out of this comparison.
    const withoutLexical = await ranked(collectionId, query, ['vector', 'activation']);
    const withLexical = await ranked(collectionId, query, ['vector', 'lexical', 'activation']);
    const fused = await ranked(collectionId, query);
    const lexicalOnly = await ranked(collectionId, query, ['lexical']);
    // The premise: by meaning the six tickets are one text. A look-alike's cosine to the query is
    // within a hair of the target's (which of them edges ahead is float noise: it moved between
    // runs), so the vector signal is not what can put the exact code first.
    const cosineOf = (hit: Hit) => hit.raw_scores.cosine ?? 0;
    const targetCosine = cosineOf(withoutLexical.find((hit) => hit.memory_id === ids.target)!);
    const lookAlike = Math.max(...withoutLexical.filter((hit) => hit.memory_id !== ids.target).map(cosineOf));
    assert.ok(lookAlike > targetCosine - 0.02, `without lexical a look-alike is as close: ${lookAlike} against ${targetCosine}`);
    assert.equal(rankOf(withLexical, ids.target!), 1, 'adding lexical ranks the exact code first');
    assert.equal(rankOf(fused, ids.target!), 1, 'and so does the full fusion');
    assert.equal(rankOf(lexicalOnly, ids.target!), 1);
    assert.equal(fused[0]!.score_breakdown.lexical, 1);
    assert.ok(fused[0]!.raw_scores.bm25! > 0);
  });

  it('vector: a paraphrase with no words in common is found by meaning', async () => {
    const { collectionId, ids } = await collectionWith({
      target: 'We adopted a beagle puppy last spring and he sleeps at the foot of our bed.',
      a: 'The quarterly tax return is due at the end of the month.',
      b: 'Our kitchen tap keeps dripping and the plumber comes on Tuesday.',
    });
    const query = 'Which animal lives with this family?';
    const lexicalOnly = await ranked(collectionId, query, ['lexical']);
    const fused = await ranked(collectionId, query);
    assert.equal(rankOf(lexicalOnly, ids.target!), Number.POSITIVE_INFINITY, 'no shared term: lexical cannot find it');
    assert.equal(rankOf(fused, ids.target!), 1);
    assert.ok(fused[0]!.score_breakdown.vector! > 0);
  });

  it('graph: a fact about the office Alice manages brings in the chunk about that office', async () => {
    const { collectionId, ids } = await collectionWith({
      manages: 'Alice Smith manages the Berlin office.',
      office: 'The Berlin office moved to a converted brewery in Kreuzberg in May.',
      hiking: 'Alice Smith enjoys hiking in the Alps on weekends.',
      other: 'Our Madrid branch moved into a glass tower near the station.',
      noise: 'The cafeteria now serves vegan lunch on Fridays.',
    });
    const query = 'Where is Alice Smith working these days?';
    const withGraph = await ranked(collectionId, query);
    const withoutGraph = await ranked(collectionId, query, ['vector', 'lexical', 'activation']);
    const officeHit = withGraph.find((hit) => hit.memory_id === ids.office);
    assert.ok(officeHit, 'the office chunk is found with the graph');
    assert.ok(officeHit.score_breakdown.graph! > 0, 'through its graph signal');
    assert.ok(
      rankOf(withGraph, ids.office!) < rankOf(withoutGraph, ids.office!),
      `graph lifts the office chunk: ${rankOf(withGraph, ids.office!)} vs ${rankOf(withoutGraph, ids.office!)} without`,
    );
    const response = await tenant.api.search([collectionId], query);
    const names = response.body.results.entities.map((entity: { name: string }) => entity.name.toLowerCase());
    assert.ok(
      names.some((name: string) => name.includes('alice')),
      `entities name Alice: ${names.join(', ')}`,
    );
    assert.ok(response.body.results.relationships.some((r: { predicate: string }) => /manage/.test(r.predicate)));
  });

  it('activation: of two identical memories, the one used more often ranks first', async () => {
    const text = 'The spare key to the shed hangs on a hook behind the boiler.';
    const { collectionId, ids } = await collectionWith({ used: text, unused: text });
    for (let i = 0; i < 6; i++) assert.equal((await tenant.api.get(`/v1/memories/${ids.used}`)).status, 200);
    const query = 'where is the spare shed key';
    // Reads record their access asynchronously: wait until the ranking shows it.
    const fused = await eventually(
      async () => {
        const hits = await ranked(collectionId, query);
        assert.equal(rankOf(hits, ids.used!), 1);
        return hits;
      },
      5_000,
      100,
    );
    const used = fused.find((hit) => hit.memory_id === ids.used)!;
    const unused = fused.find((hit) => hit.memory_id === ids.unused)!;
    assert.ok(used.score_breakdown.activation! > unused.score_breakdown.activation!);
    const withoutActivation = await ranked(collectionId, query, ['vector', 'lexical', 'graph']);
    assert.equal(withoutActivation[0]!.score, withoutActivation[1]!.score, 'the other signals cannot tell them apart');
  });
});

describe('memory_unconfident', () => {
  let collectionId: string;

  before(async () => {
    ({ collectionId } = await collectionWith({
      boat: 'My sailboat is moored in Kiel harbour and needs new sails before the regatta.',
      oven: 'The pizza oven in the garden reaches 450 degrees Celsius after forty minutes of firing.',
    }));
  });

  const unconfidentEvents = async (query: string) =>
    (await database())
      .collection<{ type: string; collection_id: string; payload: Record<string, unknown> }>('memory_events')
      .find({ type: 'memory_unconfident', tenant_id: tenant.tenantId, 'payload.query': query })
      .toArray();

  it('is emitted for a nonsense query, in the response and on the event stream', async () => {
    const query = 'qwzx plorth vibbleglunk zzyzx';
    const response = await tenant.api.search([collectionId], query);
    assert.equal(response.status, 200);
    const { confidence, hits } = response.body.results;
    assert.equal(hits.length, 0);
    assert.equal(confidence.unconfident, true);
    assert.equal(confidence.reason, 'no_results');
    const events = await unconfidentEvents(query);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.collection_id, collectionId);
    const payload = events[0]!.payload;
    assert.equal(payload.reason, 'no_results');
    for (const field of ['entity_count', 'fact_count', 'episode_count', 'source_count']) assert.ok(Number.isInteger(payload[field]), field);
    for (const field of ['avg_activation', 'max_activation', 'avg_fact_confidence']) assert.equal(typeof payload[field], 'number', field);
  });

  it('is not emitted for a good query', async () => {
    const query = 'Where is the sailboat moored?';
    const response = await tenant.api.search([collectionId], query);
    assert.equal(response.body.results.confidence.unconfident, false);
    assert.equal(response.body.results.confidence.reason, null);
    assert.ok(response.body.results.confidence.max_activation > 0);
    assert.ok(response.body.results.hits.length > 0);
    assert.equal((await unconfidentEvents(query)).length, 0);
  });
});

describe('search filters and validation', () => {
  let collectionId: string;
  let ids: Record<string, string>;

  before(async () => {
    ({ collectionId, ids } = await collectionWith({
      red: { raw_text: 'The red bicycle has a squeaky chain.', metadata: { colour: 'red', wheels: 2 } },
      blue: { raw_text: 'The blue bicycle has a flat tyre.', metadata: { colour: 'blue', wheels: 2 } },
      chat: { messages: [{ role: 'user', content: 'My green bicycle was stolen from the station.' }] },
    }));
  });

  it('narrows by metadata_filters, kind and created_at range', async () => {
    const memoryIds = async (extra: Record<string, unknown>) => {
      const response = await tenant.api.search([collectionId], 'bicycle', extra);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return new Set((response.body.results.hits as Hit[]).map((hit) => hit.memory_id));
    };
    assert.deepEqual(await memoryIds({ metadata_filters: { 'metadata.colour': 'red' } }), new Set([ids.red]));
    assert.deepEqual(await memoryIds({ metadata_filters: { 'metadata.colour': { $in: ['red', 'blue'] } } }), new Set([ids.red, ids.blue]));
    assert.deepEqual(await memoryIds({ kind: 'conversation' }), new Set([ids.chat]));
    assert.equal((await memoryIds({ created_after: new Date(Date.now() + 60_000).toISOString() })).size, 0);
    assert.equal((await memoryIds({ created_before: new Date(Date.now() + 60_000).toISOString() })).size, 3);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ query: '   ' }, 'query'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 101 }, 'limit'],
      [{ metadata_filters: { 'metadata.colour': { $regex: 'r.*' } } }, 'metadata_filters'],
      [{ metadata_filters: { colour: 'red' } }, 'metadata_filters'],
      [{ signals: ['vector', 'telepathy'] }, 'signals.1'],
      [{ signals: ['activation'] }, 'signals'],
      [{ signals: [] }, 'signals'],
      [{ created_after: 'yesterday' }, 'created_after'],
      [{ created_after: '2026-02-01T00:00:00Z', created_before: '2026-01-01T00:00:00Z' }, 'created_before'],
      [{ kind: 'diary' }, 'kind'],
      [{ track_access: 'yes' }, 'track_access'],
    ];
    for (const [extra, field] of cases) {
      const response = await tenant.api.post('/v1/memories/search', { query: 'bicycle', collection_ids: [collectionId], ...extra });
      assert.equal(response.status, 400, `${JSON.stringify(extra)} → ${response.status}`);
      assert.equal(response.body.error.code, 'validation_failed');
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        `${JSON.stringify(extra)} names ${field}: ${JSON.stringify(response.body.error.details)}`,
      );
    }
  });
});
