/**
 * Facts that change over time, through the API: a later employer supersedes an earlier one, search
 * answers the current fact first (the old one only with include_history, marked), as_of answers
 * as the facts stood then, "joined Globex as CFO" keeps the role, deleting the superseding memory
 * restores the old fact (announced by fact_restored), and the fact_superseded events arrive in
 * order over the WebSocket. Then the endings: "left Acme", "no longer lives in Oslo",
 * "no longer works at", "ticket T-1182 was closed" each end the current fact without a
 * replacement (and without a fact_superseded event).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_FACT_LEXICON, PredicateClassifier } from '../../core/fact-lexicon.js';
import { connectDatabase, type Database } from '../../store/db.js';
import { EventLog } from '../../store/events.js';
import { FactEvents } from '../../store/fact-events.js';
import { GraphRepository } from '../../store/graph.js';
import { IndexChangeFeed } from '../../store/index-changes.js';
import { createMemory, eventually, newTenant, stack, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';
import { RawSocket, type Frame } from '../support/ws.js';
import { verifyEventFrame, type SigningJwk } from '../support/event-frame-verifier.js';

after(closeDatabase);

interface Relationship {
  id: string;
  subject_id: string;
  object_id: string;
  predicate: string;
  description: string;
  predicate_class: string | null;
  status: string;
  valid_from: string | null;
  valid_to: string | null;
  closed_by: { reason: string; fact_id: string; memory_id: string } | null;
}

describe('facts that change over time', () => {
  let tenant: TenantFixture;
  let socket: RawSocket;
  const memories: Record<'acme' | 'globex' | 'lisbon', string> = { acme: '', globex: '', lisbon: '' };

  const search = async (
    body: Record<string, unknown>,
  ): Promise<{ relationships: Relationship[]; hits: { memory_id: string; score: number }[] }> => {
    const response = await tenant.api.post('/v1/memories/search', { collection_ids: [tenant.collectionId], ...body });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.results;
  };
  const about = (relationships: Relationship[], word: string): Relationship | undefined =>
    relationships.find((relationship) => relationship.description.includes(word));
  const employers = (relationships: Relationship[]) => relationships.filter((relationship) => relationship.predicate_class === 'employer');

  before(async () => {
    tenant = await newTenant('fact-validity');
    socket = await RawSocket.open(tenant.api);
    socket.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['fact_superseded', 'fact_restored'] });
    await socket.next((frame) => frame.action === 'subscribed');
    // One after the other, as a client learning them over time would send them.
    const stories: [keyof typeof memories, string, string][] = [
      ['acme', 'Alice Chen works at Acme.', '2025-01-10T09:00:00Z'],
      ['globex', 'Alice Chen joined Globex as CFO.', '2025-06-01T09:00:00Z'],
      ['lisbon', 'Alice Chen moved from Berlin to Lisbon.', '2025-07-01T09:00:00Z'],
    ];
    for (const [name, text, occurredAt] of stories) {
      memories[name] = await createMemory(tenant, { raw_text: text, occurred_at: occurredAt });
      await waitForStatus(tenant.api, memories[name], ['complete']);
    }
  });
  after(() => socket?.close());

  it('answers the current employer first, with its validity, and leaves the superseded one out', async () => {
    const { relationships, hits } = await search({ query: 'Where does Alice Chen work?' });
    const first = relationships[0];
    assert.ok(first, 'relationships returned');
    assert.match(first.description, /Globex/u, JSON.stringify(relationships));
    assert.equal(first.status, 'current');
    assert.equal(first.predicate_class, 'employer');
    assert.equal(first.valid_from, '2025-06-01T09:00:00.000Z');
    assert.equal(first.valid_to, null);
    assert.equal(about(relationships, 'Acme'), undefined, 'the superseded employer is not returned without include_history');
    assert.ok(relationships.every((relationship) => relationship.status === 'current'));
    // The chunk saying where she works now ranks above the one saying where she used to.
    const order = hits.map((hit) => hit.memory_id);
    assert.ok(order.includes(memories.acme) && order.includes(memories.globex), JSON.stringify(hits));
    assert.ok(order.indexOf(memories.globex) < order.indexOf(memories.acme), JSON.stringify({ memories, hits }));
  });

  it('with include_history returns the old employer too, marked superseded by the Globex memory', async () => {
    const { relationships } = await search({ query: 'Where does Alice Chen work?', include_history: true });
    const [first] = employers(relationships);
    assert.match(first?.description ?? '', /Globex/u, JSON.stringify(relationships));
    const acme = about(relationships, 'Acme');
    assert.ok(acme, JSON.stringify(relationships));
    assert.equal(acme.status, 'superseded');
    assert.equal(acme.valid_from, '2025-01-10T09:00:00.000Z');
    assert.equal(acme.valid_to, '2025-06-01T09:00:00.000Z');
    assert.equal(acme.closed_by?.reason, 'superseded');
    assert.equal(acme.closed_by?.fact_id, first!.id);
    assert.equal(acme.closed_by?.memory_id, memories.globex);
    // Current facts rank above every superseded one.
    const statuses = relationships.map((relationship) => relationship.status);
    assert.ok(statuses.indexOf('superseded') > statuses.lastIndexOf('current'), JSON.stringify(statuses));
  });

  it('as_of answers as the facts stood then: Acme and Berlin', async () => {
    const { relationships } = await search({ query: 'Where does Alice Chen work and live?', as_of: '2025-03-01' });
    const acme = about(relationships, 'Acme');
    assert.ok(acme, JSON.stringify(relationships));
    assert.equal(acme.status, 'current');
    const berlin = about(relationships, 'Berlin');
    assert.ok(berlin, JSON.stringify(relationships));
    assert.equal(berlin.status, 'current');
    assert.equal(berlin.valid_to, '2025-07-01T09:00:00.000Z', 'she lived in Berlin until she moved');
    assert.equal(berlin.closed_by, null, 'nothing had closed it yet on 1 March');
    assert.equal(about(relationships, 'Globex'), undefined, 'not yet her employer on 1 March');
    assert.equal(
      relationships.find(
        (relationship) =>
          relationship.description.includes('Lisbon') && relationship.predicate_class === 'residence' && relationship.valid_to === null,
      ),
      undefined,
      'not yet her home on 1 March',
    );
  });

  it('keeps the role of "joined Globex as CFO": current now, not yet on 1 March', async () => {
    const { relationships } = await search({ query: "What is Alice Chen's role?" });
    const role = relationships.find((relationship) => relationship.predicate_class === 'role');
    assert.ok(role, JSON.stringify(relationships));
    assert.equal(role.predicate, 'join as');
    assert.match(role.description, /CFO/u);
    assert.equal(role.status, 'current');
    assert.equal(role.valid_from, '2025-06-01T09:00:00.000Z');
    assert.equal(relationships[0]?.id, role.id, 'the role ranks first for a question about the role');
    const then = await search({ query: "What is Alice Chen's role?", as_of: '2025-03-01' });
    assert.equal(
      then.relationships.find((relationship) => relationship.predicate_class === 'role'),
      undefined,
      JSON.stringify(then.relationships),
    );
  });

  it('refuses a malformed as_of and include_history, naming the field', async () => {
    for (const [body, field] of [
      [{ as_of: 'March 2025' }, 'as_of'],
      [{ as_of: '2025-03-01T10:00:00' }, 'as_of'],
      [{ include_history: 'yes' }, 'include_history'],
    ] as const) {
      const response = await tenant.api.post('/v1/memories/search', { query: 'Alice', collection_ids: [tenant.collectionId], ...body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.error.code, 'validation_failed');
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        JSON.stringify(response.body),
      );
    }
  });

  it('emitted fact_superseded over the WebSocket, in order, naming both facts and the superseding memory', async () => {
    const frames = await eventually(async () => {
      const events = socket.events().filter((frame: Frame) => frame.type === 'fact_superseded');
      assert.equal(events.length, 2, JSON.stringify(events));
      return events;
    });
    const payloads = frames.map((frame) => frame.payload as Record<string, string>);
    // Acme by Globex (learned second), then Berlin by Lisbon (learned third): in that order.
    assert.deepEqual(
      payloads.map((payload) => payload.predicate_class),
      ['employer', 'residence'],
    );
    const [employer, residence] = payloads as [Record<string, string>, Record<string, string>];
    assert.equal(employer.subject, 'Alice Chen');
    assert.equal(employer.old_object, 'Acme');
    assert.equal(employer.new_object, 'Globex');
    assert.equal(employer.predicate, 'work at');
    assert.equal(employer.new_predicate, 'join');
    assert.equal(employer.memory_id, memories.globex);
    assert.equal(employer.superseded_at, '2025-06-01T09:00:00.000Z');
    assert.equal(residence.old_object, 'Berlin');
    assert.equal(residence.new_object, 'Lisbon');
    assert.equal(residence.memory_id, memories.lisbon);
    assert.equal(residence.superseded_at, '2025-07-01T09:00:00.000Z');
    // In the order they happened, and in sequence order.
    const seqs = frames.map((frame) => frame.seq as number);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
    );
    const times = payloads.map((payload) => payload.superseded_at!);
    assert.deepEqual(times, [...times].sort());
  });

  it('deleting the Globex memory makes Acme current again, and says so with fact_restored', async () => {
    const { relationships: before } = await search({ query: 'Where does Alice Chen work?', include_history: true });
    const acmeBefore = about(before, 'Acme');
    assert.ok(acmeBefore?.closed_by, JSON.stringify(before));
    const response = await tenant.api.delete(`/v1/memories/${memories.globex}`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const [restored] = await eventually(async () => {
      const events = socket.events().filter((frame: Frame) => frame.type === 'fact_restored');
      assert.equal(events.length, 1, JSON.stringify(events));
      return events;
    });
    const superseded = socket.events().filter((frame: Frame) => frame.type === 'fact_superseded');
    assert.ok((restored!.seq as number) > Math.max(...superseded.map((frame) => frame.seq as number)), 'sequenced after them');
    assert.ok(restored!.signature, 'signed like every event frame');
    assert.equal(restored!.collection_id, tenant.collectionId);
    assert.deepEqual(restored!.payload, {
      memory_id: memories.globex,
      predicate_class: 'employer',
      subject_id: acmeBefore.subject_id,
      subject: 'Alice Chen',
      predicate: 'work at',
      old_fact_id: acmeBefore.id,
      old_object_id: acmeBefore.object_id,
      old_object: 'Acme',
      // The Globex fact left the graph with its memory: neither its id (a hash of its names) nor its date is given.
      valid_to: null,
    });
    await eventually(async () => {
      const { relationships } = await search({ query: 'Where does Alice Chen work?' });
      assert.equal(about(relationships, 'Globex'), undefined, JSON.stringify(relationships));
      const acme = about(relationships, 'Acme');
      assert.ok(acme, JSON.stringify(relationships));
      assert.equal(acme.status, 'current');
      assert.equal(acme.valid_to, null);
      assert.equal(acme.closed_by, null);
    });
  });
});

describe('endings and closures end the current fact without a replacement', () => {
  let tenant: TenantFixture;
  let socket: RawSocket;
  const ids: Record<string, string> = {};

  const search = async (body: Record<string, unknown>): Promise<Relationship[]> => {
    const response = await tenant.api.post('/v1/memories/search', { collection_ids: [tenant.collectionId], ...body });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body.results.relationships;
  };

  before(async () => {
    tenant = await newTenant('fact-endings');
    socket = await RawSocket.open(tenant.api);
    socket.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: ['fact_superseded', 'fact_restored'] });
    await socket.next((frame) => frame.action === 'subscribed');
    const stories: [string, string, string][] = [
      ['bob', 'Bob Meyer works at Initech.', '2025-01-01T09:00:00Z'],
      ['bobLeft', 'Bob Meyer left Initech.', '2025-04-01T09:00:00Z'],
      ['carla', 'Carla Diaz lives in Oslo.', '2024-05-01T09:00:00Z'],
      ['carlaGone', 'Carla Diaz no longer lives in Oslo.', '2025-02-01T09:00:00Z'],
      ['dan', 'Dan Ito works at Umbrella.', '2025-01-01T09:00:00Z'],
      ['danGone', 'Dan Ito no longer works at Umbrella.', '2025-05-01T09:00:00Z'],
      ['hana', 'Hana Sato joined Globex as CFO.', '2025-01-01T09:00:00Z'],
      ['hanaGone', 'Hana Sato no longer works at Globex.', '2025-06-01T09:00:00Z'],
      ['ticket', 'Ticket T-1182 is open.', '2025-03-01T09:00:00Z'],
      ['ticketClosed', 'Ticket T-1182 was closed.', '2025-03-05T09:00:00Z'],
      // Last, a real supersession: once its event is in, every event the endings could have caused is too.
      ['eva', 'Eva Park works at Hooli.', '2025-01-01T09:00:00Z'],
      ['evaMoved', 'Eva Park joined Vandelay.', '2025-02-01T09:00:00Z'],
    ];
    for (const [name, text, occurredAt] of stories) {
      ids[name] = await createMemory(tenant, { raw_text: text, occurred_at: occurredAt });
      await waitForStatus(tenant.api, ids[name]!, ['complete']);
    }
  });
  after(() => socket?.close());

  const endings: [name: string, query: string, predicate: string, word: string, endedAt: string, endedBy: string][] = [
    ['"Bob Meyer left Initech."', 'Where does Bob Meyer work?', 'work at', 'Initech', '2025-04-01T09:00:00.000Z', 'bobLeft'],
    ['"Carla Diaz no longer lives in Oslo."', 'Where does Carla Diaz live?', 'live in', 'Oslo', '2025-02-01T09:00:00.000Z', 'carlaGone'],
    ['"Dan Ito no longer works at Umbrella."', 'Where does Dan Ito work?', 'work at', 'Umbrella', '2025-05-01T09:00:00.000Z', 'danGone'],
    // The ending names the employer with another verb than the one that asserted it.
    ['"Hana Sato no longer works at Globex."', 'Where does Hana Sato work?', 'join', 'Globex', '2025-06-01T09:00:00.000Z', 'hanaGone'],
  ];
  for (const [name, query, predicate, word, endedAt, endedBy] of endings) {
    it(`${name} ends the fact: not current now, ended in the history, current before`, async () => {
      const history = await search({ query, include_history: true });
      const ended = history.find((relationship) => relationship.predicate === predicate && relationship.description.includes(word));
      assert.ok(ended, JSON.stringify(history));
      const now = await search({ query });
      assert.ok(now.every((relationship) => relationship.status === 'current'));
      assert.equal(
        now.find((relationship) => relationship.predicate_class === ended.predicate_class && relationship.description.includes(word)),
        undefined,
        JSON.stringify(now),
      );
      assert.equal(ended.status, 'ended');
      assert.equal(ended.valid_to, endedAt);
      assert.equal(ended.closed_by?.reason, 'ended');
      assert.equal(ended.closed_by?.memory_id, ids[endedBy]);
      // Every one of them held on 15 January 2025.
      const then = await search({ query, as_of: '2025-01-15T00:00:00Z' });
      const held = then.find((relationship) => relationship.predicate === predicate && relationship.description.includes(word));
      assert.ok(held, JSON.stringify(then));
      assert.equal(held.status, 'current');
    });
  }

  it('"Ticket T-1182 was closed." ends its open status: closed is its status now, open only in the history', async () => {
    const query = 'What is the status of ticket T-1182?';
    const now = await search({ query });
    const [first] = now;
    assert.ok(first, JSON.stringify(now));
    assert.equal(first.predicate_class, 'status');
    assert.equal(first.predicate, 'have status');
    assert.match(first.description, /closed/u);
    assert.equal(first.status, 'current');
    assert.equal(first.valid_from, '2025-03-05T09:00:00.000Z');
    assert.equal(
      now.find((relationship) => relationship.description.includes('open')),
      undefined,
      JSON.stringify(now),
    );
    const history = await search({ query, include_history: true });
    const open = history.find((relationship) => relationship.description.includes('open'));
    assert.ok(open, JSON.stringify(history));
    assert.equal(open.status, 'ended');
    assert.equal(open.valid_from, '2025-03-01T09:00:00.000Z');
    assert.equal(open.valid_to, '2025-03-05T09:00:00.000Z');
    assert.equal(open.closed_by?.reason, 'ended');
    assert.equal(open.closed_by?.fact_id, first.id);
    assert.equal(open.closed_by?.memory_id, ids.ticketClosed);
    const then = await search({ query, as_of: '2025-03-03' });
    assert.equal(then[0]?.id, open.id, JSON.stringify(then));
    assert.equal(then[0]?.status, 'current');
  });

  it('no ending emitted fact_superseded: the only one is the real supersession stored last', async () => {
    const events = await eventually(async () => {
      const found = socket.events().filter((frame: Frame) => frame.type === 'fact_superseded');
      assert.ok(
        found.some((frame) => (frame.payload as Record<string, string>).new_object === 'Vandelay'),
        JSON.stringify(found),
      );
      return found;
    });
    assert.deepEqual(
      events.map((frame) => (frame.payload as Record<string, string>).subject),
      ['Eva Park'],
    );
  });
});

describe('a deleted memory leaves no name in the event log, the fan-out, a replay or an export', () => {
  // Made-up names found nowhere else in the suite, so a scan of the whole database can look for them.
  let tenant: TenantFixture;
  let live: RawSocket;
  const ids: Record<'quenfrax' | 'vorlinde' | 'brastow', string> = { quenfrax: '', vorlinde: '', brastow: '' };
  const FACT_EVENTS = ['fact_superseded', 'fact_restored', 'events_redacted'];

  /** Documents of any collection of the database whose JSON holds `word` (any case). */
  const documentsNaming = async (word: string): Promise<string[]> => {
    const db = await database();
    const found: string[] = [];
    for (const { name } of await db.listCollections().toArray()) {
      for await (const doc of db.collection(name).find({})) {
        const text = JSON.stringify(doc);
        if (text.toLowerCase().includes(word)) found.push(`${name}: ${text.slice(0, 400)}`);
      }
    }
    return found;
  };
  /** Every fact event of the collection, replayed from the start of the log over a new connection. */
  const replay = async (): Promise<Frame[]> => {
    const socket = await RawSocket.open(tenant.api);
    try {
      socket.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: FACT_EVENTS, last_ack_seq: 0 });
      const newest = Math.max(...live.events().map((frame) => frame.seq as number));
      await socket.next((frame) => frame.action === 'event' && (frame.seq as number) >= newest);
      return socket.events();
    } finally {
      socket.close();
    }
  };
  const payloadOf = (frame: Frame) => frame.payload as Record<string, unknown>;

  before(async () => {
    tenant = await newTenant('fact-redaction');
    live = await RawSocket.open(tenant.api);
    live.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: FACT_EVENTS });
    await live.next((frame) => frame.action === 'subscribed');
    const stories: [keyof typeof ids, string, string][] = [
      ['quenfrax', 'Mirela Tosk works at Quenfrax.', '2025-01-10T09:00:00Z'],
      ['vorlinde', 'Mirela Tosk joined Vorlinde as CFO.', '2025-06-01T09:00:00Z'],
      ['brastow', 'Mirela Tosk works at Brastow.', '2025-09-01T09:00:00Z'],
    ];
    for (const [name, text, occurredAt] of stories) {
      ids[name] = await createMemory(tenant, { raw_text: text, occurred_at: occurredAt });
      await waitForStatus(tenant.api, ids[name], ['complete']);
    }
    // Quenfrax by Vorlinde (Vorlinde's event), then Vorlinde by Brastow (Brastow's event, naming Vorlinde).
    await eventually(async () => assert.equal(live.events().filter((frame) => frame.type === 'fact_superseded').length, 2));
  });
  after(() => live?.close());

  it('deleting the memory in the middle redacts both events that name its fact, and says which', async () => {
    const [quenfraxByVorlinde, vorlindeByBrastow] = live.events().filter((frame) => frame.type === 'fact_superseded');
    assert.equal(payloadOf(quenfraxByVorlinde!).new_object, 'Vorlinde');
    assert.equal(payloadOf(vorlindeByBrastow!).old_object, 'Vorlinde');
    assert.ok((await documentsNaming('vorlinde')).length > 0, 'the scan finds the name while its memory exists');

    assert.equal((await tenant.api.delete(`/v1/memories/${ids.vorlinde}`)).status, 200);
    const notice = await live.next((frame) => frame.type === 'events_redacted');
    assert.deepEqual(payloadOf(notice).seqs, [quenfraxByVorlinde!.seq, vorlindeByBrastow!.seq]);

    // The durable log (what a webhook replay reads too) and every other collection of the database.
    assert.deepEqual(await documentsNaming('vorlinde'), []);
    assert.ok((await documentsNaming('quenfrax')).length > 0, 'what other memories state stays');

    // Replayed over the WebSocket (the old events come from the API process's fan-out ring, where
    // the live session left them signed): rewritten, and still signed over what is sent.
    const frames = await eventually(async () => {
      const replayed = await replay();
      assert.ok(!JSON.stringify(replayed).toLowerCase().includes('vorlinde'), JSON.stringify(replayed));
      return replayed;
    });
    const bySeq = new Map(frames.map((frame) => [frame.seq, frame]));
    assert.deepEqual(payloadOf(bySeq.get(quenfraxByVorlinde!.seq)!), {
      memory_id: ids.vorlinde,
      predicate_class: 'employer',
      subject_id: payloadOf(quenfraxByVorlinde!).subject_id,
      subject: 'Mirela Tosk',
      predicate: 'work at',
      old_fact_id: payloadOf(quenfraxByVorlinde!).old_fact_id,
      old_object_id: payloadOf(quenfraxByVorlinde!).old_object_id,
      old_object: 'Quenfrax',
      redacted: true,
    });
    // An event of a surviving memory (Brastow's) that named the deleted memory's object.
    const brastowEvent = payloadOf(bySeq.get(vorlindeByBrastow!.seq)!);
    assert.equal(brastowEvent.redacted, true);
    assert.equal(brastowEvent.memory_id, ids.brastow);
    assert.equal(brastowEvent.new_object, 'Brastow');
    for (const field of ['predicate', 'old_fact_id', 'old_object_id', 'old_object']) assert.ok(!(field in brastowEvent), field);

    // What the delete changed is announced with surviving names only: Quenfrax holds again until
    // Brastow, which now supersedes it.
    const restored = frames.find((frame) => frame.type === 'fact_restored');
    assert.equal(payloadOf(restored!).old_object, 'Quenfrax');
    assert.equal(payloadOf(restored!).valid_to, '2025-09-01T09:00:00.000Z');
    assert.equal(payloadOf(restored!).new_fact_id, undefined);
    const now = frames.filter((frame) => frame.type === 'fact_superseded' && payloadOf(frame).redacted !== true);
    assert.deepEqual(
      now.map((frame) => [payloadOf(frame).old_object, payloadOf(frame).new_object]),
      [['Quenfrax', 'Brastow']],
    );

    // A verifier written from docs/event-signing.md accepts the rewritten frames as sent.
    const keys = (await tenant.api.get('/v1/memory-events/signing-keys')).body.keys as SigningJwk[];
    for (const frame of [bySeq.get(quenfraxByVorlinde!.seq)!, bySeq.get(vorlindeByBrastow!.seq)!]) {
      assert.ok(verifyEventFrame(frame, keys));
      const signature = frame.signature as { value: string };
      assert.notEqual(signature.value, (live.events().find((held) => held.seq === frame.seq)!.signature as { value: string }).value);
    }

    // A device snapshot exported now holds nothing of it either.
    const exported = await tenant.api.post('/v1/device-memory/snapshot/export', { collection_id: tenant.collectionId });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    const snapshot = JSON.stringify(exported.body.results).toLowerCase();
    assert.ok(!snapshot.includes('vorlinde'));
    assert.ok(snapshot.includes('quenfrax') && snapshot.includes('brastow'), 'the rest of the graph is exported');
  });

  it('deleting the first memory then redacts the events of the others that named its employer', async () => {
    const from = live.frames.length;
    assert.equal((await tenant.api.delete(`/v1/memories/${ids.quenfrax}`)).status, 200);
    await live.next((frame) => frame.type === 'events_redacted', 15_000, from);
    assert.deepEqual(await documentsNaming('quenfrax'), []);
    assert.deepEqual(await documentsNaming('vorlinde'), []);
    assert.ok((await documentsNaming('brastow')).length > 0);
    await eventually(async () => {
      const replayed = JSON.stringify(await replay()).toLowerCase();
      assert.ok(!replayed.includes('quenfrax') && !replayed.includes('vorlinde'), replayed);
    });
  });
});

