/**
 * Inputs that were unbounded: a page offset up to 2^53 (each request skipping that many rows),
 * and metadata that grew past its per-request limit one merging PATCH at a time.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createMemory, newTenant, waitForStatus, type TenantFixture } from '../support/client.js';

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
