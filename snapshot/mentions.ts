/**
 * Packed mentions (format 2.0): an episode's provenance rows as one string (docs/device-memory.md).
 */
import { z } from 'zod';
import type { TimeSlicer } from '../core/time-slice.js';

/**
 * A mention as sent (one row of its episode's mentions string): its target an index into the
 * body's entities followed by its facts (so its kind is the target's), `chunk` omitted when 0,
 * `count` and `confidence` when 1, and its description a span of the chunk's text when it is one.
 */
export interface WireMention extends WireMentionFields {
  chunk?: number;
  target: number;
}

/** A mention as 1.x sent it, and as the checks read every mention: its chunk always, its target by id. */
export interface WireMentionById extends WireMentionFields {
  chunk: number;
  target_id: string;
}

/** What a sent mention carries besides its chunk and target, in either form. */
interface WireMentionFields {
  count?: number;
  confidence?: number;
  description?: string;
  span?: [number, number];
  valid_from?: string | null;
  valid_to?: string | null;
}

// ---- packed mentions (2.0) ------------------------------------------------------------------------
//
// An episode's mentions are one string: rows separated by ";", fields by ",":
//   <target>,<start>,<end>[,<field>]...      the description is chars [start, end) of the chunk's text
//   <target>,=<description>[,<field>]...     any other description ("%", "," and ";" escaped as %25 %2C %3B)
// and optional fields, each a tag and a value: c<chunk> (0 when left out), n<count> (1),
// p<confidence> (1), f<valid_from> and t<valid_to> (ISO 8601, or "-" for null; absent: not recorded).
// JSON parses and hashes one string per episode far faster than an object per row.

