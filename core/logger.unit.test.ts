import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatLogLine, wantsPretty } from './logger.js';

describe('wantsPretty', () => {
  const cases: [Parameters<typeof wantsPretty>[0], boolean, boolean][] = [
    ['auto', true, true],
    ['auto', false, false],
    ['json', true, false],
    ['json', false, false],
    ['pretty', false, true],
    ['pretty', true, true],
  ];
  for (const [format, tty, expected] of cases) {
    it(`LOG_FORMAT=${format}, stdout ${tty ? 'a TTY' : 'piped'} → ${expected ? 'readable lines' : 'JSON'}`, () => {
      assert.equal(wantsPretty(format, tty), expected);
    });
  }
});

describe('formatLogLine', () => {
  it('puts time, level, component and message first, then the other fields', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-11-26T08:30:01.234Z',
      component: 'api',
      pid: 12,
      msg: 'request',
      method: 'GET',
      path: '/v1/memories',
      status: 200,
      note: 'two words',
    });
    assert.equal(formatLogLine(line), '08:30:01.234 INFO  api request  method=GET path=/v1/memories status=200 note="two words"');
  });

  it('shows an error message inline and its stack indented below', () => {
    const line = JSON.stringify({
      level: 50,
      time: '2026-11-26T08:30:01.234Z',
      component: 'worker',
      msg: 'failed',
      err: { message: 'boom', stack: 'Error: boom\n    at x' },
    });
    assert.equal(formatLogLine(line), '08:30:01.234 ERROR worker failed  err="boom"\n    Error: boom\n        at x');
  });

  it('returns a line that is not JSON unchanged', () => {
    assert.equal(formatLogLine('plain text\n'), 'plain text');
  });
});
