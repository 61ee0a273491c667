/**
 * File-extraction speed, measured on the extractors alone (nothing else running): OCR pages/s,
 * PDF text-layer pages/s, and transcription speed as audio seconds per wall second.
 * Inputs are generated here, as the test fixtures do (rendered text, espeak-ng speech).
 */
import { createOcrPool } from '../extractors/ocr.js';
import { extractImage } from '../extractors/image.js';
import { extractPdf } from '../extractors/pdf.js';
import { createTranscriber } from '../extractors/audio.js';
import { createFileExtractors } from '../extractors/files.js';
import { buildDocx, buildPdf } from '../test/fixtures/documents.js';
import { buildEpub, buildOdp, buildOds, buildOdt, buildPptx, buildXlsx } from '../test/fixtures/office.js';
import { renderTextPng, speakWav, concatWavs } from '../test/fixtures/media.js';
import { info, metric } from './stats.js';

const OCR_PAGES = 6;
const PDF_PAGES = 60;

export async function extractorScenario(options: { modelsDir: string | undefined }): Promise<void> {
  // OCR: pages of 20 lines of rendered text through the same worker pool the service uses.
  const lines = Array.from({ length: 20 }, (_, i) => `Line ${i + 1}: the harbour master logged ${i * 7} crates of oranges and figs.`);
  const page = await renderTextPng(lines);
  const pool = createOcrPool({});
  try {
    await extractImage(page, 'image/png', pool); // warm-up: starts the workers
    const started = performance.now();
    await Promise.all(Array.from({ length: OCR_PAGES }, () => extractImage(page, 'image/png', pool)));
    const elapsed = (performance.now() - started) / 1000;
    metric('ocr_pages_per_second', OCR_PAGES / elapsed, 'pages/s');
    info(`   OCR: ${OCR_PAGES} pages of 20 lines with a pool of ${pool.size} workers in ${elapsed.toFixed(1)} s`);
  } finally {
    await pool.close();
  }

  // PDF with a text layer: pdf-parse alone (no page needs OCR).
  const pdf = buildPdf(
    Array.from({ length: PDF_PAGES }, (_, i) => ({
      kind: 'text' as const,
      lines: [`Page ${i + 1} of the orchard report.`, 'Apples, pears and quinces were harvested.'],
    })),
  );
  const never = async (): Promise<string> => {
    throw new Error('a text page was sent to OCR');
  };
  await extractPdf(pdf, { ocrPage: never }); // warm-up: pdf.js
  const pdfStarted = performance.now();
  await extractPdf(pdf, { ocrPage: never });
  metric('pdf_text_pages_per_second', PDF_PAGES / ((performance.now() - pdfStarted) / 1000), 'pages/s');

  // Transcription: about 45 s of espeak-ng speech (two 30 s windows).
  const sentences = [
    'Please schedule a meeting with the design team for next Tuesday at three o clock.',
    'Our new database server handles twice as many requests as the old one.',
    'Remember to water the plants and feed the cat before you leave for the airport.',
  ];
  const wav = concatWavs(await Promise.all([...sentences, ...sentences, ...sentences].map((sentence) => speakWav(sentence))));
  const transcriber = createTranscriber({ modelsDir: options.modelsDir, allowRemoteModels: false });
  try {
    await transcriber.load();
    const started = performance.now();
    const result = await transcriber.transcribe(wav, 'audio/wav');
    const elapsed = (performance.now() - started) / 1000;
    const audioSeconds = Math.max(...result.sections.map((section) => section.end_s ?? 0));
    metric('asr_audio_seconds_per_wall_second', audioSeconds / elapsed, 'x');
    metric('asr_real_time_factor', elapsed / audioSeconds, 'ratio');
    info(`   ASR: ${audioSeconds.toFixed(1)} s of speech in ${elapsed.toFixed(1)} s (${result.units} windows)`);
  } finally {
    await transcriber.close();
  }
}

/**
 * Office formats through the same entry point the worker uses (sniff, open the package with its
 * bomb checks, parse): spreadsheets in rows/s, decks in slides/s, flowing documents in pages/s,
 * a page being a heading and 8 paragraphs of about 60 words (roughly a printed page). Measured in
 * CPU time of this process, which a busy machine disturbs less than wall time.
 */