const INTEGER = /^\d{1,10}$/;
const DECIMAL = /^\d+(?:\.\d+)?(?:e-?\d+)?$/;
const isoDateTime = z.iso.datetime({ offset: true });
const escapeText = (value: string): string => value.replace(/[%,;]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
const ESCAPES: Record<string, string> = { '%25': '%', '%2C': ',', '%3B': ';' };

export function encodeMentions(rows: readonly WireMention[]): string {
  return rows.map(encodeMentionRow).join(';');
}

/** One row of a mentions string (encodeMentions joins them with ";"). */
export function encodeMentionRow(row: WireMention): string {
  const fields = [String(row.target), row.span ? `${row.span[0]},${row.span[1]}` : `=${escapeText(row.description ?? '')}`];
  if (row.chunk !== undefined && row.chunk !== 0) fields.push(`c${row.chunk}`);
  if (row.count !== undefined && row.count !== 1) fields.push(`n${row.count}`);
  if (row.confidence !== undefined && row.confidence !== 1) fields.push(`p${row.confidence}`);
  if (row.valid_from !== undefined) fields.push(`f${row.valid_from ?? '-'}`);
  if (row.valid_to !== undefined) fields.push(`t${row.valid_to ?? '-'}`);
  return fields.join(',');
}

/**
 * The rows of a mentions string, or the first row that does not decode and why. `strict`: an
 * unknown field is refused (this reader's minor or older); otherwise ignored (a newer minor's).
 */
export function decodeMentions(text: string, strict: boolean): { rows: WireMention[] } | { row: number; issue: string } {
  if (text === '') return { rows: [] };
  const rows: WireMention[] = [];
  const parts = text.split(';');
  for (let r = 0; r < parts.length; r++) {
    const row = decodeSpanRow(parts[r]!) ?? decodeMentionRow(parts[r]!, r, strict);
    if ('issue' in row) return row;
    rows.push(row);
  }
  return { rows };
}

/**
 * `decodeMentions` with the event loop given a turn whenever `slicer`'s slice is spent: one
 * episode of a 2M-character text holds tens of thousands of rows, ~110-140 ms to decode at once
 * (the CPU profile of a prepared open after such a create).
 */
export async function decodeMentionsInSlices(
  text: string,
  strict: boolean,
  slicer: TimeSlicer,
): Promise<{ rows: WireMention[] } | { row: number; issue: string }> {
  if (text === '') return { rows: [] };
  const rows: WireMention[] = [];
  const parts = text.split(';');
  for (let r = 0; r < parts.length; r++) {
    // The clock is read every 64 rows (read per row, it was a sixth of decoding them).
    if ((r & 63) === 0 && slicer.due()) await slicer.pause();
    const row = decodeSpanRow(parts[r]!) ?? decodeMentionRow(parts[r]!, r, strict);
    if ('issue' in row) return row;
    rows.push(row);
  }
  return { rows };
}

/** The digits of [start, end) of `text` as an integer when they are what INTEGER accepts (1 to 10 of 0-9), else -1. */
function integerAt(text: string, start: number, end: number): number {
  if (end - start < 1 || end - start > 10) return -1;
  let value = 0;
  for (let at = start; at < end; at++) {
    const digit = text.charCodeAt(at) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** Date-times already found valid (a pure check, so any set of them can be kept): rows repeat a few dates. */
const validDateTimes = new Set<string>();
const MAX_VALID_DATE_TIMES = 4096;

function isDateTime(value: string): boolean {
  if (validDateTimes.has(value)) return true;
  if (!isoDateTime.safeParse(value).success) return false;
  if (validDateTimes.size >= MAX_VALID_DATE_TIMES) validDateTimes.clear();
  validDateTimes.add(value);
  return true;
}

const TAG_BITS: Record<number, number> = { 99: 1, 110: 2, 112: 4, 102: 8, 116: 16 }; // c n p f t

/**
 * The usual row, a span with known fields each at most once and valid, decoded in one scan of
 * the row (decodeMentionRow split it and tested each field with a regular expression: 1.7 µs a
 * row, 55 ms of a first device search on a 1,000-memory snapshot). Anything else is null and is
 * left to decodeMentionRow, which decides it (and names the problem): so both accept, and give,
 * the same rows.
 */
export function decodeSpanRow(part: string): WireMention | null {
  let comma = part.indexOf(',');
  const target = comma < 0 ? -1 : integerAt(part, 0, comma);
  if (target < 0) return null;
  let at = comma + 1;
  comma = part.indexOf(',', at);
  const start = comma < 0 ? -1 : integerAt(part, at, comma);
  if (start < 0) return null;
  at = comma + 1;
  comma = part.indexOf(',', at);
  const end = integerAt(part, at, comma < 0 ? part.length : comma);
  if (end < 0) return null;
  const row: WireMention = { target, span: [start, end] };
  let seen = 0;
  while (comma >= 0) {
    at = comma + 1;
    comma = part.indexOf(',', at);
    const stop = comma < 0 ? part.length : comma;
    const tag = part.charCodeAt(at);
    const bit = TAG_BITS[tag];
    if (bit === undefined || seen & bit) return null;
    seen |= bit;
    if (bit <= 2) {
      const value = integerAt(part, at + 1, stop);
      if (value < 0) return null;
      if (bit === 1) row.chunk = value;
      else if (value < 1) return null;
      else row.count = value;
      continue;
    }
    const value = part.slice(at + 1, stop);
    if (bit === 4) {
      if (!DECIMAL.test(value) || !(Number(value) <= 1)) return null;
      row.confidence = Number(value);
      continue;
    }
    if (value !== '-' && !isDateTime(value)) return null;
    row[bit === 8 ? 'valid_from' : 'valid_to'] = value === '-' ? null : value;
  }
  return row;
}

/** One row of a mentions string (row `r`), or why it does not decode. */
export function decodeMentionRow(part: string, r: number, strict: boolean): WireMention | { row: number; issue: string } {
  const fail = (issue: string) => ({ row: r, issue });
  const fields = part.split(',');
  const [target, first] = fields;
  if (target === undefined || !INTEGER.test(target)) return fail('must start with the target index');
  const row: WireMention = { target: Number(target) };
  let next: number;
  if (first?.startsWith('=')) {
    const escaped = first.slice(1);
    const description = escaped.replace(/%(?:25|2C|3B)/g, (escape) => ESCAPES[escape]!);
    if (escaped.replace(/%(?:25|2C|3B)/g, '').includes('%')) return fail('a description escapes only %, "," and ";" (%25 %2C %3B)');
    if (description.length > 10_000) return fail('a description has at most 10000 characters');
    row.description = description;
    next = 2;
  } else {
    const end = fields[2];
    if (first === undefined || end === undefined || !INTEGER.test(first) || !INTEGER.test(end)) {
      return fail('must have a span (start,end) or a description (=text) after the target');
    }
    row.span = [Number(first), Number(end)];
    next = 3;
  }
  const seen = new Set<string>();
  for (const field of fields.slice(next)) {
    const tag = field.charAt(0);
    const value = field.slice(1);
    if (seen.has(tag)) return fail(`field ${tag} appears twice`);
    seen.add(tag);
    switch (tag) {
      case 'c':
        if (!INTEGER.test(value)) return fail('c (chunk) must be an integer');
        row.chunk = Number(value);
        break;
      case 'n':
        if (!INTEGER.test(value) || Number(value) < 1) return fail('n (count) must be an integer of at least 1');
        row.count = Number(value);
        break;
      case 'p':
        if (!DECIMAL.test(value) || !(Number(value) <= 1)) return fail('p (confidence) must be a number from 0 to 1');
        row.confidence = Number(value);
        break;
      case 'f':
      case 't': {
        if (value !== '-' && !isoDateTime.safeParse(value).success)
          return fail(`${tag} must be an ISO 8601 date-time with a time zone, or -`);
        row[tag === 'f' ? 'valid_from' : 'valid_to'] = value === '-' ? null : value;
        break;
      }
      default:
        if (strict) return fail(`unrecognized field ${JSON.stringify(field.slice(0, 20))}`);
    }
  }
  return row;
}

/** At most this many rows fit in a mentions string of this length (the shortest row is "0,=", then ";"). */
export const mentionRowBound = (length: number): number => Math.ceil((length + 1) / 4);

/** Mention rows in an episode's mentions as sent, without decoding them: 1.x arrays, 2.x strings. */
export function mentionRowCount(mentions: unknown): number {
  if (Array.isArray(mentions)) return mentions.length;
  if (typeof mentions !== 'string' || mentions === '') return 0;
  // Counted, not split: this runs on every call, before the signature is checked.
  let rows = 1;
  for (let at = mentions.indexOf(';'); at !== -1; at = mentions.indexOf(';', at + 1)) rows += 1;
  return rows;
}
