/**
 * Text out of the text-like formats: plain text, Markdown, HTML, JSON, CSV/TSV and Word (DOCX).
 * Sections follow the document's own structure (headings) so chunks keep their provenance, and
 * records (JSON array elements, CSV rows) are separated by blank lines so the chunker cuts between
 * them rather than inside one.
 */
import { Buffer } from 'node:buffer';
import { convert, type FormatCallback, type HtmlToTextOptions } from 'html-to-text';
import mammoth from 'mammoth';
import { openArchive } from './office/archive.js';
import { decodeText, detectCsvDelimiter, parseDelimited, type FileKind } from './sniff.js';
import { UnreadableContentError, type ExtractedSection, type Extraction } from './types.js';

export type TextFileKind = Extract<FileKind, 'docx' | 'html' | 'markdown' | 'json' | 'csv' | 'text'>;

const TEXT_FILE_KINDS: ReadonlySet<FileKind> = new Set<TextFileKind>(['docx', 'html', 'markdown', 'json', 'csv', 'text']);
export const isTextFileKind = (kind: FileKind): kind is TextFileKind => TEXT_FILE_KINDS.has(kind);

export async function extractTextFile(bytes: Uint8Array, kind: TextFileKind, mediaType: string): Promise<Extraction> {
  let sections: ExtractedSection[];
  if (kind === 'docx') {
    sections = htmlSections(await docxToHtml(bytes));
  } else {
    const text = decodeText(bytes);
    if (text === undefined) throw new UnreadableContentError(`the file is not text (expected ${mediaType})`);
    switch (kind) {
      case 'markdown':
        sections = markdownSections(text);
        break;
      case 'html':
        sections = htmlSections(text);
        break;
      case 'json':
        sections = jsonSections(text);
        break;
      case 'csv':
        sections = csvSections(text, mediaType === 'text/tab-separated-values' ? '\t' : undefined);
        break;
      default:
        sections = plainSections(text);
    }
  }
  sections = sections.filter((section) => section.text.trim() !== '');
  if (sections.length === 0) throw new UnreadableContentError('the file has no text');
  return { mediaType, sections, units: 1 };
}

const parsed = (text: string, heading?: string): ExtractedSection =>
  heading === undefined ? { text, method: 'parse' } : { text, heading, method: 'parse' };

function plainSections(text: string): ExtractedSection[] {
  return [parsed(text.trim())];
}

// ---------------------------------------------------------------------------------------------
// Markdown

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** Lines longer than this are never headings and skip link clean-up. */
const MAX_PATTERN_LINE = 2000;
const LIST_OR_QUOTE = /^ {0,3}([-*+>]|\d+[.)])(\s|$)/;

/** Inline links and images keep their text and lose their URLs; reference definitions go. */
function stripLinkUrls(line: string): string {
  // Very long lines are left alone: bounded work per line whatever the input.
  if (line.length > MAX_PATTERN_LINE) return line;
  if (/^ {0,3}\[[^\]]+\]:\s*\S+/.test(line)) return '';
  return line.replace(/!?\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g, '$1');
}

/**
 * Gathers lines into sections, one per heading; the heading line starts its section's text. A
 * heading followed straight by another is carried into the next section's text, and headings
 * left at the end become a section of their own. Shared by Markdown and HTML.
 */
export class SectionCollector {
  readonly body: string[] = [];
  private readonly sections: ExtractedSection[] = [];
  private heading: string | undefined;
  private pendingHeadings: string[] = [];

  constructor(private readonly joinBody: (body: string[]) => string) {}

  startSection(title: string): void {
    this.flush();
    const heading = title.trim();
    this.heading = heading === '' ? undefined : heading;
  }

  finish(): ExtractedSection[] {
    this.flush();
    const pending = this.pendingHeadings;
    if (pending.length > 0) this.sections.push(parsed(pending.join('\n'), pending[pending.length - 1]));
    return this.sections;
  }

