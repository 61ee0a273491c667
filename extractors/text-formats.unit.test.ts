import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildDocx, buildZip, buildZipBombDocx } from '../test/fixtures/documents.js';
import { parseDelimited, sniffMediaType } from './sniff.js';
import { checkDocxArchive, extractTextFile, flattenJson, isTextFileKind } from './text-formats.js';
import { UnreadableContentError, type Extraction } from './types.js';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');
const allText = (extraction: Extraction): string => extraction.sections.map((section) => section.text).join('\n\n');

/** Sniffs like the pipeline does, then extracts. */
async function extract(bytes: Uint8Array, declared?: string, filename?: string): Promise<Extraction> {
  const { kind, mediaType } = await sniffMediaType(bytes, declared, filename);
  if (!isTextFileKind(kind)) throw new Error(`not a text kind: ${kind}`);
  return extractTextFile(bytes, kind, mediaType);
}

function assertUnreadable(pattern: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof UnreadableContentError, `expected UnreadableContentError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  };
}

describe('plain text', () => {
  it('returns one section, decoding UTF-8 with a BOM', async () => {
    const result = await extract(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('Gr\u00fc\u00dfe aus K\u00f6ln.\r\nZweite Zeile.')]));
    assert.deepEqual(result, {
      mediaType: 'text/plain',
      sections: [{ text: 'Gr\u00fc\u00dfe aus K\u00f6ln.\nZweite Zeile.', method: 'parse' }],
      units: 1,
    });
  });

  it('falls back to Latin-1 for invalid UTF-8', async () => {
    const result = await extract(Buffer.from('Cr\u00e8me br\u00fbl\u00e9e recipe', 'latin1'), 'text/plain');
    assert.equal(allText(result), 'Cr\u00e8me br\u00fbl\u00e9e recipe');
  });

  it('refuses whitespace-only text', async () => {
    await assert.rejects(extract(utf8('  \n\n \t ')), assertUnreadable(/no text/));
  });
});

describe('markdown', () => {
  const markdown = [
    'Intro paragraph before any heading.',
    '',
    '# Getting started',
    '',
    'Install the [orchard tool](https://example.com/tool "Tool") first.',
    '',
    '```sh',
    '# not a heading inside code',
    'orchard init',
    '```',
    '',
    '## Configuration',
    '### Options',
    'Set the harvest season.',
    '',
    'Troubleshooting',
    '---------------',
    'Check the pears.',
    '',
    '[ref]: https://example.com/ref',
  ].join('\n');

  it('splits sections at headings, keeping each heading', async () => {
    const result = await extract(utf8(markdown), 'text/markdown');
    assert.equal(result.mediaType, 'text/markdown');
    assert.deepEqual(
      result.sections.map((section) => section.heading),
      [undefined, 'Getting started', 'Options', 'Troubleshooting'],
    );
    const [intro, start, options, trouble] = result.sections;
    assert.equal(intro?.text, 'Intro paragraph before any heading.');
    assert.match(start?.text ?? '', /^Getting started\n\nInstall the orchard tool first\./);
    assert.match(start?.text ?? '', /# not a heading inside code\norchard init/);
    assert.doesNotMatch(start?.text ?? '', /https:/);
    // An empty section's heading is carried into the next one.
    assert.equal(options?.text, 'Configuration\nOptions\n\nSet the harvest season.');
    assert.equal(trouble?.text, 'Troubleshooting\n\nCheck the pears.');
  });
});

describe('html', () => {
  const html = `<!DOCTYPE html><html><head><title>Ignored title</title>
    <style>body { color: red; }</style><script>window.secret = "tracking";</script></head>
    <body>
      <p>Welcome to the <a href="https://example.com/lighthouse">lighthouse keepers</a> guild.</p>
      <h1>Lamp <em>maintenance</em></h1>
      <p>Polish the lens every Tuesday.</p>
      <img src="lens.png" alt="lens">
      <h2>Schedule</h2>
      <table><tr><th>Day</th><th>Task</th></tr><tr><td>Monday</td><td>Refuel</td></tr></table>
      <noscript>Enable JavaScript</noscript>
    </body></html>`;

  it('keeps readable text, drops scripts, styles and link URLs, and uses headings as sections', async () => {
    const result = await extract(utf8(html), 'text/html', 'guild.html');
    assert.equal(result.mediaType, 'text/html');
    assert.deepEqual(
      result.sections.map((section) => section.heading),
      [undefined, 'Lamp maintenance', 'Schedule'],
    );
    assert.equal(result.sections[0]?.text, 'Welcome to the lighthouse keepers guild.');
    assert.equal(result.sections[1]?.text, 'Lamp maintenance\n\nPolish the lens every Tuesday.');
    const text = allText(result);
    assert.match(text, /Monday\s+Refuel/);
    for (const noise of ['tracking', 'color', 'https://', 'Ignored title', 'Enable JavaScript', 'lens.png']) {
      assert.ok(!text.includes(noise), `unexpected ${noise} in ${text}`);
    }
  });
});

