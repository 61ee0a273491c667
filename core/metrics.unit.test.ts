import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopback, metricsAccessAllowed, tokenMatches } from './metrics.js';

const peers: [string | undefined, boolean][] = [
  ['127.0.0.1', true],
  ['127.8.9.10', true],
  ['::1', true],
  ['::ffff:127.0.0.1', true],
  ['10.0.0.5', false],
  ['192.168.1.1', false],
  ['::ffff:10.0.0.5', false],
  ['fe80::1', false],
  ['1127.0.0.1', false],
  ['', false],
  [undefined, false],
];
for (const [address, expected] of peers) {
  test(`metrics peer ${String(address)} is ${expected ? 'loopback' : 'refused'}`, () => assert.equal(isLoopback(address), expected));
}

test('metrics token: only the exact bearer token passes', () => {
  const token = 'a-metrics-token-of-some-length';
  assert.ok(tokenMatches(`Bearer ${token}`, token));
  assert.ok(!tokenMatches(`Bearer ${token}x`, token));
  assert.ok(!tokenMatches(`Bearer ${token.slice(1)}`, token));
  assert.ok(!tokenMatches('', token));
  assert.ok(!tokenMatches('Bearer mk_an_api_key', token));
});

test('metrics access: a token, when set, is the only way in, even from loopback', () => {
  const token = 'a-metrics-token-of-some-length';
  assert.ok(metricsAccessAllowed(undefined, '', '127.0.0.1'));
  assert.ok(!metricsAccessAllowed(undefined, `Bearer ${token}`, '10.1.2.3'));
  assert.ok(!metricsAccessAllowed(token, '', '127.0.0.1'));
  assert.ok(metricsAccessAllowed(token, `Bearer ${token}`, '10.1.2.3'));
});
