/**
 * Files: inline content parts and the presigned upload flow, end to end, with the refusals.
 * Uses text formats (no OCR or ASR) so it stays fast; the extractors have their own suites.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMemory, newTenant, sleep, waitForStatus, type ApiResponse, type TenantFixture } from '../support/client.js';
import { closeDatabase, database } from '../support/db.js';

after(closeDatabase);

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A markdown document larger than the test stack's 128 KiB inline limit, in a few long sections. */
function bigMarkdown(): Buffer {
  const filler = (i: number) =>
    Array.from(
      { length: 60 },
      (_, j) => `Keeper's log of lighthouse ${i}, entry ${j}: tide tables checked and the lamp lens polished.`,
    ).join(' ');
  const sections = Array.from({ length: 26 }, (_, i) => `## Lighthouse ${i}\n\n${filler(i)}\n`);
  sections.splice(13, 0, '## Cormorants\n\nThe rare blue-footed cormorant was photographed nesting on the north pier.\n');
  return Buffer.from(`# Lighthouse archive\n\n${sections.join('\n')}`);
}

async function fileCount(tenantId: string): Promise<number> {
  return (await database()).collection('files.files').countDocuments({ 'metadata.tenant_id': tenantId });
}

describe('inline content parts', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('inline');
  });

  it('ingests an inline HTML file, keeps the original for download, and deletes it with the memory', async () => {
    const html = Buffer.from(
      '<html><head><title>Menu</title><script>var secret = "do-not-index";</script><style>p{color:red}</style></head>' +
        '<body><h1>Autumn menu</h1><p>Our pumpkin risotto is served with sage butter.</p></body></html>',
    );
    const id = await createMemory(tenant, {
      content_parts: [{ type: 'document', data: html.toString('base64'), media_type: 'text/html', filename: 'menu.html' }],
    });
    const done = await waitForStatus(tenant.api, id, ['complete']);
    const text = (done.body.results.chunks as string[]).join(' ');
    assert.match(text, /pumpkin risotto/);
    assert.doesNotMatch(text, /do-not-index|color:red/, 'scripts and styles are not indexed');
    assert.equal(done.body.results.files[0].filename, 'menu.html');
    assert.equal(done.body.results.files[0].sha256, sha256(html));
    assert.equal(done.body.results.chunk_sources[0].type, 'file');

    const download = await fetch(`${tenant.api.baseUrl}/v1/memories/${id}/content`, {
      headers: { Authorization: `Bearer ${tenant.apiKey}` },
    });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'text/html');
    assert.match(download.headers.get('content-disposition') ?? '', /menu\.html/);
    assert.equal(sha256(Buffer.from(await download.arrayBuffer())), sha256(html));

    const search = await tenant.api.post('/v1/memories/search', { query: 'risotto with sage', collection_ids: [tenant.collectionId] });
    assert.equal(search.body.results.hits[0].memory_id, id);
    assert.equal(search.body.results.hits[0].source.filename, 'menu.html');

    const before = await fileCount(tenant.tenantId);
    assert.equal((await tenant.api.delete(`/v1/memories/${id}`)).status, 200);
    assert.equal(await fileCount(tenant.tenantId), before - 1, 'the original file is deleted with its memory');
    assert.equal((await tenant.api.get(`/v1/memories/${id}/content`)).status, 404);
  });

  it('refuses bad parts with the part index in the error, and stores nothing', async () => {
    const before = await fileCount(tenant.tenantId);
    const post = (part: Record<string, unknown>) =>
      tenant.api.post('/v1/memories', { collection_id: tenant.collectionId, content_parts: [{ type: 'document', ...part }] });

    const badBase64 = await post({ data: 'not base64!!', media_type: 'text/plain' });
    assert.equal(badBase64.status, 400);
    assert.equal(badBase64.body.error.details[0].field, 'content_parts.0.data');

    const empty = await post({ data: '', media_type: 'text/plain' });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.details[0].field, 'content_parts.0.data');

    const tooBig = await post({ data: Buffer.alloc(200 * 1024, 'a').toString('base64'), media_type: 'text/plain' });
    assert.equal(tooBig.status, 413);
    assert.equal(tooBig.body.error.code, 'content_part_too_large');
    assert.match(tooBig.body.error.message, /POST \/v1\/uploads/);

    const unsupported = await post({
      data: Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0]).toString('base64'),
      media_type: 'application/zip',
      filename: 'x.zip',
    });
    assert.equal(unsupported.status, 415);
    assert.equal(unsupported.body.error.details[0].field, 'content_parts.0');

    const both = await post({ data: 'aGk=', upload_id: '00000000-0000-4000-8000-000000000000' });
    assert.equal(both.status, 400);
    const wrongType = await post({ type: 'image', data: 'aGk=' });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.body.error.details[0].field, 'content_parts.0.type');
    assert.equal(await fileCount(tenant.tenantId), before);
  });
});

