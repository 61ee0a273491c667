/**
 * Works out what an uploaded file really is from its bytes. The declared media type and the file
 * name are hints: a recognisable binary format (magic numbers, via file-type) always wins over
 * them, and texty bytes are told apart by content (HTML, JSON) or by the hint (CSV, Markdown).
 * Also home to the byte-level helpers the extractors share: text decoding and ZIP directory reading.
 */
import { Buffer } from 'node:buffer';
import zlib from 'node:zlib';
import { fileTypeFromBuffer } from 'file-type';
import { UnreadableContentError } from './types.js';

export type FileKind =
  | 'image'
  | 'pdf'
  | 'audio'
  | 'docx'
  | 'xlsx'
  | 'pptx'
  | 'odt'
  | 'ods'
  | 'odp'
  | 'epub'
  | 'encrypted-office'
  | 'html'
  | 'markdown'
  | 'json'
  | 'csv'
  | 'text'
  | 'unsupported';

/** The office kinds read from a ZIP package (extractors/office). */
export type PackageKind = Extract<FileKind, 'docx' | 'xlsx' | 'pptx' | 'odt' | 'ods' | 'odp' | 'epub'>;

export interface SniffResult {
  /** What the bytes are, e.g. image/png; for unsupported binaries whatever is known of them. */
  mediaType: string;
  kind: FileKind;
  /** The declared type said something else than the bytes do. */
  mismatch: boolean;
}

