/**
 * Webhooks end to end: subscriptions through the API, delivery by a worker process of this suite's
 * own to a loopback HTTPS receiver, and every delivered request checked by an independent
 * Standard Webhooks verifier (test/support/webhook-verifier.ts, written from the spec, not from
 * the sending code).
 *
 * The receiver (hooks.snapshots.test:<port>) is admitted through the documented test-only outbound
 * origin, as in device-memory-urls.test.ts; every other name the loopback DNS server knows points
 * at loopback, private or link-local space on the same allowed port, so only the address policy
 * stands between them. The shared stack's worker delivers no webhooks (test/run.ts); this suite's
 * worker takes no ingestion work (a task queue of its own), so killing it disturbs nothing else.
 * Events are appended to the durable log directly, as the pipeline's activities do, besides one
 * real ingestion.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../dev/embedded.js';
import { spawnService } from '../../dev/stack.js';
import { CURSOR_FLUSH_EVENTS } from '../../services/webhook-delivery.js';
import { connectDatabase, type Database } from '../../store/db.js';
import { EventLog } from '../../store/events.js';
import { Api, createMemory, eventually, newTenant, sleep, stack, until, type TenantFixture } from '../support/client.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';
import { TEST_CA_FILE } from '../support/https-origin.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../support/webhook-receiver.js';
import { verifyWebhook } from '../support/webhook-verifier.js';

const HOST = 'hooks.snapshots.test';
const OVERLAP_SECONDS = 8;
const DISABLE_AFTER_MS = 6000;
const LEASE_MS = 3000;

let dns: DnsServer;
let receiver: WebhookReceiver;
let service: ApiProcess;
let database: Database;
let events: EventLog;
let tenant: TenantFixture;
let other: TenantFixture;
let api: Api;
let otherApi: Api;
let publicKeys: string[];
const workers: ChildProcess[] = [];

const hook = (urlPath: string, host = HOST) => `https://${host}:${receiver.port}${urlPath}`;

function outboundEnv(): Record<string, string> {
  return {
    OUTBOUND_DNS_SERVERS: dns.address,
    OUTBOUND_ALLOWED_PORTS: String(receiver.port),
    ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: 'true',
    OUTBOUND_UNSAFE_TEST_ORIGIN: `${HOST}:${receiver.port}`,
    NODE_EXTRA_CA_CERTS: TEST_CA_FILE,
    OUTBOUND_CONNECT_TIMEOUT_MS: '1500',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800',
    WEBHOOK_DISABLE_AFTER_MS: String(DISABLE_AFTER_MS),
    WEBHOOK_LEASE_MS: String(LEASE_MS),
    WEBHOOK_SECRET_OVERLAP_SECONDS: String(OVERLAP_SECONDS),
  };
}

/** A worker that delivers webhooks and nothing else; it lives until killed or the runner ends. */
async function startWorker(name: string): Promise<ChildProcess> {
  const info = stack();
  const metricsPort = await freePort();
  const child = spawnService(
    'workers/main.js',
    {
      ...info.serviceEnv,
      ...outboundEnv(),
      ROLE: 'worker',
      WEBHOOK_DELIVERY: 'true',
      TEMPORAL_TASK_QUEUE: `webhooks-only-${Math.random().toString(36).slice(2)}`,
      WORKER_METRICS_PORT: String(metricsPort),
    },
    path.join(info.logDir, `${name}.log`),
    info.runnerPid,
  );
  child.unref();
  workers.push(child);
  // The metrics listener opens after webhook delivery has started.
  await until(
    () =>
      fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
        (response) => response.ok,
        () => false,
      ),
    `${name} to start`,
    120_000,
  );
  return child;
}

after(async () => {
  for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGTERM');
  service?.child.kill('SIGTERM');
  await receiver?.close();
  await dns?.close();
  await database?.close();
});