  private flush(): void {
    const content = this.joinBody(this.body).trim();
    if (content === '') {
      if (this.heading !== undefined) this.pendingHeadings.push(this.heading);
    } else {
      const titles = [...this.pendingHeadings, ...(this.heading === undefined ? [] : [this.heading])];
      this.sections.push(parsed(titles.length > 0 ? `${titles.join('\n')}\n\n${content}` : content, this.heading));
      this.pendingHeadings = [];
    }
    this.body.length = 0;
  }
}

/** One section per heading (the heading line starts its text), outside fenced code blocks. */
export function markdownSections(text: string): ExtractedSection[] {
  const lines = text.split('\n');
  const sections = new SectionCollector((body) => body.join('\n'));
  const body = sections.body;
  let fence: string | undefined;
  const startSection = (title: string): void => sections.startSection(stripLinkUrls(title));

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (fence !== undefined) {
      const close = FENCE.exec(line);
      if (close?.[1] && close[1][0] === fence[0] && close[1].length >= fence.length && line.trim() === close[1]) fence = undefined;
      body.push(line);
      continue;
    }
    const open = FENCE.exec(line);
    if (open?.[1]) {
      fence = open[1];
      body.push(line);
      continue;
    }
    const atx = line.length <= MAX_PATTERN_LINE ? ATX_HEADING.exec(line) : null;
    if (atx) {
      startSection(atx[2] ?? '');
      continue;
    }
    const nextLine = lines[i + 1];
    const previous = body[body.length - 1];
    if (
      nextLine !== undefined &&
      SETEXT_UNDERLINE.test(nextLine) &&
      line.trim() !== '' &&
      line.length <= MAX_PATTERN_LINE &&
      !LIST_OR_QUOTE.test(line) &&
      (previous === undefined || previous.trim() === '')
    ) {
      startSection(line.trim());
      i++;
      continue;
    }
    body.push(stripLinkUrls(line));
  }
  return sections.finish();
}

// ---------------------------------------------------------------------------------------------
// HTML

/** A private-use character html-to-text passes through: marks the lines that are headings. */
const HEADING_MARK = '\uE000';

const markHeading: FormatCallback = (elem, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2 });
  builder.addLiteral(HEADING_MARK);
  walk(elem.children, builder);
  builder.closeBlock({ trailingLineBreaks: 2 });
};

const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  formatters: { markHeading },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'noscript', format: 'skip' },
    { selector: 'template', format: 'skip' },
    { selector: 'svg', format: 'skip' },
    { selector: 'iframe', format: 'skip' },
    { selector: 'object', format: 'skip' },
    { selector: 'button', format: 'skip' },
    { selector: 'select', format: 'skip' },
    { selector: 'table', format: 'dataTable' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'markHeading' })),
  ],
};

/** Readable text of an HTML document, one section per heading. */
export function htmlSections(html: string): ExtractedSection[] {
  const text = convert(html.replaceAll(HEADING_MARK, ''), HTML_OPTIONS);
  const sections = new SectionCollector((body) => body.join('\n').replace(/\n{3,}/g, '\n\n'));
  for (const line of text.split('\n')) {
    if (line.startsWith(HEADING_MARK)) sections.startSection(line.slice(HEADING_MARK.length));
    else sections.body.push(line.trimEnd());
  }
  return sections.finish();
}

// ---------------------------------------------------------------------------------------------
// JSON

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Objects with more top-level keys than this become one section instead of one per key. */
const MAX_KEY_SECTIONS = 50;

const isContainer = (value: JsonValue): value is JsonValue[] | { [key: string]: JsonValue } => typeof value === 'object' && value !== null;

