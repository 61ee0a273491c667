/**
 * Text out of PDFs, page by page: the text layer when a page has one (pdf-parse / pdf.js), OCR of
 * the rendered page (pdftoppm from poppler-utils, then the caller's OCR) when it has none, as in
 * scans. Every section carries its page number and how its text was obtained.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FormatError, InvalidPDFException, PasswordException, PDFParse, UnknownErrorException } from 'pdf-parse';
import { UnreadableContentError, type ExtractedSection, type Extraction, type ProgressReporter } from './types.js';

export interface PdfExtractionOptions {
  /** Recognises the text in one rendered page (PNG). */
  ocrPage: (png: Buffer, pageNumber: number) => Promise<string>;
  onProgress?: ProgressReporter;
  /** Resolution for rendering pages to OCR (default 300 dpi; lowered for very large pages). */
  renderDpi?: number;
  /** Where the per-document temporary directory goes (default the OS temp dir). */
  tmpDir?: string;
}

/** Pages whose text layer has fewer non-space characters than this are treated as scans. */
export const MIN_TEXT_LAYER_CHARS = 10;
/** Upper bound on a rendered page's pixels (about an A2 page at 300 dpi): bounds memory and OCR time. */
export const MAX_RENDER_PIXELS = 36_000_000;
const RENDER_TIMEOUT_MS = 120_000;

const visibleLength = (text: string): number => text.replace(/\s+/g, '').length;

export async function extractPdf(bytes: Uint8Array, options: PdfExtractionOptions): Promise<Extraction> {
  const renderDpi = options.renderDpi ?? 300;
  // pdf.js may take ownership of (detach) the buffer it is given: give it a copy, keep the original for pdftoppm.
  const parser = new PDFParse({ data: new Uint8Array(bytes), verbosity: 0 });
  let tmp: string | undefined;
  try {
    const textLayer = await readTextLayer(parser);
    const total = textLayer.length;
    if (total === 0) throw new UnreadableContentError('the PDF has no pages');

    const sections: (ExtractedSection | undefined)[] = textLayer.map((text, index) =>
      text.trim() === '' ? undefined : { text: text.trim(), page: index + 1, method: 'text-layer' },
    );
    const scanned = textLayer.flatMap((text, index) => (visibleLength(text) < MIN_TEXT_LAYER_CHARS ? [index + 1] : []));
    let done = total - scanned.length;
    if (done > 0) await options.onProgress?.(done, total);

    if (scanned.length > 0) {
      const sizes = await pageSizes(parser, scanned);
      tmp = await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'pdf-ocr-'));
      const pdfPath = path.join(tmp, 'document.pdf');
      await writeFile(pdfPath, bytes);
      for (const pageNumber of scanned) {
        const size = sizes.get(pageNumber);
        const dpi = size ? cappedDpi(renderDpi, size.width, size.height) : renderDpi;
        const png = await renderPage(pdfPath, pageNumber, dpi, tmp);
        if (png) {
          const recognised = (await options.ocrPage(png, pageNumber)).trim();
          const existing = sections[pageNumber - 1];
          if (recognised !== '' && visibleLength(recognised) >= visibleLength(existing?.text ?? '')) {
            sections[pageNumber - 1] = { text: recognised, page: pageNumber, method: 'ocr' };
          }
        }
        done++;
        await options.onProgress?.(done, total);
      }
    }

    const found = sections.filter((section): section is ExtractedSection => section !== undefined);
    if (found.length === 0) {
      throw new UnreadableContentError(`no text found in the PDF (${total} page${total === 1 ? '' : 's'}, text layer and OCR both empty)`);
    }
    return { mediaType: 'application/pdf', sections: found, units: total };
  } finally {
    await parser.destroy().catch(() => undefined);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}

/** Each page's text layer, in page order. */
async function readTextLayer(parser: PDFParse): Promise<string[]> {
  try {
    const result = await parser.getText();
    const pages: string[] = Array.from({ length: result.total }, () => '');
    for (const page of result.pages) pages[page.num - 1] = page.text;
    return pages;
  } catch (error) {
    throw unreadablePdf(error);
  }
}

/** Known pdf.js failures become UnreadableContentError (never retried); anything else propagates. */
function unreadablePdf(error: unknown): unknown {
  if (error instanceof PasswordException) return new UnreadableContentError('the PDF is password-protected', { cause: error });
  if (error instanceof InvalidPDFException)
    return new UnreadableContentError('the file is not a readable PDF (corrupt or truncated)', { cause: error });
  if (error instanceof FormatError) return new UnreadableContentError(`the PDF is malformed: ${error.message}`, { cause: error });
  if (error instanceof UnknownErrorException)
    return new UnreadableContentError(`the PDF cannot be read: ${error.message}`, { cause: error });
  return error;
}

/** Page sizes in points (1/72 inch) for the given pages; empty when they cannot be read. */
async function pageSizes(parser: PDFParse, pages: number[]): Promise<Map<number, { width: number; height: number }>> {
  const sizes = new Map<number, { width: number; height: number }>();
  try {
    const info = await parser.getInfo({ parsePageInfo: true, partial: pages });
    for (const page of info.pages) sizes.set(page.pageNumber, { width: page.width, height: page.height });
  } catch {
    // Sizes only tune the resolution; without them pages render at the requested dpi.
  }
  return sizes;
}

/** The requested dpi, or less when the page would exceed MAX_RENDER_PIXELS. */
export function cappedDpi(dpi: number, widthPt: number, heightPt: number): number {
  const squareInches = (widthPt / 72) * (heightPt / 72);
  if (!(squareInches > 0)) return dpi;
  const limit = Math.floor(Math.sqrt(MAX_RENDER_PIXELS / squareInches));
  return Math.max(36, Math.min(dpi, limit));
}

/** Renders one page to a greyscale PNG; undefined when poppler cannot render it. */
async function renderPage(pdfPath: string, pageNumber: number, dpi: number, dir: string): Promise<Buffer | undefined> {
  const prefix = path.join(dir, `page-${pageNumber}`);
  const args = ['-r', String(dpi), '-f', String(pageNumber), '-l', String(pageNumber), '-png', '-gray', '-singlefile', pdfPath, prefix];
  try {
    await new Promise<void>((resolve, reject) => {
      execFile('pdftoppm', args, { timeout: RENDER_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (error) => (error ? reject(error) : resolve()));
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('pdftoppm is not installed (Debian package poppler-utils): scanned PDF pages cannot be OCRed', {
        cause: error,
      });
    }
    // A damaged page (or a render timeout) loses that page only.
    return undefined;
  }
  const file = `${prefix}.png`;
  try {
    return await readFile(file);
  } catch {
    return undefined;
  } finally {
    await unlink(file).catch(() => undefined);
  }
}
