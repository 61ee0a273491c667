/**
 * A device create that writes its snapshot to a put_url and runs into the request deadline: the
 * upload is cut when the deadline answers 503 (nothing is written afterwards), the tenant's device
 * slot is free again at once, and a retry with the same Idempotency-Key never adds the episode
 * twice, even when the first upload had landed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { Api, eventually, newTenant, until, type TenantFixture } from '../support/client.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startHttpsOrigin, TEST_CA_FILE, type HttpsOrigin } from '../support/https-origin.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

const DEADLINE_MS = 4000;
/** How soon after the deadline's 503 the tenant's one device slot must be free: far below the origin's hold. */
const SLOT_BACK_WITHIN_MS = 2000;

describe('device create with a put_url past the request deadline', () => {
  let dns: DnsServer;
  let origin: HttpsOrigin;
  let proc: ApiProcess;
  let tenant: TenantFixture;
  let api: Api;

  before(async () => {
    dns = await startDnsServer();
    origin = await startHttpsOrigin();
    dns.set('snapshots.test', { A: ['127.0.0.1'] });
    proc = await startApiProcess('api-device-deadline', {
      OUTBOUND_DNS_SERVERS: dns.address,
      OUTBOUND_ALLOWED_PORTS: String(origin.port),
      ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: 'true',
      OUTBOUND_UNSAFE_TEST_ORIGIN: `snapshots.test:${origin.port}`,
      NODE_EXTRA_CA_CERTS: TEST_CA_FILE,
      REQUEST_TIMEOUT_MS: String(DEADLINE_MS),
      // One device call per tenant: the next one is admitted only once the abandoned one gave its slot back.
      DEVICE_MAX_CONCURRENCY_PER_TENANT: '1',
    });
    tenant = await newTenant('device-deadline');
    api = new Api(proc.baseUrl, tenant.apiKey);
    // The pool's threads load the extractor and their copy of the model on first use: not inside the deadline under test.
    await eventually(async () => {
      const warm = await api.post('/v1/memories', { snapshot: {}, raw_text: 'Bob Patel runs the Paris office.' });
      assert.equal(warm.status, 200, JSON.stringify(warm.body));
    }, 120_000);
  });

  after(async () => {
    await stopChild(proc?.child);
    await origin?.close();
    await dns?.close();
  });

  it('cuts the upload when the deadline answers, and a retry with the same Idempotency-Key adds the episode once', async () => {
    const url = (path: string) => `https://snapshots.test:${origin.port}${path}`;
    origin.objects.set('/user/graph', Buffer.from('{}'));
    // A store that keeps the upload but answers too late: the object lands, the client is told 503.
    let firstUpload: { stored: boolean; cutBeforeAnswer: boolean } | null = null;
    origin.routes.set('/user/graph?sig=put', (request, response) => {
      const upload = { stored: false, cutBeforeAnswer: false };
      firstUpload = upload;
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        origin.objects.set('/user/graph', Buffer.concat(chunks));
        upload.stored = true;
        setTimeout(() => response.writeHead(200).end(), DEADLINE_MS * 3).unref();
      });
      response.on('close', () => {
        if (!response.writableFinished) upload.cutBeforeAnswer = true;
      });
    });
    const body = {
      snapshot_ref: { collection_id: tenant.collectionId, get_url: url('/user/graph'), put_url: url('/user/graph?sig=put') },
      raw_text: 'Alice Chen manages the Berlin office of Acme Corp.',
    };
    const first = await api.post('/v1/memories', body, { 'Idempotency-Key': 'create-1' });
    assert.equal(first.status, 503, JSON.stringify(first.body));
    assert.equal(first.body.error.code, 'request_timeout');
    // The origin would hold the upload for another 8 s: the slot comes back when the deadline
    // answers, not when the abandoned work's last request ends (else 503 device_busy meanwhile).
    await eventually(async () => {
      const next = await api.post('/v1/memories', { snapshot: {}, raw_text: 'Carol Diaz opened the Lisbon office.' });
      assert.equal(next.status, 200, JSON.stringify(next.body));
    }, SLOT_BACK_WITHIN_MS);
    await until(() => firstUpload?.cutBeforeAnswer === true, 'the service to cut its abandoned upload', 5000);
    assert.equal(firstUpload!.stored, true, 'the upload had landed before the deadline (the case a retry must not double)');

    origin.routes.delete('/user/graph?sig=put'); // the store answers at once now
    const retry = await api.post('/v1/memories', body, { 'Idempotency-Key': 'create-1' });
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal(retry.body.results.counts.episodes, 1, 'the retried create did not add its episode a second time');
    const written = JSON.parse(origin.objects.get('/user/graph?sig=put')!.toString('utf8'));
    assert.equal(written.counts.episodes, 1);

    const reused = await api.post('/v1/memories', { ...body, raw_text: 'Something else entirely.' }, { 'Idempotency-Key': 'create-1' });
    assert.equal(reused.status, 422, JSON.stringify(reused.body));
    assert.equal(reused.body.error.code, 'idempotency_key_reused');
  });
});
