/**
 * The OpenAPI export as a client meets it: served without a key, the same paths as the committed
 * file, a docs page whose assets come from the service itself (no CDN), and one pass over every
 * documented operation whose real responses test/support/client.ts checks against the document.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { projectRoot } from '../../config/index.js';
import { Api, newTenant, stack, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase } from '../support/db.js';
import { checkResponse, openApiDocument } from '../support/openapi.js';

after(closeDatabase);

describe('OpenAPI export and docs page', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('openapi');
  });

  it('serves the document without an API key, with the committed paths', async () => {
    const response = await fetch(`${stack().apiUrl}/v1/openapi.json`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const served = (await response.json()) as { openapi: string; paths: object };
    assert.equal(served.openapi, '3.1.0');
    assert.deepEqual(Object.keys(served.paths).sort(), Object.keys(openApiDocument().paths as object).sort());
  });

  it('serves the events JSON Schema without an API key, as committed', async () => {
    const response = await fetch(`${stack().apiUrl}/v1/events.schema.json`);
    assert.equal(response.status, 200);
    const served = (await response.json()) as { $defs: object };
    const committed = JSON.parse(readFileSync(path.join(projectRoot(), 'docs', 'events.schema.json'), 'utf8')) as { $defs: object };
    assert.deepEqual(served, committed);
  });

  it('serves a docs page whose scripts and styles are all local', async () => {
    const page = await fetch(`${stack().apiUrl}/docs`);
    assert.equal(page.status, 200);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    assert.ok(assets.length >= 3);
    for (const asset of assets) {
      assert.ok(asset.startsWith('/docs/assets/'), `${asset} must be served by the service`);
      const response = await fetch(`${stack().apiUrl}${asset}`);
      assert.equal(response.status, 200, asset);
      assert.ok((await response.arrayBuffer()).byteLength > 0, asset);
    }
    const init = await (await fetch(`${stack().apiUrl}/docs/assets/init.js`)).text();
    assert.match(init, /\/v1\/openapi\.json/);
    assert.equal((await fetch(`${stack().apiUrl}/docs/assets/package.json`)).status, 404);
  });

  it('real responses of every documented operation match the document', async () => {
    const { api, collectionId } = tenant;
    // Each call below goes through Api.request, which throws on any mismatch with the document.
    const collection = await api.post('/v1/collections', { name: `docs-${Date.now()}`, description: null });
    assert.equal(collection.status, 201);
    assert.equal((await api.get('/v1/collections?limit=5')).status, 200);
    assert.equal((await api.get(`/v1/collections/${collection.body.results.id}`)).status, 200);
    assert.equal((await api.get(`/v1/collections/by-name/${encodeURIComponent(collection.body.results.name)}`)).status, 200);
    assert.equal((await api.post('/v1/collections', { name: collection.body.results.name })).status, 409);

    const created = await api.post('/v1/memories', {
      collection_id: collectionId,
      kind: 'conversation',
      messages: [{ role: 'user', content: 'The lighthouse keeper on Skerry Point is Ada.' }],
      metadata: { source: 'openapi-test' },
    });
    assert.equal(created.status, 202);
    const id = created.body.results.id as string;
    await waitForStatus(api, id, ['complete']);
    assert.equal((await api.get(`/v1/memories/${id}`)).status, 200);
    assert.equal((await api.get(`/v1/memories?collection_ids=${collectionId}&limit=10`)).status, 200);
    assert.equal((await api.search([collectionId], 'Who keeps the lighthouse?')).status, 200);
    assert.equal((await api.patch(`/v1/memories/${id}`, { metadata: { reviewed: true }, merge_metadata: true })).status, 200);
    assert.equal(
      (await api.post(`/v1/memories/${id}/messages`, { collection_id: collectionId, messages: [{ role: 'assistant', content: 'Noted.' }] }))
        .status,
      202,
    );
    await waitForStatus(api, id, ['complete']);

    const upload = await api.post('/v1/uploads', { collection_id: collectionId, filename: 'a.txt', media_type: 'text/plain', size: 5 });
    assert.equal(upload.status, 201);
    const put = await fetch(upload.body.results.upload_url as string, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain' },
      body: 'hello',
    });
    assert.equal(put.status, 200);
    assert.equal(checkResponse('PUT', new URL(put.url).pathname, put.status, await put.json()), undefined);

    assert.equal((await api.post('/v1/users/ws-ticket')).status, 201);
    assert.equal((await api.delete(`/v1/memories/${id}`)).status, 200);
    assert.equal((await api.delete(`/v1/memories/${id}`)).status, 404);
    assert.equal((await api.post('/v1/memories/delete', [id])).status, 200);

    // Errors: the error body and its codes.
    assert.equal((await api.post('/v1/memories', { collection_id: collectionId })).status, 400);
    assert.equal((await api.get('/v1/memories/not-a-uuid')).status, 400);
    assert.equal((await api.post('/v1/memories', '{"broken', { 'Content-Type': 'application/json' })).status, 400);
    assert.equal((await new Api(stack().apiUrl, 'mk_wrong').get('/v1/memories')).status, 401);
    assert.equal((await new Api(stack().apiUrl, null).get('/v1/health')).status, 200);
    assert.equal((await new Api(stack().apiUrl, null).get('/v1/ready')).status, 200);
  });

  it('a response that drifts from the document is caught', () => {
    const drifted = { results: { id: 'x', status: 'exploded' } };
    assert.match(checkResponse('POST', '/v1/memories', 202, drifted) ?? '', /does not match/);
    assert.match(checkResponse('GET', '/v1/memories', 418, {}) ?? '', /does not list/);
  });
});
