/**
 * Inputs that were unbounded: a page offset up to 2^53 (each request skipping that many rows),
 * metadata that grew past its per-request limit one merging PATCH at a time, and request bodies
 * in flight (every route took 32 MiB bodies, as many at once as clients sent).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { before, describe, it } from 'node:test';
import { stopChild } from '../../dev/stack.js';
import { createMemory, eventually, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';
import { startApiProcess } from '../support/processes.js';

let tenant: TenantFixture;
before(async () => {
  tenant = await newTenant('bounds');
});

describe('page offsets', () => {
  for (const path of ['/v1/memories', '/v1/collections']) {
    it(`${path}: accepts offset 100000 and refuses 100001 with 400 naming offset`, async () => {
      const deepest = await tenant.api.get(`${path}?offset=100000`);
      assert.equal(deepest.status, 200, JSON.stringify(deepest.body));
      assert.deepEqual(deepest.body.results, []);
      const beyond = await tenant.api.get(`${path}?offset=100001`);
      assert.equal(beyond.status, 400, JSON.stringify(beyond.body));
      assert.equal(beyond.body.error.code, 'validation_failed');
      assert.equal(beyond.body.error.details[0].field, 'offset');
      assert.match(beyond.body.error.message, /at most 100000/);
      const huge = await tenant.api.get(`${path}?offset=${2 ** 53 - 1}`);
      assert.equal(huge.status, 400);
    });
  }
});

describe('merged metadata', () => {
  it('refuses a merge that would take the stored metadata past 16 KiB, and keeps what was stored', async () => {
    const id = await createMemory(tenant, { raw_text: 'Metadata growth check.', metadata: { a: 'x'.repeat(10_000) } });
    await waitForStatus(tenant.api, id, ['complete']);
    const grown = await tenant.api.patch(`/v1/memories/${id}`, { metadata: { b: 'y'.repeat(10_000) }, merge_metadata: true });
    assert.equal(grown.status, 400, JSON.stringify(grown.body).slice(0, 300));
    assert.equal(grown.body.error.code, 'validation_failed');
    assert.equal(grown.body.error.details[0].field, 'metadata');
    assert.match(grown.body.error.message, /at most 16384/);
    const stored = await tenant.api.get(`/v1/memories/${id}`);
    assert.deepEqual(Object.keys(stored.body.results.metadata), ['a']);
    // Replacing is bounded by the request's own limit, and merging small keys still works.
    const small = await tenant.api.patch(`/v1/memories/${id}`, { metadata: { c: 1 }, merge_metadata: true });
    assert.equal(small.status, 200);
    assert.deepEqual(Object.keys(small.body.results.metadata).sort(), ['a', 'c']);
  });

  it('keeps the bound when merges race: each is checked against what the ones before it wrote', async () => {
    const id = await createMemory(tenant, { raw_text: 'Concurrent metadata merges.', metadata: { base: 'x'.repeat(6_000) } });
    await waitForStatus(tenant.api, id, ['complete']);
    // Eight merges of about 2 KB each onto 6 KB: every one fits alone, at most five fit together.
    const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
    const answers = await Promise.all(
      keys.map((key) => tenant.api.patch(`/v1/memories/${id}`, { metadata: { [key]: 'y'.repeat(2_000) }, merge_metadata: true })),
    );
    const merged = keys.filter((_, i) => answers[i]!.status === 200);
    for (const answer of answers.filter((candidate) => candidate.status !== 200)) {
      assert.ok(
        (answer.status === 400 && answer.body.error.details[0].field === 'metadata') ||
          (answer.status === 409 && answer.body.error.code === 'memory_busy'),
        JSON.stringify(answer.body).slice(0, 300),
      );
    }
    const stored = (await tenant.api.get(`/v1/memories/${id}`)).body.results.metadata as Record<string, string>;
    assert.ok(Buffer.byteLength(JSON.stringify(stored)) <= 16_384, `stored metadata is ${Buffer.byteLength(JSON.stringify(stored))} bytes`);
    assert.deepEqual(Object.keys(stored).sort(), ['base', ...merged].sort(), 'every merge answered 200 is stored, no other');
    assert.ok(merged.length >= 1 && merged.length <= 5, `${merged.length} merges stored`);
  });
});

/** A request whose body is declared at `bytes` but only begun: it stays in flight until `abort`. */
async function heldBody(baseUrl: string, apiKey: string, bytes: number): Promise<{ abort: () => void; answered: () => boolean }> {
  const request = http.request(`${baseUrl}/v1/memories/search`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Content-Length': String(bytes) },
  });
  let answered = false;
  request.on('response', () => (answered = true));
  request.on('error', () => undefined);
  // On the wire before anything else is sent, so the server counts it first.
  await new Promise<void>((resolve, reject) => request.write('{"query": "held"', (error) => (error ? reject(error) : resolve())));
  return { abort: () => request.destroy(), answered: () => answered };
}

describe('request bodies in flight', () => {
  it('bounds the body bytes one tenant and the whole process hold at once, before reading them', async () => {
    const { child, baseUrl } = await startApiProcess('api-bodies', {
      BODY_BYTES_IN_FLIGHT_MAX: String(128 * 1024),
      BODY_BYTES_IN_FLIGHT_PER_TENANT: String(64 * 1024),
    });
    try {
      const [first, second, third] = await Promise.all([newTenant('bodies-a'), newTenant('bodies-b'), newTenant('bodies-c')]);
      // A search whose JSON body is padded with whitespace to about `padding` bytes.
      const search = async (tenant: TenantFixture, padding: number) => {
        const response = await fetch(`${baseUrl}/v1/memories/search`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: 'anything', collection_ids: [tenant.collectionId] }) + ' '.repeat(padding),
        });
        return {
          status: response.status,
          headers: response.headers,
          body: (await response.json()) as { error?: { code: string; message: string } },
        };
      };
      const held = await heldBody(baseUrl, first.apiKey, 60 * 1024);
      try {
        // The held body is counted as soon as its headers are in. Searching before the process has
        // read them races it: the search may be counted first and the held body refused instead.
        await eventually(async () => {
          const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
          assert.match(metrics, new RegExp(`^engram_request_body_bytes_in_flight ${60 * 1024}$`, 'm'));
        }, 10_000);
        // Then 60 + 10 KiB is over the tenant's 64.
        const refused = await eventually(async () => {
          const response = await search(first, 10 * 1024);
          assert.equal(response.status, 429, JSON.stringify(response.body));
          return response;
        }, 10_000);
        assert.ok(!held.answered(), 'the held request itself was admitted (it waits for its body)');
        assert.equal(refused.body.error?.code, 'rate_limited');
        assert.equal(refused.headers.get('retry-after'), '1');
        assert.match(refused.body.error?.message ?? '', /request bodies of this tenant/);
        // Another tenant still has room in the process: 60 + 40 KiB of 128.
        const other = await search(second, 40 * 1024);
        assert.notEqual(other.status, 429, JSON.stringify(other.body));
        assert.notEqual(other.status, 503, JSON.stringify(other.body));
        // But not for 70 KiB more while the first body is held.
        const busy = await search(third, 70 * 1024);
        assert.equal(busy.status, 503, JSON.stringify(busy.body));
        assert.equal(busy.body.error?.code, 'server_busy');
        assert.equal(busy.headers.get('retry-after'), '1');
      } finally {
        held.abort();
      }
      // Given back when the held request ends (here: its client went away).
      await eventually(async () => {
        const again = await search(first, 10 * 1024);
        assert.equal(again.status, 200, JSON.stringify(again.body));
      }, 10_000);
    } finally {
      await stopChild(child);
    }
  });
});
