/**
 * Signed-URL snapshot references and exports, against a loopback HTTPS "object store" and a
 * loopback DNS server, through an API process of their own:
 *   - the happy paths (export PUT, search and create by reference, import by reference);
 *   - a table of SSRF attempts (URLs and DNS answers), each refused with no connection made;
 *   - redirects not followed, downloads capped mid-stream, timeouts, header injection;
 *   - a foreign collection in snapshot_ref refused before any URL is touched;
 *   - ephemeral collections expiring completely.
 * The test origin (snapshots.test:<port>) is admitted through the documented unsafe test-only
 * setting; every other name the DNS server knows points at loopback or private space, and the
 * origin's port is an allowed port, so only the address policy stands between them.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Api, createMemory, eventually, newTenant, sleep, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';
import { startHttpsOrigin, TEST_CA_FILE, type HttpsOrigin } from '../support/https-origin.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

/** Above the 1 MiB from which JSON is parsed on the CPU pool (models/json-tasks.ts `parseJson`), so a download can take that path. */
const CAP_BYTES = 2 * 1024 * 1024;

let dns: DnsServer;
let origin: HttpsOrigin;
let service: ApiProcess;
let tenant: TenantFixture;
let api: Api;

after(async () => {
  service?.child.kill('SIGTERM');
  await origin?.close();
  await dns?.close();
  await closeDatabase();
});

before(async () => {
  dns = await startDnsServer();
  origin = await startHttpsOrigin();
  dns.set('snapshots.test', { A: ['127.0.0.1'] });
  service = await startApiProcess('device-urls', {
    OUTBOUND_DNS_SERVERS: dns.address,
    OUTBOUND_ALLOWED_PORTS: String(origin.port),
    ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: 'true',
    OUTBOUND_UNSAFE_TEST_ORIGIN: `snapshots.test:${origin.port}`,
    NODE_EXTRA_CA_CERTS: TEST_CA_FILE,
    SNAPSHOT_MAX_BYTES: String(CAP_BYTES),
    OUTBOUND_CONNECT_TIMEOUT_MS: '1500',
    OUTBOUND_TOTAL_TIMEOUT_MS: '2500',
    EPHEMERAL_COLLECTION_TTL_SECONDS: '3',
    EPHEMERAL_SWEEP_INTERVAL_MS: '300',
    DEVICE_MAX_CONCURRENCY: '2',
  });
  tenant = await newTenant('device-urls');
  api = new Api(service.baseUrl, tenant.apiKey);
  for (const raw_text of ['Alice Chen manages the Berlin office of Acme Corp.', 'Bob Patel runs the Paris office for Acme Corp.']) {
    await waitForStatus(tenant.api, await createMemory(tenant, { raw_text }), ['complete']);
  }
});

const url = (path: string, host = 'snapshots.test') => `https://${host}:${origin.port}${path}`;

