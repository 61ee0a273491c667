/**
 * The ZIP packages behind the office formats (DOCX, XLSX, PPTX, ODT, ODS, ODP, EPUB), opened
 * defensively: the central directory is checked against size, ratio and entry-count limits before
 * anything is decompressed, every part is then inflated with a hard cap at its declared size (the
 * headers of a hostile archive may lie), and packages that are encrypted or carry macros are
 * refused with a stable code. Nothing in a package is ever executed or followed outside it.
 */
import zlib from 'node:zlib';
import { readZipDirectory, ZipEntryLimitError, zipEntryDataOffset, ZipFormatError, type ZipEntryInfo } from '../sniff.js';
import { UnreadableContentError } from '../types.js';

/** Limits on a package before anything decompresses it (zip-bomb protection). */
export const ARCHIVE_LIMITS = {
  maxUncompressedBytes: 50 * 1024 * 1024,
  maxRatio: 100,
  /** The ratio check applies only above this much content: tiny repetitive parts compress very well. */
  ratioFloorBytes: 1024 * 1024,
  maxEntries: 10_000,
};

/** Parts that hold macros: VBA projects (OOXML) and Basic or script libraries (OpenDocument). */
const MACRO_PART = /(^|\/)vbaProject(Signature)?\.bin$|^(Basic|Scripts)\//i;

export interface OfficeArchive {
  readonly names: ReadonlySet<string>;
  /** A part's bytes, or undefined when the package has no such part. */
  read(name: string): Uint8Array | undefined;
  /** A part decoded as UTF-8 (XML parts), or undefined. */
  text(name: string): string | undefined;
}

/**
 * Opens a package. `label` names it in messages ("the spreadsheet"); `required` is a part the
 * format cannot do without, and `formatName` what the file then is not ("an Excel workbook").
 */
export function openArchive(bytes: Uint8Array, label: string, required: string, formatName: string): OfficeArchive {
  const limits = ARCHIVE_LIMITS;
  const damaged = (error: Error): UnreadableContentError =>
    new UnreadableContentError(`${label} is damaged and cannot be opened (${error.message})`, { cause: error, code: 'file_damaged' });
  let entries: ZipEntryInfo[];
  try {
    entries = readZipDirectory(bytes, limits.maxEntries);
  } catch (error) {
    if (error instanceof ZipEntryLimitError) {
      throw new UnreadableContentError(
        `${label} has ${error.entryCount} parts, more than the ${limits.maxEntries} allowed (refused as a possible zip bomb)`,
        { code: 'file_zip_bomb' },
      );
    }
    if (error instanceof ZipFormatError || error instanceof RangeError) throw damaged(error);
    throw error;
  }
  const names = new Set(entries.map((entry) => entry.name));
  if (!names.has(required)) {
    throw new UnreadableContentError(`the file is a ZIP archive but not ${formatName} (it has no ${required})`, { code: 'file_damaged' });
  }

  let uncompressed = 0;
  let compressed = 0;
  for (const entry of entries) {
    uncompressed += entry.uncompressedSize;
    compressed += entry.compressedSize;
    if ((entry.flags & 1) !== 0) throw new UnreadableContentError(`${label} is encrypted`, { code: 'file_encrypted' });
    if (entry.method !== 0 && entry.method !== 8) {
      throw new UnreadableContentError(`${label} uses an unsupported compression method (${entry.method})`, { code: 'file_damaged' });
    }
    if (MACRO_PART.test(entry.name)) {
      throw new UnreadableContentError(`${label} contains macros (${entry.name}); documents with macros are refused, never run`, {
        code: 'file_macros',
      });
    }
  }
  const mb = (value: number): string => `${Math.round(value / (1024 * 1024))} MB`;
  if (uncompressed > limits.maxUncompressedBytes) {
    throw new UnreadableContentError(
      `${label} unpacks to ${mb(uncompressed)}, more than the ${mb(limits.maxUncompressedBytes)} allowed (refused as a possible zip bomb)`,
      { code: 'file_zip_bomb' },
    );
  }
  const ratio = uncompressed / Math.max(compressed, 1);
  if (uncompressed > limits.ratioFloorBytes && ratio > limits.maxRatio) {
    throw new UnreadableContentError(
      `${label} compresses ${Math.round(ratio)}:1, more than ${limits.maxRatio}:1 (refused as a possible zip bomb)`,
      { code: 'file_zip_bomb' },
    );
  }

  // Every part is inflated now, capped at its declared size: the central directory may lie, and
  // the sum of the caps is the bound checked above.
  const parts = new Map<string, Uint8Array>();
  for (const entry of entries) {
    let start: number;
    try {
      start = zipEntryDataOffset(bytes, entry);
    } catch (error) {
      if (error instanceof ZipFormatError) throw damaged(error);
      throw error;
    }
    const data = bytes.subarray(start, start + entry.compressedSize);
    if (entry.method === 0) {
      parts.set(entry.name, data);
      continue;
    }
    try {
      parts.set(entry.name, zlib.inflateRawSync(data, { maxOutputLength: Math.max(1, entry.uncompressedSize) }));
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
        throw new UnreadableContentError(
          `${label} part ${entry.name} unpacks to more than its declared ${entry.uncompressedSize} bytes (refused as a possible zip bomb)`,
          { code: 'file_zip_bomb' },
        );
      }
      throw new UnreadableContentError(`${label} is damaged: part ${entry.name} cannot be decompressed`, { code: 'file_damaged' });
    }
  }

  // OpenDocument (and EPUB with DRM) encrypt parts inside a plain ZIP and say so in a manifest.
  const decoder = new TextDecoder('utf-8');
  const manifest = parts.get('META-INF/manifest.xml');
  if (manifest && decoder.decode(manifest).includes('encryption-data')) {
    throw new UnreadableContentError(`${label} is password-protected (encrypted)`, { code: 'file_encrypted' });
  }

  return {
    names,
    read: (name) => parts.get(name),
    text: (name) => {
      const part = parts.get(name);
      return part === undefined ? undefined : decoder.decode(part);
    },
  };
}

/** A part path relative to another part's folder ("../media/x" from "xl/worksheets/sheet1.xml"); absolute targets start at the root. */
export function resolvePartPath(fromPart: string, target: string): string {
  const segments = target.startsWith('/') ? [] : fromPart.split('/').slice(0, -1);
  for (const segment of target.replace(/^\//, '').split('/')) {
    if (segment === '..') segments.pop();
    else if (segment !== '.' && segment !== '') segments.push(segment);
  }
  return segments.join('/');
}
