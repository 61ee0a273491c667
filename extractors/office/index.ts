/**
 * Office packages in, sections out: Word (through mammoth, in text-formats.ts), Excel, PowerPoint,
 * OpenDocument text/spreadsheet/presentation and EPUB. Pure CPU work on bytes: it runs in the
 * worker's read activity, never on the API's event loop.
 */
import type { PackageKind } from '../sniff.js';
import { extractTextFile } from '../text-formats.js';
import { UnreadableContentError, type ExtractedSection, type Extraction } from '../types.js';
import { extractEpub, extractOdt } from './documents.js';
import { extractOdp, extractPptx } from './slides.js';
import { extractOds, extractXlsx } from './spreadsheet.js';

const READERS: Record<Exclude<PackageKind, 'docx'>, (bytes: Uint8Array) => ExtractedSection[]> = {
  xlsx: extractXlsx,
  ods: extractOds,
  pptx: extractPptx,
  odp: extractOdp,
  odt: extractOdt,
  epub: extractEpub,
};

/** Units for progress: rows for spreadsheets, slides for decks, sections otherwise. */
export async function extractPackage(bytes: Uint8Array, kind: PackageKind, mediaType: string): Promise<Extraction> {
  if (kind === 'docx') return extractTextFile(bytes, 'docx', mediaType);
  const sections = READERS[kind](bytes).filter((section) => section.text.trim() !== '');
  if (sections.length === 0) throw new UnreadableContentError('the file has no text');
  return { mediaType, sections, units: sections.length };
}

/** A password-protected Word, Excel or PowerPoint file: its content is ciphertext. */
export function refuseEncryptedOffice(): never {
  throw new UnreadableContentError('the Office document is password-protected (encrypted); remove the password and send it again', {
    code: 'file_encrypted',
  });
}