export const DOCX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** Package kinds by the part only that format has (OOXML) or by the `mimetype` part's content (OpenDocument, EPUB). */
const OOXML_MAIN_PARTS: [string, PackageKind, string][] = [
  ['word/document.xml', 'docx', DOCX_MEDIA_TYPE],
  ['xl/workbook.xml', 'xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  ['ppt/presentation.xml', 'pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
];
const PACKAGE_MIMETYPES = new Map<string, PackageKind>([
  ['application/vnd.oasis.opendocument.text', 'odt'],
  ['application/vnd.oasis.opendocument.spreadsheet', 'ods'],
  ['application/vnd.oasis.opendocument.presentation', 'odp'],
  ['application/epub+zip', 'epub'],
]);
/** What file-type calls the ZIP-based formats (macro-enabled and template variants included). */
const ZIP_BASED =
  /^application\/(zip|epub\+zip|vnd\.openxmlformats-officedocument\..*|vnd\.oasis\.opendocument\..*|vnd\.ms-[\w.-]+\.macroenabled[\w.]*)$/;
/** An encrypted OOXML file is an OLE compound file with this stream (MS-OFFCRYPTO), its name in UTF-16LE. */
const ENCRYPTED_PACKAGE_STREAM = Buffer.from('EncryptedPackage', 'utf16le');

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/tiff', 'image/webp', 'image/bmp']);

/** Detected type → canonical audio media type; MP4 and WebM containers are taken for their sound. */
const AUDIO_TYPES = new Map<string, string>([
  ['audio/wav', 'audio/wav'],
  ['audio/mpeg', 'audio/mpeg'],
  ['audio/mp4', 'audio/mp4'],
  ['audio/x-m4a', 'audio/mp4'],
  ['audio/aac', 'audio/aac'],
  ['audio/ogg', 'audio/ogg'],
  ['audio/ogg; codecs=opus', 'audio/ogg'],
  ['audio/opus', 'audio/ogg'],
  ['audio/flac', 'audio/flac'],
  ['audio/x-flac', 'audio/flac'],
  ['audio/webm', 'audio/webm'],
  ['video/webm', 'audio/webm'],
  ['video/mp4', 'audio/mp4'],
]);

/** Declared types that mean the same as a canonical one. */
const ALIASES = new Map<string, string>([
  ['image/jpg', 'image/jpeg'],
  ['image/pjpeg', 'image/jpeg'],
  ['image/x-png', 'image/png'],
  ['image/x-ms-bmp', 'image/bmp'],
  ['image/x-bmp', 'image/bmp'],
  ['audio/x-wav', 'audio/wav'],
  ['audio/wave', 'audio/wav'],
  ['audio/vnd.wave', 'audio/wav'],
  ['audio/mp3', 'audio/mpeg'],
  ['audio/mpeg3', 'audio/mpeg'],
  ['audio/x-mpeg', 'audio/mpeg'],
  ['audio/x-m4a', 'audio/mp4'],
  ['audio/m4a', 'audio/mp4'],
  ['audio/aacp', 'audio/aac'],
  ['audio/x-aac', 'audio/aac'],
  ['audio/opus', 'audio/ogg'],
  ['audio/vorbis', 'audio/ogg'],
  ['application/ogg', 'audio/ogg'],
  ['audio/x-flac', 'audio/flac'],
  ['application/x-pdf', 'application/pdf'],
]);

const TEXTUAL_DECLARED =
  /^(text\/|application\/(json|xml|xhtml\+xml|csv|x-ndjson|ld\+json|javascript|x-yaml|yaml|toml)$|application\/[\w.+-]+\+(json|xml)$)/;

/** How much of a texty file sniffing decodes and examines. */
const SNIFF_TEXT_BYTES = 1024 * 1024;
/** Up to this size a file that looks like JSON is parsed in full to make sure. */
const MAX_JSON_SNIFF_BYTES = 8 * 1024 * 1024;

const MARKDOWN_TYPES = new Set(['text/markdown', 'text/x-markdown', 'text/md']);
const MARKDOWN_EXTENSIONS = new Set(['md', 'markdown', 'mdown', 'mkd', 'mdx']);
const CSV_TYPES = new Set(['text/csv', 'application/csv', 'text/x-csv', 'text/comma-separated-values', 'application/vnd.ms-excel']);
const TSV_TYPES = new Set(['text/tab-separated-values', 'text/tsv']);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const HTML_EXTENSIONS = new Set(['html', 'htm', 'xhtml']);

/** Lower-cased media type without parameters, or undefined when it says nothing. */
function normalizeDeclared(declared: string | undefined): string | undefined {
  const bare = declared?.split(';')[0]?.trim().toLowerCase();
  if (!bare || bare === 'application/octet-stream' || bare === 'binary/octet-stream' || !bare.includes('/')) return undefined;
  return ALIASES.get(bare) ?? bare;
}

function extensionOf(filename: string | undefined): string | undefined {
  const base = filename?.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : undefined;
}

export async function sniffMediaType(bytes: Uint8Array, declared: string | undefined, filename: string | undefined): Promise<SniffResult> {
  if (bytes.length === 0) throw new UnreadableContentError('the file is empty');
  const hint = normalizeDeclared(declared);
  const extension = extensionOf(filename);

  const binary = await sniffBinary(bytes, hint, extension);
  // Real binary formats are full of NUL and control bytes. A signature match on bytes that read as
  // text is a coincidence ("BM" is the whole BMP signature, "ID3" an MP3's), except for PDF, which
  // may be pure ASCII.
  const coincidence = binary !== undefined && binary.kind !== 'pdf' && decodeText(bytes.subarray(0, 64 * 1024)) !== undefined;
  if (binary && !coincidence) return { ...binary, mismatch: hint !== undefined && hint !== binary.mediaType };

  // Judged on the first megabyte, so sniffing stays cheap on the request path; extraction decodes it all.
  const truncated = bytes.length > SNIFF_TEXT_BYTES;
  const text = decodeText(truncated ? utf8Head(bytes, SNIFF_TEXT_BYTES) : bytes);
  if (text === undefined) {
    return { mediaType: 'application/octet-stream', kind: 'unsupported', mismatch: hint !== undefined };
  }
  const texty = classifyText(text, truncated ? bytes : undefined, hint, extension);
  return { ...texty, mismatch: hint !== undefined && !TEXTUAL_DECLARED.test(hint) };
}

async function sniffBinary(
  bytes: Uint8Array,
  hint: string | undefined,
  extension: string | undefined,
): Promise<{ mediaType: string; kind: FileKind } | undefined> {
  let detected: { mime: string } | undefined;
  try {
    detected = await fileTypeFromBuffer(bytes);
  } catch {
    // A malformed container can make a detector throw; the bytes are then judged as text or unknown.
    detected = undefined;
  }
  if (!detected) return undefined;
  const mime = detected.mime.toLowerCase();

  if (IMAGE_TYPES.has(mime)) return { mediaType: mime, kind: 'image' };
  if (mime === 'application/pdf') return { mediaType: mime, kind: 'pdf' };
  const audio = AUDIO_TYPES.get(mime);
  if (audio) {
    // A video container keeps its video type unless the uploader called it audio.
    const isAudioHint = hint?.startsWith('audio/') === true || ['m4a', 'aac', 'weba', 'opus', 'oga'].includes(extension ?? '');
    const mediaType = mime.startsWith('video/') && !isAudioHint ? mime : audio;
    return { mediaType, kind: 'audio' };
  }
  if (ZIP_BASED.test(mime)) {
    // A package whose directory cannot be read keeps file-type's verdict: its extractor then says what is damaged.
    const byMime = OOXML_MAIN_PARTS.find(([, , mediaType]) => mediaType === mime)?.[1] ?? PACKAGE_MIMETYPES.get(mime);
    return classifyPackage(bytes) ?? { mediaType: mime, kind: byMime ?? 'unsupported' };
  }
  if (mime === 'application/x-cfb') {
    // Legacy binary Office files (.doc, .xls, .ppt) are not read; a password-protected modern one gets its reason.
    const encrypted = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(ENCRYPTED_PACKAGE_STREAM);
    return { mediaType: mime, kind: encrypted ? 'encrypted-office' : 'unsupported' };
  }
  // Text formats file-type knows by their first bytes (XML, iCalendar, WebVTT…) are read as text.
  if (mime.startsWith('text/') || mime === 'application/xml' || mime === 'image/svg+xml') return undefined;
  return { mediaType: mime, kind: 'unsupported' };
}

/**
 * `text` is the whole file, or its first megabyte when `whole` (the raw bytes) is given: JSON is
 * then parsed in full only up to MAX_JSON_SNIFF_BYTES, and trusted to its declaration beyond.
 */
function classifyText(
  text: string,
  whole: Uint8Array | undefined,
  hint: string | undefined,
  extension: string | undefined,
): { mediaType: string; kind: FileKind } {
  const head = text.slice(0, 64 * 1024);
  const trimmed = head.trimStart();

  const declaredHtml = (hint !== undefined && HTML_TYPES.has(hint)) || HTML_EXTENSIONS.has(extension ?? '');
  if (looksLikeHtml(trimmed, declaredHtml)) return { mediaType: 'text/html', kind: 'html' };

  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const declaredJson = hint === 'application/json' || hint?.endsWith('+json') === true || extension === 'json';
    let isJson: boolean;
    if (whole === undefined) isJson = parsesAsJson(text);
    else if (whole.length <= MAX_JSON_SNIFF_BYTES) isJson = parsesAsJson(decodeText(whole) ?? '');
    else isJson = declaredJson;
    if (isJson) return { mediaType: 'application/json', kind: 'json' };
  }

  const declaredTsv = (hint !== undefined && TSV_TYPES.has(hint)) || extension === 'tsv' || extension === 'tab';
  const declaredCsv = (hint !== undefined && CSV_TYPES.has(hint)) || extension === 'csv';
  const delimiter =
    declaredCsv || declaredTsv
      ? detectCsvDelimiter(head, declaredTsv ? ['\t'] : undefined, head.length < text.length || whole !== undefined)
      : undefined;
  if (delimiter !== undefined) {
    return { mediaType: declaredTsv ? 'text/tab-separated-values' : 'text/csv', kind: 'csv' };
  }

  if ((hint !== undefined && MARKDOWN_TYPES.has(hint)) || MARKDOWN_EXTENSIONS.has(extension ?? '')) {
    return { mediaType: 'text/markdown', kind: 'markdown' };
  }
  return { mediaType: 'text/plain', kind: 'text' };
}

