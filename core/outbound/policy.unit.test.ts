import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressRefusal, checkHeaders, checkUrl, OutboundRefusal, type OutboundPolicy } from './policy.js';

const open: OutboundPolicy = { allowedPorts: new Set(), allowedHosts: [], unsafeTestOrigin: null };
const storageOnly: OutboundPolicy = { ...open, allowedHosts: ['*.s3.amazonaws.com', 'storage.googleapis.com'] };

const reasonOf = (run: () => unknown): string | null => {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof OutboundRefusal) return error.reason;
    throw error;
  }
};

describe('signed-URL policy', () => {
  const urls: [string, OutboundPolicy, string | null][] = [
    ['https://bucket.s3.amazonaws.com/key?X-Amz-Signature=1', open, null],
    ['https://bucket.s3.amazonaws.com/key', storageOnly, null],
    ['https://storage.googleapis.com/b/o', storageOnly, null],
    ['https://s3.amazonaws.com.evil.example/key', storageOnly, 'host_not_allowed'],
    ['https://evils3.amazonaws.com/key', storageOnly, 'host_not_allowed'],
    ['https://storage.googleapis.com.evil.example/o', storageOnly, 'host_not_allowed'],
    ['http://bucket.s3.amazonaws.com/key', open, 'scheme'],
    ['gopher://bucket.example.com/', open, 'scheme'],
    ['https://user@bucket.example.com/', open, 'userinfo'],
    ['https://:pw@bucket.example.com/', open, 'userinfo'],
    ['https://bucket.example.com:8443/', open, 'port'],
    ['https://bucket.example.com:8443/', { ...open, allowedPorts: new Set([8443]) }, null],
    ['https://bucket.example.com:443/', open, null],
    ['https://10.0.0.1/', open, 'literal_ip'],
    ['https://3232235777/', open, 'literal_ip'],
    ['https://0xc0a80101/', open, 'literal_ip'],
    ['https://0300.0250.01.01/', open, 'literal_ip'],
    ['https://192.168.257/', open, 'literal_ip'],
    ['https://[fe80::1]/', open, 'literal_ip'],
    ['https://[::ffff:a9fe:a9fe]/', open, 'literal_ip'],
    ['https://8.8.8.8/', open, 'literal_ip'],
    ['https://localhost/', open, 'malformed'],
    ['https://metadata/', open, 'malformed'],
    ['https://bücket.example.com/', open, null],
    ['//bucket.example.com/', open, 'malformed'],
    ['https://host.test:4443/x', { ...open, unsafeTestOrigin: 'host.test:4443' }, null],
    ['https://host.test:4444/x', { ...open, unsafeTestOrigin: 'host.test:4443' }, 'port'],
    ['https://bucket.s3.amazonaws.com./key', storageOnly, null],
    ['https://s3.amazonaws.com.evil.example./key', storageOnly, 'host_not_allowed'],
    ['https://localhost./', open, 'malformed'],
    ['https://127.0.0.1./', open, 'literal_ip'],
  ];
  for (const [url, policy, reason] of urls) {
    it(`${reason ? 'refuses' : 'accepts'} ${url}${policy.allowedHosts.length ? ' (allow-list)' : ''}`, () => {
      assert.equal(
        reasonOf(() => checkUrl(url, policy)),
        reason,
      );
    });
  }

  it("drops a host's trailing dot before the checks and the lookup", () => {
    assert.equal(checkUrl('https://Bucket.Example.com./k', open).hostname, 'bucket.example.com');
  });

  it('admits only the test origin without address checks, and only when configured', () => {
    assert.equal(checkUrl('https://host.test:4443/x', { ...open, unsafeTestOrigin: 'host.test:4443' }).skipAddressCheck, true);
    assert.equal(checkUrl('https://bucket.example.com/x', { ...open, unsafeTestOrigin: 'host.test:4443' }).skipAddressCheck, false);
  });

  const addresses: [string, boolean][] = [
    ['8.8.8.8', true],
    ['52.216.1.1', true],
    ['2606:4700::1111', true],
    ['2a00:1450:4001::200e', true],
    ['127.0.0.1', false],
    ['10.255.0.1', false],
    ['172.31.255.255', false],
    ['192.168.0.1', false],
    ['169.254.169.254', false],
    ['100.100.100.200', false],
    ['0.0.0.0', false],
    ['255.255.255.255', false],
    ['224.0.0.251', false],
    ['198.18.0.1', false],
    ['::', false],
    ['::1', false],
    ['fe80::1', false],
    ['fc00::1', false],
    ['fd12:3456::1', false],
    ['ff02::1', false],
    ['::ffff:8.8.8.8', false],
    ['::ffff:127.0.0.1', false],
    ['::7f00:1', false],
    ['64:ff9b::a00:1', false],
    ['2002:a00:1::', false],
    ['2001:db8::1', false],
    ['not-an-ip', false],
  ];
  for (const [address, allowed] of addresses) {
    it(`${allowed ? 'allows' : 'refuses'} a resolved ${address}`, () => {
      assert.equal(addressRefusal(address) === null, allowed, String(addressRefusal(address)));
    });
  }

  it('keeps framing and hop-by-hop headers for itself', () => {
    assert.deepEqual(checkHeaders({ 'x-amz-security-token': 'abc', 'Content-Type': 'application/json' }, 'h'), {
      'x-amz-security-token': 'abc',
      'Content-Type': 'application/json',
    });
    for (const headers of [
      { host: 'x' },
      { 'Content-Length': '1' },
      { 'transfer-encoding': 'chunked' },
      { Upgrade: 'h2c' },
      { TE: 'trailers' },
      { 'Proxy-Authorization': 'x' },
      { a: 'x\ny' },
      { 'a b': 'x' },
    ]) {
      assert.equal(
        reasonOf(() => checkHeaders(headers, 'h')),
        'header',
        JSON.stringify(headers),
      );
    }
  });
});