export async function officeScenario(): Promise<void> {
  const files = createFileExtractors({ modelsDir: undefined, allowRemoteModels: false });
  const words = 'the harvest ledger lists crates of apples pears quinces figs walnuts and almonds shipped north'.split(' ');
  const sentence = (seed: number, length: number): string =>
    Array.from({ length }, (_, i) => words[(seed * 7 + i * 3) % words.length]).join(' ') + '.';
  const ROWS = 20_000;
  const SLIDES = 300;
  const PAGES = 100;
  const rows = [
    ['Date', 'Region', 'Product', 'Crates', 'Note'],
    ...Array.from({ length: ROWS }, (_, i) => [
      new Date(Date.UTC(2024, 0, 1 + (i % 365))),
      `region ${i % 12}`,
      words[i % words.length] ?? '',
      i % 97,
      sentence(i, 8),
    ]),
  ];
  const slides = Array.from({ length: SLIDES }, (_, i) => ({
    title: `Slide ${i + 1}: ${sentence(i, 4)}`,
    body: [sentence(i + 1, 12), sentence(i + 2, 12), sentence(i + 3, 12)],
    notes: [sentence(i + 4, 20)],
  }));
  const blocks = Array.from({ length: PAGES }, (_, page) => [
    { heading: 2 as const, text: `Section ${page + 1}` },
    ...Array.from({ length: 8 }, (_, p) => ({
      text: `${sentence(page + p, 12)} ${sentence(page + p + 1, 12)} ${sentence(page + p + 2, 12)} ${sentence(page + p + 3, 12)} ${sentence(page + p + 4, 12)}`,
    })),
  ]).flat();
  const chapters = Array.from({ length: PAGES }, (_, page) => ({
    title: `Chapter ${page + 1}`,
    paragraphs: Array.from({ length: 8 }, (_, p) => `${sentence(page + p, 30)} ${sentence(page + p + 1, 30)}`),
  }));
  const cases: { name: string; filename: string; bytes: Buffer; count: number; unit: string }[] = [
    { name: 'xlsx', filename: 'bench.xlsx', bytes: buildXlsx([{ name: 'Ledger', rows }]), count: ROWS, unit: 'rows' },
    { name: 'ods', filename: 'bench.ods', bytes: buildOds([{ name: 'Ledger', rows }]), count: ROWS, unit: 'rows' },
    { name: 'pptx', filename: 'bench.pptx', bytes: buildPptx(slides), count: SLIDES, unit: 'slides' },
    { name: 'odp', filename: 'bench.odp', bytes: buildOdp(slides), count: SLIDES, unit: 'slides' },
    { name: 'odt', filename: 'bench.odt', bytes: buildOdt(blocks), count: PAGES, unit: 'pages' },
    { name: 'docx', filename: 'bench.docx', bytes: buildDocx(blocks), count: PAGES, unit: 'pages' },
    { name: 'epub', filename: 'bench.epub', bytes: buildEpub(chapters), count: PAGES, unit: 'pages' },
  ];
  try {
    for (const { name, filename, bytes, count, unit } of cases) {
      await files.extract(bytes, undefined, filename); // warm-up
      // Repeated until half a CPU second is spent, so small files are not measured at the clock's grain.
      const cpu = process.cpuUsage();
      const started = performance.now();
      let runs = 0;
      let cpuSeconds = 0;
      let sections = 0;
      while (cpuSeconds < 0.5) {
        sections = (await files.extract(bytes, undefined, filename)).sections.length;
        runs++;
        const used = process.cpuUsage(cpu);
        cpuSeconds = (used.user + used.system) / 1e6;
      }
      metric(`office_${name}_${unit}_per_cpu_second`, (count * runs) / cpuSeconds, `${unit}/s`);
      info(
        `   ${name}: ${count} ${unit} (${Math.round(bytes.length / 1024)} KB) → ${sections} sections, ${runs} runs in ` +
          `${cpuSeconds.toFixed(2)} s CPU, ${((performance.now() - started) / 1000).toFixed(2)} s wall`,
      );
    }
  } finally {
    await files.close();
  }
}