/** The first `limit` bytes, cut back to a UTF-8 character boundary. */
function utf8Head(bytes: Uint8Array, limit: number): Uint8Array {
  let end = limit;
  for (let back = 0; back < 3 && end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80; back++) end--;
  return bytes.subarray(0, end);
}

function looksLikeHtml(trimmedHead: string, declaredHtml: boolean): boolean {
  const start = trimmedHead.replace(/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*/i, '').slice(0, 2048);
  if (/^<!doctype\s+html/i.test(start) || /^<html[\s>]/i.test(start)) return true;
  if (/^<(head|body)[\s>]/i.test(start)) return true;
  if (!declaredHtml) return false;
  return /<(html|head|body|div|p|span|h[1-6]|table|ul|ol|article|section|main|br)[\s/>]/i.test(trimmedHead);
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Text

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * Decodes text the way every text extractor does: UTF-8 (a BOM is dropped), UTF-16 when it has a
 * BOM, otherwise Windows-1252 (the superset of Latin-1 that browsers use for "latin1") when the
 * bytes are not valid UTF-8. Line ends become \n. Returns undefined when the bytes do not look like
 * text at all: NUL bytes, or more than 1 % other control characters.
 */
export function decodeText(bytes: Uint8Array): string | undefined {
  let text: string;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) text = new TextDecoder('utf-16le').decode(bytes.subarray(2));
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) text = new TextDecoder('utf-16be').decode(bytes.subarray(2));
  else {
    const body = UTF8_BOM.every((value, index) => bytes[index] === value) ? bytes.subarray(3) : bytes;
    if (body.includes(0)) return undefined;
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
    } catch {
      text = decodeWindows1252(body);
    }
  }
  if (text.includes('\u0000')) return undefined;
  let controls = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== 0x0c) || code === 0x7f) controls++;
  }
  if (controls > Math.max(2, text.length / 100)) return undefined;
  return text.replace(/\r\n?/g, '\n');
}

