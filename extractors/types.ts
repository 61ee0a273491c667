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
  /** Nearest section heading (HTML, Markdown, DOCX), when known. */
  heading?: string;
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

/** Content that can never be extracted (corrupt, empty, no speech, too large when unpacked): not retried. */
export class UnreadableContentError extends Error {
  override name = 'UnreadableContentError';
}
