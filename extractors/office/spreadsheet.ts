/**
 * Spreadsheets: Excel workbooks (XLSX) and OpenDocument spreadsheets (ODS). Each non-empty row
 * becomes one section that knows its sheet and cell range; when a sheet's first row reads as a
 * header, later rows are written "Header: value; …" as CSV rows are. The chunker packs neighbouring
 * rows of one sheet together and widens the range to match.
 */
import { looksLikeHeader } from '../text-formats.js';
import { UnreadableContentError, type ExtractedSection } from '../types.js';
import { openArchive, resolvePartPath } from './archive.js';
import { OdfParagraphReader, readRelationships, relationshipsPartOf, walkXml } from './xml.js';

export const XLSX_MEDIA_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const ODS_MEDIA_TYPE = 'application/vnd.oasis.opendocument.spreadsheet';

/** Excel's own limits: a reference beyond them is a hostile or broken file, not a big sheet. */
const MAX_COLUMN = 16_384;
const MAX_ROW = 1_048_576;
/** An ODS repeat count on a non-empty row or cell is expanded at most this far. */
const MAX_EXPANDED_REPEAT = 1_000;

interface SheetRow {
  row: number;
  cells: { column: number; text: string }[];
}

/** "AB12" → { column: 28, row: 12 }; undefined when it is no cell reference. */
export function parseCellReference(reference: string): { column: number; row: number } | undefined {
  const match = /^\$?([A-Z]{1,3})\$?(\d{1,7})$/i.exec(reference);
  if (!match) return undefined;
  let column = 0;
  for (const char of (match[1] as string).toUpperCase()) column = column * 26 + (char.charCodeAt(0) - 64);
  return { column, row: Number(match[2]) };
}

/** One section per non-empty row of a sheet, the first row read as a header when it looks like one. */
export function sheetSections(sheet: string, rows: SheetRow[]): ExtractedSection[] {
  const filled = rows.filter((row) => row.cells.some((cell) => cell.text.trim() !== ''));
  const first = filled[0];
  if (first === undefined) return [];
  let header: Map<number, string> | undefined;
  if (filled.length > 1 && first.cells.length >= 2 && looksLikeHeader(first.cells.map((cell) => cell.text))) {
    header = new Map(first.cells.map((cell) => [cell.column, cell.text.trim()]));
  }
  const sections: ExtractedSection[] = [];
  for (const row of filled) {
    const parts: string[] = [];
    for (const cell of row.cells) {
      const value = cell.text.trim().replace(/\s*\n\s*/g, ' ');
      if (value === '') continue;
      const name = header && row !== first ? header.get(cell.column) : undefined;
      parts.push(name ? `${name}: ${value}` : value);
    }
    if (parts.length === 0) continue;
    const columns = row.cells.map((cell) => cell.column);
    sections.push({
      text: parts.join('; '),
      heading: sheet,
      sheet,
      cells: { top: row.row, bottom: row.row, left: Math.min(...columns), right: Math.max(...columns) },
      method: 'parse',
    });
  }
  return sections;
}

// ---------------------------------------------------------------------------------------------
// XLSX

/** Built-in number formats that show dates or times (ECMA-376 §18.8.30). */
const BUILT_IN_DATE_FORMATS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58,
]);

/** Which cell styles (cellXfs indexes) format their number as a date or time. */
function dateStyles(stylesXml: string | undefined): Set<number> {
  const dates = new Set<number>();
  if (stylesXml === undefined) return dates;
  const customDates = new Set<number>();
  let inCellXfs = false;
  let index = 0;
  walkXml(stylesXml, {
    open(name, attributes) {
      if (name === 'numFmt') {
        // A custom format is a date when it has date/time letters outside quoted text and [colour] tags.
        const code = (attributes.formatCode ?? '').replace(/"[^"]*"|\[[^\]]*\]|\\./g, '');
        if (/[dmyhs]/i.test(code)) customDates.add(Number(attributes.numFmtId));
      } else if (name === 'cellXfs') {
        inCellXfs = true;
      } else if (name === 'xf' && inCellXfs) {
        const format = Number(attributes.numFmtId ?? '0');
        if (BUILT_IN_DATE_FORMATS.has(format) || customDates.has(format)) dates.add(index);
        index++;
      }
    },
    close(name) {
      if (name === 'cellXfs') inCellXfs = false;
    },
  });
  return dates;
}

