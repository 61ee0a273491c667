import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildBmp,
  buildDocx,
  buildFlac,
  buildGif,
  buildImage,
  buildM4a,
  buildMp3,
  buildOgg,
  buildPdf,
  buildWav,
  buildWebm,
  buildZip,
} from '../test/fixtures/documents.js';
import { decodeText, detectCsvDelimiter, readZipDirectory, sniffMediaType, ZipEntryLimitError } from './sniff.js';
import { UnreadableContentError } from './types.js';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('sniffMediaType: binary formats', () => {
  for (const format of ['png', 'jpeg', 'webp', 'tiff'] as const) {
    it(`recognises ${format} images`, async () => {
      const result = await sniffMediaType(await buildImage(format), `image/${format}`, `picture.${format}`);
      assert.deepEqual(result, { mediaType: `image/${format}`, kind: 'image', mismatch: false });
    });
  }

  it('recognises BMP images', async () => {
    assert.deepEqual(await sniffMediaType(buildBmp(), undefined, 'scan.bmp'), { mediaType: 'image/bmp', kind: 'image', mismatch: false });
  });

  it('treats GIF as unsupported', async () => {
    const result = await sniffMediaType(buildGif(), 'image/gif', 'anim.gif');
    assert.equal(result.kind, 'unsupported');
    assert.equal(result.mediaType, 'image/gif');
  });

  it('recognises a PDF', async () => {
    const pdf = buildPdf([{ kind: 'text', lines: ['Hello'] }]);
    assert.deepEqual(await sniffMediaType(pdf, 'application/pdf', 'a.pdf'), { mediaType: 'application/pdf', kind: 'pdf', mismatch: false });
  });

  const audio: [string, () => Buffer, string, string][] = [
    ['wav', buildWav, 'audio/x-wav', 'audio/wav'],
    ['mp3', buildMp3, 'audio/mpeg', 'audio/mpeg'],
    ['flac', buildFlac, 'audio/flac', 'audio/flac'],
    ['ogg', buildOgg, 'audio/ogg', 'audio/ogg'],
    ['m4a', buildM4a, 'audio/x-m4a', 'audio/mp4'],
    ['webm', buildWebm, 'audio/webm', 'audio/webm'],
  ];
  for (const [name, build, declared, expected] of audio) {
    it(`recognises ${name} audio`, async () => {
      assert.deepEqual(await sniffMediaType(build(), declared, `voice.${name}`), { mediaType: expected, kind: 'audio', mismatch: false });
    });
  }

  it('keeps video/webm for an undeclared WebM, still as audio to transcribe', async () => {
    assert.deepEqual(await sniffMediaType(buildWebm(), undefined, undefined), { mediaType: 'video/webm', kind: 'audio', mismatch: false });
  });

  it('recognises a DOCX', async () => {
    const docx = buildDocx([{ text: 'Hello' }]);
    const result = await sniffMediaType(docx, undefined, 'letter.docx');
    assert.equal(result.kind, 'docx');
    assert.equal(result.mediaType, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
  });

  it('recognises a DOCX from its word/document.xml when [Content_Types].xml comes last', async () => {
    const docx = buildZip([
      { name: 'word/document.xml', data: '<w:document/>' },
      { name: '[Content_Types].xml', data: '<Types/>' },
    ]);
    assert.equal((await sniffMediaType(docx, 'application/octet-stream', 'x.docx')).kind, 'docx');
  });

  it('treats other ZIP archives as unsupported', async () => {
    const zip = buildZip([{ name: 'notes.txt', data: 'hello' }]);
    assert.deepEqual(await sniffMediaType(zip, 'application/zip', 'a.zip'), {
      mediaType: 'application/zip',
      kind: 'unsupported',
      mismatch: false,
    });
  });

  it('lets the bytes win over the declared type, recording the mismatch', async () => {
    const png = await buildImage('png');
    assert.deepEqual(await sniffMediaType(png, 'text/plain', 'notes.txt'), { mediaType: 'image/png', kind: 'image', mismatch: true });
    assert.deepEqual(await sniffMediaType(png, 'image/jpeg', 'photo.jpg'), { mediaType: 'image/png', kind: 'image', mismatch: true });
  });

  it('accepts aliases and parameters of the declared type', async () => {
    assert.equal((await sniffMediaType(await buildImage('jpeg'), 'image/jpg', undefined)).mismatch, false);
    assert.equal((await sniffMediaType(buildWav(), 'audio/wave; codecs=1', undefined)).mismatch, false);
  });

  it('refuses empty bytes', async () => {
    await assert.rejects(sniffMediaType(new Uint8Array(0), 'text/plain', 'a.txt'), (error: unknown) => {
      assert.ok(error instanceof UnreadableContentError);
      assert.equal(error.message, 'the file is empty');
      return true;
    });
  });

  it('calls unknown binary bytes unsupported', async () => {
    const bytes = Buffer.from([0x00, 0x01, 0x02, 0x03, 0xfe, 0x00, 0x10, 0x20, 0x00, 0x00]);
    assert.deepEqual(await sniffMediaType(bytes, 'application/octet-stream', 'blob.bin'), {
      mediaType: 'application/octet-stream',
      kind: 'unsupported',
      mismatch: false,
    });
    assert.equal((await sniffMediaType(bytes, 'image/png', 'x.png')).mismatch, true);
  });
});

describe('sniffMediaType: text formats', () => {
  it('recognises HTML by its doctype or tags, whatever was declared', async () => {
    const html = utf8('<!DOCTYPE html>\n<html><head><title>x</title></head><body><p>Hi</p></body></html>');
    assert.deepEqual(await sniffMediaType(html, 'text/plain', 'page.txt'), { mediaType: 'text/html', kind: 'html', mismatch: false });
    assert.equal((await sniffMediaType(utf8('<div><p>fragment</p></div>'), 'text/html', undefined)).kind, 'html');
    assert.equal((await sniffMediaType(utf8('a < b and <p> is a tag name'), undefined, undefined)).kind, 'text');
  });

  it('recognises JSON that parses', async () => {
    assert.deepEqual(await sniffMediaType(utf8('  {"a": [1, 2]}\n'), undefined, undefined), {
      mediaType: 'application/json',
      kind: 'json',
      mismatch: false,
    });
    assert.equal((await sniffMediaType(utf8('{"a": 1'), 'application/json', 'x.json')).kind, 'text');
  });

  it('recognises CSV only when declared and consistently delimited', async () => {
    const csv = utf8('name,city\nAda,London\n"Smith, J",Paris\n');
    assert.deepEqual(await sniffMediaType(csv, 'text/csv', undefined), { mediaType: 'text/csv', kind: 'csv', mismatch: false });
    assert.equal((await sniffMediaType(csv, undefined, 'people.csv')).kind, 'csv');
    assert.equal((await sniffMediaType(csv, undefined, 'people.txt')).kind, 'text');
    assert.equal((await sniffMediaType(utf8('a,b\nc\nd,e,f\n'), 'text/csv', undefined)).kind, 'text');
    const tsv = utf8('name\tcity\nAda\tLondon\n');
    assert.deepEqual(await sniffMediaType(tsv, undefined, 'people.tsv'), {
      mediaType: 'text/tab-separated-values',
      kind: 'csv',
      mismatch: false,
    });
  });

  it('recognises Markdown when declared or named .md', async () => {
    const md = utf8('# Title\n\nSome text.\n');
    assert.deepEqual(await sniffMediaType(md, 'text/markdown', undefined), {
      mediaType: 'text/markdown',
      kind: 'markdown',
      mismatch: false,
    });
    assert.equal((await sniffMediaType(md, undefined, 'README.md')).kind, 'markdown');
    assert.deepEqual(await sniffMediaType(md, undefined, undefined), { mediaType: 'text/plain', kind: 'text', mismatch: false });
  });

  it('does not take text for a binary format whose signature it happens to start with', async () => {
    for (const text of ['BMW owners club: meeting notes', 'ID3 tags explained', 'MZ and PE headers', 'fLaC is not a word']) {
      assert.deepEqual(await sniffMediaType(utf8(text), 'text/plain', undefined), {
        mediaType: 'text/plain',
        kind: 'text',
        mismatch: false,
      });
    }
  });

  it('judges large files by their first megabyte, cut at a character boundary', async () => {
    // "é" is two bytes: the 1 MB boundary falls inside one of them.
    const text = utf8(`a${'\u00e9'.repeat(700_000)}`);
    assert.deepEqual(await sniffMediaType(text, undefined, undefined), { mediaType: 'text/plain', kind: 'text', mismatch: false });
    const json = utf8(JSON.stringify(Array.from({ length: 100_000 }, (_, index) => ({ index, label: `item ${index}` }))));
    assert.ok(json.length > 1024 * 1024);
    assert.equal((await sniffMediaType(json, undefined, undefined)).kind, 'json');
    const broken = Buffer.concat([json, utf8(',')]);
    assert.equal((await sniffMediaType(broken, 'application/json', undefined)).kind, 'text');
  });

  it('records a mismatch when text was declared as a binary type', async () => {
    assert.deepEqual(await sniffMediaType(utf8('just some words'), 'application/pdf', 'a.pdf'), {
      mediaType: 'text/plain',
      kind: 'text',
      mismatch: true,
    });
  });

  it('accepts Latin-1 and UTF-16 text', async () => {
    assert.equal((await sniffMediaType(Buffer.from('caf\u00e9 cr\u00e8me', 'latin1'), undefined, undefined)).kind, 'text');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"k": "v"}', 'utf16le')]);
    assert.equal((await sniffMediaType(utf16, undefined, undefined)).kind, 'json');
  });
});

