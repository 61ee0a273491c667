/**
 * Workflow reads end to end: conversations about two recurring processes (expense approvals and
 * support tickets), a one-off and small talk go in over HTTP; the four read endpoints must show the
 * planted processes as the most confident patterns, link each conversation to its instance at the
 * right position, chain one ticket across two conversations by its number, and follow deletes and
 * collection changes. docs/workflows.md describes the rules these tests hold the service to.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { ApiError, MemoryServiceClient } from '../../client/rest.js';
import { stopChild } from '../../dev/stack.js';
import { Api, createMemory, eventually, newTenant, sleep, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';
import { startApiProcess } from '../support/processes.js';

after(closeDatabase);

type Message = { role: 'user' | 'assistant'; content: string };
const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string): Message => ({ role: 'assistant', content });

const EXPENSES: Message[][] = [
  [
    user('Hi! How was your weekend?'),
    assistant('Lovely, thanks. I went hiking.'),
    user('I submitted the expense report for the Berlin trip on Monday.'),
    user('The manager approved it on Tuesday.'),
    user('Finance reimbursed me on Friday.'),
  ],
  [user('I filed the expense report for the Paris conference.'), user('Dana signed off on it.'), user('Finance paid me last week.')],
  [
    user('I sent in the expense report for the client dinner.'),
    assistant('Great.'),
    user('The manager approved it.'),
    user('Finance reimbursed me.'),
  ],
  // Still running: submitted and approved, not paid yet.
  [user('I submitted the expense report for the Lisbon workshop.'), user('The manager approved it this morning.')],
];

const TICKETS: Message[][] = [
  [
    user('I opened ticket 4101 about the VPN outage.'),
    user('Support assigned ticket 4101 to Bob.'),
    user('Bob escalated ticket 4101 to the network team.'),
    user('The network team resolved ticket 4101.'),
  ],
  [
    user('I opened ticket 4102 about the broken printer.'),
    user('Support assigned ticket 4102 to Carol.'),
    user('Carol escalated ticket 4102 to the hardware team.'),
    user('The hardware team closed ticket 4102.'),
  ],
  [
    user('I logged ticket 4104 about the flaky Wi-Fi.'),
    user('Support assigned ticket 4104 to Dave.'),
    user('Dave escalated ticket 4104 to the network team.'),
    user('The network team resolved ticket 4104.'),
  ],
];

// One ticket told in two conversations: its number chains them into one instance.
const TICKET_4103_START: Message[] = [user('I opened ticket 4103 about the slow laptop.'), user('Support assigned ticket 4103 to Erin.')];
const TICKET_4103_END: Message[] = [
  user('Erin escalated ticket 4103 to the hardware team.'),
  user('The hardware team resolved ticket 4103.'),
];

const ONE_OFF: Message[] = [user('I scheduled a dentist appointment.'), user('Then I cancelled the gym membership.')];
const SMALL_TALK: Message[] = [user('The weather is great today.'), assistant('Enjoy the sunshine!')];

async function ingest(tenant: TenantFixture, messages: Message[], collectionId = tenant.collectionId): Promise<string> {
  const id = await createMemory(tenant, { kind: 'conversation', messages, collection_id: collectionId });
  await waitForStatus(tenant.api, id, ['complete']);
  return id;
}

interface InstanceRow {
  id: string;
  pattern_id: string | null;
  current_state_description: string;
  last_activity_at: string;
  trace_count: number;
}
interface PatternRow {
  id: string;
  collection_id: string;
  name: string;
  confidence: number;
  instance_count: number;
  pattern_size: number;
}

const q = (params: Record<string, string | number | boolean>): string =>
  new URLSearchParams(Object.entries(params).map(([key, value]): [string, string] => [key, String(value)])).toString();

describe('workflow reads', () => {
  let tenant: TenantFixture;
  let other: TenantFixture;
  let secondCollection: string;
  const expenseIds: string[] = [];
  const ticketIds: string[] = [];
  let startId = '';
  let endId = '';
  let oneOffId = '';

  const instances = async (params: Record<string, string | number | boolean> = {}, collectionId = tenant.collectionId) => {
    const response = await tenant.api.get(`/v1/workflows?${q({ collection_id: collectionId, limit: 100, ...params })}`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as { results: InstanceRow[]; total_entries: number };
  };
  const patterns = async (collectionId = tenant.collectionId) => {
    const response = await tenant.api.get(`/v1/workflow-patterns?${q({ collection_id: collectionId })}`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    return response.body as { results: PatternRow[]; total_entries: number };
  };
  const instance = async (id: string, params: Record<string, string | number> = {}) => {
    const response = await tenant.api.get(`/v1/workflows/${id}?${q({ collection_id: tenant.collectionId, ...params })}`);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    // The detail's many nested fields are read as the client sees them.
    return response.body.results;
  };
  const instanceOfMemory = async (memoryId: string): Promise<string> => {
    const db = await database();
    const trace = await db
      .collection<{ instance_id: string }>('workflow_traces')
      .findOne({ memory_id: memoryId, collection_id: tenant.collectionId });
    assert.ok(trace, `memory ${memoryId} has traces`);
    return trace.instance_id;
  };
  const patternNamed = async (name: string) => (await patterns()).results.find((pattern) => pattern.name === name);

  before(async () => {
    tenant = await newTenant('workflows');
    other = await newTenant('workflows-other');
    const created = await tenant.api.post('/v1/collections', { name: 'second' });
    assert.equal(created.status, 201);
    secondCollection = created.body.results.id;
    // Ingested one after another: the instances' order is the order they were told in.
    for (const messages of EXPENSES) expenseIds.push(await ingest(tenant, messages));
    for (const messages of TICKETS) ticketIds.push(await ingest(tenant, messages));
    startId = await ingest(tenant, TICKET_4103_START);
    endId = await ingest(tenant, TICKET_4103_END);
    oneOffId = await ingest(tenant, ONE_OFF);
    await ingest(tenant, SMALL_TALK);
  });

  it('finds the planted processes as the most confident patterns, and nothing else', async () => {
    const list = await patterns();
    assert.equal(list.total_entries, 2, JSON.stringify(list.results));
    const names = list.results.map((pattern) => pattern.name).sort();
    assert.deepEqual(names, ['Create → Assign → Escalate → Complete', 'Submit → Approve → Pay']);
    const confidences = list.results.map((pattern) => pattern.confidence as number);
    assert.deepEqual(
      confidences,
      [...confidences].sort((a, b) => b - a),
      'most confident first',
    );
    for (const pattern of list.results) {
      assert.ok(pattern.confidence > 0 && pattern.confidence <= 1);
      assert.equal(pattern.collection_id, tenant.collectionId);
    }
    const expense = list.results.find((pattern) => pattern.name === 'Submit → Approve → Pay')!;
    assert.equal(expense.instance_count, 4);
    assert.equal(expense.pattern_size, 3);
    const tickets = list.results.find((pattern) => pattern.name.startsWith('Create'))!;
    assert.equal(tickets.instance_count, 4);
  });

  it('links every conversation to its instance with its position in the pattern', async () => {
    const expense = (await patternNamed('Submit → Approve → Pay'))!;
    for (const [index, memoryId] of expenseIds.entries()) {
      const detail = await instance(await instanceOfMemory(memoryId));
      assert.equal(detail.pattern_id, expense.id);
      const running = index === EXPENSES.length - 1;
      assert.deepEqual(detail.position, running ? { step: 2, of: 3 } : { step: 3, of: 3 }, `conversation ${index}`);
      assert.equal(detail.trace_count, running ? 2 : 3);
      assert.equal(detail.current_state_description, running ? 'expense report approved' : 'expense report paid');
      assert.equal(detail.current_state.description, detail.current_state_description);
      assert.match(detail.last_activity_at, /^\d{4}-\d{2}-\d{2}T/);
    }
    const first = await instance(await instanceOfMemory(expenseIds[0]!));
    const submit = first.history[0];
    assert.equal(submit.trace.verb_class, 'submit');
    assert.equal(submit.trace.occurred_at_source, 'explicit', '"on Monday" is an explicit date');
    assert.equal(submit.state.description, 'expense report submitted');
    assert.ok(
      submit.state.members.entities.some((entity: { name: string }) => /expense report/i.test(entity.name)),
      `the state links the graph entity: ${JSON.stringify(submit.state.members)}`,
    );
    // "I submitted the expense report" is also a graph fact between the speaker and the report.
    assert.ok(
      submit.state.members.facts.some(
        (fact: { id: string; subject: string; object: string }) =>
          typeof fact.id === 'string' && [fact.subject, fact.object].some((name) => /expense report/i.test(name)),
      ),
      `the state links the graph fact: ${JSON.stringify(submit.state.members)}`,
    );
    assert.equal(first.history[2].trace.verb, 'reimburse');
    assert.equal(first.history[2].trace.verb_class, 'pay');
    const third = await instance(await instanceOfMemory(expenseIds[2]!));
    assert.equal(third.history[0].trace.occurred_at_source, 'memory_time');
  });

  it('chains one ticket across two conversations by its number, and resolves a trace id to its instance', async () => {
    const rootId = await instanceOfMemory(startId);
    assert.equal(await instanceOfMemory(endId), rootId);
    const detail = await instance(rootId);
    assert.equal(detail.id, rootId, 'the root trace id is the instance id');
    assert.equal(detail.trace_count, 4);
    assert.deepEqual(
      detail.history.map((entry: { trace: { verb_class: string } }) => entry.trace.verb_class),
      ['create', 'assign', 'escalate', 'complete'],
    );
    assert.equal(detail.history[0].trace.id, rootId);
    assert.deepEqual(detail.position, { step: 4, of: 4 });
    assert.equal(detail.current_state_description, 'ticket 4103 completed');
    assert.equal(detail.history_truncated, false);
    // A trace in the middle of the chain (from the second conversation) resolves to the same instance.
    const middle = detail.history[2].trace.id as string;
    assert.notEqual(middle, rootId);
    const resolved = await instance(middle);
    assert.equal(resolved.id, rootId);
  });

  it('truncates history to the newest entries, oldest first', async () => {
    const rootId = await instanceOfMemory(startId);
    const detail = await instance(rootId, { history_limit: 2 });
    assert.equal(detail.history_truncated, true);
    assert.deepEqual(
      detail.history.map((entry: { trace: { verb_class: string } }) => entry.trace.verb_class),
      ['escalate', 'complete'],
    );
    assert.equal(detail.trace_count, 4);
    const exact = await instance(rootId, { history_limit: 4 });
    assert.equal(exact.history_truncated, false);
    assert.equal(exact.history.length, 4);
  });

  it('lists similar instances from the same pattern only, limited by similar_limit', async () => {
    const id = await instanceOfMemory(expenseIds[0]!);
    const detail = await instance(id);
    assert.equal(detail.similar_instances.length, 3);
    for (const similar of detail.similar_instances) {
      assert.equal(similar.pattern_id, detail.pattern_id);
      assert.notEqual(similar.id, id);
      assert.ok(similar.current_state_description && similar.last_activity_at);
    }
    assert.equal((await instance(id, { similar_limit: 1 })).similar_instances.length, 1);
    assert.deepEqual((await instance(id, { similar_limit: 0 })).similar_instances, []);
    const oneOff = await instance(await instanceOfMemory(oneOffId));
    assert.equal(oneOff.pattern_id, null);
    assert.equal('position' in oneOff, false, 'no position without a pattern');
    assert.deepEqual(oneOff.similar_instances, []);
  });

  it('lists one-offs only when include_unpatterned is true, and filters by pattern', async () => {
    const all = await instances();
    assert.equal(
      all.total_entries,
      EXPENSES.length + TICKETS.length + 2,
      JSON.stringify(all.results.map((row) => row.current_state_description)),
    );
    const oneOff = await instanceOfMemory(oneOffId);
    assert.ok(all.results.some((row) => row.id === oneOff && row.pattern_id === null));
    const times = all.results.map((row) => row.last_activity_at as string);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest activity first');
    const patterned = await instances({ include_unpatterned: false });
    assert.equal(patterned.total_entries, all.total_entries - 1);
    assert.ok(patterned.results.every((row) => row.pattern_id !== null));
    const expense = (await patternNamed('Submit → Approve → Pay'))!;
    const ofPattern = await instances({ pattern_id: expense.id });
    assert.equal(ofPattern.total_entries, 4);
    assert.ok(ofPattern.results.every((row) => row.pattern_id === expense.id));
    const page = await instances({ limit: 2, offset: 1 });
    assert.deepEqual(
      page.results.map((row) => row.id),
      all.results.slice(1, 3).map((row) => row.id),
    );
    assert.equal(page.total_entries, all.total_entries);
  });

  it('pages a pattern detail’s instance ids', async () => {
    const expense = (await patternNamed('Submit → Approve → Pay'))!;
    const url = (params: Record<string, number>) =>
      `/v1/workflow-patterns/${expense.id}?${q({ collection_id: tenant.collectionId, ...params })}`;
    const detail = (await tenant.api.get(url({}))).body.results;
    assert.equal(detail.canonical_signature, 'submit > approve > pay');
    assert.equal(detail.instance_ids_total, 4);
    assert.equal(detail.instance_ids.length, 4);
    assert.ok(detail.instance_ids.includes(detail.canonical_instance_id));
    assert.ok(detail.weighted_frequency > 0 && detail.weighted_frequency <= 4);
    const page = (await tenant.api.get(url({ instance_offset: 3, instance_limit: 2 }))).body.results;
    assert.deepEqual(page.instance_ids, detail.instance_ids.slice(3));
    assert.equal(page.instance_ids_total, 4);
    assert.equal((await tenant.api.get(url({ instance_limit: 200 }))).status, 200);
  });

  it('is read the same way through the typed REST client', async () => {
    const client = new MemoryServiceClient({ baseUrl: tenant.api.baseUrl, apiKey: tenant.apiKey });
    const list = await client.workflows.patterns(tenant.collectionId);
    const expense = list.results.find((pattern) => pattern.name === 'Submit → Approve → Pay')!;
    const detail = await client.workflows.pattern(tenant.collectionId, expense.id, { instanceLimit: 2 });
    assert.equal(detail.instance_ids.length, 2);
    assert.equal(detail.instance_ids_total, expense.instance_count);
    const linked = await client.workflows.list(tenant.collectionId, { patternId: expense.id });
    assert.equal(linked.total_entries, expense.instance_count);
    const unpatterned = await client.workflows.list(tenant.collectionId, { includeUnpatterned: false, limit: 100 });
    assert.ok(unpatterned.results.every((row) => row.pattern_id !== null));
    const instance = await client.workflows.get(tenant.collectionId, detail.canonical_instance_id, { historyLimit: 1, similarLimit: 0 });
    assert.equal(instance.history.length, 1);
    assert.deepEqual(instance.similar_instances, []);
    const refused = await client.workflows.get(secondCollection, instance.id).catch((error: unknown) => error);
    assert.ok(refused instanceof ApiError && refused.is('workflow_instance_not_found'), String(refused));
  });

  it('rejects every parameter outside its range with a 400 naming it', async () => {
    const c = tenant.collectionId;
    const someId = await instanceOfMemory(expenseIds[0]!);
    const somePattern = (await patterns()).results[0]!.id;
    const cases: [string, string][] = [
      ['/v1/workflows', 'collection_id'],
      [`/v1/workflows?collection_id=nope`, 'collection_id'],
      [`/v1/workflows?collection_id=${c}&pattern_id=nope`, 'pattern_id'],
      [`/v1/workflows?collection_id=${c}&include_unpatterned=maybe`, 'include_unpatterned'],
      [`/v1/workflows?collection_id=${c}&offset=-1`, 'offset'],
      [`/v1/workflows?collection_id=${c}&offset=1.5`, 'offset'],
      [`/v1/workflows?collection_id=${c}&limit=0`, 'limit'],
      [`/v1/workflows?collection_id=${c}&limit=101`, 'limit'],
      [`/v1/workflows?collection_id=${c}&limit=ten`, 'limit'],
      [`/v1/workflows/not-a-uuid?collection_id=${c}`, 'instance_id'],
      [`/v1/workflows/${someId}`, 'collection_id'],
      [`/v1/workflows/${someId}?collection_id=${c}&history_limit=0`, 'history_limit'],
      [`/v1/workflows/${someId}?collection_id=${c}&history_limit=201`, 'history_limit'],
      [`/v1/workflows/${someId}?collection_id=${c}&similar_limit=-1`, 'similar_limit'],
      [`/v1/workflows/${someId}?collection_id=${c}&similar_limit=26`, 'similar_limit'],
      ['/v1/workflow-patterns', 'collection_id'],
      [`/v1/workflow-patterns?collection_id=${c}&offset=-1`, 'offset'],
      [`/v1/workflow-patterns?collection_id=${c}&limit=0`, 'limit'],
      [`/v1/workflow-patterns?collection_id=${c}&limit=101`, 'limit'],
      [`/v1/workflow-patterns/not-a-uuid?collection_id=${c}`, 'pattern_id'],
      [`/v1/workflow-patterns/${somePattern}?collection_id=${c}&instance_offset=-1`, 'instance_offset'],
      [`/v1/workflow-patterns/${somePattern}?collection_id=${c}&instance_limit=0`, 'instance_limit'],
      [`/v1/workflow-patterns/${somePattern}?collection_id=${c}&instance_limit=201`, 'instance_limit'],
    ];
    for (const [url, field] of cases) {
      const response = await tenant.api.get(url);
      assert.equal(response.status, 400, `${url}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error.code, 'validation_failed', url);
      assert.ok(
        response.body.error.details.some((detail: { field: string }) => detail.field === field),
        `${url} names ${field}: ${JSON.stringify(response.body.error.details)}`,
      );
    }
    // The bounds themselves are accepted.
    for (const url of [
      `/v1/workflows?collection_id=${c}&limit=1&offset=0`,
      `/v1/workflows?collection_id=${c}&limit=100`,
      `/v1/workflows/${someId}?collection_id=${c}&history_limit=1&similar_limit=25`,
      `/v1/workflows/${someId}?collection_id=${c}&history_limit=200&similar_limit=0`,
      `/v1/workflow-patterns?collection_id=${c}&limit=100`,
      `/v1/workflow-patterns/${somePattern}?collection_id=${c}&instance_limit=1&instance_offset=0`,
    ]) {
      assert.equal((await tenant.api.get(url)).status, 200, url);
    }
  });

  it('answers another tenant’s collection exactly like a missing one, and keeps collections apart', async () => {
    const someId = await instanceOfMemory(expenseIds[0]!);
    const somePattern = (await patterns()).results[0]!.id;
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const path of ['/v1/workflows', `/v1/workflows/${someId}`, '/v1/workflow-patterns', `/v1/workflow-patterns/${somePattern}`]) {
      const foreign = await other.api.get(`${path}?collection_id=${tenant.collectionId}`);
      const absent = await other.api.get(`${path}?collection_id=${missing}`);
      assert.equal(foreign.status, 404, path);
      assert.equal(absent.status, 404, path);
      assert.equal(foreign.body.error.code, 'collection_not_found');
      assert.equal(absent.body.error.code, 'collection_not_found');
      assert.equal(foreign.body.error.message.replace(tenant.collectionId, '<id>'), absent.body.error.message.replace(missing, '<id>'));
    }
    // The tenant's own other collection holds none of these.
    const wrong = await tenant.api.get(`/v1/workflows/${someId}?collection_id=${secondCollection}`);
    assert.equal(wrong.status, 404);
    assert.equal(wrong.body.error.code, 'workflow_instance_not_found');
    const wrongPattern = await tenant.api.get(`/v1/workflow-patterns/${somePattern}?collection_id=${secondCollection}`);
    assert.equal(wrongPattern.status, 404);
    assert.equal(wrongPattern.body.error.code, 'workflow_pattern_not_found');
    assert.equal((await instances({}, secondCollection)).total_entries, 0);
    assert.equal((await patterns(secondCollection)).total_entries, 0);
    const unknown = await tenant.api.get(`/v1/workflows/${missing}?collection_id=${tenant.collectionId}`);
    assert.equal(unknown.status, 404);
    const anonymous = await new Api(tenant.api.baseUrl, null).get(`/v1/workflows?collection_id=${tenant.collectionId}`);
    assert.equal(anonymous.status, 401);
  });

  describe('a deployment without a graph read backend', () => {
    let child: ChildProcess | undefined;
    let api: Api;
    before(async () => {
      const started = await startApiProcess('api-no-graph-reads', { GRAPH_READ_BACKEND: 'none' });
      child = started.child;
      api = new Api(started.baseUrl, tenant.apiKey);
    });
    after(() => stopChild(child));

    it('answers every workflow read with 503 graph_read_backend_unavailable, and serves the rest', async () => {
      const c = tenant.collectionId;
      for (const url of [
        `/v1/workflows?collection_id=${c}`,
        `/v1/workflows?collection_id=${c}&limit=500`,
        `/v1/workflows/${await instanceOfMemory(expenseIds[0]!)}?collection_id=${c}`,
        `/v1/workflow-patterns?collection_id=${c}`,
        `/v1/workflow-patterns/00000000-0000-4000-8000-000000000000?collection_id=${c}`,
      ]) {
        const response = await api.get(url);
        assert.equal(response.status, 503, url);
        assert.equal(response.body.error.code, 'graph_read_backend_unavailable');
        assert.match(response.body.error.message, /graph read backend/);
      }
      assert.equal((await api.get(`/v1/memories/${expenseIds[0]}`)).status, 200);
      // The typed client does not retry a 503 that only a configuration change can fix.
      const retries: number[] = [];
      const client = new MemoryServiceClient({
        baseUrl: api.baseUrl,
        apiKey: tenant.apiKey,
        onRetry: ({ attempt }) => retries.push(attempt),
      });
      const refused = await client.workflows.patterns(c).catch((error: unknown) => error);
      assert.ok(refused instanceof ApiError && refused.is('graph_read_backend_unavailable'), String(refused));
      assert.deepEqual(retries, []);
    });
  });

  it('moves a conversation’s traces when it leaves the collection', async () => {
    const moved = ticketIds[1]!;
    const response = await tenant.api.patch(`/v1/memories/${moved}`, { collection_ids: [secondCollection] });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const tickets = (await patternNamed('Create → Assign → Escalate → Complete'))!;
    assert.equal(tickets.instance_count, 3);
    assert.equal((await instances()).total_entries, EXPENSES.length + TICKETS.length + 1);
    // The graph (and so the traces) is projected into the new collection by a workflow.
    const there = await eventually(async () => {
      const listed = await instances({}, secondCollection);
      assert.equal(listed.total_entries, 1);
      return listed;
    });
    assert.equal(there.results[0]!.current_state_description, 'ticket 4102 completed');
  });

  it('reads numbered runbook documents as instances of one pattern', async () => {
    const created = await tenant.api.post('/v1/collections', { name: 'runbooks' });
    const collectionId = created.body.results.id as string;
    const runbook = (service: string) =>
      `Deployment runbook for ${service}\n\n1. Review the release notes.\n2. Approve the change request.\n3. Deploy the release to production.\n4. Notify the support team.\n`;
    for (const service of ['billing', 'search']) {
      const id = await createMemory(tenant, { raw_text: runbook(service), collection_id: collectionId });
      await waitForStatus(tenant.api, id, ['complete']);
    }
    const list = await patterns(collectionId);
    assert.deepEqual(
      list.results.map((pattern) => [pattern.name, pattern.instance_count]),
      [['Review → Approve → Deploy → Notify', 2]],
    );
    const [first] = (await instances({}, collectionId)).results;
    const detail = (await tenant.api.get(`/v1/workflows/${first!.id}?collection_id=${collectionId}`)).body.results;
    assert.deepEqual(detail.position, { step: 4, of: 4 });
    assert.equal(detail.history[2].state.description, 'release deployed');
  });

  it('grows an instance when messages are appended to its conversation', async () => {
    const created = await tenant.api.post('/v1/collections', { name: 'appends' });
    const collectionId = created.body.results.id as string;
    const memoryId = await ingest(
      tenant,
      [user('I submitted the expense report for the Oslo summit.'), user('The manager approved it.')],
      collectionId,
    );
    const before = (await instances({}, collectionId)).results;
    assert.equal(before.length, 1);
    assert.equal(before[0]!.trace_count, 2);
    const appended = await tenant.api.post(`/v1/memories/${memoryId}/messages`, {
      collection_id: collectionId,
      messages: [user('Finance reimbursed me on Friday.')],
    });
    assert.equal(appended.status, 202, JSON.stringify(appended.body));
    await waitForStatus(tenant.api, memoryId, ['complete']);
    const after = await eventually(async () => {
      const listed = (await instances({}, collectionId)).results;
      assert.equal(listed[0]?.trace_count, 3);
      return listed;
    }, 15_000);
    assert.equal(after.length, 1);
    assert.equal(after[0]!.id, before[0]!.id, 'the same instance, grown');
    assert.equal(after[0]!.trace_count, 3);
    assert.equal(after[0]!.current_state_description, 'expense report paid');
  });

  it('chains a process told over several conversations without a case number by its subject', async () => {
    const created = await tenant.api.post('/v1/collections', { name: 'unnumbered' });
    const collectionId = created.body.results.id as string;
    const submitted = await ingest(tenant, [user('I submitted the expense report for the Rome offsite on Monday.')], collectionId);
    const approved = await ingest(tenant, [assistant('How did it go?'), user('The manager approved the expense report.')], collectionId);
    const paid = await ingest(tenant, [user('Finance reimbursed the expense report.')], collectionId);
    // Submitting again is a new report: a second instance, not a step of the first.
    await ingest(tenant, [user('I submitted the expense report for the Oslo summit.')], collectionId);
    const list = (await instances({}, collectionId)).results;
    assert.equal(list.length, 2, JSON.stringify(list));
    const chained = list.find((row) => row.trace_count === 3);
    assert.ok(chained, JSON.stringify(list));
    assert.equal(chained.current_state_description, 'expense report paid');
    const detail = (await tenant.api.get(`/v1/workflows/${chained.id}?${q({ collection_id: collectionId })}`)).body.results;
    assert.deepEqual(
      detail.history.map((entry: { trace: { memory_id: string; verb_class: string } }) => [entry.trace.memory_id, entry.trace.verb_class]),
      [
        [submitted, 'submit'],
        [approved, 'approve'],
        [paid, 'pay'],
      ],
    );
    assert.equal(list.find((row) => row !== chained)?.current_state_description, 'expense report submitted');
    // The middle conversation goes: payment still follows submission, so one instance of two steps.
    assert.equal((await tenant.api.delete(`/v1/memories/${approved}`)).status, 200);
    const after = (await instances({}, collectionId)).results;
    assert.equal(after.length, 2, JSON.stringify(after));
    const shrunk = after.find((row) => row.id === chained.id);
    assert.equal(shrunk?.trace_count, 2);
    assert.equal(shrunk?.current_state_description, 'expense report paid');
  });

  it('converges on the same instances and patterns when conversations arrive at once', async () => {
    const created = await tenant.api.post('/v1/collections', { name: 'concurrent' });
    assert.equal(created.status, 201);
    const collectionId = created.body.results.id as string;
    // The halves of ticket 4103 race each other too: their case number must still join them.
    // Accepted in order (the first half is told first), processed at once.
    const first = await createMemory(tenant, { kind: 'conversation', messages: TICKET_4103_START, collection_id: collectionId });
    const rest = [...EXPENSES.slice(0, 3), ...TICKETS, TICKET_4103_END];
    const ids = [
      first,
      ...(await Promise.all(rest.map((messages) => createMemory(tenant, { kind: 'conversation', messages, collection_id: collectionId })))),
    ];
    await Promise.all(ids.map((id) => waitForStatus(tenant.api, id, ['complete'])));
    await eventually(async () => {
      const list = await patterns(collectionId);
      assert.deepEqual(list.results.map((pattern) => [pattern.name, pattern.instance_count]).sort(), [
        ['Create → Assign → Escalate → Complete', TICKETS.length + 1],
        ['Submit → Approve → Pay', 3],
      ]);
    });
    const listed = await instances({}, collectionId);
    assert.equal(listed.total_entries, 3 + TICKETS.length + 1);
    assert.ok(listed.results.every((row) => row.pattern_id !== null));
    assert.ok(listed.results.some((row) => row.trace_count === 4 && row.current_state_description === 'ticket 4103 completed'));
  });

  it('recounts, re-roots and dissolves patterns on the bounded path when a deleted memory was a whole instance', async () => {
    const db = await database();
    const created = await tenant.api.post('/v1/collections', { name: 'bounded' });
    const collectionId = created.body.results.id as string;
    const trips = ['Berlin', 'Paris', 'Rome', 'Oslo', 'Lisbon', 'Vienna', 'Prague', 'Madrid', 'Dublin', 'Athens'];
    const expense = (n: number): Message[] => [
      user(`I submitted the expense report for the ${trips[n % trips.length]} trip number ${n}.`),
      user('The manager approved it.'),
      user('Finance paid it.'),
    ];
    const flight = (city: string): Message[] => [user(`I booked the flight to ${city}.`), user('Then I cancelled the flight.')];
    const conversations = [...Array.from({ length: 20 }, (_, n) => expense(n)), flight('Rome'), flight('Oslo')];
    const ids = await Promise.all(
      conversations.map((messages) => createMemory(tenant, { kind: 'conversation', messages, collection_id: collectionId })),
    );
    await Promise.all(ids.map((id) => waitForStatus(tenant.api, id, ['complete'])));
    const mining = db.collection<{
      _id: string;
      instances_at_mine: number;
      changes_since: number;
      remine_due?: boolean;
      mining_until?: Date;
    }>('workflow_mining');
    const byName = async () =>
      new Map((await patterns(collectionId)).results.map((pattern): [string, PatternRow] => [pattern.name, pattern]));
    const expenses = await eventually(async () => {
      const named = await byName();
      // On a timeout the message shows what the collection converged to instead.
      const state = async () =>
        JSON.stringify({
          patterns: [...named.values()].map((pattern) => [pattern.name, pattern.instance_count]),
          instances: (await instances({}, collectionId)).results.map((row) => [
            row.trace_count,
            row.current_state_description,
            row.pattern_id,
          ]),
          mining: await mining.findOne({ _id: collectionId }),
        });
      if (named.get('Submit → Approve → Pay')?.instance_count !== 20 || named.get('Schedule → Cancel')?.instance_count !== 2) {
        assert.fail(`not converged: ${await state()}`);
      }
      return named.get('Submit → Approve → Pay');
    });
    // With 22 instances at its last full mine the collection re-mines in full only every 2 changes;
    // pinning the pacing keeps both deletes below on the bounded path whatever order ingestion took
    // (once no mine is owed from the burst, which the sweep would otherwise run meanwhile).
    // Nor is one running: a mine clears the owed flag as it starts and records its count as it ends.
    await eventually(async () => {
      const state = await mining.findOne({ _id: collectionId });
      assert.notEqual(state?.remine_due, true);
      assert.ok(!state?.mining_until || state.mining_until < new Date(), 'the lease is free');
    });
    await mining.updateOne({ _id: collectionId }, { $set: { instances_at_mine: 100, changes_since: 0 } });

    const patternDetail = async (id: string) => {
      const response = await tenant.api.get(`/v1/workflow-patterns/${id}?${q({ collection_id: collectionId, instance_limit: 200 })}`);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.results;
    };
    const memoryOf = async (instanceId: string): Promise<string> => {
      const response = await tenant.api.get(`/v1/workflows/${instanceId}?${q({ collection_id: collectionId })}`);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.results.history[0].trace.memory_id as string;
    };
    // The canonical instance's conversation goes: count, total and canonical instance follow.
    const canonical = (await patternDetail(expenses!.id)).canonical_instance_id as string;
    assert.equal((await tenant.api.delete(`/v1/memories/${await memoryOf(canonical)}`)).status, 200);
    const after = await patternDetail(expenses!.id);
    assert.equal(after.instance_count, 19);
    assert.equal(after.instance_ids_total, 19);
    assert.notEqual(after.canonical_instance_id, canonical);
    const resolved = await tenant.api.get(`/v1/workflows/${after.canonical_instance_id}?${q({ collection_id: collectionId })}`);
    assert.equal(resolved.status, 200, 'the canonical instance resolves');
    assert.equal(resolved.body.results.pattern_id, expenses!.id);

    // One of the two flights goes: a pattern of one instance is none.
    const flights = (await instances({}, collectionId)).results.filter((row) => row.current_state_description === 'flight cancelled');
    assert.equal(flights.length, 2);
    assert.equal((await tenant.api.delete(`/v1/memories/${await memoryOf(flights[0]!.id)}`)).status, 200);
    assert.equal((await byName()).get('Schedule → Cancel'), undefined, 'dissolved');
    const left = (await instances({}, collectionId)).results.find((row) => row.id === flights[1]!.id);
    assert.equal(left?.pattern_id, null);
    assert.equal((await mining.findOne({ _id: collectionId }))?.instances_at_mine, 100, 'no full re-mine ran');
  });

  it('runs a full mine owed by a quiet collection, and only an owed one', async () => {
    const db = await database();
    const created = await tenant.api.post('/v1/collections', { name: 'owed' });
    const collectionId = created.body.results.id as string;
    for (const city of ['Rome', 'Oslo']) {
      await ingest(tenant, [user(`I booked the flight to ${city}.`), user('Then I cancelled the flight.')], collectionId);
    }
    const scheduleCancel = async () => (await patterns(collectionId)).results.find((pattern) => pattern.name === 'Schedule → Cancel');
    await eventually(async () => assert.equal((await scheduleCancel())?.instance_count, 2));
    // What a mine that missed the last changes leaves: no pattern yet for two linked instances.
    const base = { tenant_id: tenant.tenantId, collection_id: collectionId };
    const forget = async () => {
      await db.collection('workflow_patterns').deleteMany(base);
      await db.collection('workflow_instances').updateMany(base, { $set: { pattern_id: null, pattern_distance: null, position: null } });
    };
    await forget();
    const mining = db.collection<{ _id: string; remine_due?: boolean; changed_at?: Date }>('workflow_mining');
    await sleep(2_500); // beyond two sweeps (1 s in the test stack): nothing is owed, nothing is mined
    assert.equal(await scheduleCancel(), undefined, 'a collection that owes no mine is left alone');
    await mining.updateOne({ _id: collectionId }, { $set: { remine_due: true, changed_at: new Date(Date.now() - 60_000) } });
    await eventually(async () => assert.equal((await scheduleCancel())?.instance_count, 2), 15_000);
    assert.equal((await mining.findOne({ _id: collectionId }))?.remine_due, false, 'paid');
    const linked = (await instances({}, collectionId)).results;
    assert.ok(linked.length === 2 && linked.every((row) => row.pattern_id !== null));
  });

  it('deleting conversations removes their traces and updates instances, counts, patterns and positions', async () => {
    const db = await database();
    const rootId = await instanceOfMemory(startId);
    // The second half of ticket 4103 goes: the instance shrinks back to its first two steps.
    assert.equal((await tenant.api.delete(`/v1/memories/${endId}`)).status, 200);
    const shrunk = await instance(rootId);
    assert.equal(shrunk.trace_count, 2);
    assert.equal(shrunk.current_state_description, 'ticket 4103 assigned');
    assert.deepEqual(shrunk.position, { step: 2, of: 4 });

    // Expense conversations go one by one: the pattern's count follows, then it dissolves.
    assert.equal((await tenant.api.delete(`/v1/memories/${expenseIds[0]}`)).status, 200);
    assert.equal((await patternNamed('Submit → Approve → Pay'))!.instance_count, 3);
    await tenant.api.post('/v1/memories/delete', [expenseIds[1], expenseIds[2]]);
    assert.equal(await patternNamed('Submit → Approve → Pay'), undefined, 'one instance is no pattern');
    const left = await instanceOfMemory(expenseIds[3]!);
    const orphaned = await instance(left);
    assert.equal(orphaned.pattern_id, null);
    assert.equal('position' in orphaned, false);

    const gone = [endId, expenseIds[0]!, expenseIds[1]!, expenseIds[2]!];
    assert.equal(await db.collection('workflow_traces').countDocuments({ memory_id: { $in: gone } }), 0, 'no trace of a deleted memory');
    assert.equal(await db.collection('workflow_instances').countDocuments({ memory_ids: { $in: gone } }), 0, 'no instance fed by one');
    // Every stored instance still has its traces, and every pattern link points at a pattern.
    const stored = await db
      .collection<{ _id: string; pattern_id: string | null; trace_count: number }>('workflow_instances')
      .find({ collection_id: tenant.collectionId })
      .toArray();
    for (const row of stored) {
      assert.equal(await db.collection('workflow_traces').countDocuments({ instance_id: row._id }), row.trace_count);
      if (row.pattern_id) assert.ok(await db.collection('workflow_patterns').findOne({ _id: row.pattern_id as never }));
    }
    assert.equal((await instances()).total_entries, stored.length);
  });
});
