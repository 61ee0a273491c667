/**
 * What every file extractor returns: text sections in reading order, each with where it came
 * from in the file, so chunks keep their provenance (page, time range, section heading).
 */
export interface ExtractedSection {
  text: string;
  /** 1-based page number (PDF, multi-page TIFF). */
  page?: number;
  /** Time range in seconds (audio). */
  start_s?: number;
  end_s?: number;
  /** Nearest section heading (HTML, Markdown, DOCX, ODT, EPUB), when known; the sheet or slide title for spreadsheets and decks. */
  heading?: string;
  /** Spreadsheets (XLSX, ODS): the sheet's name and the cells the text came from (1-based, inclusive). */
  sheet?: string;
  cells?: CellRange;
  /** Slide decks (PPTX, ODP): 1-based slide number in presentation order. */
  slide?: number;
  /** How the text was obtained: 'text-layer', 'ocr', 'asr', 'parse'. */
  method?: string;
}

export interface Extraction {
  /** The media type the bytes really are (sniffed), e.g. application/pdf. */
  mediaType: string;
  sections: ExtractedSection[];
  /** Units of work, for progress: pages, audio windows, or 1. */
  units: number;
}

/** current/total progress in the file's own units (pages, 30 s windows). */
export type ProgressReporter = (current: number, total: number) => void | Promise<void>;

/** A rectangle of spreadsheet cells, 1-based and inclusive. */
export interface CellRange {
  top: number;
  left: number;
  bottom: number;
  right: number;
}

/**
 * Stable reasons for refusing a file, for the ones a client may want to tell apart (they end the
 * memory's status_message as `[code]`): a decompression bomb, encryption, macros, damage.
 */
export type RefusalCode = 'file_zip_bomb' | 'file_encrypted' | 'file_macros' | 'file_damaged';

/** Content that can never be extracted (corrupt, empty, no speech, too large when unpacked): not retried. */
export class UnreadableContentError extends Error {
  override name = 'UnreadableContentError';
  readonly code: RefusalCode | undefined;

  constructor(message: string, options?: ErrorOptions & { code?: RefusalCode }) {
    super(message, options);
    this.code = options?.code;
  }
}