describe('json', () => {
  it('flattens objects into "path: value" lines, one section per top-level key', async () => {
    const json = JSON.stringify({
      title: 'Field notes',
      observer: { name: 'Ada', 'home town': 'Ely' },
      sightings: [
        { bird: 'heron', count: 2 },
        { bird: 'kingfisher', count: 1, notes: 'by the\nweir' },
      ],
      tags: [],
    });
    const result = await extract(utf8(json), 'application/json');
    assert.equal(result.mediaType, 'application/json');
    assert.deepEqual(
      result.sections.map((section) => [section.heading, section.text]),
      [
        ['title', 'title: Field notes'],
        ['observer', 'observer.name: Ada\nobserver["home town"]: Ely'],
        [
          'sightings',
          'sightings[0].bird: heron\nsightings[0].count: 2\n\nsightings[1].bird: kingfisher\nsightings[1].count: 1\nsightings[1].notes: by the weir',
        ],
        ['tags', 'tags: []'],
      ],
    );
  });

  it('handles top-level arrays, scalars and very deep nesting', () => {
    assert.deepEqual(flattenJson([1, 'two', null]), ['[0]: 1', '[1]: two', '[2]: null']);
    assert.deepEqual(flattenJson(true), ['true']);
    const depth = 20_000;
    const lines = flattenJson(JSON.parse(`${'['.repeat(depth)}"bottom"${']'.repeat(depth)}`) as Parameters<typeof flattenJson>[0]);
    assert.equal(lines.length, 1);
    assert.ok(lines[0]?.endsWith('[0]: bottom'));
  });
});

describe('csv', () => {
  it('turns rows into "column: value" lines when there is a header', async () => {
    const csv = 'name,species,notes\nHazel,"badger","digs, mostly at night"\nRowan,fox,""\n"Quill","hedgehog","said ""hello""\nand left"\n';
    const result = await extract(utf8(csv), 'text/csv', 'animals.csv');
    assert.equal(result.mediaType, 'text/csv');
    assert.equal(
      allText(result),
      [
        'name: Hazel; species: badger; notes: digs, mostly at night',
        'name: Rowan; species: fox',
        'name: Quill; species: hedgehog; notes: said "hello" and left',
      ].join('\n\n'),
    );
  });

  it('joins values when there is no header row, and reads TSV', async () => {
    const result = await extract(utf8('2024-01-03;12.5;rain\n2024-01-04;3;sun\n'), 'text/csv');
    assert.equal(allText(result), '2024-01-03; 12.5; rain\n\n2024-01-04; 3; sun');
    const tsv = await extract(utf8('city\tpopulation\nYork\t200000\n'), undefined, 'cities.tsv');
    assert.equal(allText(tsv), 'city: York; population: 200000');
  });

  it('parses quoted fields with delimiters and line breaks', () => {
    assert.deepEqual(parseDelimited('a,"b,c"\n"d\ne",f', ','), [
      ['a', 'b,c'],
      ['d\ne', 'f'],
    ]);
  });
});

describe('docx', () => {
  it('extracts text with headings as sections', async () => {
    const docx = buildDocx([
      { heading: 1, text: 'Beekeeping handbook' },
      { text: 'Hives need inspection every spring.' },
      { heading: 2, text: 'Swarm control' },
      { text: 'Split strong colonies before May.' },
      { text: 'Keep notes on every queen.' },
    ]);
    const result = await extract(docx, undefined, 'handbook.docx');
    assert.equal(result.mediaType, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    assert.deepEqual(
      result.sections.map((section) => section.heading),
      ['Beekeeping handbook', 'Swarm control'],
    );
    assert.equal(result.sections[0]?.text, 'Beekeeping handbook\n\nHives need inspection every spring.');
    assert.match(result.sections[1]?.text ?? '', /Split strong colonies before May\.\s+Keep notes on every queen\./);
  });

  it('refuses a zip bomb before decompressing it', async () => {
    const started = performance.now();
    const bomb = await buildZipBombDocx(200 * 1024 * 1024);
    assert.ok(bomb.length < 400 * 1024, `bomb is ${bomb.length} bytes`);
    const buildMs = performance.now() - started;
    const checkStarted = performance.now();
    await assert.rejects(extractTextFile(bomb, 'docx', 'application/zip'), assertUnreadable(/unpacks to 200 MB.*zip bomb/));
    assert.ok(performance.now() - checkStarted < 200, 'the refusal must not decompress the archive');
    assert.ok(buildMs < 10_000);
  });

  it('refuses an archive whose headers understate the size', async () => {
    // Claims 1 MB (ratio ~5:1) but inflates to 20 MB.
    const liar = await buildZipBombDocx(20 * 1024 * 1024, 1024 * 1024);
    assert.throws(() => checkDocxArchive(liar), assertUnreadable(/unpacks to more than its declared/));
  });

  it('refuses archives that compress too well or have too many parts', () => {
    const dense = buildDocx([{ text: 'x'.repeat(3 * 1024 * 1024) }]);
    assert.throws(() => checkDocxArchive(dense), assertUnreadable(/compresses \d+:1/));
    const many = buildZip([
      { name: 'word/document.xml', data: '<w:document/>' },
      ...Array.from({ length: 10_001 }, (_, index) => ({ name: `word/p${index}.xml`, data: '', method: 'store' as const })),
    ]);
    assert.throws(() => checkDocxArchive(many), assertUnreadable(/10002 parts/));
  });

  it('refuses a corrupt or non-Word archive with a readable message', async () => {
    const docx = buildDocx([{ text: 'Hello there' }]);
    const truncated = docx.subarray(0, Math.floor(docx.length / 2));
    await assert.rejects(extractTextFile(truncated, 'docx', 'application/zip'), assertUnreadable(/damaged/));
    const garbled = Buffer.from(docx);
    for (let i = 40; i < garbled.length / 2; i++) garbled[i] = (garbled[i] ?? 0) ^ 0x5a;
    await assert.rejects(extractTextFile(garbled, 'docx', 'application/zip'), assertUnreadable(/Word document/));
    const notWord = buildZip([{ name: 'readme.txt', data: 'hi' }]);
    await assert.rejects(extractTextFile(notWord, 'docx', 'application/zip'), assertUnreadable(/not a Word document/));
    const badXml = buildZip([{ name: 'word/document.xml', data: '<w:document><unclosed' }]);
    await assert.rejects(extractTextFile(badXml, 'docx', 'application/zip'), assertUnreadable(/could not be read/));
  });
});
