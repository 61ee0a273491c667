/**
 * File ingestion through the Temporal pipeline: OCR, PDF text with a scanned page, speech,
 * Word documents; and the files that can never be read, which end in `failed` with a reason
 * while the worker stays healthy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildCorruptPdf, buildDocx, buildScannedPdf, buildZipBombDocx } from '../fixtures/documents.js';
import { renderTextPng, silentWav, speakWav, toMp3, truncated } from '../fixtures/media.js';
import { createMemory, newTenant, waitForStatus, type ApiResponse, type TenantFixture } from '../support/client.js';
import { assertFailedEvent, closeDatabase, database } from '../support/db.js';

after(closeDatabase);

interface Source {
  type: string;
  page?: number;
  start_s?: number;
  end_s?: number;
  heading?: string;
  method?: string;
  filename?: string;
}

const part = (bytes: Buffer, mediaType: string, filename: string) => ({
  content_parts: [{ type: 'document', data: bytes.toString('base64'), media_type: mediaType, filename }],
});

const allText = (response: ApiResponse) => (response.body.results.chunks as string[]).join(' ').toLowerCase();

describe('file ingestion', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('files');
  });

  it('reads text from an image with OCR', async () => {
    const png = await renderTextPng(['Quarterly inventory report', 'Forty crates of walnuts']);
    const id = await createMemory(tenant, part(png, 'image/png', 'inventory.png'));
    const done = await waitForStatus(tenant.api, id, ['complete'], 120_000);
    const text = allText(done);
    assert.match(text, /inventory/);
    assert.match(text, /walnuts/);
    const source = done.body.results.chunk_sources[0] as Source;
    assert.equal(source.method, 'ocr');
    assert.equal(source.filename, 'inventory.png');
  });

  it('reads a PDF text layer and OCRs its scanned page, keeping page numbers', async () => {
    const { pdf, scanWords } = await buildScannedPdf();
    const id = await createMemory(tenant, part(pdf, 'application/pdf', 'report.pdf'));
    const done = await waitForStatus(tenant.api, id, ['complete'], 120_000);
    const sources = done.body.results.chunk_sources as Source[];
    const chunks = done.body.results.chunks as string[];
    assert.deepEqual([...new Set(sources.map((source) => source.page))].sort(), [1, 2, 3]);
    const scanned = chunks
      .filter((_, index) => sources[index]!.page === 2)
      .join(' ')
      .toLowerCase();
    for (const word of scanWords) assert.match(scanned, new RegExp(word));
    assert.equal(sources.find((source) => source.page === 2)?.method, 'ocr');
    assert.equal(sources.find((source) => source.page === 1)?.method, 'text-layer');

    const search = await tenant.api.post('/v1/memories/search', { query: 'orchard apples harvest', collection_ids: [tenant.collectionId] });
    assert.equal(search.body.results.hits[0].memory_id, id);
    assert.equal(search.body.results.hits[0].source.page, 1);

    // Progress of the read stage counted the PDF's pages.
    const db = await database();
    const reading = await db.collection('memory_events').find({ 'payload.engram_id': id, 'payload.stage': 'extract' }).toArray();
    assert.ok(reading.some((event) => event.payload.total === 3 && event.payload.current === 3));
  });

  it('transcribes speech, keeping time ranges', async () => {
    // MP3 (decoded by ffmpeg) keeps the clip under the test stack's inline limit.
    const mp3 = await toMp3(await speakWav('Please schedule a meeting with the design team for next Tuesday.'));
    const id = await createMemory(tenant, part(mp3, 'audio/mpeg', 'voicemail.mp3'));
    const done = await waitForStatus(tenant.api, id, ['complete'], 180_000);
    const text = allText(done);
    assert.match(text, /meeting/);
    assert.match(text, /design/);
    const source = done.body.results.chunk_sources[0] as Source;
    assert.equal(source.method, 'asr');
    assert.equal(typeof source.start_s, 'number');
    assert.ok((source.end_s ?? 0) > (source.start_s ?? 0));
  });

  it('reads a Word document with its headings', async () => {
    const docx = buildDocx([
      { heading: 1, text: 'Beekeeping handbook' },
      { text: 'Inspect the hives every nine days during the swarming season.' },
    ]);
    const id = await createMemory(
      tenant,
      part(docx, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'bees.docx'),
    );
    const done = await waitForStatus(tenant.api, id, ['complete'], 60_000);
    assert.match(allText(done), /swarming season/);
    assert.ok((done.body.results.chunk_sources as Source[]).some((source) => source.heading === 'Beekeeping handbook'));
  });
});

describe('files that can never be read', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('bad-files');
  });

  const expectFailed = async (bytes: Buffer, mediaType: string, filename: string, reason: RegExp) => {
    const id = await createMemory(tenant, part(bytes, mediaType, filename));
    const failed = await waitForStatus(tenant.api, id, ['failed'], 120_000);
    assert.match(failed.body.results.status_message, reason);
    assert.match(failed.body.results.status_message, new RegExp(filename.replace('.', '\\.')));
    assert.deepEqual(failed.body.results.chunks, [], 'nothing partial stays');
    await assertFailedEvent(id, reason);
    return id;
  };

  it('fails a corrupt PDF, a truncated image, a zip-bomb DOCX and silent audio with a reason each', async () => {
    await expectFailed(buildCorruptPdf(), 'application/pdf', 'broken.pdf', /pdf/i);
    const png = await renderTextPng(['This image will be cut short']);
    await expectFailed(truncated(png), 'image/png', 'cut.png', /image|truncated|corrupt/i);
    await expectFailed(
      await buildZipBombDocx(60 * 1024 * 1024),
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'bomb.docx',
      /zip bomb|unpacks/i,
    );
    await expectFailed(await silentWav(3), 'audio/wav', 'silence.wav', /no speech/i);
  });

  it('keeps the worker healthy: a good file still completes afterwards', async () => {
    const id = await createMemory(
      tenant,
      part(Buffer.from('# Still working\n\nThe worker survived every bad file.'), 'text/markdown', 'ok.md'),
    );
    await waitForStatus(tenant.api, id, ['complete'], 60_000);
  });
});