/** An Excel serial date as ISO 8601 (date, time, or both). */
export function excelSerialToIso(serial: number, date1904: boolean): string {
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
  const milliseconds = Math.round(serial * 86_400_000);
  const iso = new Date(epoch + milliseconds).toISOString();
  const hasTime = Math.abs(serial - Math.trunc(serial)) > 1e-9;
  if (!hasTime) return iso.slice(0, 10);
  const time = iso.slice(11, 19).replace(/:00$/, '');
  return Math.trunc(serial) === 0 ? time : `${iso.slice(0, 10)} ${time}`;
}

/** A number as Excel shows it in General format: no binary floating-point noise. */
function generalNumber(raw: string): string {
  const value = Number(raw);
  return Number.isFinite(value) ? String(Number(value.toPrecision(15))) : raw;
}

function sharedStrings(xml: string | undefined): string[] {
  const strings: string[] = [];
  if (xml === undefined) return strings;
  let current: string[] | undefined;
  let inText = false;
  let phonetic = 0;
  walkXml(xml, {
    open(name) {
      if (name === 'si') current = [];
      else if (name === 'rPh') phonetic++;
      else if (name === 't') inText = true;
    },
    text(text) {
      if (inText && phonetic === 0) current?.push(text);
    },
    close(name) {
      if (name === 'si') {
        strings.push((current ?? []).join(''));
        current = undefined;
      } else if (name === 'rPh') phonetic--;
      else if (name === 't') inText = false;
    },
  });
  return strings;
}

function xlsxSheetRows(xml: string, strings: string[], dates: Set<number>, date1904: boolean): SheetRow[] {
  const rows: SheetRow[] = [];
  let row: SheetRow | undefined;
  let rowNumber = 0;
  let column = 0;
  let cell: { column: number; type: string; style: number; value: string[]; inline: string[] } | undefined;
  let inValue = false;
  let inInlineText = false;
  walkXml(xml, {
    open(name, attributes) {
      if (name === 'row') {
        rowNumber = Number(attributes.r ?? rowNumber + 1) || rowNumber + 1;
        if (rowNumber > MAX_ROW)
          throw new UnreadableContentError(`the spreadsheet refers to row ${rowNumber}, past Excel's last row`, { code: 'file_damaged' });
        row = { row: rowNumber, cells: [] };
        column = 0;
      } else if (name === 'c') {
        const reference = attributes.r ? parseCellReference(attributes.r) : undefined;
        column = reference?.column ?? column + 1;
        if (column > MAX_COLUMN)
          throw new UnreadableContentError(`the spreadsheet refers to column ${column}, past Excel's last column`, {
            code: 'file_damaged',
          });
        cell = { column, type: attributes.t ?? 'n', style: Number(attributes.s ?? '0'), value: [], inline: [] };
      } else if (name === 'v') inValue = true;
      else if (name === 't' && cell) inInlineText = true;
    },
    text(text) {
      if (!cell) return;
      if (inValue) cell.value.push(text);
      else if (inInlineText) cell.inline.push(text);
    },
    close(name) {
      if (name === 'v') inValue = false;
      else if (name === 't') inInlineText = false;
      else if (name === 'c' && cell && row) {
        const raw = cell.value.join('');
        let text: string;
        switch (cell.type) {
          case 's':
            text = strings[Number(raw)] ?? '';
            break;
          case 'inlineStr':
            text = cell.inline.join('');
            break;
          case 'b':
            text = raw === '1' ? 'TRUE' : raw === '0' ? 'FALSE' : raw;
            break;
          case 'n':
            text =
              raw === ''
                ? ''
                : dates.has(cell.style) && Number.isFinite(Number(raw))
                  ? excelSerialToIso(Number(raw), date1904)
                  : generalNumber(raw);
            break;
          default: // str (formula result), e (error), d (ISO date)
            text = raw;
        }
        if (text.trim() !== '') row.cells.push({ column: cell.column, text });
        cell = undefined;
      } else if (name === 'row' && row) {
        if (row.cells.length > 0) rows.push(row);
        row = undefined;
      }
    },
  });
  return rows;
}

