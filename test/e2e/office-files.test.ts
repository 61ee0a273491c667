/**
 * Office formats through the API and the Temporal pipeline: spreadsheets (XLSX, ODS), slide decks
 * (PPTX, ODP), OpenDocument text and EPUB, each keeping its provenance in chunk_sources; and the
 * packages that are refused with a stable reason (macros, encryption, decompression bombs).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  buildEncryptedOffice,
  buildEpub,
  buildOdp,
  buildOds,
  buildOdt,
  buildPptx,
  buildXlsx,
  buildZipBombXlsx,
} from '../fixtures/office.js';
import { createMemory, newTenant, waitForStatus, type ApiResponse, type TenantFixture } from '../support/client.js';
import { assertFailedEvent, closeDatabase } from '../support/db.js';

after(closeDatabase);

interface Source {
  type: string;
  filename?: string;
  media_type?: string;
  heading?: string;
  sheet?: string;
  cell_range?: string;
  slide?: number;
}

const part = (bytes: Buffer, mediaType: string, filename: string) => ({
  content_parts: [{ type: 'document', data: bytes.toString('base64'), media_type: mediaType, filename }],
});

const chunksOf = (response: ApiResponse) => response.body.results.chunks as string[];
const sourcesOf = (response: ApiResponse) => response.body.results.chunk_sources as Source[];

const SHEET = [
  ['Crop', 'Field', 'Tonnes'],
  ['Barley', 'North meadow', 14],
  ['Rapeseed', 'Long acre', 9.5],
];

describe('office files', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('office');
  });

  const ingest = async (bytes: Buffer, mediaType: string, filename: string): Promise<{ id: string; done: ApiResponse }> => {
    const id = await createMemory(tenant, part(bytes, mediaType, filename));
    return { id, done: await waitForStatus(tenant.api, id, ['complete'], 60_000) };
  };

  const search = async (query: string) =>
    (await tenant.api.post('/v1/memories/search', { query, collection_ids: [tenant.collectionId] })).body.results.hits as {
      memory_id: string;
      source: Source;
    }[];

  it('reads an XLSX with sheet and cell range on every chunk, and search finds the row', async () => {
    const { id, done } = await ingest(
      buildXlsx([{ name: 'Harvest', rows: SHEET }]),
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'harvest.xlsx',
    );
    assert.match(chunksOf(done).join(' '), /Crop: Barley; Field: North meadow; Tonnes: 14/);
    const source = sourcesOf(done)[0]!;
    assert.equal(source.sheet, 'Harvest');
    assert.equal(source.cell_range, 'A1:C3');
    assert.equal(source.media_type, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const hits = await search('barley north meadow tonnes');
    const hit = hits.find((candidate) => candidate.memory_id === id);
    assert.ok(hit, 'search finds the spreadsheet');
    assert.equal(hit.source.sheet, 'Harvest');
  });

  it('reads an ODS with sheet and cell range', async () => {
    const { done } = await ingest(
      buildOds([{ name: 'Fields', rows: SHEET }]),
      'application/vnd.oasis.opendocument.spreadsheet',
      'fields.ods',
    );
    assert.match(chunksOf(done).join(' '), /Crop: Rapeseed; Field: Long acre; Tonnes: 9\.5/);
    assert.deepEqual(
      sourcesOf(done).map((source) => [source.sheet, source.cell_range]),
      [['Fields', 'A1:C3']],
    );
  });

  it('reads a PPTX slide by slide, with slide numbers and titles', async () => {
    const { done } = await ingest(
      buildPptx([
        { title: 'Pruning season', body: ['Prune the pear trees in February'], notes: ['Bring the long ladder'] },
        { title: 'Grafting', body: ['Whip-and-tongue grafts on apple rootstock'] },
      ]),
      'application/vnd.openxmlformats-officedocument.presentationml.presentation',
      'orchard.pptx',
    );
    const sources = sourcesOf(done);
    assert.deepEqual(
      sources.map((source) => [source.slide, source.heading]),
      [
        [1, 'Pruning season'],
        [2, 'Grafting'],
      ],
    );
    assert.match(chunksOf(done)[0]!, /Bring the long ladder/);
  });

  it('reads an ODP slide by slide', async () => {
    const { done } = await ingest(
      buildOdp([{ title: 'Beehives', body: ['Check the queen cells weekly'] }]),
      'application/vnd.oasis.opendocument.presentation',
      'bees.odp',
    );
    assert.deepEqual(
      sourcesOf(done).map((source) => [source.slide, source.heading]),
      [[1, 'Beehives']],
    );
    assert.match(chunksOf(done)[0]!, /queen cells weekly/);
  });

  it('reads an ODT with its headings', async () => {
    const { done } = await ingest(
      buildOdt([{ heading: 1, text: 'Cheese making' }, { text: 'Warm the milk to thirty-two degrees before adding rennet.' }]),
      'application/vnd.oasis.opendocument.text',
      'cheese.odt',
    );
    assert.equal(sourcesOf(done)[0]?.heading, 'Cheese making');
    assert.match(chunksOf(done)[0]!, /adding rennet/);
  });

  it('reads an EPUB chapter by chapter', async () => {
    const { done } = await ingest(
      buildEpub([
        { title: 'Sourdough', paragraphs: ['Feed the starter twice a day.'] },
        { title: 'Rye bread', paragraphs: ['Rye dough stays sticky; do not add flour.'] },
      ]),
      'application/epub+zip',
      'bread.epub',
    );
    assert.deepEqual(
      sourcesOf(done).map((source) => source.heading),
      ['Sourdough', 'Rye bread'],
    );
  });
});

describe('office files that are refused', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('office-refused');
  });

  const expectRefused = async (bytes: Buffer, mediaType: string, filename: string, code: string, reason: RegExp) => {
    const id = await createMemory(tenant, part(bytes, mediaType, filename));
    const failed = await waitForStatus(tenant.api, id, ['failed'], 60_000);
    const message = failed.body.results.status_message as string;
    assert.match(message, reason);
    assert.ok(message.startsWith(`${filename}: `), message);
    assert.ok(message.endsWith(`[${code}]`), message);
    assert.deepEqual(failed.body.results.chunks, [], 'nothing partial stays');
    await assertFailedEvent(id, reason);
  };

  it('refuses macros, encryption and a decompression bomb, each with its code', async () => {
    await expectRefused(
      buildXlsx([{ name: 'S', rows: [['=Run()']] }], { macros: true }),
      'application/vnd.ms-excel.sheet.macroEnabled.12',
      'tool.xlsm',
      'file_macros',
      /macros/,
    );
    await expectRefused(
      buildOdt([{ text: 'secret' }], { encrypted: true }),
      'application/vnd.oasis.opendocument.text',
      'locked.odt',
      'file_encrypted',
      /password-protected/,
    );
    await expectRefused(
      buildEncryptedOffice(),
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'locked.xlsx',
      'file_encrypted',
      /password-protected/,
    );
    await expectRefused(
      buildZipBombXlsx(60 * 1024 * 1024),
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'bomb.xlsx',
      'file_zip_bomb',
      /zip bomb/,
    );
  });
});
