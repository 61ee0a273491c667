import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { renderTextPng } from '../test/fixtures/media.js';
import { checkLanguageData, createOcrPool, defaultLangPath } from './ocr.js';
import { UnreadableContentError } from './types.js';

const words = (text: string): string => text.toLowerCase().replace(/\s+/g, ' ');

describe('OCR pool set-up', () => {
  it('finds the local English data', () => {
    assert.doesNotThrow(() => checkLanguageData(defaultLangPath()));
  });

  it('refuses a missing langPath before any worker starts (tesseract.js would go to a CDN)', () => {
    assert.throws(() => createOcrPool({ langPath: path.join(os.tmpdir(), 'no-such-tessdata') }), /OCR language data not found/);
  });

  it('refuses a URL as langPath', () => {
    assert.throws(() => createOcrPool({ langPath: 'https://cdn.example.org/tessdata' }), /local folder, not a URL/);
  });

  it('refuses a data file that is not gzip-compressed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ocr-test-'));
    try {
      await writeFile(path.join(dir, 'eng.traineddata.gz'), 'x'.repeat(4096));
      assert.throws(() => createOcrPool({ langPath: dir }), /not a gzip-compressed/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('OCR pool', () => {
  const pool = createOcrPool({ size: 2 });
  after(() => pool.close());

  it('starts workers lazily, recognises text and reuses its workers', async () => {
    assert.equal(pool.size, 2);
    assert.equal(pool.workers, 0);
    const image = await renderTextPng(['Invoice number 4821', 'Payment due on Friday']);
    for (let i = 0; i < 3; i++) {
      const { text, confidence } = await pool.recognize(image);
      assert.match(words(text), /invoice number 4821/);
      assert.match(words(text), /due on friday/);
      assert.ok(confidence > 60, `confidence ${confidence}`);
    }
    assert.equal(pool.workers, 1, 'one image at a time needs one worker');
  });

  it('runs images in parallel up to its size', async () => {
    const images = await Promise.all(
      ['alpha harbour', 'bravo meadow', 'charlie lantern', 'delta orchard'].map((line) => renderTextPng([line])),
    );
    const results = await Promise.all(images.map((image) => pool.recognize(image)));
    assert.deepEqual(
      results.map((result) => words(result.text).trim()),
      ['alpha harbour', 'bravo meadow', 'charlie lantern', 'delta orchard'],
    );
    // The second worker was asked for while the first was busy; small images may all be done before it is up.
    for (let waited = 0; pool.workers < 2 && waited < 5000; waited += 50) await delay(50);
    assert.equal(pool.workers, 2);
  });

  it('rejects bytes Tesseract cannot read as unreadable content, and the worker keeps working', async () => {
    await assert.rejects(pool.recognize(Buffer.from('this is not an image at all')), UnreadableContentError);
    const { text } = await pool.recognize(await renderTextPng(['still working']));
    assert.match(words(text), /still working/);
  });
});

describe('OCR pool failures', () => {
  it('fails the waiting image cleanly when a worker cannot initialise (corrupt language data)', async () => {
    // tesseract.js answers this case twice for one job and, unguarded, throws an uncaught TypeError.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ocr-test-'));
    await writeFile(path.join(dir, 'eng.traineddata.gz'), gzipSync(randomBytes(50_000)));
    const pool = createOcrPool({ size: 1, langPath: dir });
    try {
      await assert.rejects(pool.recognize(await renderTextPng(['no data'])), /OCR worker failed to start: initialization failed/);
      assert.equal(pool.workers, 0);
    } finally {
      await pool.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('replaces a worker whose job runs too long, without crashing', async () => {
    const pool = createOcrPool({ size: 1, jobTimeoutMs: 1 });
    try {
      await assert.rejects(pool.recognize(await renderTextPng(['too slow'])), /longer than 1 ms/);
      assert.equal(pool.workers, 0, 'the hung worker is gone');
    } finally {
      await pool.close();
    }
  });

  it('rejects queued and later images once closed', async () => {
    const pool = createOcrPool({ size: 1 });
    const pending = pool.recognize(await renderTextPng(['never read']));
    const rejected = assert.rejects(pending, /closed/);
    await pool.close();
    await rejected;
    await assert.rejects(pool.recognize(Buffer.alloc(10)), /closed/);
  });
});
