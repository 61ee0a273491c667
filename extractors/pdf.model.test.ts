import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createWorker, OEM, type Worker } from 'tesseract.js';
import { buildCorruptPdf, buildPdf, buildScannedPdf, renderTextJpeg } from '../test/fixtures/documents.js';
import { cappedDpi, extractPdf } from './pdf.js';
import { UnreadableContentError } from './types.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const noOcr = (): Promise<string> => Promise.reject(new Error('OCR must not be called'));

function assertUnreadable(pattern: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof UnreadableContentError, `expected UnreadableContentError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  };
}

let tmpRoot: string;
before(async () => {
  tmpRoot = await mkdtemp(path.join(os.tmpdir(), 'pdf-unit-'));
});
after(async () => {
  await rm(tmpRoot, { recursive: true, force: true });
});

describe('extractPdf with OCR', () => {
  let worker: Worker | undefined;
  before(async () => {
    // A local langPath: without it tesseract.js downloads the model and crashes offline.
    const require = createRequire(import.meta.url);
    const langPath = path.join(path.dirname(require.resolve('@tesseract.js-data/eng')), '4.0.0_best_int');
    worker = await createWorker('eng', OEM.LSTM_ONLY, { langPath, gzip: true, cacheMethod: 'none' });
  });
  after(async () => {
    await worker?.terminate();
  });

  it('reads text layers and OCRs the scanned page in between', async () => {
    const { pdf, scanWords } = await buildScannedPdf();
    const progress: [number, number][] = [];
    const ocrCalls: number[] = [];
    const result = await extractPdf(pdf, {
      tmpDir: tmpRoot,
      onProgress: (current, total) => {
        progress.push([current, total]);
      },
      ocrPage: async (png, pageNumber) => {
        ocrCalls.push(pageNumber);
        assert.deepEqual(png.subarray(0, 8), PNG_SIGNATURE);
        if (!worker) throw new Error('no OCR worker');
        return (await worker.recognize(png)).data.text;
      },
    });

    assert.equal(result.mediaType, 'application/pdf');
    assert.equal(result.units, 3);
    assert.deepEqual(ocrCalls, [2]);
    assert.deepEqual(
      result.sections.map((section) => [section.page, section.method]),
      [
        [1, 'text-layer'],
        [2, 'ocr'],
        [3, 'text-layer'],
      ],
    );
    assert.match(result.sections[0]?.text ?? '', /orchard cooperative/);
    assert.match(result.sections[2]?.text ?? '', /marmalade budget/);
    const ocrText = (result.sections[1]?.text ?? '').toLowerCase();
    for (const word of scanWords) assert.ok(ocrText.includes(word), `OCR text lacks "${word}": ${ocrText}`);
    assert.deepEqual(progress, [
      [2, 3],
      [3, 3],
    ]);
    // The rendered page and the copy of the PDF are gone.
    assert.deepEqual(await readdir(tmpRoot), []);
  });
});

describe('extractPdf', () => {
  it('does not render or OCR pages that have a text layer', async () => {
    const pdf = buildPdf([{ kind: 'text', lines: ['Only text here, enough of it.'] }]);
    const result = await extractPdf(pdf, { ocrPage: noOcr, tmpDir: tmpRoot });
    assert.deepEqual(result, {
      mediaType: 'application/pdf',
      sections: [{ text: 'Only text here, enough of it.', page: 1, method: 'text-layer' }],
      units: 1,
    });
  });

  it('refuses a corrupt PDF', async () => {
    await assert.rejects(extractPdf(buildCorruptPdf(), { ocrPage: noOcr }), assertUnreadable(/not a readable PDF/));
    const { pdf } = await buildScannedPdf();
    await assert.rejects(extractPdf(pdf.subarray(0, 400), { ocrPage: noOcr }), assertUnreadable(/not a readable PDF/));
  });

  it('refuses an encrypted PDF', async () => {
    const pdf = buildPdf([{ kind: 'text', lines: ['Secret'] }], { encrypted: true });
    await assert.rejects(extractPdf(pdf, { ocrPage: noOcr }), assertUnreadable(/password-protected/));
  });

  it('refuses a PDF without pages', async () => {
    await assert.rejects(extractPdf(buildPdf([]), { ocrPage: noOcr }), assertUnreadable(/no pages/));
  });

  it('refuses a PDF in which neither the text layer nor OCR finds text, and cleans up', async () => {
    const blank = await renderTextJpeg([], 200, 260);
    const pdf = buildPdf([{ kind: 'image', jpeg: blank, width: 200, height: 260 }]);
    const pages: number[] = [];
    await assert.rejects(
      extractPdf(pdf, {
        tmpDir: tmpRoot,
        renderDpi: 50,
        ocrPage: (_png, pageNumber) => {
          pages.push(pageNumber);
          return Promise.resolve('  \n');
        },
      }),
      assertUnreadable(/no text found/),
    );
    assert.deepEqual(pages, [1]);
    assert.deepEqual(await readdir(tmpRoot), []);
  });

  it('lets OCR failures through (retryable) and still cleans up', async () => {
    const blank = await renderTextJpeg([], 200, 260);
    const pdf = buildPdf([{ kind: 'image', jpeg: blank, width: 200, height: 260 }]);
    await assert.rejects(
      extractPdf(pdf, { tmpDir: tmpRoot, renderDpi: 50, ocrPage: () => Promise.reject(new Error('OCR worker died')) }),
      (error: unknown) => error instanceof Error && !(error instanceof UnreadableContentError) && /OCR worker died/.test(error.message),
    );
    assert.deepEqual(await readdir(tmpRoot), []);
  });
});

describe('cappedDpi', () => {
  it('keeps the requested resolution for ordinary pages and lowers it for huge ones', () => {
    assert.equal(cappedDpi(300, 612, 792), 300);
    // A 48 × 36 inch poster: 300 dpi would be 155 megapixels.
    const dpi = cappedDpi(300, 48 * 72, 36 * 72);
    assert.ok(dpi < 300 && dpi * 48 * dpi * 36 <= 36_000_000, `dpi ${dpi}`);
  });
});
