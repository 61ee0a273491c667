import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { blankPng, renderTextPng, toBmp, toJpeg, toRotatedJpeg, toTiff, toWebp, truncated } from '../test/fixtures/media.js';
import { cleanOcrText, decodeBmp, extractImage } from './image.js';
import { createOcrPool } from './ocr.js';
import { UnreadableContentError, type Extraction } from './types.js';

const LINES = ['Quarterly budget review', 'Invoice 4821 is due on Friday'];
const allText = (extraction: Extraction): string =>
  extraction.sections
    .map((section) => section.text)
    .join(' ')
    .toLowerCase();

function assertKeywords(extraction: Extraction): void {
  const text = allText(extraction);
  for (const keyword of ['quarterly', 'budget', 'review', 'invoice', '4821', 'friday']) {
    assert.ok(text.includes(keyword), `"${keyword}" missing from: ${text}`);
  }
}

describe('extractImage', () => {
  const pool = createOcrPool({ size: 2 });
  after(() => pool.close());

  it('reads rendered text from a PNG, as one OCR page', async () => {
    const progress: [number, number][] = [];
    const extraction = await extractImage(await renderTextPng(LINES), 'image/png', pool, (current, total) => {
      progress.push([current, total]);
    });
    assertKeywords(extraction);
    assert.equal(extraction.mediaType, 'image/png');
    assert.equal(extraction.units, 1);
    assert.deepEqual(progress, [[1, 1]]);
    assert.equal(extraction.sections.length, 1);
    assert.equal(extraction.sections[0]?.page, 1);
    assert.equal(extraction.sections[0]?.method, 'ocr');
  });

  it('reads WebP, JPEG and BMP (BMP decoded in process), reporting the real type', async () => {
    const png = await renderTextPng(LINES);
    for (const [bytes, mediaType] of [
      [await toWebp(png), 'image/webp'],
      [await toJpeg(png), 'image/jpeg'],
      [await toBmp(png), 'image/bmp'],
    ] as const) {
      const extraction = await extractImage(bytes, 'application/octet-stream', pool);
      assertKeywords(extraction);
      assert.equal(extraction.mediaType, mediaType);
    }
  });

  it('turns an EXIF-rotated photo upright', async () => {
    const extraction = await extractImage(await toRotatedJpeg(await renderTextPng(LINES)), 'image/jpeg', pool);
    assertKeywords(extraction);
  });

  it('reads each page of a multi-page TIFF as its own page', async () => {
    const first = await renderTextPng(['Page one talks about apples'], { width: 900 });
    const second = await renderTextPng(['Page two talks about bicycles'], { width: 900 });
    const progress: [number, number][] = [];
    const extraction = await extractImage(await toTiff([first, second]), 'image/tiff', pool, (current, total) => {
      progress.push([current, total]);
    });
    assert.equal(extraction.mediaType, 'image/tiff');
    assert.equal(extraction.units, 2);
    assert.deepEqual(progress, [
      [1, 2],
      [2, 2],
    ]);
    assert.deepEqual(
      extraction.sections.map((section) => section.page),
      [1, 2],
    );
    assert.match(extraction.sections[0]!.text.toLowerCase(), /apples/);
    assert.match(extraction.sections[1]!.text.toLowerCase(), /bicycles/);
  });

  it('reads small low-resolution text (enlarged 2x before OCR)', async () => {
    const small = await renderTextPng(['The warehouse lease ends in March.', 'Contact Maria Lopez about renewal.'], { fontSize: 8 });
    const text = allText(await extractImage(small, 'image/png', pool));
    for (const keyword of ['warehouse', 'lease', 'march', 'maria', 'lopez', 'renewal']) assert.ok(text.includes(keyword), text);
  });

  it('reads text on a transparent background', async () => {
    assertKeywords(await extractImage(await renderTextPng(LINES, { background: null }), 'image/png', pool));
  });

  it('refuses a truncated PNG as unreadable content', async () => {
    await assert.rejects(extractImage(truncated(await renderTextPng(LINES)), 'image/png', pool), (error: unknown) => {
      assert.ok(error instanceof UnreadableContentError);
      assert.match(error.message, /could not decode the image/);
      return true;
    });
  });

  it('refuses garbage, empty and SVG input as unreadable content', async () => {
    await assert.rejects(extractImage(Buffer.from('not an image, just words'), 'image/png', pool), UnreadableContentError);
    await assert.rejects(extractImage(Buffer.alloc(0), 'image/png', pool), UnreadableContentError);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
    await assert.rejects(extractImage(svg, 'image/svg+xml', pool), /unsupported image format svg/);
  });

  it('refuses images with too many pixels before decoding them', async () => {
    await assert.rejects(
      extractImage(await renderTextPng(LINES), 'image/png', pool, undefined, { maxPixels: 1000 }),
      UnreadableContentError,
    );
  });

  it('says so when an image has no text', async () => {
    await assert.rejects(extractImage(await blankPng(), 'image/png', pool), (error: unknown) => {
      assert.ok(error instanceof UnreadableContentError);
      assert.equal(error.message, 'no text found in the image');
      return true;
    });
  });
});

