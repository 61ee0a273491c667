import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import { newWebhookSecret, secretKey, signedContent, signV1, webhookHeaders, whpkOf } from './webhook-signature.js';

describe('webhook signatures (Standard Webhooks)', () => {
  it('matches the published example vector of the Standard Webhooks / Svix documentation', () => {
    const content = signedContent('msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    assert.equal(signV1('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', content), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('makes whsec_ secrets of 32 random bytes, each different', () => {
    const a = newWebhookSecret();
    const b = newWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(secretKey(a).length, 32);
    assert.notEqual(a, b);
  });

  it('refuses secrets without the prefix or shorter than 24 bytes', () => {
    assert.throws(() => secretKey('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'));
    assert.throws(() => secretKey('whsec_c2hvcnQ='));
  });

  it('signs with every secret given, then Ed25519, space-separated', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const [s1, s2] = [newWebhookSecret(), newWebhookSecret()];
    const headers = webhookHeaders('7f1c2c9e-0000-4000-8000-000000000001', 1700000000, '{"a":1}', [s1, s2], privateKey);
    const parts = headers['webhook-signature'].split(' ');
    assert.equal(parts.length, 3);
    const content = signedContent(headers['webhook-id'], 1700000000, '{"a":1}');
    assert.equal(parts[0], signV1(s1, content));
    assert.equal(parts[1], signV1(s2, content));
    assert.ok(parts[2]!.startsWith('v1a,'));
    assert.ok(verify(null, content, publicKey, Buffer.from(parts[2]!.slice(4), 'base64')));
    assert.equal(headers['webhook-timestamp'], '1700000000');
  });

  it('refuses an id with a "." (it would make the signed content ambiguous)', () => {
    assert.throws(() => webhookHeaders('a.b', 1, '{}', [newWebhookSecret()], null));
  });

  it('gives the public key as whpk_ + base64 of its raw bytes', () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const x = publicKey.export({ format: 'jwk' }).x!;
    const whpk = whpkOf(x);
    assert.match(whpk, /^whpk_[A-Za-z0-9+/]{43}=$/);
    const raw = Buffer.from(whpk.slice(5), 'base64');
    assert.equal(raw.length, 32);
    const rebuilt = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
    assert.ok(rebuilt.equals(publicKey));
  });
});