describe('presigned uploads', () => {
  let tenant: TenantFixture;
  const markdown = bigMarkdown();

  before(async () => {
    tenant = await newTenant('uploads');
  });

  const issue = async (size = markdown.length, mediaType = 'text/markdown', collectionId = tenant.collectionId) => {
    const response = await tenant.api.post('/v1/uploads', {
      collection_id: collectionId,
      filename: 'archive.md',
      media_type: mediaType,
      size,
    });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    return response.body.results as {
      upload_id: string;
      upload_url: string;
      method: string;
      headers: Record<string, string>;
      expires_at: string;
    };
  };
  const put = (url: string, body: Uint8Array, headers: Record<string, string> = { 'Content-Type': 'text/markdown' }) =>
    fetch(url, { method: 'PUT', body, headers, duplex: 'half' } as RequestInit).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as ApiResponse['body'],
    }));

  it('uploads a file above the inline limit, streams it, and ingests it by upload_id', async () => {
    assert.ok(markdown.length > 128 * 1024, `fixture is ${markdown.length} bytes`);
    const upload = await issue();
    assert.equal(upload.method, 'PUT');
    assert.match(upload.upload_url, /\/v1\/uploads\/[0-9a-f-]+\?expires=\d+&signature=/);
    const stored = await put(upload.upload_url, markdown);
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.equal(stored.body.results.sha256, sha256(markdown));

    const again = await put(upload.upload_url, markdown);
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'upload_already_used');

    const id = await createMemory(tenant, { content_parts: [{ type: 'document', upload_id: upload.upload_id }] });
    const done = await waitForStatus(tenant.api, id, ['complete'], 120_000);
    assert.equal(done.body.results.files[0].size, markdown.length);
    const search = await tenant.api.post('/v1/memories/search', {
      query: 'blue-footed cormorant nesting',
      collection_ids: [tenant.collectionId],
    });
    assert.equal(search.body.results.hits[0].memory_id, id);
    assert.equal(search.body.results.hits[0].source.heading, 'Cormorants');

    const reuse = await tenant.api.post('/v1/memories', {
      collection_id: tenant.collectionId,
      content_parts: [{ type: 'document', upload_id: upload.upload_id }],
    });
    assert.equal(reuse.status, 409);
    assert.equal(reuse.body.error.code, 'upload_already_used');

    const download = await fetch(`${tenant.api.baseUrl}/v1/memories/${id}/content?part=0`, {
      headers: { Authorization: `Bearer ${tenant.apiKey}` },
    });
    assert.equal(sha256(Buffer.from(await download.arrayBuffer())), sha256(markdown));
    assert.equal((await tenant.api.get(`/v1/memories/${id}/content?part=1`)).status, 404);
  });

  it('refuses tampered, oversize, short and mistyped uploads, leaving nothing stored', async () => {
    const before = await fileCount(tenant.tenantId);
    const upload = await issue(1000);
    const url = new URL(upload.upload_url);

    const tampered = new URL(url);
    tampered.searchParams.set('signature', `${url.searchParams.get('signature')!.slice(0, -2)}xx`);
    assert.equal((await put(tampered.toString(), Buffer.alloc(1000))).status, 403);
    const extended = new URL(url);
    extended.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const extendedPut = await put(extended.toString(), Buffer.alloc(1000));
    assert.equal(extendedPut.status, 403);
    assert.equal(extendedPut.body.error.code, 'invalid_upload_signature');

    const mistyped = await put(upload.upload_url, Buffer.alloc(1000), { 'Content-Type': 'application/pdf' });
    assert.equal(mistyped.status, 415);
    const short = await put(upload.upload_url, Buffer.alloc(10));
    assert.equal(short.status, 400);
    assert.equal(short.body.error.code, 'upload_size_mismatch');
    // No Content-Length (a streamed body): the size is enforced while reading. The client sends
    // past the size, then holds the rest back until the answer has come.
    let answered = () => {};
    const answer = new Promise<void>((resolve) => (answered = resolve));
    let sent = 0;
    const streamedTooMuch = await fetch(upload.upload_url, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/markdown' },
      body: new ReadableStream({
        async pull(controller) {
          if (sent === 2) await Promise.race([answer, sleep(10_000)]);
          if (sent === 4) return controller.close();
          controller.enqueue(new Uint8Array(600));
          sent++;
        },
      }),
      duplex: 'half',
    } as RequestInit);
    answered();
    assert.equal(streamedTooMuch.status, 413);
    assert.equal(sent, 2, 'answered while the rest of the body was still held back');
    // Refused before its body was read to the end: that connection is not kept for the next request.
    assert.equal(streamedTooMuch.headers.get('connection'), 'close');
    assert.equal(await fileCount(tenant.tenantId), before, 'no partial file stays behind');

    // A failed attempt does not use the URL up.
    assert.equal((await put(upload.upload_url, Buffer.alloc(1000, 'a'))).status, 200);
  });

  it('validates the upload request and the memory that references it', async () => {
    const tooBig = await tenant.api.post('/v1/uploads', {
      collection_id: tenant.collectionId,
      filename: 'x.pdf',
      media_type: 'application/pdf',
      size: 3 * 1024 * 1024,
    });
    assert.equal(tooBig.status, 413);
    assert.equal(tooBig.body.error.details[0].field, 'size');
    const missing = await tenant.api.post('/v1/uploads', { collection_id: tenant.collectionId, filename: 'x.pdf' });
    assert.equal(missing.status, 400);
    assert.ok(missing.body.error.details.some((detail: { field: string }) => detail.field === 'media_type'));

    const pending = await issue(100);
    const incomplete = await tenant.api.post('/v1/memories', {
      collection_id: tenant.collectionId,
      content_parts: [{ type: 'document', upload_id: pending.upload_id }],
    });
    assert.equal(incomplete.status, 409);
    assert.equal(incomplete.body.error.code, 'upload_incomplete');

    const other = await tenant.api.post('/v1/collections', { name: 'elsewhere' });
    const elsewhere = await issue(5, 'text/plain', other.body.results.id);
    assert.equal((await put(elsewhere.upload_url, Buffer.from('hello'), { 'Content-Type': 'text/plain' })).status, 200);
    const mismatch = await tenant.api.post('/v1/memories', {
      collection_id: tenant.collectionId,
      content_parts: [{ type: 'document', upload_id: elsewhere.upload_id }],
    });
    assert.equal(mismatch.status, 422);
    assert.equal(mismatch.body.error.code, 'upload_collection_mismatch');

    const stranger = await newTenant('uploads-stranger');
    const foreign = await stranger.api.post('/v1/memories', {
      collection_id: stranger.collectionId,
      content_parts: [{ type: 'document', upload_id: elsewhere.upload_id }],
    });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.details[0].field, 'content_parts.0.upload_id');
  });

  it('refuses an expired URL', async () => {
    const upload = await issue(5, 'text/plain');
    await sleep(16_000);
    const late = await put(upload.upload_url, Buffer.from('hello'), { 'Content-Type': 'text/plain' });
    assert.equal(late.status, 403);
    assert.equal(late.body.error.code, 'upload_url_expired');
  });
});