describe('a failed append takes back the supersessions it announced', () => {
  let tenant: TenantFixture;
  let live: RawSocket;
  let store: Database;
  let memoryId: string;

  before(async () => {
    tenant = await newTenant('fact-failed-append');
    live = await RawSocket.open(tenant.api);
    live.send({
      action: 'subscribe',
      collections: [tenant.collectionId],
      event_types: ['fact_superseded', 'fact_restored', 'events_redacted'],
    });
    await live.next((frame) => frame.action === 'subscribed');
    store = await connectDatabase(stack().serviceEnv.MONGODB_URI!, stack().serviceEnv.MONGODB_DB!);
    memoryId = await createMemory(tenant, {
      messages: [{ role: 'user', content: 'Nadia Brenk works at Corvane.', timestamp: '2025-01-10T09:00:00Z' }],
    });
    await waitForStatus(tenant.api, memoryId, ['complete']);
    const appended = await tenant.api.post(`/v1/memories/${memoryId}/messages`, {
      collection_id: tenant.collectionId,
      messages: [{ role: 'user', content: 'Nadia Brenk joined Pellwick.', timestamp: '2025-06-01T09:00:00Z' }],
    });
    assert.equal(appended.status, 202, JSON.stringify(appended.body));
    await waitForStatus(tenant.api, memoryId, ['complete']);
  });
  after(async () => {
    live?.close();
    await store?.close();
  });

  it('the removal a failed append runs (its chunks from the first appended one) appends fact_restored and redacts what it had announced', async () => {
    const announced = await live.next((frame) => frame.type === 'fact_superseded');
    assert.equal((announced.payload as Record<string, unknown>).new_object, 'Pellwick');
    // What markFailed (activities/ingest.ts) runs for a failed append from chunk 1: the same store
    // call, on the stack's database, so the API process's fan-out sees what it appends.
    const factEvents = new FactEvents(
      new GraphRepository(store.db),
      await EventLog.open(store.db, store.capabilities, 20_000),
      await IndexChangeFeed.open(store.db, store.capabilities, 200_000),
      new PredicateClassifier(DEFAULT_FACT_LEXICON),
    );
    await factEvents.removeChunkRows(tenant.tenantId, memoryId, [tenant.collectionId], 1);

    const restored = await live.next((frame) => frame.type === 'fact_restored');
    assert.ok((restored.seq as number) > (announced.seq as number));
    assert.deepEqual(restored.payload, {
      ...Object.fromEntries(
        ['memory_id', 'predicate_class', 'subject_id', 'subject', 'predicate', 'old_fact_id', 'old_object_id', 'old_object'].map(
          (field) => [field, (announced.payload as Record<string, unknown>)[field]],
        ),
      ),
      valid_to: null,
    });
    assert.equal((restored.payload as Record<string, unknown>).old_object, 'Corvane');
    const notice = await live.next((frame) => frame.type === 'events_redacted');
    assert.deepEqual((notice.payload as Record<string, unknown>).seqs, [announced.seq]);
    const stored = await (await database()).collection('memory_events').findOne({ seq: announced.seq });
    assert.equal((stored?.payload as Record<string, unknown>).redacted, true);
    assert.ok(!JSON.stringify(stored).includes('Pellwick'), JSON.stringify(stored));
    // The rows of the memory's first message stay: Corvane is its employer again in the graph.
    const rows = await (await database()).collection('graph_mentions').find({ memory_id: memoryId, target_kind: 'fact' }).toArray();
    assert.ok(rows.length > 0 && rows.every((row) => row.chunk_index === 0), JSON.stringify(rows));
  });
});
