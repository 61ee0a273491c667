/**
 * Issue 20, item 5: unauthenticated traffic is bounded. Failed authentications are rate limited
 * per client address (429 `rate_limited` with Retry-After), and a bad key does not cost a
 * database query each time (the API's own key-lookup counter, scraped from /metrics, shows it).
 * Each case runs against an API process of its own, so its limits touch no other suite.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { Api, newTenant, type TenantFixture } from '../support/client.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

/** A key of the issued shape that was never issued. */
const unknownKey = (): string => `mk_${randomBytes(24).toString('base64url')}`;

async function keyLookups(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith('engram_auth_key_lookups_total '));
  assert.ok(line, 'the API exposes engram_auth_key_lookups_total');
  return Number(line.split(' ')[1]);
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
});
