import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planChunks, splitText } from './chunking.js';

describe('splitText', () => {
  it('keeps short text as one chunk with its offsets', () => {
    assert.deepEqual(splitText('  Hello world.  ', 100), [{ text: 'Hello world.', start: 2, end: 14 }]);
  });

  it('never exceeds the limit and loses no words', () => {
    const text = Array.from({ length: 200 }, (_, i) => `Sentence number ${i} is here.`).join(' ');
    const pieces = splitText(text, 120);
    assert.ok(pieces.every((piece) => piece.text.length <= 120));
    assert.equal(pieces.map((piece) => piece.text).join(' '), text);
    for (const piece of pieces) assert.equal(text.slice(piece.start, piece.end), piece.text);
  });

  it('prefers paragraph boundaries', () => {
    const pieces = splitText('First paragraph here.\n\nSecond paragraph here.', 30);
    assert.deepEqual(
      pieces.map((piece) => piece.text),
      ['First paragraph here.', 'Second paragraph here.'],
    );
  });

  it('cuts a single overlong word', () => {
    const pieces = splitText('x'.repeat(250), 100);
    assert.deepEqual(
      pieces.map((piece) => piece.text.length),
      [100, 100, 50],
    );
  });

  it('returns nothing for whitespace', () => {
    assert.deepEqual(splitText(' \n\t ', 100), []);
  });
});

describe('planChunks', () => {
  it('makes one chunk per message with its role', () => {
    const chunks = planChunks(
      {
        messages: [
          { role: 'user', content: 'I moved to Lisbon.' },
          { role: 'assistant', content: 'Noted.' },
        ],
      },
      500,
    );
    assert.deepEqual(chunks, [
      { text: 'I moved to Lisbon.', source: { type: 'message', role: 'user', message_index: 0 } },
      { text: 'Noted.', source: { type: 'message', role: 'assistant', message_index: 1 } },
    ]);
  });

  it('keeps pre-chunked text as given', () => {
    const chunks = planChunks({ chunks: ['one', 'two'] }, 500);
    assert.deepEqual(
      chunks.map((chunk) => chunk.text),
      ['one', 'two'],
    );
  });
});
