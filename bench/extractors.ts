/**
 * File-extraction speed, measured on the extractors alone (nothing else running): OCR pages/s,
 * PDF text-layer pages/s, and transcription speed as audio seconds per wall second.
 * Inputs are generated here, as the test fixtures do (rendered text, espeak-ng speech).
 */
import { createOcrPool } from '../extractors/ocr.js';
import { extractImage } from '../extractors/image.js';
import { extractPdf } from '../extractors/pdf.js';
import { createTranscriber } from '../extractors/audio.js';
import { buildPdf } from '../test/fixtures/documents.js';
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
