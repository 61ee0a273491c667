/**
 * Issue 20, item 5: unauthenticated traffic is bounded. Failed authentications are rate limited
 * per client address (429 `rate_limited` with Retry-After), and a bad key does not cost a
 * database query each time (the API's own key-lookup counter, scraped from /metrics, shows it).
 * The routes ahead of authentication (the WebSocket upgrade's ticket, the signed upload PUT)
 * charge the same bucket and refuse forged credentials before any lookup (their own counters).
 * Each case runs against an API process of its own, so its limits touch no other suite.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { Api, newTenant, type TenantFixture } from '../support/client.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

/** A key of the issued shape that was never issued. */
const unknownKey = (): string => `mk_${randomBytes(24).toString('base64url')}`;

async function counter(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${name} `));
  assert.ok(line, `the API exposes ${name}`);
  return Number(line.split(' ')[1]);
}

const keyLookups = (baseUrl: string): Promise<number> => counter(baseUrl, 'engram_auth_key_lookups_total');

/** A WebSocket upgrade request; the refusal's status, code and Retry-After (a 101 fails the test). */
function upgrade(baseUrl: string, ticket: string): Promise<{ status: number; code: string; retryAfter: string | undefined }> {
  const url = new URL(`/v1/ws/memory-events?ticket=${encodeURIComponent(ticket)}`, baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.get(url, {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
      },
    });
    request.on('upgrade', (_response, socket) => {
      socket.destroy();
      reject(new Error('a forged ticket was upgraded'));
    });
    request.on('response', (response) => {
      let body = '';
      response.on('data', (part: Buffer) => (body += String(part)));
      response.on('end', () => {
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode!, code: (JSON.parse(body) as { error: { code: string } }).error.code, retryAfter });
      });
    });
    request.on('error', reject);
  });
}

describe('unauthenticated requests', () => {
  let tenant: TenantFixture;
  const processes: ApiProcess[] = [];

  before(async () => {
    tenant = await newTenant('abuse');
  });
  after(async () => {
    await Promise.all(processes.map((started) => stopChild(started.child)));
  });

  it('are rate limited per client address: 429 rate_limited with Retry-After, while a valid key keeps working', async () => {
    const started = await startApiProcess('api-auth-limit', { AUTH_FAILURE_RATE_PER_SECOND: '0.02', AUTH_FAILURE_BURST: '5' });
    processes.push(started);
    const valid = new Api(started.baseUrl, tenant.apiKey);
    assert.equal((await valid.get('/v1/collections')).status, 200);

    const attempts: { name: string; api: Api; headers?: Record<string, string> }[] = [
      { name: 'no key', api: new Api(started.baseUrl, null) },
      { name: 'a malformed header', api: new Api(started.baseUrl, null), headers: { Authorization: 'Basic abc' } },
      { name: 'a key of the wrong shape', api: new Api(started.baseUrl, 'mk_short') },
      { name: 'an unknown key', api: new Api(started.baseUrl, unknownKey()) },
      { name: 'another unknown key', api: new Api(started.baseUrl, unknownKey()) },
    ];
    for (const attempt of attempts) {
      const response = await attempt.api.get('/v1/collections', attempt.headers);
      assert.equal(response.status, 401, `${attempt.name}: 401 within the burst`);
      assert.equal(response.body.error.code, 'unauthenticated');
    }
    for (const attempt of attempts) {
      const response = await attempt.api.get('/v1/collections', attempt.headers);
      assert.equal(response.status, 429, `${attempt.name}: 429 once the address spent its failures`);
      assert.equal(response.body.error.code, 'rate_limited');
      assert.match(response.body.error.message, /failed authentications/);
      assert.ok(Number(response.headers.get('retry-after')) >= 1, 'Retry-After in whole seconds');
    }
    assert.equal((await valid.get('/v1/collections')).status, 200, 'a key validated moments ago still passes');
  });

  it('a bad key costs at most one database lookup, a key of the wrong shape none', async () => {
    const started = await startApiProcess('api-auth-lookups', { AUTH_FAILURE_RATE_PER_SECOND: '100', AUTH_FAILURE_BURST: '1000' });
    processes.push(started);
    const bad = new Api(started.baseUrl, unknownKey());
    const before = await keyLookups(started.baseUrl);
    for (let i = 0; i < 20; i++) assert.equal((await bad.get('/v1/collections')).status, 401);
    assert.equal((await keyLookups(started.baseUrl)) - before, 1, 'one lookup for 20 requests with the same bad key');

    const table = ['mk_', 'mk_short', `mk_${'a'.repeat(33)}`, `xx_${'a'.repeat(32)}`, `mk_${'a'.repeat(31)}=`, 'a'.repeat(5000)];
    const beforeShapes = await keyLookups(started.baseUrl);
    for (const key of table) {
      const response = await new Api(started.baseUrl, key).get('/v1/collections');
      assert.equal(response.status, 401, `${key.slice(0, 40)}: 401`);
      assert.equal(response.body.error.code, 'unauthenticated');
    }
    assert.equal(await keyLookups(started.baseUrl), beforeShapes, 'keys that cannot have been issued are never looked up');

    const other = await newTenant('abuse-other');
    const otherApi = new Api(started.baseUrl, other.apiKey);
    assert.equal((await otherApi.get('/v1/collections')).status, 200, 'a real key is found');
  });

  it('forged WebSocket tickets and upload signatures are refused without a lookup and share the failure bucket: 429 after the burst', async () => {
    const started = await startApiProcess('api-auth-credentials', { AUTH_FAILURE_RATE_PER_SECOND: '0.02', AUTH_FAILURE_BURST: '7' });
    processes.push(started);
    const base = started.baseUrl;
    const owner = new Api(base, tenant.apiKey);
    const issued = await owner.post('/v1/uploads', {
      collection_id: tenant.collectionId,
      filename: 'a.txt',
      media_type: 'text/plain',
      size: 5,
    });
    assert.equal(issued.status, 201);
    const real = new URL(issued.body.results.upload_url as string);
    const put = async (uploadId: string, expires: string, signature: string) => {
      const response = await fetch(`${base}/v1/uploads/${uploadId}?expires=${expires}&signature=${signature}`, {
        method: 'PUT',
        headers: { 'Content-Type': 'text/plain' },
        body: 'hello',
      });
      return {
        status: response.status,
        code: ((await response.json()) as { error: { code: string } }).error.code,
        retryAfter: response.headers.get('retry-after'),
      };
    };
    const ticketsBefore = await counter(base, 'engram_ws_ticket_lookups_total');
    const uploadsBefore = await counter(base, 'engram_upload_lookups_total');

    // Tickets that cannot have been minted: refused without a lookup.
    for (const ticket of ['wst_', 'wst_short', `wst_${'a'.repeat(33)}`, `xxx_${'a'.repeat(32)}`]) {
      const refused = await upgrade(base, ticket);
      assert.deepEqual([refused.status, refused.code], [401, 'unknown_ticket'], ticket);
    }
    assert.equal(await counter(base, 'engram_ws_ticket_lookups_total'), ticketsBefore, 'malformed tickets are never looked up');
    // A well-formed unknown ticket costs its one lookup (the counter does count).
    const unknownTicket = `wst_${randomBytes(24).toString('base64url')}`;
    assert.equal((await upgrade(base, unknownTicket)).status, 401);
    assert.equal(await counter(base, 'engram_ws_ticket_lookups_total'), ticketsBefore + 1);

    // Forged upload signatures: a real id with a tampered signature or expiry, an unknown id.
    const expires = real.searchParams.get('expires')!;
    const signature = real.searchParams.get('signature')!;
    const uploadId = real.pathname.split('/').pop()!;
    const forged: [string, string, string][] = [
      [uploadId, expires, `${signature.slice(0, -2)}xx`],
      [randomUUID(), expires, signature],
    ];
    for (const [id, when, signed] of forged) {
      const refused = await put(id, when, signed);
      assert.deepEqual([refused.status, refused.code], [403, 'invalid_upload_signature'], `${id} ${when}`);
    }
    assert.equal(await counter(base, 'engram_upload_lookups_total'), uploadsBefore, 'forged signatures are never looked up');

    // Seven failures spent the burst: every entry point now answers 429, before any lookup.
    const ticketRefused = await upgrade(base, `wst_${randomBytes(24).toString('base64url')}`);
    assert.equal(ticketRefused.status, 429);
    assert.equal(ticketRefused.code, 'rate_limited');
    assert.ok(Number(ticketRefused.retryAfter) >= 1, 'Retry-After in whole seconds');
    const uploadRefused = await put(randomUUID(), expires, signature);
    assert.deepEqual([uploadRefused.status, uploadRefused.code], [429, 'rate_limited']);
    assert.ok(Number(uploadRefused.retryAfter) >= 1);
    assert.equal((await new Api(base, unknownKey()).get('/v1/collections')).status, 429, 'the same bucket as API keys');
    assert.equal(await counter(base, 'engram_ws_ticket_lookups_total'), ticketsBefore + 1, 'no ticket lookup once refused');
    assert.equal(await counter(base, 'engram_upload_lookups_total'), uploadsBefore, 'no upload lookup once refused');
    assert.equal((await owner.get('/v1/collections')).status, 200, 'a key validated moments ago still passes');
  });
});
