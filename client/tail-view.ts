/**
 * Terminal rendering for `npm run events` (bin/tail-events.ts).
 *
 * ingestion_progress: one line per memory (short engram id, a text progress bar from
 * current/total, user_stage, message). On a TTY the lines of memories still in progress form a
 * live block at the bottom, redrawn in place with ANSI cursor movement; a memory that reaches
 * `complete` or `failed` leaves the block as a permanent line. Without a TTY every update is
 * appended as a plain line. Other event types and notes are one permanent line each.
 *
 * Text from the server (messages, queries, ids) is stripped of control characters, so an event
 * cannot move the cursor or recolour the terminal.
 */
import { type EventFrame, isIngestionProgress, isMemoryUnconfident, type IngestionProgressPayload } from './frames.js';

export interface TailOutput {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

const BAR_WIDTH = 20;
const ESC = '\u001b[';

/** Replaces C0/C1 control characters (ESC included) with a space. */
export function sanitize(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/** First 8 characters of a uuid-like id (its first group), else the id cut to 12 characters. */
export function shortId(id: string): string {
  const clean = sanitize(id);
  if (/^[0-9a-f]{8}-/i.test(clean)) return clean.slice(0, 8);
  return clean.length > 12 ? `${clean.slice(0, 11)}…` : clean;
}

/** Fraction done in [0, 1]: current/total, 1 when complete, 0 when total is not positive. */
export function progressFraction(payload: Pick<IngestionProgressPayload, 'current' | 'total' | 'user_stage'>): number {
  if (payload.user_stage === 'complete') return 1;
  if (!(payload.total > 0) || !Number.isFinite(payload.current)) return 0;
  return Math.min(1, Math.max(0, payload.current / payload.total));
}

/** `[#####---------------]` for a fraction in [0, 1]. */
export function progressBar(fraction: number, width = BAR_WIDTH): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

function clock(ts: string): string {
  const date = new Date(ts);
  if (Number.isNaN(date.getTime())) return '--:--:--';
  return date.toTimeString().slice(0, 8);
}

function fit(line: string, columns: number | undefined): string {
  if (!columns || columns < 10) return line;
  const chars = [...line];
  return chars.length < columns ? line : `${chars.slice(0, columns - 2).join('')}…`;
}

export function formatProgressLine(frame: EventFrame<IngestionProgressPayload>): string {
  const p = frame.payload;
  const fraction = progressFraction(p);
  const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
  const counts = p.total > 0 ? `${p.current}/${p.total}` : '';
  const stage = sanitize(p.user_stage).padEnd(11);
  const message = p.message ? ` ${sanitize(p.message)}` : '';
  return `${clock(frame.ts)} ${shortId(p.engram_id)} ${progressBar(fraction)} ${percent} ${counts.padStart(7)} ${stage}${message}`.trimEnd();
}

const MAX_PAYLOAD_CHARS = 160;

/** One line for any event that is not ingestion_progress. */
export function formatEventLine(frame: EventFrame): string {
  const head = `${clock(frame.ts)} ${sanitize(frame.type)} seq=${frame.seq} collection=${shortId(frame.collection_id)}`;
  if (isMemoryUnconfident(frame)) {
    const p = frame.payload;
    const counts = (
      [
        ['entities', 'entity_count'],
        ['facts', 'fact_count'],
        ['episodes', 'episode_count'],
        ['sources', 'source_count'],
      ] as const
    )
      .map(([label, key]) => `${label}=${typeof p[key] === 'number' ? p[key] : '?'}`)
      .join(' ');
    return `${head} reason=${sanitize(p.reason)} ${counts} query=${JSON.stringify(sanitize(p.query))}`;
  }
  let payload = sanitize(JSON.stringify(frame.payload));
  if (payload.length > MAX_PAYLOAD_CHARS) payload = `${payload.slice(0, MAX_PAYLOAD_CHARS - 1)}…`;
  return `${head} ${payload}`;
}

const FINAL_STAGES = new Set(['complete', 'failed']);

export class TailView {
  readonly #out: TailOutput;
  readonly #tty: boolean;
  /** Lines of memories still in progress (TTY mode), in first-seen order. */
  readonly #live = new Map<string, string>();
  /** How many block lines are on screen below the permanent output. */
  #drawn = 0;

  constructor(out: TailOutput, options: { tty?: boolean } = {}) {
    this.#out = out;
    this.#tty = options.tty ?? Boolean(out.isTTY);
  }

  get liveCount(): number {
    return this.#live.size;
  }

  event(frame: EventFrame): void {
    if (!isIngestionProgress(frame)) {
      this.#emit([formatEventLine(frame)]);
      return;
    }
    const line = formatProgressLine(frame);
    if (!this.#tty) {
      this.#emit([line]);
      return;
    }
    const id = frame.payload.engram_id;
    if (FINAL_STAGES.has(frame.payload.user_stage)) {
      this.#live.delete(id);
      this.#emit([line]);
    } else {
      this.#live.set(id, line);
      this.#emit([]);
    }
  }

  /** A permanent line of our own (status, warnings). */
  note(text: string): void {
    this.#emit([text]);
  }

  /** Leaves the live block on screen as plain lines; nothing is redrawn afterwards. */
  close(): void {
    this.#drawn = 0;
    this.#live.clear();
  }

  #emit(permanent: string[]): void {
    if (!this.#tty) {
      if (permanent.length) this.#out.write(`${permanent.join('\n')}\n`);
      return;
    }
    const columns = this.#out.columns;
    const maxBlock = Math.max(3, (this.#out.rows ?? 24) - 2);
    let block = [...this.#live.values()];
    if (block.length > maxBlock) {
      const hidden = block.length - (maxBlock - 1);
      block = [...block.slice(-(maxBlock - 1)), `… ${hidden} more in progress`];
    }
    // Back to the top of the previous block, erase it, then the new permanent lines and the block.
    let text = this.#drawn > 0 ? `${ESC}${this.#drawn}A\r${ESC}J` : '';
    for (const line of [...permanent, ...block]) text += `${fit(line, columns)}\n`;
    this.#drawn = block.length;
    if (text) this.#out.write(text);
  }
}
