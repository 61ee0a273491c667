/**
 * The entities and relationships of a search come from the query's names and also from what its
 * top hits mention (after the named ones, by relevance), and only those that a visible memory backs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemory, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase } from '../support/db.js';

after(closeDatabase);

interface Entity {
  name: string;
  score: number;
}
interface Relationship {
  predicate: string;
  description: string;
  found_by?: string;
  status?: string;
}

describe('search: entities and relationships of what was found', () => {
  let tenant: TenantFixture;
  let officeId: string;
  before(async () => {
    tenant = await newTenant('hit-entities');
    officeId = await createMemory(tenant, {
      raw_text: 'Alice Chen manages the Berlin office. Tom Baker works in the Paris office.',
      metadata: { team: 'a' },
    });
    const otherId = await createMemory(tenant, { raw_text: 'Carol Diaz works in the Madrid office.', metadata: { team: 'b' } });
    await waitForStatus(tenant.api, officeId, ['complete']);
    await waitForStatus(tenant.api, otherId, ['complete']);
  });

  const search = async (body: Record<string, unknown>) => {
    const response = await tenant.api.post('/v1/memories/search', { collection_ids: [tenant.collectionId], ...body });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.results as { hits: { memory_id: string }[]; entities: Entity[]; relationships: Relationship[] };
  };

  it('answers a query that names nobody with the people, places and facts its top hit mentions', async () => {
    const results = await search({ query: 'Who works in the office?', metadata_filters: { 'metadata.team': 'a' } });
    assert.equal(results.hits[0]?.memory_id, officeId);
    const names = results.entities.map((entity) => entity.name);
    for (const name of ['Alice Chen', 'Tom Baker']) assert.ok(names.includes(name), `${name} in ${JSON.stringify(names)}`);
    const alice = results.entities.find((entity) => entity.name === 'Alice Chen') as Entity & { found_by?: string };
    assert.equal(alice.found_by, 'hits', 'the query names nobody: Alice Chen comes from the hit');
    const facts = results.relationships.filter((fact) => fact.found_by === 'hits');
    assert.ok(
      facts.some((fact) => /Alice Chen manages the Berlin office/.test(fact.description)),
      `the hit's facts are shown: ${JSON.stringify(results.relationships)}`,
    );
    for (const fact of facts) assert.equal(fact.status, 'current', "with their validity, like the query's facts");
    const scores = results.entities.map((entity) => entity.score);
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => b - a),
      'ranked by relevance',
    );
  });

  it('shows nothing from memories the search cannot see', async () => {
    const filtered = await search({ query: 'Who works in the office?', metadata_filters: { 'metadata.team': 'a' } });
    assert.ok(!filtered.entities.some((entity) => entity.name === 'Carol Diaz'), JSON.stringify(filtered.entities));
    assert.ok(!filtered.relationships.some((fact) => /Carol/.test(fact.description)));
    const all = await search({ query: 'Who works in the office?' });
    assert.ok(
      all.entities.some((entity) => entity.name === 'Carol Diaz'),
      'visible without the filter',
    );
    const vectorOnly = await search({ query: 'Who works in the office?', signals: ['vector', 'lexical'] });
    assert.deepEqual(vectorOnly.entities, [], 'without the graph signal, no graph is shown');
  });

  it("marks the hits' facts with their validity: a superseded one only with include_history", async () => {
    const people = await newTenant('hit-entities-validity');
    const stories: [string, string][] = [
      ['Bob Stone works at Initech.', '2024-01-10T09:00:00Z'],
      ['Bob Stone joined Hooli.', '2025-03-01T09:00:00Z'],
    ];
    const ids: string[] = [];
    for (const [text, occurredAt] of stories) {
      ids.push(await createMemory(people, { raw_text: text, occurred_at: occurredAt }));
      await waitForStatus(people.api, ids.at(-1)!, ['complete']);
    }
    const ask = async (body: Record<string, unknown>) => {
      // The query names nobody: every fact shown comes from the hits.
      const response = await people.api.post('/v1/memories/search', { collection_ids: [people.collectionId], query: 'works at', ...body });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.results as {
        hits: { memory_id: string }[];
        relationships: (Relationship & { predicate_class: string | null })[];
      };
    };
    const now = await ask({});
    assert.ok(
      now.hits.some((hit) => hit.memory_id === ids[0]),
      `the Initech memory is a hit: ${JSON.stringify(now.hits)}`,
    );
    assert.ok(!now.relationships.some((fact) => /Initech/.test(fact.description)), JSON.stringify(now.relationships));
    const history = await ask({ include_history: true });
    const initech = history.relationships.find((fact) => /Initech/.test(fact.description));
    assert.ok(initech, JSON.stringify(history.relationships));
    assert.equal(initech.found_by, 'hits');
    assert.equal(initech.status, 'superseded');
    assert.equal(initech.predicate_class, 'employer');
  });
});