/** What Windows-1252 puts at 0x80–0x9F (Latin-1 has C1 controls there); the five unassigned bytes stay as they are. */
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** Windows-1252 decoding done by hand: TextDecoder('windows-1252') on Node 20 decodes plain Latin-1. */
function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (char) => CP1252_HIGH[char.charCodeAt(0) - 0x80] ?? char);
}

/**
 * RFC 4180 records: quoted fields may hold delimiters, doubled quotes and line breaks. Blank lines
 * are skipped; parsing stops after `maxRecords` records.
 */
export function parseDelimited(text: string, delimiter: string, maxRecords = Number.POSITIVE_INFINITY): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let fieldStarted = false;
  const endRow = (): void => {
    row.push(field);
    if (row.some((cell) => cell.trim() !== '')) rows.push(row);
    row = [];
    field = '';
    fieldStarted = false;
  };
  for (let i = 0; i < text.length && rows.length < maxRecords; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && !fieldStarted) {
      quoted = true;
      fieldStarted = true;
    } else if (char === delimiter) {
      row.push(field);
      field = '';
      fieldStarted = false;
    } else if (char === '\n') {
      endRow();
    } else {
      field += char;
      if (char !== ' ' && char !== '\t') fieldStarted = true;
    }
  }
  if (rows.length < maxRecords && (field !== '' || row.length > 0)) endRow();
  return rows;
}

/**
 * The delimiter that splits the first records (up to 20) into the same number (≥ 2) of fields,
 * or undefined when none does. `text` may be the head of a longer file: its last record, perhaps
 * cut short, is then left out.
 */