function pathOf(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (/^[\p{L}_$][\p{L}\p{N}_$-]*$/u.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

function scalarText(value: Exclude<JsonValue, object> | JsonValue[] | { [key: string]: JsonValue }): string {
  if (Array.isArray(value)) return '[]';
  if (value !== null && typeof value === 'object') return '{}';
  if (typeof value === 'string') return value.replace(/\s*\n\s*/g, ' ');
  return String(value);
}

/**
 * "path: value" lines for every leaf, in document order, without recursion (deep nesting cannot
 * overflow the stack). Elements of arrays of objects/arrays are separated by blank lines.
 */
export function flattenJson(root: JsonValue, rootPath = ''): string[] {
  type Item = { path: string; value: JsonValue } | 'break';
  const lines: string[] = [];
  const stack: Item[] = [{ path: rootPath, value: root }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === undefined) break;
    if (item === 'break') {
      if (lines.length > 0 && lines[lines.length - 1] !== '') lines.push('');
      continue;
    }
    const { path, value } = item;
    const children: Item[] = [];
    if (Array.isArray(value) && value.length > 0) {
      const records = value.some(isContainer);
      value.forEach((child, index) => {
        if (records && index > 0) children.push('break');
        children.push({ path: pathOf(path, index), value: child });
      });
    } else if (isContainer(value) && !Array.isArray(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) children.push({ path: pathOf(path, key), value: child });
    } else {
      lines.push(path === '' ? scalarText(value) : `${path}: ${scalarText(value)}`);
      continue;
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Item);
  }
  return lines;
}

function jsonSections(text: string): ExtractedSection[] {
  let root: JsonValue;
  try {
    root = JSON.parse(text) as JsonValue;
  } catch {
    return plainSections(text);
  }
  if (isContainer(root) && !Array.isArray(root)) {
    const entries = Object.entries(root);
    if (entries.length > 0 && entries.length <= MAX_KEY_SECTIONS) {
      return entries.map(([key, value]) => parsed(flattenJson(value, pathOf('', key)).join('\n'), key));
    }
    if (entries.length > MAX_KEY_SECTIONS) {
      const lines: string[] = [];
      for (const [key, value] of entries) lines.push(...flattenJson(value, pathOf('', key)), '');
      return [parsed(lines.join('\n').trim())];
    }
  }
  return [parsed(flattenJson(root).join('\n').trim())];
}

// ---------------------------------------------------------------------------------------------
// CSV

const NUMBER_LIKE = /^[-+]?[\d.,\s]+%?$|^\d{4}-\d{2}-\d{2}/;

/** A header row has only distinct, non-empty, non-numeric cells. */
export function looksLikeHeader(cells: string[]): boolean {
  const trimmed = cells.map((cell) => cell.trim());
  return trimmed.every((cell) => cell !== '' && !NUMBER_LIKE.test(cell)) && new Set(trimmed).size === trimmed.length;
}

function csvSections(text: string, forcedDelimiter: string | undefined): ExtractedSection[] {
  const delimiter = forcedDelimiter ?? detectCsvDelimiter(text.slice(0, 64 * 1024), undefined, text.length > 64 * 1024) ?? ',';
  const rows = parseDelimited(text, delimiter);
  const first = rows[0];
  if (first === undefined) return [];
  const header = rows.length > 1 && looksLikeHeader(first) ? first.map((cell) => cell.trim()) : undefined;
  const lines: string[] = [];
  for (const cells of header ? rows.slice(1) : rows) {
    const parts: string[] = [];
    cells.forEach((cell, index) => {
      const value = cell.trim().replace(/\s*\n\s*/g, ' ');
      if (value === '') return;
      parts.push(header ? `${header[index] ?? `column ${index + 1}`}: ${value}` : value);
    });
    if (parts.length > 0) lines.push(parts.join('; '));
  }
  // Blank lines between rows: the chunker then keeps every row whole.
  return [parsed(lines.join('\n\n'))];
}

// ---------------------------------------------------------------------------------------------
// DOCX

/** Refuses damaged, encrypted, macro-carrying or bomb-like Word packages before mammoth unpacks anything. */
export function checkDocxArchive(bytes: Uint8Array): void {
  openArchive(bytes, 'the Word document', 'word/document.xml', 'a Word document');
}

async function docxToHtml(bytes: Uint8Array): Promise<string> {
  checkDocxArchive(bytes);
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      {
        // Images are dropped (no data: URIs in the HTML) and linked files are never fetched.
        convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })),
        externalFileAccess: false,
        ignoreEmptyParagraphs: true,
      },
    );
    return result.value;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UnreadableContentError(`the Word document could not be read: ${message}`, { cause: error });
  }
}
