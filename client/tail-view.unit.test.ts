import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type EventFrame, type IngestionProgressPayload } from './frames.js';
import { formatEventLine, formatProgressLine, progressBar, progressFraction, sanitize, shortId, TailView } from './tail-view.js';

const ENGRAM_A = '3f9a1c2b-0000-4000-8000-000000000001';
const ENGRAM_B = '7d0e5f11-0000-4000-8000-000000000002';

function progress(engramId: string, userStage: string, current: number, total: number, message: string | null = null, seq = 1) {
  return {
    action: 'event',
    seq,
    event_id: `e${seq}`,
    type: 'ingestion_progress',
    collection_id: '00000000-0000-4000-8000-000000000001',
    payload: { engram_id: engramId, stage: 's', user_stage: userStage, current, total, message },
    ts: '2025-01-01T12:00:00.000Z',
  } as EventFrame<IngestionProgressPayload>;
}

const ESC = '\u001b';

/** Splits a TTY write into the cursor-up count (0 when none) and the lines written after the clear. */
function parseRedraw(chunk: string | undefined): { up: number; lines: string[] } {
  let text = chunk ?? '';
  let up = 0;
  if (text.startsWith(`${ESC}[`)) {
    const end = text.indexOf(`A\r${ESC}[J`);
    assert.ok(end > 0, 'cursor up, carriage return, clear to end of screen');
    up = Number(text.slice(2, end));
    text = text.slice(end + 5);
  }
  assert.ok(text.endsWith('\n'));
  return { up, lines: text.slice(0, -1).split('\n') };
}

class Capture {
  chunks: string[] = [];
  isTTY: boolean;
  columns = 120;
  rows = 24;
  constructor(tty: boolean) {
    this.isTTY = tty;
  }
  write(text: string) {
    this.chunks.push(text);
  }
  get text() {
    return this.chunks.join('');
  }
}

it('progress bar, fraction and short ids', () => {
  assert.equal(progressBar(0), `[${'-'.repeat(20)}]`);
  assert.equal(progressBar(0.5, 10), '[#####-----]');
  assert.equal(progressBar(2, 4), '[####]');
  assert.equal(progressFraction({ current: 1, total: 4, user_stage: 'reading' }), 0.25);
  assert.equal(progressFraction({ current: 0, total: 0, user_stage: 'complete' }), 1);
  assert.equal(progressFraction({ current: 3, total: 0, user_stage: 'indexing' }), 0);
  assert.equal(shortId(ENGRAM_A), '3f9a1c2b');
  assert.equal(shortId('mem_0123456789abcdef'), 'mem_0123456…');
  assert.equal(shortId('short'), 'short');
});

it('strips control characters from server text', () => {
  assert.equal(sanitize('a\u001b[2Jb\nc\u009bd'), 'a [2Jb c d');
  const line = formatProgressLine(progress(ENGRAM_A, 'reading', 1, 2, 'evil\u001b[1A'));
  assert.ok(!line.includes('\u001b'));
});

it('formats progress and other events as one line', () => {
  const line = formatProgressLine(progress(ENGRAM_A, 'indexing', 2, 4, 'Building the index'));
  assert.match(line, /^\d\d:\d\d:\d\d 3f9a1c2b \[#{10}-{10}\]\s{2}50%\s{5}2\/4 indexing\s{4}Building the index$/);
  const other = formatEventLine({
    ...progress(ENGRAM_A, 'x', 0, 0),
    type: 'memory_unconfident',
    payload: { query: 'who?', reason: 'no_results', entity_count: 0, fact_count: 1, episode_count: 2, source_count: 3 },
  });
  assert.match(
    other,
    /memory_unconfident seq=1 collection=00000000 reason=no_results entities=0 facts=1 episodes=2 sources=3 query="who\?"$/,
  );
  const unknown = formatEventLine({ ...progress(ENGRAM_A, 'x', 0, 0), type: 'future_type', payload: { a: 1 } });
  assert.match(unknown, /future_type seq=1 collection=00000000 \{"a":1\}$/);
});

it('without a TTY appends one plain line per update', () => {
  const out = new Capture(false);
  const view = new TailView(out);
  view.event(progress(ENGRAM_A, 'reading', 1, 3));
  view.event(progress(ENGRAM_A, 'indexing', 2, 3));
  view.event(progress(ENGRAM_A, 'complete', 3, 3));
  const lines = out.text.split('\n').filter(Boolean);
  assert.equal(lines.length, 3);
  assert.ok(!out.text.includes('\u001b'));
});

it('on a TTY redraws one live line per memory in place and retires finished ones', () => {
  const out = new Capture(true);
  const view = new TailView(out);
  view.event(progress(ENGRAM_A, 'reading', 1, 3));
  assert.deepEqual(parseRedraw(out.chunks.at(-1)).up, 0, 'nothing to move over yet');
  view.event(progress(ENGRAM_B, 'reading', 1, 5));
  // Moves up over the one drawn line, clears to the end of the screen, redraws both.
  let redraw = parseRedraw(out.chunks.at(-1));
  assert.equal(redraw.up, 1);
  assert.deepEqual(
    redraw.lines.map((line) => line.split(' ')[1]),
    ['3f9a1c2b', '7d0e5f11'],
  );
  view.event(progress(ENGRAM_A, 'indexing', 2, 3));
  redraw = parseRedraw(out.chunks.at(-1));
  assert.equal(redraw.up, 2);
  assert.match(redraw.lines[0] ?? '', /3f9a1c2b .* indexing/);
  assert.equal(redraw.lines.length, 2);
  assert.equal(view.liveCount, 2);
  view.event(progress(ENGRAM_A, 'complete', 3, 3));
  // The finished memory is printed above the block and leaves it.
  redraw = parseRedraw(out.chunks.at(-1));
  assert.equal(redraw.up, 2);
  assert.match(redraw.lines[0] ?? '', /3f9a1c2b \[#{20}\] 100% .* complete/);
  assert.match(redraw.lines[1] ?? '', /7d0e5f11/);
  assert.equal(redraw.lines.length, 2);
  assert.equal(view.liveCount, 1);
  view.note('hello');
  redraw = parseRedraw(out.chunks.at(-1));
  assert.equal(redraw.up, 1);
  assert.equal(redraw.lines[0], 'hello');
  assert.match(redraw.lines[1] ?? '', /7d0e5f11/);
  assert.ok(!out.text.replaceAll(`${ESC}[`, '').includes(ESC), 'no escapes besides cursor movement');
});

it('on a TTY cuts lines to the terminal width so redraws never wrap', () => {
  const out = new Capture(true);
  out.columns = 40;
  const view = new TailView(out);
  view.event(progress(ENGRAM_A, 'reading', 1, 3, 'x'.repeat(200)));
  const line = out.text.split('\n')[0] ?? '';
  assert.ok([...line].length < 40, line);
});