export function detectCsvDelimiter(text: string, candidates: string[] = [',', ';', '\t', '|'], truncated = false): string | undefined {
  for (const delimiter of candidates) {
    const records = parseDelimited(text, delimiter, 21);
    if (truncated || records.length > 20) records.pop();
    const first = records[0]?.length ?? 0;
    if (first >= 2 && records.every((record) => record.length === first)) return delimiter;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// ZIP central directory

export interface ZipEntryInfo {
  name: string;
  /** 0 stored, 8 deflate. */
  method: number;
  /** General purpose flags; bit 0 means encrypted. */
  flags: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

export class ZipFormatError extends Error {
  override name = 'ZipFormatError';
}

export class ZipEntryLimitError extends ZipFormatError {
  override name = 'ZipEntryLimitError';
  constructor(readonly entryCount: number) {
    super(`the archive has ${entryCount} entries`);
  }
}

const MAX_ZIP_COMMENT = 0xffff;

/**
 * Reads a ZIP archive's central directory (ZIP64 included) without decompressing anything.
 * `maxEntries` bounds the work on hostile archives: more entries throws before any are read.
 * Throws ZipFormatError when the structure is broken.
 */
export function readZipDirectory(bytes: Uint8Array, maxEntries = Number.POSITIVE_INFINITY): ZipEntryInfo[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = bytes.byteLength;
  let end = -1;
  for (let at = length - 22; at >= 0 && at >= length - 22 - MAX_ZIP_COMMENT; at--) {
    if (view.getUint32(at, true) === 0x06054b50) {
      end = at;
      break;
    }
  }
  if (end < 0) throw new ZipFormatError('no ZIP end-of-central-directory record (not a ZIP archive, or truncated)');

  let count = view.getUint16(end + 10, true);
  let directorySize = view.getUint32(end + 12, true);
  let directoryOffset = view.getUint32(end + 16, true);
  if (count === 0xffff || directorySize === 0xffffffff || directoryOffset === 0xffffffff) {
    const locator = end - 20;
    if (locator < 0 || view.getUint32(locator, true) !== 0x07064b50) throw new ZipFormatError('ZIP64 locator missing');
    const zip64End = Number(view.getBigUint64(locator + 8, true));
    if (zip64End + 56 > length || view.getUint32(zip64End, true) !== 0x06064b50) throw new ZipFormatError('ZIP64 end record missing');
    count = Number(view.getBigUint64(zip64End + 32, true));
    directorySize = Number(view.getBigUint64(zip64End + 40, true));
    directoryOffset = Number(view.getBigUint64(zip64End + 48, true));
  }
  if (count > maxEntries) throw new ZipEntryLimitError(count);
  if (directoryOffset + directorySize > length) throw new ZipFormatError('ZIP central directory lies outside the file');

  const entries: ZipEntryInfo[] = [];
  let at = directoryOffset;
  const decoder = new TextDecoder('utf-8');
  for (let index = 0; index < count; index++) {
    if (at + 46 > length || view.getUint32(at, true) !== 0x02014b50) throw new ZipFormatError('ZIP central directory is corrupt');
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    let compressedSize = view.getUint32(at + 20, true);
    let uncompressedSize = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    let localHeaderOffset = view.getUint32(at + 42, true);
    const nameStart = at + 46;
    const extraStart = nameStart + nameLength;
    const next = extraStart + extraLength + commentLength;
    if (next > length) throw new ZipFormatError('ZIP central directory is truncated');
    const name = decoder.decode(bytes.subarray(nameStart, extraStart));

    // ZIP64 extended information: the 64-bit values present are exactly those whose 32-bit field is saturated.
    for (let extra = extraStart; extra + 4 <= extraStart + extraLength;) {
      const id = view.getUint16(extra, true);
      const size = view.getUint16(extra + 2, true);
      if (id === 0x0001) {
        let field = extra + 4;
        const read = (): number => {
          if (field + 8 > extra + 4 + size) throw new ZipFormatError('ZIP64 extra field is short');
          const value = Number(view.getBigUint64(field, true));
          field += 8;
          return value;
        };
        if (uncompressedSize === 0xffffffff) uncompressedSize = read();
        if (compressedSize === 0xffffffff) compressedSize = read();
        if (localHeaderOffset === 0xffffffff) localHeaderOffset = read();
      }
      extra += 4 + size;
    }
    entries.push({ name, method, flags, compressedSize, uncompressedSize, localHeaderOffset });
    at = next;
  }
  return entries;
}

/** Where an entry's compressed bytes start, from its local header. */
export function zipEntryDataOffset(bytes: Uint8Array, entry: ZipEntryInfo): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localHeaderOffset;
  if (at + 30 > bytes.byteLength || view.getUint32(at, true) !== 0x04034b50)
    throw new ZipFormatError(`ZIP entry ${entry.name} has no local header`);
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  if (start + entry.compressedSize > bytes.byteLength) throw new ZipFormatError(`ZIP entry ${entry.name} is truncated`);
  return start;
}

/**
 * Which office format a ZIP package is, from its directory alone (cheap enough for the request
 * path): OpenDocument and EPUB name themselves in a small `mimetype` part, OOXML by its main part.
 */
function classifyPackage(bytes: Uint8Array): { mediaType: string; kind: PackageKind } | undefined {
  const entries = tryReadZipDirectory(bytes);
  if (!entries) return undefined;
  const mimetype = entries.find((entry) => entry.name === 'mimetype');
  if (mimetype && mimetype.uncompressedSize <= 200) {
    let declared: string | undefined;
    try {
      const start = zipEntryDataOffset(bytes, mimetype);
      const data = bytes.subarray(start, start + mimetype.compressedSize);
      const raw = mimetype.method === 8 ? zlib.inflateRawSync(data, { maxOutputLength: 200 }) : data;
      declared = new TextDecoder().decode(raw).trim();
    } catch {
      declared = undefined;
    }
    const kind = declared === undefined ? undefined : PACKAGE_MIMETYPES.get(declared);
    if (declared !== undefined && kind !== undefined) return { mediaType: declared, kind };
  }
  const names = new Set(entries.map((entry) => entry.name));
  for (const [part, kind, mediaType] of OOXML_MAIN_PARTS) if (names.has(part)) return { mediaType, kind };
  return undefined;
}

function tryReadZipDirectory(bytes: Uint8Array): ZipEntryInfo[] | undefined {
  try {
    return readZipDirectory(bytes, 100_000);
  } catch {
    return undefined;
  }
}