export function extractXlsx(bytes: Uint8Array): ExtractedSection[] {
  const archive = openArchive(bytes, 'the spreadsheet', 'xl/workbook.xml', 'an Excel workbook');
  const workbook = archive.text('xl/workbook.xml') ?? '';
  const relationships = readRelationships(archive.text(relationshipsPartOf('xl/workbook.xml')));
  const sheets: { name: string; part: string }[] = [];
  let date1904 = false;
  walkXml(workbook, {
    open(name, attributes) {
      if (name === 'workbookPr') date1904 = attributes.date1904 === '1' || attributes.date1904 === 'true';
      if (name !== 'sheet') return;
      const target = relationships.get(attributes['r:id'] ?? '')?.target;
      if (target) sheets.push({ name: attributes.name ?? `Sheet${sheets.length + 1}`, part: resolvePartPath('xl/workbook.xml', target) });
    },
  });
  const strings = sharedStrings(archive.text('xl/sharedStrings.xml'));
  const dates = dateStyles(archive.text('xl/styles.xml'));
  const sections: ExtractedSection[] = [];
  for (const sheet of sheets) {
    const xml = archive.text(sheet.part);
    // Chart sheets and dialog sheets have no cells; a missing part is skipped like an empty sheet.
    if (xml === undefined) continue;
    sections.push(...sheetSections(sheet.name, xlsxSheetRows(xml, strings, dates, date1904)));
  }
  return sections;
}

// ---------------------------------------------------------------------------------------------
// ODS

export function extractOds(bytes: Uint8Array): ExtractedSection[] {
  const archive = openArchive(bytes, 'the spreadsheet', 'content.xml', 'an OpenDocument spreadsheet');
  const sections: ExtractedSection[] = [];
  let sheet: { name: string; rows: SheetRow[] } | undefined;
  let rowNumber = 0;
  let rowRepeat = 1;
  let row: SheetRow | undefined;
  let column = 0;
  let cell: { repeat: number; paragraphs: string[] } | undefined;
  // Tables nested inside a cell (rare) are read as that cell's text.
  let nestedTables = 0;
  const paragraphs = new OdfParagraphReader((text) => cell?.paragraphs.push(text));

  walkXml(archive.text('content.xml') ?? '', {
    open(name, attributes) {
      if (name === 'table:table') {
        if (sheet) {
          nestedTables++;
          return;
        }
        sheet = { name: attributes['table:name'] ?? `Sheet${sections.length + 1}`, rows: [] };
        rowNumber = 0;
      } else if (nestedTables > 0) {
        paragraphs.open(name, attributes);
      } else if (name === 'table:table-row' && sheet) {
        rowRepeat = Math.max(1, Number(attributes['table:number-rows-repeated'] ?? '1') || 1);
        row = { row: rowNumber + 1, cells: [] };
        column = 0;
      } else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && row) {
        cell = { repeat: Math.max(1, Number(attributes['table:number-columns-repeated'] ?? '1') || 1), paragraphs: [] };
      } else {
        paragraphs.open(name, attributes);
      }
    },
    text(text) {
      paragraphs.text(text);
    },
    close(name) {
      if (name === 'table:table') {
        if (nestedTables > 0) {
          nestedTables--;
          return;
        }
        if (sheet) sections.push(...sheetSections(sheet.name, sheet.rows));
        sheet = undefined;
      } else if (nestedTables > 0) {
        paragraphs.close(name);
      } else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && row && cell) {
        const text = cell.paragraphs.join('\n');
        // Trailing empty cells are written as one cell repeated to the sheet's last column.
        const count = text === '' ? cell.repeat : Math.min(cell.repeat, MAX_EXPANDED_REPEAT);
        if (text !== '') for (let i = 1; i <= count && column + i <= MAX_COLUMN; i++) row.cells.push({ column: column + i, text });
        column += cell.repeat;
        cell = undefined;
      } else if (name === 'table:table-row' && sheet && row) {
        // Likewise for the empty rows down to the last one: counted, never expanded.
        const copies = row.cells.length === 0 ? 0 : Math.min(rowRepeat, MAX_EXPANDED_REPEAT);
        for (let i = 0; i < copies; i++) sheet.rows.push({ row: rowNumber + 1 + i, cells: row.cells });
        rowNumber += rowRepeat;
        row = undefined;
      } else {
        paragraphs.close(name);
      }
    },
  });
  return sections;
}
