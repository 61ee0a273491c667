/**
 * What a memory holds and where each chunk came from: domain shapes shared by the API, the
 * extractors and the store. Persistence types (with `_id`) stay in store/.
 */

export type MemoryKind = 'document' | 'conversation';
/** queued → reading → structuring → indexing → complete, or → failed from any of them. */
export type MemoryStatus = 'queued' | 'reading' | 'structuring' | 'indexing' | 'complete' | 'failed';

/** An uploaded file, kept in GridFS; its text is extracted by the read stage. */
export interface MemoryFile {
  file_id: string;
  filename: string;
  /** As declared by the client; the read stage sniffs the real type from the bytes. */
  media_type: string;
  size: number;
  sha256: string;
}

/** A presigned upload: issued for a collection, then given its bytes, then taken by one memory. */
export interface Upload {
  id: string;
  tenant_id: string;
  collection_id: string;
  filename: string;
  media_type: string;
  size: number;
  expires_at: Date;
  created_at: Date;
  /** Set when the bytes are stored. */
  file_id: string | null;
  sha256: string | null;
  /** Set when a memory takes the file. */
  memory_id: string | null;
}

export interface MemoryContent {
  raw_text?: string;
  chunks?: string[];
  messages?: MessageInput[];
  files?: MemoryFile[];
}

export interface MessageInput {
  role: string;
  content: string;
  /** When the message was said, as the client gave it (optional; core/memory-time.ts). */
  timestamp?: Date;
}

/** A chunk as a memory's reader sees it: its text and where it came from. */
export interface ChunkText {
  text: string;
  source: ChunkSource;
  /** The chunk's time (core/memory-time.ts); absent on chunks stored before times existed. */
  occurred_at?: Date | null;
}

export interface ChunkSource {
  /** Where in the memory's content the chunk came from. */
  type: 'text' | 'chunk' | 'message' | 'file';
  /** For messages: the speaker role and the message's index in the conversation. */
  role?: string;
  message_index?: number;
  /** Character offsets into raw_text, for text chunks. */
  start?: number;
  end?: number;
  /** For files: which content part, its name, and where in it (page, time range, heading, slide, sheet and cells). */
  file_index?: number;
  filename?: string;
  media_type?: string;
  page?: number;
  start_s?: number;
  end_s?: number;
  heading?: string;
  /** Slide decks: the 1-based slide number. */
  slide?: number;
  /** Spreadsheets: the sheet's name and the cells the chunk covers, e.g. "A2:D9". */
  sheet?: string;
  cell_range?: string;
  /** How the text was obtained: text-layer, ocr, asr, parse. */
  method?: string;
}
