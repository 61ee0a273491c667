import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildEncryptedOffice,
  buildEpub,
  buildOdp,
  buildOds,
  buildOdt,
  buildPptx,
  buildXlsx,
  buildZip,
  buildZipBombXlsx,
} from '../../test/fixtures/office.js';
import { planFileChunks } from '../chunking.js';
import { createFileExtractors } from '../files.js';
import { sniffMediaType } from '../sniff.js';
import { UnreadableContentError, type Extraction, type RefusalCode } from '../types.js';
import { extractPackage } from './index.js';
import { excelSerialToIso, parseCellReference } from './spreadsheet.js';

const files = createFileExtractors({ modelsDir: undefined, allowRemoteModels: false });
const extract = (bytes: Uint8Array, filename: string): Promise<Extraction> => files.extract(bytes, undefined, filename);

function refusedWith(code: RefusalCode, pattern: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof UnreadableContentError, `expected UnreadableContentError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    return true;
  };
}

const SALES = [
  ['Region', 'Product', 'Units', 'Shipped'],
  ['North', 'Walnuts', 40, new Date(Date.UTC(2024, 2, 15))],
  ['South', 'Almonds & figs', 12.5, new Date(Date.UTC(2024, 3, 1))],
];

describe('sniffing office packages', () => {
  const cases: [string, Buffer, string, string][] = [
    ['xlsx', buildXlsx([{ name: 'S', rows: [['a']] }]), 'xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    ['pptx', buildPptx([{ title: 'T', body: [] }]), 'pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
    ['odt', buildOdt([{ text: 'x' }]), 'odt', 'application/vnd.oasis.opendocument.text'],
    ['ods', buildOds([{ name: 'S', rows: [['a']] }]), 'ods', 'application/vnd.oasis.opendocument.spreadsheet'],
    ['odp', buildOdp([{ title: 'T', body: [] }]), 'odp', 'application/vnd.oasis.opendocument.presentation'],
    ['epub', buildEpub([{ title: 'T', paragraphs: ['p'] }]), 'epub', 'application/epub+zip'],
    [
      'macro-enabled xlsx',
      buildXlsx([{ name: 'S', rows: [['a']] }], { macros: true }),
      'xlsx',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    ],
    ['password-protected OOXML', buildEncryptedOffice(), 'encrypted-office', 'application/x-cfb'],
  ];
  for (const [name, bytes, kind, mediaType] of cases) {
    it(`recognises ${name} from its bytes alone`, async () => {
      const result = await sniffMediaType(bytes, 'application/octet-stream', undefined);
      assert.equal(result.kind, kind);
      assert.equal(result.mediaType, mediaType);
    });
  }

  it('calls a legacy compound file without an encrypted package unsupported', async () => {
    const legacy = buildEncryptedOffice();
    legacy.fill(0, 512, 1024);
    assert.equal((await sniffMediaType(legacy, undefined, 'old.xls')).kind, 'unsupported');
  });
});

describe('XLSX', () => {
  it('reads every sheet row by row with its sheet and cell range, header names and ISO dates', async () => {
    const xlsx = buildXlsx([
      { name: 'Sales 2024', rows: SALES },
      { name: 'Notes', rows: [[null, 'Second sheet text'], [], [null, true]] },
    ]);
    const result = await extract(xlsx, 'sales.xlsx');
    assert.equal(result.mediaType, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    assert.deepEqual(
      result.sections.map((section) => [section.sheet, section.cells, section.text]),
      [
        ['Sales 2024', { top: 1, left: 1, bottom: 1, right: 4 }, 'Region; Product; Units; Shipped'],
        ['Sales 2024', { top: 2, left: 1, bottom: 2, right: 4 }, 'Region: North; Product: Walnuts; Units: 40; Shipped: 2024-03-15'],
        [
          'Sales 2024',
          { top: 3, left: 1, bottom: 3, right: 4 },
          'Region: South; Product: Almonds & figs; Units: 12.5; Shipped: 2024-04-01',
        ],
        ['Notes', { top: 1, left: 2, bottom: 1, right: 2 }, 'Second sheet text'],
        ['Notes', { top: 3, left: 2, bottom: 3, right: 2 }, 'TRUE'],
      ],
    );
    assert.equal(result.sections[0]?.heading, 'Sales 2024');
  });

  it('reads inline strings as well as shared ones', async () => {
    const result = await extract(buildXlsx([{ name: 'S', rows: [['inline words here']] }], { inlineStrings: true }), 'i.xlsx');
    assert.equal(result.sections[0]?.text, 'inline words here');
  });

  it('packs neighbouring rows of one sheet into a chunk whose range covers them', async () => {
    const rows = [['Name', 'Note'], ...Array.from({ length: 30 }, (_, i) => [`item ${i + 1}`, 'a short note about it'])];
    const result = await extract(
      buildXlsx([
        { name: 'Items', rows },
        { name: 'Other', rows: [['x', 'y']] },
      ]),
      'items.xlsx',
    );
    const chunks = planFileChunks(result, 0, 'items.xlsx', 400);
    assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
    assert.equal(chunks[0]?.source.cell_range, `A1:B${chunks[0]!.text.split('\n\n').length}`);
    assert.ok(chunks.every((chunk) => chunk.text.length <= 400));
    const items = chunks.filter((chunk) => chunk.source.sheet === 'Items');
    const lastRow = Number(/:B(\d+)$/.exec(items[items.length - 1]?.source.cell_range ?? '')?.[1]);
    assert.equal(lastRow, 31, 'the ranges reach the last row');
    assert.deepEqual(chunks[chunks.length - 1]?.source, {
      type: 'file',
      file_index: 0,
      filename: 'items.xlsx',
      media_type: result.mediaType,
      heading: 'Other',
      sheet: 'Other',
      cell_range: 'A1:B1',
      method: 'parse',
    });
  });

  it('converts cell references and serial dates', () => {
    assert.deepEqual(parseCellReference('AB12'), { column: 28, row: 12 });
    assert.deepEqual(parseCellReference('$C$3'), { column: 3, row: 3 });
    assert.equal(parseCellReference('12'), undefined);
    assert.equal(excelSerialToIso(45366, false), '2024-03-15');
    assert.equal(excelSerialToIso(45366.5, false), '2024-03-15 12:00');
    assert.equal(excelSerialToIso(0.25, false), '06:00');
    assert.equal(excelSerialToIso(43904, true), '2024-03-15');
  });

  it('refuses macros, bombs and damaged packages with a stable code', async () => {
    await assert.rejects(
      extract(buildXlsx([{ name: 'S', rows: [['a']] }], { macros: true }), 'm.xlsm'),
      refusedWith('file_macros', /macros/),
    );
    await assert.rejects(extract(buildZipBombXlsx(60 * 1024 * 1024), 'bomb.xlsx'), refusedWith('file_zip_bomb', /unpacks to 60 MB/));
    const xlsx = buildXlsx([{ name: 'S', rows: [['a']] }]);
    await assert.rejects(extractPackage(xlsx.subarray(0, xlsx.length - 30), 'xlsx', 'x'), refusedWith('file_damaged', /damaged/));
    const notExcel = buildZip([{ name: 'content.xml', data: '<x/>' }]);
    await assert.rejects(extractPackage(notExcel, 'xlsx', 'x'), refusedWith('file_damaged', /not an Excel workbook/));
  });
});

describe('PPTX', () => {
  it('reads slides in presentation order with number, title and notes, without slide-number boilerplate', async () => {
    const pptx = buildPptx([
      { title: 'Harvest plan', body: ['Pick apples in September', 'Press cider in October'], notes: ['Mention the new press'] },
      { title: 'Budget', body: ['Forty crates'] },
    ]);
    const result = await extract(pptx, 'plan.pptx');
    assert.equal(result.units, 2);
    assert.deepEqual(
      result.sections.map((section) => [section.slide, section.heading, section.text]),
      [
        [1, 'Harvest plan', 'Harvest plan\n\nPick apples in September\nPress cider in October\n\nNotes: Mention the new press'],
        [2, 'Budget', 'Budget\n\nForty crates'],
      ],
    );
    const chunks = planFileChunks(result, 0, 'plan.pptx', 1000);
    assert.deepEqual(
      chunks.map((chunk) => chunk.source.slide),
      [1, 2],
    );
  });
});

describe('OpenDocument', () => {
  it('reads an ODT one section per heading, leaving annotations out', async () => {
    const odt = buildOdt([
      { heading: 1, text: 'Beekeeping handbook' },
      { text: 'Inspect the hives  every nine days.' },
      { heading: 2, text: 'Swarm control' },
      { text: 'Split strong colonies before May.' },
    ]);
    const result = await extract(odt, 'bees.odt');
    assert.deepEqual(
      result.sections.map((section) => [section.heading, section.text]),
      [
        ['Beekeeping handbook', 'Beekeeping handbook\n\nInspect the hives  every nine days.'],
        ['Swarm control', 'Swarm control\n\nSplit strong colonies before May.'],
      ],
    );
    assert.doesNotMatch(result.sections.map((section) => section.text).join(' '), /reviewer comment/);
  });

  it('reads an ODS without expanding the repeated empty rows and columns', async () => {
    const started = process.cpuUsage();
    const result = await extract(
      buildOds([
        { name: 'Sales', rows: SALES },
        { name: 'Empty', rows: [] },
      ]),
      'sales.ods',
    );
    const cpuMs = (process.cpuUsage(started).user + process.cpuUsage(started).system) / 1000;
    assert.deepEqual(
      result.sections.map((section) => [section.sheet, section.cells, section.text]),
      [
        ['Sales', { top: 1, left: 1, bottom: 1, right: 4 }, 'Region; Product; Units; Shipped'],
        ['Sales', { top: 2, left: 1, bottom: 2, right: 4 }, 'Region: North; Product: Walnuts; Units: 40; Shipped: 2024-03-15'],
        ['Sales', { top: 3, left: 1, bottom: 3, right: 4 }, 'Region: South; Product: Almonds & figs; Units: 12.5; Shipped: 2024-04-01'],
      ],
    );
    // A million-row repeat expanded would take seconds; counted, it takes nothing.
    assert.ok(cpuMs < 2000, `${cpuMs} ms of CPU`);
  });

  it('reads an ODP slide by slide with its notes, without page numbers', async () => {
    const odp = buildOdp([
      { title: 'Orchard', body: ['Apples and pears'], notes: ['Speak slowly'] },
      { title: 'Cellar', body: ['Cider barrels'] },
    ]);
    const result = await extract(odp, 'deck.odp');
    assert.deepEqual(
      result.sections.map((section) => [section.slide, section.heading, section.text]),
      [
        [1, 'Orchard', 'Orchard\n\nApples and pears\n\nNotes: Speak slowly'],
        [2, 'Cellar', 'Cellar\n\nCider barrels'],
      ],
    );
  });

  it('refuses encrypted and macro-carrying OpenDocument files with a stable code', async () => {
    await assert.rejects(
      extract(buildOdt([{ text: 'secret' }], { encrypted: true }), 'locked.odt'),
      refusedWith('file_encrypted', /password-protected/),
    );
    await assert.rejects(
      extract(buildOds([{ name: 'S', rows: [['a']] }], { macros: true }), 'm.ods'),
      refusedWith('file_macros', /macros/),
    );
    await assert.rejects(
      extract(buildOdp([{ title: 'x', body: [] }], { encrypted: true }), 'locked.odp'),
      refusedWith('file_encrypted', /encrypted/),
    );
  });
});

describe('EPUB', () => {
  it('reads chapters in spine order, one section per heading', async () => {
    const epub = buildEpub([
      { title: 'The Orchard', paragraphs: ['Apples ripen in autumn.'] },
      { title: 'The Cellar', paragraphs: ['Cider rests through winter.'] },
    ]);
    const result = await extract(epub, 'book.epub');
    assert.equal(result.mediaType, 'application/epub+zip');
    assert.deepEqual(
      result.sections.map((section) => section.heading),
      ['The Orchard', 'The Cellar'],
    );
    assert.match(result.sections[1]?.text ?? '', /Cider rests through winter/);
  });

  it('refuses a book with DRM', async () => {
    await assert.rejects(
      extract(buildEpub([{ title: 'T', paragraphs: ['p'] }], { drm: true }), 'drm.epub'),
      refusedWith('file_encrypted', /DRM/),
    );
  });
});

describe('hostile XML inside a package', () => {
  // A DTD is never processed: neither nested entities (billion laughs) nor external ones (XXE) expand.
  const doctype =
    '<!DOCTYPE office:document-content [<!ENTITY secret SYSTEM "file:///etc/passwd">' +
    '<!ENTITY lol "lololololololololololol">' +
    Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('') +
    ']>';
  const odt = buildZip([
    { name: 'mimetype', data: 'application/vnd.oasis.opendocument.text', method: 'store' },
    {
      name: 'content.xml',
      data:
        `<?xml version="1.0"?>${doctype}<office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text>` +
        '<text:p>Plain words before &lol9; and &secret; after.</text:p></office:text></office:body></office:document-content>',
    },
  ]);

  it('reads the text without expanding entities or reading files', async () => {
    const started = process.cpuUsage();
    const result = await extract(odt, 'laughs.odt');
    const cpu = process.cpuUsage(started);
    const text = result.sections.map((section) => section.text).join('\n');
    assert.match(text, /Plain words before/);
    assert.doesNotMatch(text, /lolololol|root:/);
    assert.ok(text.length < 200, `${text.length} characters`);
    assert.ok((cpu.user + cpu.system) / 1000 < 1000, 'no exponential work');
  });
});

describe('password-protected Office files', () => {
  it('are refused as encrypted, not as unknown bytes', async () => {
    await assert.rejects(extract(buildEncryptedOffice(), 'locked.xlsx'), refusedWith('file_encrypted', /password-protected/));
  });
});