describe('signed-URL snapshots', () => {
  it('exports to a put_url, then searches, creates and imports by reference', async () => {
    const exported = await api.post('/v1/device-memory/snapshot/export', {
      collection_id: tenant.collectionId,
      destination: { type: 'signed_url', collection_id: tenant.collectionId, put_url: url('/bucket/user-1?sig=abc') },
    });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    const receipt = exported.body.results;
    const stored = origin.objects.get('/bucket/user-1?sig=abc')!;
    assert.equal(receipt.bytes, stored.length);
    assert.equal(receipt.digest, JSON.parse(stored.toString('utf8')).digest);
    assert.equal(receipt.format_version, '2.0');
    origin.objects.set('/bucket/user-1', stored);

    const ref = { collection_id: tenant.collectionId, get_url: url('/bucket/user-1'), get_headers: { 'x-amz-security-token': 't' } };
    const search = await api.post('/v1/memories/search', { query: 'Who manages the Berlin office?', snapshot_ref: ref });
    assert.equal(search.status, 200, JSON.stringify(search.body));
    assert.ok(
      search.body.results.entities.some((entity: { name: string }) => entity.name === 'Alice Chen'),
      JSON.stringify(search.body.results.entities),
    );

    const created = await api.post('/v1/memories', {
      snapshot_ref: { ...ref, put_url: url('/bucket/user-1-next') },
      raw_text: 'Carol Diaz inspects the warehouse in Hamburg.',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.results.counts.episodes, 3);
    const next = JSON.parse(origin.objects.get('/bucket/user-1-next')!.toString('utf8'));
    assert.equal(next.counts.episodes, 3);

    const imported = await api.post('/v1/device-memory/snapshot/import', { snapshot_ref: { ...ref, get_url: url('/bucket/user-1-next') } });
    assert.equal(imported.status, 201, JSON.stringify(imported.body));
    const listed = await api.get(`/v1/memories?collection_ids=${imported.body.results.ephemeral_collection_id}`);
    assert.equal(listed.body.total_entries, 3);
  });

  it('parses a download of 1 MiB and more on the CPU pool, and answers as for a small one', async () => {
    const exported = await api.post('/v1/device-memory/snapshot/export', {
      collection_id: tenant.collectionId,
      destination: { type: 'signed_url', collection_id: tenant.collectionId, put_url: url('/bucket/large-export') },
    });
    assert.equal(exported.status, 200, JSON.stringify(exported.body));
    // The same snapshot with 1.5 MiB of trailing whitespace: still one JSON value, now past the pool's threshold.
    const padded = Buffer.concat([origin.objects.get('/bucket/large-export')!, Buffer.alloc(1536 * 1024, 0x20)]);
    origin.objects.set('/bucket/large', padded);
    const poolParses = async (): Promise<number> => {
      const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
      const line = /^engram_worker_pool_task_seconds_count\{pool="cpu",task="parseJsonBody",outcome="ok"\} (\d+)$/m.exec(text);
      return Number(line?.[1] ?? 0);
    };
    const before = await poolParses();
    const search = await api.post('/v1/memories/search', {
      query: 'Who manages the Berlin office?',
      snapshot_ref: { collection_id: tenant.collectionId, get_url: url('/bucket/large') },
    });
    assert.equal(search.status, 200, JSON.stringify(search.body));
    assert.ok(
      search.body.results.entities.some((entity: { name: string }) => entity.name === 'Alice Chen'),
      JSON.stringify(search.body.results.entities),
    );
    assert.equal(await poolParses(), before + 1, `the ${padded.length}-byte download was parsed on the CPU pool`);
  });

  it('refuses every SSRF attempt with 400, naming the reason, and no connection made after any of them', async () => {
    // Every name below resolves to space the policy refuses; the origin listens on every local
    // address (dual-stack), so a loopback or unspecified target that slipped through would be counted.
    assert.ok(origin.dualStack, 'the test origin listens on IPv6 and IPv4 (::, not v6-only)');
    const answers: [string, { A?: string[]; AAAA?: string[] }][] = [
      ['loopback.test', { A: ['127.0.0.1'] }],
      ['loopback2.test', { A: ['127.8.9.10'] }],
      ['ten.test', { A: ['10.1.2.3'] }],
      ['one92.test', { A: ['192.168.1.20'] }],
      ['one72.test', { A: ['172.16.5.4'] }],
      ['metadata.test', { A: ['169.254.169.254'] }],
      ['cgnat.test', { A: ['100.64.0.1'] }],
      ['zero.test', { A: ['0.0.0.0'] }],
      ['multicast.test', { A: ['224.0.0.1'] }],
      ['broadcast.test', { A: ['255.255.255.255'] }],
      ['reserved.test', { A: ['240.0.0.1'] }],
      ['testnet.test', { A: ['192.0.2.10'] }],
      ['v6loop.test', { AAAA: ['::1'] }],
      ['v6unspecified.test', { AAAA: ['::'] }],
      ['v6ula.test', { AAAA: ['fd00::1'] }],
      ['v6ula-fc.test', { AAAA: ['fc00::1'] }],
      ['v6linklocal.test', { AAAA: ['fe80::1'] }],
      ['v6mapped.test', { AAAA: ['::ffff:127.0.0.1'] }],
      ['v6compat.test', { AAAA: ['::7f00:1'] }],
      ['nat64.test', { AAAA: ['64:ff9b::7f00:1'] }],
      ['v6multicast.test', { AAAA: ['ff02::1'] }],
      ['mixed.test', { A: ['8.8.8.8', '127.0.0.1'] }],
      ['mixed6.test', { A: ['8.8.8.8'], AAAA: ['::1'] }],
    ];
    for (const [name, answer] of answers) dns.set(name, answer);
    const port = origin.port;
    /** [URL, the reason the detail must name, the name the DNS server must have been asked about (address checks only)]. */
    const cases: [string, RegExp, string?][] = [
      [`http://snapshots.test:${port}/a`, /^scheme:/],
      [`http://127.0.0.1:${port}/a`, /^scheme:/],
      [`ftp://snapshots.test:${port}/a`, /^scheme:/],
      [`file:///etc/passwd`, /^scheme:/],
      [`https://user:secret@snapshots.test:${port}/a`, /^userinfo:/],
      [`https://snapshots.test@127.0.0.1:${port}/a`, /^userinfo:/],
      [`https://127.0.0.1:${port}/a`, /^literal_ip:/],
      [`https://127.0.0.1.:${port}/a`, /^literal_ip:/],
      [`https://2130706433:${port}/a`, /^literal_ip:/],
      [`https://0x7f000001:${port}/a`, /^literal_ip:/],
      [`https://0x7f.0.0.1:${port}/a`, /^literal_ip:/],
      [`https://017700000001:${port}/a`, /^literal_ip:/],
      [`https://0177.0.0.1:${port}/a`, /^literal_ip:/],
      [`https://127.1:${port}/a`, /^literal_ip:/],
      [`https://0.0.0.0:${port}/a`, /^literal_ip:/],
      [`https://100.64.0.1:${port}/a`, /^literal_ip:/],
      [`https://224.0.0.1:${port}/a`, /^literal_ip:/],
      [`https://255.255.255.255:${port}/a`, /^literal_ip:/],
      ['https://169.254.169.254/latest/meta-data/', /^literal_ip:/],
      [`https://[::1]:${port}/a`, /^literal_ip:/],
      [`https://[::]:${port}/a`, /^literal_ip:/],
      [`https://[::ffff:127.0.0.1]:${port}/a`, /^literal_ip:/],
      [`https://[::ffff:7f00:1]:${port}/a`, /^literal_ip:/],
      [`https://[::127.0.0.1]:${port}/a`, /^literal_ip:/],
      [`https://[fe80::1]:${port}/a`, /^literal_ip:/],
      [`https://[fc00::1]:${port}/a`, /^literal_ip:/],
      [`https://localhost:${port}/a`, /^malformed:/],
      [`https://snapshots.test:1/a`, /^port:/],
      ['not a url', /^malformed:/],
      // A fully qualified name (trailing dot) is looked up like any other, and refused on its address.
      [`https://loopback.test.:${port}/a`, /^private_address: .*127\.0\.0\.1/, 'loopback.test'],
      ...answers.map(([name]): [string, RegExp, string] => [`https://${name}:${port}/a`, /^private_address:/, name]),
    ];
    assert.ok(cases.length >= 30, `${cases.length} cases`);
    for (const [target, reason, askedName] of cases) {
      const asked = () => (askedName ? (dns.queries.get(`${askedName} A`) ?? 0) + (dns.queries.get(`${askedName} AAAA`) ?? 0) : 0);
      for (const [path, body] of [
        ['/v1/memories/search', { query: 'Alice', snapshot_ref: { collection_id: tenant.collectionId, get_url: target } }],
        [
          '/v1/device-memory/snapshot/export',
          { collection_id: tenant.collectionId, destination: { collection_id: tenant.collectionId, put_url: target } },
        ],
      ] as const) {
        const connections = origin.connections;
        const questions = asked();
        const response = await api.post(path, body);
        const what = `${target} at ${path}: ${JSON.stringify(response.body)}`;
        assert.equal(origin.connections, connections, `no connection was made for ${what}`);
        assert.equal(response.status, 400, what);
        assert.equal(response.body.error.code, 'snapshot_url_refused', what);
        assert.match(response.body.error.details[0].issue, reason, what);
        if (askedName) assert.ok(asked() > questions, `${target}: refused on the address it resolved to, not before the lookup`);
      }
    }
  });

  it('resolves once and connects to the checked address: a rebinding answer cannot switch it', async () => {
    // The first answer is the origin; any later one points elsewhere. A second lookup (at connect time) would show in the count.
    const asked = dns.queries.get('snapshots.test A') ?? 0;
    dns.set('snapshots.test', (type, count) => (type === 'A' ? (count === asked + 1 ? ['127.0.0.1'] : ['127.0.0.2']) : []));
    const response = await api.post('/v1/memories/search', {
      query: 'Alice',
      snapshot_ref: { collection_id: tenant.collectionId, get_url: url('/bucket/user-1') },
    });
    dns.set('snapshots.test', { A: ['127.0.0.1'] });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(dns.queries.get('snapshots.test A'), asked + 1, 'exactly one lookup for one request');
  });

  it('does not follow redirects, caps downloads while streaming, times out, and refuses header injection', async () => {
    origin.routes.set(
      '/redirect',
      (_request, response) => void response.writeHead(302, { Location: `https://127.0.0.1:${origin.port}/redirect-target` }).end(),
    );
    origin.routes.set(
      '/declared-huge',
      (_request, response) => void response.writeHead(200, { 'Content-Length': String(CAP_BYTES * 4) }).end(),
    );
    let streamedBytes = 0;
    let aborted = false;
    origin.routes.set('/streamed-huge', (request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      request.socket.on('close', () => (aborted = true));
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      const pump = (): void => {
        while (!response.destroyed && streamedBytes < CAP_BYTES * 50) {
          streamedBytes += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      pump();
    });
    origin.routes.set('/hang', () => undefined);
    origin.routes.set('/gone', (_request, response) => void response.writeHead(403).end('expired signature'));
    const search = (get_url: string, extra: Record<string, unknown> = {}) =>
      api.post('/v1/memories/search', { query: 'Alice', snapshot_ref: { collection_id: tenant.collectionId, get_url, ...extra } });

    const redirected = await search(url('/redirect'));
    assert.equal(redirected.status, 502);
    assert.equal(redirected.body.error.code, 'upstream_redirect');
    assert.match(redirected.body.error.message, /302/);
    assert.ok(!origin.requests.some((line) => line.includes('/redirect-target')), 'the Location (loopback) was never requested');
    assert.equal(origin.requests.filter((line) => line.startsWith('GET /redirect')).length, 1);

    const declared = await search(url('/declared-huge'));
    assert.equal(declared.status, 413);
    assert.equal(declared.body.error.code, 'snapshot_too_large');

    const streamed = await search(url('/streamed-huge'));
    assert.equal(streamed.status, 413);
    assert.equal(streamed.body.error.code, 'snapshot_too_large');
    await sleep(200);
    assert.ok(aborted, 'the connection was cut');
    assert.ok(streamedBytes < CAP_BYTES * 50, `the download stopped early (${streamedBytes} bytes sent)`);

    const hung = await search(url('/hang'));
    assert.equal(hung.status, 504);
    assert.equal(hung.body.error.code, 'upstream_timeout');

    const denied = await search(url('/gone'));
    assert.equal(denied.status, 502);
    assert.equal(denied.body.error.code, 'upstream_failed');
    assert.match(denied.body.error.message, /403/);

    const before = origin.connections;
    for (const headers of [
      { Host: 'evil.test' },
      { 'Transfer-Encoding': 'chunked' },
      { 'Content-Length': '1' },
      { Connection: 'close' },
      { 'X-Ok': 'a\r\nX-Injected: 1' },
      { 'bad name': 'x' },
    ]) {
      const response = await search(url('/bucket/user-1'), { get_headers: headers });
      assert.equal(response.status, 400, JSON.stringify(headers));
      assert.equal(response.body.error.code, 'snapshot_url_refused', JSON.stringify(headers));
      assert.match(response.body.error.details[0].field, /snapshot_ref\.get_headers/);
    }
    assert.equal(origin.connections, before);
  });

  it('refuses a truncated download with 400 snapshot_invalid (search, import, create), never a 500 or a partial result', async () => {
    const whole = origin.objects.get('/bucket/user-1')!;
    origin.objects.set('/bucket/half', whole.subarray(0, Math.floor(whole.length / 2)));
    const ref = { collection_id: tenant.collectionId, get_url: url('/bucket/half') };
    const started = new Date();
    const db = await database();
    const madeSince = () => db.collection('collections').countDocuments({ tenant_id: tenant.tenantId, created_at: { $gte: started } });
    for (const [path, body] of [
      ['/v1/memories/search', { query: 'Alice', snapshot_ref: ref }],
      ['/v1/device-memory/snapshot/import', { snapshot_ref: ref }],
      ['/v1/memories', { snapshot_ref: { ...ref, put_url: url('/bucket/half-next') }, raw_text: 'Erin Park opened the Lisbon office.' }],
    ] as const) {
      const response = await api.post(path, body);
      assert.equal(response.status, 400, `${path}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.error.code, 'snapshot_invalid', path);
      assert.equal(response.body.error.details[0].field, 'snapshot_ref.get_url', path);
      assert.match(response.body.error.message, /truncated/);
    }
    assert.ok(!origin.objects.has('/bucket/half-next'), 'nothing was written back');
    assert.equal(await madeSince(), 0, 'no ephemeral collection was made');

    // Cut mid-body (Content-Length promises the whole snapshot): the transfer failed, a 502 naming it.
    origin.routes.set('/bucket/cut', (request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(whole.length) });
      response.write(whole.subarray(0, Math.floor(whole.length / 2)), () => setTimeout(() => request.socket.destroy(), 50));
    });
    const cut = await api.post('/v1/memories/search', {
      query: 'Alice',
      snapshot_ref: { collection_id: tenant.collectionId, get_url: url('/bucket/cut') },
    });
    assert.equal(cut.status, 502, JSON.stringify(cut.body));
    assert.equal(cut.body.error.code, 'upstream_failed');
    assert.equal(cut.body.error.details[0].field, 'snapshot_ref.get_url');
  });

  it('bounds concurrent device calls: beyond the limit, 503 device_busy with Retry-After at once', async () => {
    origin.routes.set('/slow', () => undefined);
    const slow = () =>
      api.post('/v1/memories/search', { query: 'Alice', snapshot_ref: { collection_id: tenant.collectionId, get_url: url('/slow') } });
    const running = [slow(), slow()];
    await sleep(300);
    const started = Date.now();
    const refused = await slow();
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'device_busy');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.ok(Date.now() - started < 1000, 'refused at once, not queued');
    for (const response of await Promise.all(running)) assert.equal(response.status, 504);
  });

  it('refuses an inline snapshot body over SNAPSHOT_MAX_BYTES with 413 before opening it', async () => {
    const response = await api.post('/v1/memories/search', { query: 'Alice', snapshot: { padding: 'x'.repeat(CAP_BYTES + 1) } });
    assert.equal(response.status, 413);
    assert.equal(response.body.error.code, 'snapshot_too_large');
  });

  it('counts the bytes actually read, not Content-Length: a chunked body over SNAPSHOT_MAX_BYTES is 413 on every device route', async () => {
    const snapshot = { padding: 'x'.repeat(CAP_BYTES + 1) };
    for (const [path, body] of [
      ['/v1/memories/search', { query: 'Alice', snapshot }],
      ['/v1/memories', { snapshot, raw_text: 'Erin Park opened the Lisbon office.' }],
      ['/v1/device-memory/snapshot/import', { snapshot }],
    ] as const) {
      const response = await postChunked(service.baseUrl, tenant.apiKey, path, JSON.stringify(body));
      assert.equal(response.status, 413, `${path}: ${response.text}`);
      const error = JSON.parse(response.text).error;
      assert.equal(error.code, 'snapshot_too_large', path);
      assert.equal(error.details[0].field, 'snapshot', path);
      assert.match(error.message, new RegExp(`carries ${Buffer.byteLength(JSON.stringify(body))} bytes; the snapshot cap is ${CAP_BYTES}`));
    }
    // Under the cap, the same chunked framing is read and the snapshot opened (and refused on its contents).
    const small = await postChunked(
      service.baseUrl,
      tenant.apiKey,
      '/v1/memories/search',
      JSON.stringify({ query: 'Alice', snapshot: { a: 1 } }),
    );
    assert.equal(small.status, 400, small.text);
  });

  it("authorizes snapshot_ref.collection_id before touching the URL: another tenant's or an unknown collection is 404 with no request", async () => {
    const stranger = await newTenant('device-urls-stranger');
    const before = origin.connections;
    for (const collection_id of [stranger.collectionId, '00000000-0000-4000-8000-0000000000aa']) {
      const searched = await api.post('/v1/memories/search', {
        query: 'Alice',
        snapshot_ref: { collection_id, get_url: url('/bucket/user-1') },
      });
      assert.equal(searched.status, 404);
      assert.equal(searched.body.error.code, 'collection_not_found');
      const exported = await api.post('/v1/device-memory/snapshot/export', {
        collection_id: tenant.collectionId,
        destination: { collection_id, put_url: url('/bucket/steal') },
      });
      assert.equal(exported.status, 404);
      const foreignExport = await api.post('/v1/device-memory/snapshot/export', {
        collection_id,
        destination: { collection_id: tenant.collectionId, put_url: url('/bucket/steal') },
      });
      assert.equal(foreignExport.status, 404);
      const imported = await api.post('/v1/device-memory/snapshot/import', {
        snapshot_ref: { collection_id, get_url: url('/bucket/user-1') },
      });
      assert.equal(imported.status, 404, JSON.stringify(imported.body));
      assert.equal(imported.body.error.code, 'collection_not_found');
      assert.equal(imported.body.error.details[0].field, 'snapshot_ref.collection_id');
      const created = await api.post('/v1/memories', {
        snapshot_ref: { collection_id, get_url: url('/bucket/user-1'), put_url: url('/bucket/steal') },
        raw_text: 'Mallory Stone copies the Berlin office files.',
      });
      assert.equal(created.status, 404, JSON.stringify(created.body));
      assert.equal(created.body.error.code, 'collection_not_found');
      assert.equal(created.body.error.details[0].field, 'snapshot_ref.collection_id');
      assert.equal(origin.connections, before, `no outbound request for ${collection_id}`);
    }
    // The same bodies with the caller's own collection do reach the origin: the 404s above were the authorization.
    const own = await api.post('/v1/device-memory/snapshot/import', {
      snapshot_ref: { collection_id: tenant.collectionId, get_url: url('/bucket/user-1') },
    });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    assert.ok(origin.connections > before);
    assert.ok(!origin.objects.has('/bucket/steal'));
  });

  it('expires ephemeral collections completely: records, chunks, graph, and the index partitions of every API process', async () => {
    // A second API process on the same database, with its own sweeper effectively off: what it
    // drops, it learns from the shared index-change feed, as any other replica would.
    const second = await startApiProcess('device-urls-second', { EPHEMERAL_SWEEP_INTERVAL_MS: '3600000' });
    try {
      const processes = [
        { name: 'the sweeping process', api },
        { name: 'a second API process', api: new Api(second.baseUrl, tenant.apiKey) },
      ];
      type IndexHealth = { collections: number; entries: { vector: number; lexical: number; graph: number } };
      const indexOf = async (client: Api): Promise<IndexHealth> => (await client.get('/v1/health')).body.results.index;
      const baseline = await Promise.all(processes.map((process) => indexOf(process.api)));

      const snapshot = (await api.post('/v1/device-memory/snapshot/export', { collection_id: tenant.collectionId })).body.results;
      const imported = await api.post('/v1/device-memory/snapshot/import', { snapshot });
      assert.equal(imported.status, 201);
      const ephemeral = imported.body.results.ephemeral_collection_id as string;
      for (const [index, process] of processes.entries()) {
        const hits = await process.api.post('/v1/memories/search', {
          query: 'Berlin office',
          collection_ids: [ephemeral],
          track_access: false,
        });
        assert.equal(hits.status, 200, `${process.name}: ${JSON.stringify(hits.body)}`);
        assert.ok(hits.body.results.hits.length > 0, process.name);
        const loaded = await indexOf(process.api);
        assert.equal(loaded.collections, baseline[index]!.collections + 1, `${process.name} loaded the ephemeral collection`);
        assert.ok(loaded.entries.vector > baseline[index]!.entries.vector, `${process.name} indexed its chunks`);
        assert.ok(loaded.entries.graph > baseline[index]!.entries.graph, `${process.name} indexed its graph`);
      }
      const memoryIds = (await api.get(`/v1/memories?collection_ids=${ephemeral}`)).body.results.map((memory: { id: string }) => memory.id);
      assert.equal(memoryIds.length, 2);

      const db = await database();
      // Logs name ids, never content (the delete suites check them separately).
      const logs = new Set(['memory_events', 'index_changes']);
      const leftovers = async (): Promise<string[]> => {
        const found: string[] = [];
        for (const { name } of await db.listCollections().toArray()) {
          if (logs.has(name)) continue;
          for await (const doc of db.collection(name).find({})) {
            const text = JSON.stringify(doc);
            if (text.includes(ephemeral) || memoryIds.some((id: string) => text.includes(id))) found.push(`${name}: ${text.slice(0, 160)}`);
          }
        }
        return found;
      };
      const remaining = async (): Promise<number> => (await leftovers()).length;
      assert.ok((await remaining()) > 0);
      await eventually(
        async () => assert.deepEqual(await leftovers(), [], 'nothing derived from the ephemeral collection is left'),
        20_000,
        250,
      );

      // Each process follows the feed every 500 ms: both drop the partitions, entries and all.
      for (const [index, process] of processes.entries()) {
        await eventually(
          async () => {
            const now = await indexOf(process.api);
            assert.equal(now.collections, baseline[index]!.collections, `${process.name} dropped the partitions`);
            assert.deepEqual(now.entries, baseline[index]!.entries, `${process.name} holds no entry of the expired collection`);
          },
          10_000,
          200,
        );
        const gone = await process.api.post('/v1/memories/search', { query: 'Berlin office', collection_ids: [ephemeral] });
        assert.equal(gone.status, 404, process.name);
        assert.equal((await process.api.get(`/v1/memories/${memoryIds[0]}`)).status, 404, process.name);
        assert.equal(
          (await indexOf(process.api)).collections,
          baseline[index]!.collections,
          `${process.name}: a refused search loads nothing`,
        );
      }
      // The import and the expiry each cost every follower one index-feed notice for the whole
      // collection, not one per memory (a 20,000-episode import made 40,000 of them).
      const notices = await db
        .collection('index_changes')
        .find({ $or: [{ collection_id: ephemeral }, { memory_id: { $in: memoryIds } }] })
        .toArray();
      assert.deepEqual(notices.map((notice) => notice.op).sort(), ['drop_collection', 'reload_collection'], JSON.stringify(notices));
    } finally {
      second.child.kill('SIGTERM');
    }
  });
});

/** A POST whose JSON body goes out in chunks with Transfer-Encoding: chunked (no Content-Length). */
async function postChunked(baseUrl: string, apiKey: string, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    const bytes = Buffer.from(body);
    for (let offset = 0; offset < bytes.length; offset += 16 * 1024) request.write(bytes.subarray(offset, offset + 16 * 1024));
    request.end();
  });
}