before(async () => {
  dns = await startDnsServer();
  receiver = await startWebhookReceiver();
  dns.set(HOST, { A: ['127.0.0.1'] });
  dns.set('loop.test', { A: ['127.0.0.1'] });
  dns.set('private.test', { A: ['10.1.2.3'] });
  dns.set('metadata.test', { A: ['169.254.169.254'] });
  dns.set('v6-link-local.test', { AAAA: ['fe80::1'] });
  dns.set('v6-mapped.test', { AAAA: ['::ffff:127.0.0.1'] });
  dns.set('mixed.test', { A: ['1.1.1.1', '127.0.0.1'] });
  dns.set('public.test', { A: ['1.1.1.1'] });
  service = await startApiProcess('webhooks-api', outboundEnv());
  await startWorker('webhooks-worker');
  const env = stack().serviceEnv;
  database = await connectDatabase(env.MONGODB_URI!, env.MONGODB_DB!);
  events = await EventLog.open(database.db, database.capabilities, 100_000);
  tenant = await newTenant('webhooks');
  other = await newTenant('webhooks-other');
  api = new Api(service.baseUrl, tenant.apiKey);
  otherApi = new Api(service.baseUrl, other.apiKey);
  const jwks = await api.get('/v1/memory-events/signing-keys');
  publicKeys = (jwks.body.keys as { whpk?: string }[]).map((key) => key.whpk).filter((key): key is string => typeof key === 'string');
  assert.ok(publicKeys.length > 0, 'the signing-keys endpoint gives the Ed25519 keys as whpk_');
});

/** Appends `count` events for a tenant as the pipeline does; returns their seqs. */
async function append(
  fixture: TenantFixture,
  count: number,
  type = 'ingestion_progress',
  collectionId = fixture.collectionId,
): Promise<number[]> {
  const seqs: number[] = [];
  for (let i = 0; i < count; i++) {
    const payload =
      type === 'ingestion_progress'
        ? { engram_id: `m-${i}`, stage: 'embed', user_stage: 'indexing', current: i, total: count, message: null }
        : { query: `q ${i}` };
    seqs.push(await events.append(type, fixture.tenantId, collectionId, payload));
  }
  return seqs;
}

