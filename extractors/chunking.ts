/**
 * Splits content into chunks a sentence embedder handles well. Pure functions: no I/O.
 * Text is cut at paragraph, then sentence, then word boundaries, never mid-word unless a single
 * "word" is longer than the limit. Every chunk keeps where it came from (provenance).
 */
import type { ChunkSource, MemoryContent } from '../core/content-model.js';
import type { CellRange, ExtractedSection, Extraction } from './types.js';

export interface PlannedChunk {
  text: string;
  source: ChunkSource;
}

const SENTENCE_END = /(?<=[.!?…。！？])\s+/u;

/** Splits `text` into pieces of at most `maxChars`, preferring the largest natural boundary. */
export function splitText(text: string, maxChars: number): { text: string; start: number; end: number }[] {
  const pieces: { text: string; start: number; end: number }[] = [];
  let current = '';
  let currentStart = 0;
  let cursor = 0;

  const flush = (): void => {
    const trimmed = current.trim();
    if (trimmed.length > 0) {
      const leading = current.length - current.trimStart().length;
      pieces.push({ text: trimmed, start: currentStart + leading, end: currentStart + leading + trimmed.length });
    }
    current = '';
  };

  for (const unit of atomicUnits(text, maxChars)) {
    if (current.length > 0 && current.length + unit.length > maxChars) flush();
    if (current.length === 0) currentStart = cursor;
    current += unit;
    cursor += unit.length;
  }
  flush();
  return pieces;
}

/** Units no longer than maxChars, in order, whose concatenation is the original text. */
function* atomicUnits(text: string, maxChars: number): Generator<string> {
  for (const paragraph of splitKeepingSeparators(text, /(\n\s*\n)/)) {
    if (paragraph.length <= maxChars) {
      yield paragraph;
      continue;
    }
    for (const sentence of splitKeepingSeparators(paragraph, SENTENCE_END, true)) {
      if (sentence.length <= maxChars) {
        yield sentence;
        continue;
      }
      for (const word of splitKeepingSeparators(sentence, /(\s+)/)) {
        for (let offset = 0; offset < word.length; offset += maxChars) yield word.slice(offset, offset + maxChars);
      }
    }
  }
}

/** Like split, but separators stay attached to the preceding piece so nothing is lost. */
function splitKeepingSeparators(text: string, separator: RegExp, lookbehind = false): string[] {
  if (lookbehind) {
    const result: string[] = [];
    let last = 0;
    const global = new RegExp(separator.source, 'gu');
    for (const match of text.matchAll(global)) {
      const end = (match.index ?? 0) + match[0].length;
      result.push(text.slice(last, end));
      last = end;
    }
    if (last < text.length) result.push(text.slice(last));
    return result;
  }
  const parts = text.split(separator);
  const result: string[] = [];
  for (let i = 0; i < parts.length; i += 2) result.push((parts[i] ?? '') + (parts[i + 1] ?? ''));
  return result.filter((part) => part.length > 0);
}

export function planChunks(content: MemoryContent, maxChars: number): PlannedChunk[] {
  const planned: PlannedChunk[] = [];
  if (content.messages) {
    content.messages.forEach((message, messageIndex) => {
      for (const piece of splitText(message.content, maxChars)) {
        planned.push({ text: piece.text, source: { type: 'message', role: message.role, message_index: messageIndex } });
      }
    });
  } else if (content.chunks) {
    for (const chunk of content.chunks) {
      for (const piece of splitText(chunk, maxChars)) planned.push({ text: piece.text, source: { type: 'chunk' } });
    }
  } else if (content.raw_text !== undefined) {
    for (const piece of splitText(content.raw_text, maxChars)) {
      planned.push({ text: piece.text, source: { type: 'text', start: piece.start, end: piece.end } });
    }
  }
  return planned;
}

/**
 * Chunks of one extracted file; every chunk keeps its file, page, time range, heading, slide, or
 * sheet and cell range. Spreadsheet rows come as one section each: neighbouring rows of a sheet
 * are packed into one chunk up to `maxChars`, its range widened to cover them.
 */
export function planFileChunks(extraction: Extraction, fileIndex: number, filename: string, maxChars: number): PlannedChunk[] {
  const planned: PlannedChunk[] = [];
  for (const section of packSheetRows(extraction.sections, maxChars)) {
    for (const piece of splitText(section.text, maxChars)) {
      const source: ChunkSource = { type: 'file', file_index: fileIndex, filename, media_type: extraction.mediaType };
      if (section.page !== undefined) source.page = section.page;
      if (section.start_s !== undefined) source.start_s = section.start_s;
      if (section.end_s !== undefined) source.end_s = section.end_s;
      if (section.heading !== undefined) source.heading = section.heading;
      if (section.slide !== undefined) source.slide = section.slide;
      if (section.sheet !== undefined) source.sheet = section.sheet;
      if (section.cells !== undefined) source.cell_range = formatCellRange(section.cells);
      if (section.method !== undefined) source.method = section.method;
      planned.push({ text: piece.text, source });
    }
  }
  return planned;
}

function packSheetRows(sections: ExtractedSection[], maxChars: number): ExtractedSection[] {
  const packed: ExtractedSection[] = [];
  for (const section of sections) {
    const last = packed[packed.length - 1];
    if (
      last?.sheet !== undefined &&
      last.cells !== undefined &&
      section.cells !== undefined &&
      last.sheet === section.sheet &&
      last.text.length + 2 + section.text.length <= maxChars
    ) {
      packed[packed.length - 1] = {
        ...last,
        text: `${last.text}\n\n${section.text}`,
        cells: {
          top: Math.min(last.cells.top, section.cells.top),
          left: Math.min(last.cells.left, section.cells.left),
          bottom: Math.max(last.cells.bottom, section.cells.bottom),
          right: Math.max(last.cells.right, section.cells.right),
        },
      };
    } else {
      packed.push(section);
    }
  }
  return packed;
}

/** 1 → A, 27 → AA. */
export function columnName(column: number): string {
  let name = '';
  for (let rest = column; rest > 0; rest = Math.floor((rest - 1) / 26)) name = String.fromCharCode(65 + ((rest - 1) % 26)) + name;
  return name;
}

/** "A2:D9", or "B3" for a single cell. */
export function formatCellRange(range: CellRange): string {
  const start = `${columnName(range.left)}${range.top}`;
  const end = `${columnName(range.right)}${range.bottom}`;
  return start === end ? start : `${start}:${end}`;
}