describe('decodeText', () => {
  it('drops a UTF-8 BOM and normalises line ends', () => {
    assert.equal(decodeText(Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69, 0x0d, 0x0a, 0x21])), 'hi\n!');
  });

  it('falls back to Latin-1 (Windows-1252) for invalid UTF-8', () => {
    assert.equal(decodeText(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x93, 0x71, 0x94])), 'caf\u00e9 \u201cq\u201d');
  });

  it('returns undefined for binary bytes', () => {
    assert.equal(decodeText(Buffer.from([0x41, 0x00, 0x42])), undefined);
  });
});

describe('detectCsvDelimiter', () => {
  it('finds the consistent delimiter, honouring quotes', () => {
    assert.equal(detectCsvDelimiter('a;b;c\n1;"x;y";3\n'), ';');
    assert.equal(detectCsvDelimiter('a,b\n1,2\n'), ',');
    assert.equal(detectCsvDelimiter('just prose, with a comma\nand another line\n'), undefined);
  });
});

describe('readZipDirectory', () => {
  it('lists entries with their sizes', () => {
    const zip = buildZip([
      { name: 'a.txt', data: 'x'.repeat(1000) },
      { name: 'b.bin', data: new Uint8Array([1, 2, 3]), method: 'store' },
    ]);
    const entries = readZipDirectory(zip);
    assert.deepEqual(
      entries.map((entry) => [entry.name, entry.method, entry.uncompressedSize]),
      [
        ['a.txt', 8, 1000],
        ['b.bin', 0, 3],
      ],
    );
    assert.ok((entries[0]?.compressedSize ?? 0) < 100);
  });

  it('stops before reading more entries than allowed', () => {
    const zip = buildZip(Array.from({ length: 5 }, (_, index) => ({ name: `${index}.txt`, data: 'x' })));
    assert.throws(() => readZipDirectory(zip, 4), ZipEntryLimitError);
  });
});