async function subscribe(fixture: Api, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const created = await fixture.post('/v1/webhooks', body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return { id: created.body.results.id as string, secret: created.body.results.secret as string };
}

const bodyOf = (request: ReceivedRequest) => JSON.parse(request.body.toString('utf8')) as Record<string, unknown> & { seq: number };
const succeeded = (urlPath: string) => receiver.at(urlPath).filter((request) => request.status >= 200 && request.status < 300);
const seqsAt = (urlPath: string) => succeeded(urlPath).map((request) => bodyOf(request).seq);

/** Seqs in order of first successful receipt, and how many successful receipts repeated one. */
function firstReceipts(urlPath: string): { order: number[]; duplicates: number } {
  const seen = new Set<number>();
  const order: number[] = [];
  let duplicates = 0;
  for (const seq of seqsAt(urlPath)) {
    if (seen.has(seq)) duplicates += 1;
    else {
      seen.add(seq);
      order.push(seq);
    }
  }
  return { order, duplicates };
}

describe('webhook subscriptions (API)', () => {
  it('creates, lists, reads, changes and deletes; the secret is shown once; another tenant gets 404', async () => {
    const created = await api.post('/v1/webhooks', { url: hook('/crud'), event_types: ['ingestion_progress'], description: 'crud' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const hookId = created.body.results.id as string;
    assert.match(created.body.results.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(created.headers.get('location'), `/v1/webhooks/${hookId}`);
    assert.equal(created.body.results.status, 'active');

    const read = await api.get(`/v1/webhooks/${hookId}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.results.secret, undefined, 'the secret is never shown again');
    assert.equal(read.body.results.url, hook('/crud'));
    const listed = await api.get('/v1/webhooks');
    assert.ok((listed.body.results as { id: string }[]).some((entry) => entry.id === hookId));

    const changed = await api.patch(`/v1/webhooks/${hookId}`, { event_types: [], description: null, enabled: false });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual(changed.body.results.event_types, []);
    assert.equal(changed.body.results.status, 'disabled');
    assert.equal(changed.body.results.disabled_reason, 'user');

    // Another tenant: every route answers 404, and its list does not show the subscription.
    for (const [method, urlPath, body] of [
      ['GET', `/v1/webhooks/${hookId}`, undefined],
      ['PATCH', `/v1/webhooks/${hookId}`, { description: 'mine now' }],
      ['DELETE', `/v1/webhooks/${hookId}`, undefined],
      ['POST', `/v1/webhooks/${hookId}/rotate-secret`, undefined],
      ['POST', `/v1/webhooks/${hookId}/replay`, { from_seq: 1 }],
      ['GET', `/v1/webhooks/${hookId}/attempts`, undefined],
    ] as const) {
      const answer = await otherApi.request(method, urlPath, body);
      assert.equal(answer.status, 404, `${method} ${urlPath}`);
      assert.equal(answer.body.error.code, 'webhook_not_found');
    }
    assert.ok(!((await otherApi.get('/v1/webhooks')).body.results as { id: string }[]).some((entry) => entry.id === hookId));
    const foreignCollection = await otherApi.post('/v1/webhooks', { url: hook('/x'), collection_ids: [tenant.collectionId] });
    assert.equal(foreignCollection.status, 404);
    assert.equal(foreignCollection.body.error.code, 'collection_not_found');

    const deleted = await api.delete(`/v1/webhooks/${hookId}`);
    assert.equal(deleted.status, 200);
    assert.equal((await api.get(`/v1/webhooks/${hookId}`)).status, 404);
  });

  it('answers bad input with 400 naming the field', async () => {
    const table: [Record<string, unknown>, string][] = [
      [{}, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: hook('/v'), event_types: ['no_such_type'] }, 'event_types.0'],
      [{ url: hook('/v'), collection_ids: ['nope'] }, 'collection_ids.0'],
      [{ url: hook('/v'), extra: 1 }, 'body'],
    ];
    for (const [body, field] of table) {
      const answer = await api.post('/v1/webhooks', body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(answer.body.error.code, 'validation_failed');
      assert.ok(
        (answer.body.error.details as { field: string }[]).some((detail) => detail.field === field),
        `${JSON.stringify(body)}: ${JSON.stringify(answer.body.error.details)}`,
      );
    }
    const { id } = await subscribe(api, { url: hook('/v') });
    for (const body of [{}, { from_seq: 1, from_time: new Date().toISOString() }, { from_seq: 0 }, { from_time: 'yesterday' }]) {
      const answer = await api.post(`/v1/webhooks/${id}/replay`, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
    }
    await api.delete(`/v1/webhooks/${id}`);
  });

  it('refuses private, loopback, link-local, non-HTTPS and otherwise unsafe URLs at registration, connecting to none', async () => {
    const port = receiver.port;
    const table: [string, string][] = [
      [`http://${HOST}:${port}/x`, 'plain http'],
      [`ftp://${HOST}:${port}/x`, 'another scheme'],
      [`https://127.0.0.1:${port}/x`, 'literal loopback'],
      [`https://2130706433:${port}/x`, 'loopback as an integer'],
      [`https://[::1]:${port}/x`, 'literal IPv6 loopback'],
      [`https://loop.test:${port}/x`, 'a name resolving to loopback'],
      [`https://private.test:${port}/x`, 'a name resolving to private space'],
      [`https://metadata.test:${port}/x`, 'a name resolving to link-local (cloud metadata)'],
      [`https://v6-link-local.test:${port}/x`, 'a name resolving to IPv6 link-local'],
      [`https://v6-mapped.test:${port}/x`, 'a name resolving to IPv4-mapped loopback'],
      [`https://mixed.test:${port}/x`, 'a name with one public and one loopback address'],
      [`https://user:pw@${HOST}:${port}/x`, 'user information'],
      [`https://public.test:9/x`, 'a port not allowed'],
      [`https://nowhere.test:${port}/x`, 'a name that does not resolve'],
    ];
    const connectionsBefore = receiver.connections;
    for (const [url, what] of table) {
      const answer = await api.post('/v1/webhooks', { url });
      assert.equal(answer.status, 400, `${what}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'webhook_url_refused', what);
      assert.equal(answer.body.error.details[0].field, 'url', what);
    }
    assert.equal(receiver.connections, connectionsBefore, 'no refused URL was connected to');
    const ok = await subscribe(api, { url: hook('/ok') });
    const changed = await api.patch(`/v1/webhooks/${ok.id}`, { url: `https://loop.test:${port}/x` });
    assert.equal(changed.status, 400);
    assert.equal(changed.body.error.code, 'webhook_url_refused');
    await api.delete(`/v1/webhooks/${ok.id}`);
  });
});

describe('webhook delivery', () => {
  it('delivers only its tenant’s matching events, in seq order, each verifying under v1 and v1a; tampering does not verify', async () => {
    const all = await subscribe(api, { url: hook('/verify'), event_types: ['ingestion_progress', 'memory_unconfident'] });
    const second = await api.post('/v1/collections', { name: `second-${Date.now()}` });
    const secondCollection = second.body.results.id as string;
    const narrow = await subscribe(api, { url: hook('/narrow'), collection_ids: [secondCollection] });

    const expected = [
      ...(await append(tenant, 5)),
      ...(await append(tenant, 2, 'memory_unconfident')),
      ...(await append(tenant, 3, 'ingestion_progress', secondCollection)),
    ];
    await append(other, 4); // another tenant's
    await append(tenant, 2, 'unlisted_type');
    const narrowExpected = [...(await append(tenant, 2, 'ingestion_progress', secondCollection))];
    expected.push(...narrowExpected);

    await until(() => seqsAt('/verify').length >= expected.length, 'the matching events at /verify');
    await until(() => seqsAt('/narrow').length >= 5, 'the second collection’s events at /narrow');
    assert.deepEqual(seqsAt('/verify'), expected, 'exactly the matching events, in seq order');
    assert.deepEqual(seqsAt('/narrow'), [...expected.slice(7, 10), ...narrowExpected]);

    const unused = await subscribe(api, { url: hook('/unused'), event_types: ['webhook_disabled'] });
    const wrongSecret = unused.secret;
    for (const request of [...succeeded('/verify'), ...succeeded('/narrow')]) {
      const secret = request.path === '/verify' ? all.secret : narrow.secret;
      const body = bodyOf(request);
      assert.equal(request.method, 'POST');
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(request.headers['webhook-id'], body.event_id, 'webhook-id is the event id');
      assert.deepEqual(verifyWebhook(request.body, request.headers, { secrets: [secret] }), { ok: true, scheme: 'v1' });
      assert.deepEqual(verifyWebhook(request.body, request.headers, { publicKeys }), { ok: true, scheme: 'v1a' });
      // One character of the body changed (the seq's last digit, still valid JSON).
      const tampered = Buffer.from(request.body.toString('utf8').replace(`"seq":${body.seq}`, `"seq":${body.seq + 1}`));
      assert.notDeepEqual(tampered, request.body);
      assert.equal(verifyWebhook(tampered, request.headers, { secrets: [secret], publicKeys }).ok, false, 'a tampered body');
      assert.equal(verifyWebhook(request.body, request.headers, { secrets: [wrongSecret] }).ok, false, 'a wrong secret');
      const stale = request.at + 10 * 60_000;
      assert.equal(
        verifyWebhook(request.body, request.headers, { secrets: [secret], publicKeys, now: stale }).ok,
        false,
        'a stale timestamp',
      );
      const forgedTime = { ...request.headers, 'webhook-timestamp': String(Number(request.headers['webhook-timestamp']) - 1) };
      assert.equal(verifyWebhook(request.body, forgedTime, { secrets: [secret], publicKeys }).ok, false, 'a changed timestamp');
    }
    const first = bodyOf(succeeded('/verify')[0]!);
    assert.equal(first.type, 'ingestion_progress');
    assert.equal(typeof first.timestamp, 'string');
    assert.equal((first.data as { stage: string }).stage, 'embed');

    const attempts = await api.get(`/v1/webhooks/${all.id}/attempts`);
    assert.equal(attempts.status, 200);
    assert.equal(attempts.body.results.length, expected.length);
    for (const attempt of attempts.body.results as { status_code: number; outcome: string }[]) {
      assert.equal(attempt.status_code, 204);
      assert.equal(attempt.outcome, 'delivered');
    }
    for (const id of [all.id, narrow.id, unused.id]) await api.delete(`/v1/webhooks/${id}`);
  });

  it('delivers the progress of a real ingestion', async () => {
    const { id } = await subscribe(api, { url: hook('/ingest'), event_types: ['ingestion_progress'] });
    const memoryId = await createMemory(tenant, { raw_text: 'Alice Chen manages the Berlin office of Acme Corp.' });
    await until(
      () =>
        succeeded('/ingest').some(
          (request) => (bodyOf(request).data as { engram_id?: string; user_stage?: string }).user_stage === 'complete',
        ),
      'the complete event of the ingestion',
      60_000,
    );
    const stages = succeeded('/ingest')
      .map(bodyOf)
      .filter((body) => (body.data as { engram_id: string }).engram_id === memoryId);
    assert.ok(stages.length >= 2);
    assert.deepEqual(
      stages.map((body) => body.seq),
      [...stages.map((body) => body.seq)].sort((a, b) => a - b),
    );
    await api.delete(`/v1/webhooks/${id}`);
  });

  it('holds later events back through a receiver outage of 200 events, then delivers all of them in order', async () => {
    let down = true;
    receiver.replies.set('/outage', () => (down ? { status: 503, body: 'down for maintenance' } : { status: 200 }));
    const { id } = await subscribe(api, { url: hook('/outage') });
    const seqs = await append(tenant, 200);
    await until(() => receiver.at('/outage').length >= 3, 'three failed attempts');
    assert.ok(
      receiver.at('/outage').every((request) => bodyOf(request).seq === seqs[0]),
      'while the first event fails, no later one is sent',
    );
    const held = await api.get(`/v1/webhooks/${id}`);
    assert.ok(held.body.results.failed_attempts >= 1);
    assert.notEqual(held.body.results.failing_since, null);
    const attempts = (await api.get(`/v1/webhooks/${id}/attempts`)).body.results as { status_code: number; seq: number; error: string }[];
    assert.ok(attempts.length >= 3);
    for (const attempt of attempts) {
      assert.equal(attempt.status_code, 503);
      assert.equal(attempt.seq, seqs[0]);
      assert.equal(attempt.error, 'down for maintenance', 'the start of the response body is kept');
    }
    down = false;
    await until(() => seqsAt('/outage').length >= 200, 'all 200 events after the outage', 60_000);
    const { order, duplicates } = firstReceipts('/outage');
    assert.deepEqual(order, seqs, 'every event, in seq order');
    assert.equal(duplicates, 0);
    assert.equal((await api.get(`/v1/webhooks/${id}`)).body.results.failed_attempts, 0);
    await api.delete(`/v1/webhooks/${id}`);
  });

  it('honours Retry-After on 429, and does not follow redirects', async () => {
    let answered = 0;
    receiver.replies.set('/slow-down', () => (answered++ === 0 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200 }));
    receiver.replies.set('/moved', () => ({ status: 302, headers: { Location: hook('/moved-here') } }));
    const slow = await subscribe(api, { url: hook('/slow-down') });
    const moved = await subscribe(api, { url: hook('/moved') });
    await append(tenant, 1);
    await until(() => seqsAt('/slow-down').length === 1, 'the retry after Retry-After');
    const [first, second] = receiver.at('/slow-down');
    assert.ok(second!.at - first!.at >= 1900, `the retry came ${second!.at - first!.at} ms after a Retry-After of 2 s`);
    await until(() => receiver.at('/moved').length >= 2, 'two attempts at the redirecting URL');
    assert.equal(receiver.at('/moved-here').length, 0, 'the redirect was not followed');
    const attempts = (await api.get(`/v1/webhooks/${moved.id}/attempts`)).body.results as { status_code: number; outcome: string }[];
    assert.ok(attempts.every((attempt) => attempt.status_code === 302 && attempt.outcome === 'retry'));
    for (const id of [slow.id, moved.id]) await api.delete(`/v1/webhooks/${id}`);
  });

  it('checks the address again at each connection: a name rebound to loopback after registration is refused', async () => {
    dns.set('rebind.test', { A: ['1.1.1.1'] });
    const { id } = await subscribe(api, { url: hook('/rebind', 'rebind.test') });
    dns.set('rebind.test', { A: ['127.0.0.1'] });
    await append(tenant, 1);
    const attempt = await eventually(async () => {
      const attempts = (await api.get(`/v1/webhooks/${id}/attempts`)).body.results as { status_code: number | null; error: string }[];
      assert.ok(attempts.length > 0);
      return attempts[0]!;
    });
    assert.equal(attempt.status_code, null);
    assert.match(attempt.error, /resolves to 127\.0\.0\.1, a loopback address/);
    assert.equal(receiver.at('/rebind').length, 0, 'nothing reached the receiver on loopback');
    await api.delete(`/v1/webhooks/${id}`);
  });

  it('signs with both secrets during a rotation’s overlap, and with the new one only after it', async () => {
    const { id, secret: oldSecret } = await subscribe(api, { url: hook('/rotate') });
    const [before] = await append(tenant, 1);
    await until(() => seqsAt('/rotate').length === 1, 'the event before the rotation');
    const rotated = await api.post(`/v1/webhooks/${id}/rotate-secret`);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const newSecret = rotated.body.results.secret as string;
    const overlapEnds = Date.parse(rotated.body.results.previous_secret_expires_at);
    assert.notEqual(newSecret, oldSecret);
    assert.equal(
      (await api.get(`/v1/webhooks/${id}`)).body.results.previous_secret_expires_at,
      rotated.body.results.previous_secret_expires_at,
    );

    const [during] = await append(tenant, 1);
    await until(() => seqsAt('/rotate').length === 2, 'the event during the overlap');
    const duringRequest = succeeded('/rotate')[1]!;
    assert.ok(duringRequest.at < overlapEnds, 'delivered within the overlap');
    assert.equal(bodyOf(duringRequest).seq, during);
    const signatures = String(duringRequest.headers['webhook-signature']).split(' ');
    assert.deepEqual(
      signatures.map((entry) => entry.split(',')[0]),
      ['v1', 'v1', 'v1a'],
    );
    assert.ok(verifyWebhook(duringRequest.body, duringRequest.headers, { secrets: [newSecret] }).ok, 'the new secret verifies');
    assert.ok(verifyWebhook(duringRequest.body, duringRequest.headers, { secrets: [oldSecret] }).ok, 'the old secret still verifies');

    await sleep(Math.max(0, overlapEnds - Date.now()) + 200);
    const [afterOverlap] = await append(tenant, 1);
    await until(() => seqsAt('/rotate').length === 3, 'the event after the overlap');
    const afterRequest = succeeded('/rotate')[2]!;
    assert.equal(bodyOf(afterRequest).seq, afterOverlap);
    assert.ok(verifyWebhook(afterRequest.body, afterRequest.headers, { secrets: [newSecret], publicKeys }).ok);
    assert.equal(
      verifyWebhook(afterRequest.body, afterRequest.headers, { secrets: [oldSecret] }).ok,
      false,
      'the old secret no longer signs',
    );
    assert.ok(before! < during! && during! < afterOverlap!);
    await api.delete(`/v1/webhooks/${id}`);
  });

  it('disables a subscription answered with 410, emits webhook_disabled, and sends it nothing more', async () => {
    const watcher = await subscribe(api, { url: hook('/watch-disabled'), event_types: ['webhook_disabled'] });
    receiver.replies.set('/gone', () => ({ status: 410 }));
    const { id } = await subscribe(api, { url: hook('/gone') });
    await append(tenant, 3);
    await until(async () => (await api.get(`/v1/webhooks/${id}`)).body.results.status === 'disabled', 'the 410 to disable it');
    const disabled = (await api.get(`/v1/webhooks/${id}`)).body.results;
    assert.equal(disabled.disabled_reason, 'gone');
    assert.equal(receiver.at('/gone').length, 1, 'one attempt, then nothing');
    await until(() => succeeded('/watch-disabled').length === 1, 'the webhook_disabled event');
    const event = bodyOf(succeeded('/watch-disabled')[0]!);
    assert.equal(event.type, 'webhook_disabled');
    assert.deepEqual((event.data as { webhook_id: string; reason: string; last_status_code: number }).webhook_id, id);
    assert.equal((event.data as { reason: string }).reason, 'gone');
    assert.equal((event.data as { last_status_code: number }).last_status_code, 410);
    await append(tenant, 2);
    await sleep(1000);
    assert.equal(receiver.at('/gone').length, 1, 'a disabled subscription is sent nothing');
    for (const hookId of [watcher.id, id]) await api.delete(`/v1/webhooks/${hookId}`);
  });

  it('disables an endpoint failing for the disable period; re-enabled, it gets every held-back event in order', async () => {
    let failing = true;
    receiver.replies.set('/failing', () => (failing ? { status: 500 } : { status: 200 }));
    const { id } = await subscribe(api, { url: hook('/failing') });
    const seqs = await append(tenant, 5);
    await until(
      async () => (await api.get(`/v1/webhooks/${id}`)).body.results.status === 'disabled',
      'the failing endpoint to be disabled',
      DISABLE_AFTER_MS + 20_000,
    );
    const disabled = (await api.get(`/v1/webhooks/${id}`)).body.results;
    assert.equal(disabled.disabled_reason, 'failing');
    assert.ok(Date.parse(disabled.disabled_at) - Date.parse(disabled.failing_since) >= DISABLE_AFTER_MS);
    const logged = await database.db.collection('memory_events').findOne({ type: 'webhook_disabled', 'payload.webhook_id': id });
    assert.equal(logged?.payload.reason, 'failing');
    assert.equal(logged?.tenant_id, tenant.tenantId);

    failing = false;
    const enabled = await api.patch(`/v1/webhooks/${id}`, { enabled: true });
    assert.equal(enabled.body.results.status, 'active');
    // The held-back events, then (it subscribes to every type) the notice of its own disabling.
    await until(() => seqsAt('/failing').length >= 6, 'the held-back events after re-enabling');
    assert.deepEqual(seqsAt('/failing').slice(0, 5), seqs);
    const notice = bodyOf(succeeded('/failing')[5]!);
    assert.equal(notice.type, 'webhook_disabled');
    assert.equal(notice.seq, logged?.seq);
    assert.equal((notice.data as { webhook_id: string }).webhook_id, id);
    await api.delete(`/v1/webhooks/${id}`);
  });

  it('replays from a seq and from a time, in order', async () => {
    const { id } = await subscribe(api, { url: hook('/replay') });
    const seqs: number[] = [];
    for (let i = 0; i < 6; i++) {
      seqs.push(...(await append(tenant, 1)));
      await sleep(5); // distinct timestamps, so a replay from one event's time starts exactly there
    }
    await until(() => seqsAt('/replay').length === 6, 'the first delivery');
    const replayed = await api.post(`/v1/webhooks/${id}/replay`, { from_seq: seqs[3] });
    assert.equal(replayed.status, 202);
    assert.equal(replayed.body.results.cursor, seqs[3]! - 1);
    await until(() => seqsAt('/replay').length === 9, 'the replay from a seq');
    assert.deepEqual(seqsAt('/replay').slice(6), seqs.slice(3));

    const firstTime = bodyOf(succeeded('/replay')[1]!).timestamp as string;
    const fromTime = await api.post(`/v1/webhooks/${id}/replay`, { from_time: firstTime });
    assert.equal(fromTime.status, 202);
    await until(() => seqsAt('/replay').length >= 14, 'the replay from a time');
    assert.deepEqual(seqsAt('/replay').slice(9, 14), seqs.slice(1));
    await api.delete(`/v1/webhooks/${id}`);
  });

  it('loses nothing when the delivering worker is killed mid-delivery, and repeats at most the in-flight batch', async () => {
    receiver.replies.set('/crash', () => ({ status: 200, delayMs: 15 }));
    const { id } = await subscribe(api, { url: hook('/crash') });
    const seqs = await append(tenant, 200);
    await until(() => receiver.at('/crash').length >= 40, 'delivery under way');
    const [worker] = workers.splice(0, workers.length);
    worker!.kill('SIGKILL');
    const atKill = seqsAt('/crash').length;
    assert.ok(atKill < 200, `killed mid-delivery (${atKill} of 200 delivered)`);
    await startWorker('webhooks-worker-2');
    await until(() => new Set(seqsAt('/crash')).size >= 200, 'all 200 events after the crash', 90_000);
    const { order, duplicates } = firstReceipts('/crash');
    assert.deepEqual(order, seqs, 'every event, in seq order');
    // The cursor is written every CURSOR_FLUSH_EVENTS deliveries (or 250 ms): at most those are sent again.
    assert.ok(duplicates <= CURSOR_FLUSH_EVENTS, `${duplicates} events were sent twice; at most the in-flight batch may be`);
    await api.delete(`/v1/webhooks/${id}`);
  });
});