describe('decodeBmp', () => {
  /** A BMP file of the given header fields, extra header bytes and pixel rows (bottom row first). */
  function bmp(width: number, height: number, bitCount: number, compression: number, extra: number[], rows: number[][]): Buffer {
    const pixels = Buffer.concat(
      rows.map((row) => {
        const stride = Math.ceil((bitCount * width) / 32) * 4;
        const bytes = Buffer.alloc(stride);
        Buffer.from(row).copy(bytes);
        return bytes;
      }),
    );
    const header = Buffer.alloc(54 + extra.length);
    header.write('BM', 0, 'latin1');
    header.writeUInt32LE(54 + extra.length, 10);
    header.writeUInt32LE(40, 14);
    header.writeInt32LE(width, 18);
    header.writeInt32LE(height, 22);
    header.writeUInt16LE(1, 26);
    header.writeUInt16LE(bitCount, 28);
    header.writeUInt32LE(compression, 30);
    Buffer.from(extra).copy(header, 54);
    return Buffer.concat([header, pixels]);
  }

  it('reads 1-bit palette images, bottom row first', () => {
    // Palette: 0 = black, 1 = white (BGRx). Bottom row: white, black; top row: black, white.
    const file = bmp(2, 2, 1, 0, [0, 0, 0, 0, 255, 255, 255, 0], [[0b10000000], [0b01000000]]);
    const { data, width, height } = decodeBmp(file);
    assert.deepEqual([width, height], [2, 2]);
    assert.deepEqual([...data], [0, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0]);
  });

  it('reads 16-bit BI_BITFIELDS (5-6-5) pixels', () => {
    const masks = [0xf800, 0x07e0, 0x001f].flatMap((mask) => [mask & 0xff, (mask >> 8) & 0xff, 0, 0]);
    // One pixel: pure red 0xF800, little-endian.
    const { data } = decodeBmp(bmp(1, 1, 16, 3, masks, [[0x00, 0xf8]]));
    assert.deepEqual([...data], [255, 0, 0]);
  });

  it('refuses truncated pixel data and unsupported compression', () => {
    const file = bmp(4, 4, 24, 0, [], [[1, 2, 3]]);
    assert.throws(() => decodeBmp(file), /truncated pixel data/);
    assert.throws(() => decodeBmp(bmp(1, 1, 8, 1, [], [[0]])), /compression 1/);
  });
});

describe('cleanOcrText', () => {
  it('drops trailing spaces, extra blank lines and speck-only output', () => {
    assert.equal(cleanOcrText('Hello  \n\n\n\nworld \n'), 'Hello\n\nworld');
    assert.equal(cleanOcrText(' | . ~ \n'), '');
  });
});
