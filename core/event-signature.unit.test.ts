import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, verify as cryptoVerify, type JsonWebKey } from 'node:crypto';
import { describe, it } from 'node:test';
import { type JWK } from 'jose';
import {
  type EventFrame,
  type EventFrameWithoutSignature,
  type SigningAlgorithm,
  type SigningKey,
  SIGNED_FIELDS,
  signEventFrame,
  verifyEventFrame,
  withSignature,
} from './event-signature.js';

// ---------------------------------------------------------------------------------------------
// An independent verifier: node:crypto and a separate ten-line canonicaliser, nothing from the
// module under test. If the module's bytes drifted from the documented rules, this disagrees.
// ---------------------------------------------------------------------------------------------
function referenceCanonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(referenceCanonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${referenceCanonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function independentVerify(frameText: string, jwks: { keys: JsonWebKey[] }): boolean {
  const frame = JSON.parse(frameText) as Record<string, unknown>;
  const signature = frame.signature as Record<string, string>;
  delete frame.signature;
  const jwk = jwks.keys.find((key) => key.kid === signature.key_id);
  if (!jwk || signature.scheme !== 'eddsa-detached' || signature.canonicalization !== 'json-sort-keys-v1') return false;
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  const bytes = Buffer.from(referenceCanonical(frame), 'utf8');
  const signatureBytes = Buffer.from(String(signature.value), 'base64url');
  return signature.algorithm === 'Ed25519'
    ? cryptoVerify(null, bytes, key, signatureBytes)
    : cryptoVerify('sha256', bytes, { key, dsaEncoding: 'ieee-p1363' }, signatureBytes);
}

// ---------------------------------------------------------------------------------------------
// Test keys generated here with node:crypto (not with the keyset module).
// ---------------------------------------------------------------------------------------------
function testKey(alg: SigningAlgorithm, kid: string): { signing: SigningKey; publicJwk: JWK } {
  const { privateKey } = alg === 'Ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const privateJwk = privateKey.export({ format: 'jwk' }) as JWK;
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  return { signing: { kid, alg, private_jwk: privateJwk }, publicJwk: { ...publicJwk, kid, use: 'sig' } };
}

function sampleFrame(overrides: Partial<EventFrameWithoutSignature> = {}): EventFrameWithoutSignature {
  return {
    action: 'event',
    seq: 7,
    event_id: '0f8e2d6c-4b3a-4e1f-9a8b-7c6d5e4f3a2b',
    type: 'memory_unconfident',
    collection_id: '1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d',
    payload: {
      query: 'who wrote “the plan”?\n',
      reason: 'low_activation',
      entity_count: 2,
      fact_count: 0,
      episode_count: 1,
      source_count: 3,
      avg_activation: 0.123456789,
      max_activation: 0.5,
      avg_fact_confidence: 1e-7,
      nested: { z: [1, { b: 2, a: 1 }], a: null },
    },
    ts: '2025-03-01T12:00:00.123Z',
    ...overrides,
  };
}

// The worked example of docs/event-signing.md. Ed25519 is deterministic, so the signature is fixed.
const VECTOR_JWK: JWK = {
  kty: 'OKP',
  crv: 'Ed25519',
  x: 'jx2Dy-ydJj21HrRA7GIWOLofWoAs3p_NtF-X0Oh53fU',
  d: 'rW0sKnuDXJUjURYp1bURe9F6LRKGsB0v8qPhS8CmO-w',
};
const VECTOR_KID = 'LuhT2R3hDrHjqvdSmwGk9B8Ch7paazBv12h0_l7f0rc';
const VECTOR_FRAME: EventFrameWithoutSignature = {
  action: 'event',
  seq: 42,
  event_id: '3f0c2a9e-8b41-4d7a-9c55-1e2f6a7b8c90',
  type: 'ingestion_progress',
  collection_id: '7a1d4c3b-2e5f-4a60-8b9c-0d1e2f3a4b5c',
  payload: {
    engram_id: 'mem_7Qx2',
    stage: 'embed',
    user_stage: 'indexing',
    current: 3,
    total: 10,
    message: 'Indexing «Q3 notes» – 3/10\n"done"',
  },
  ts: '2025-01-15T10:30:00.000Z',
};
const VECTOR_CANONICAL =
  '{"action":"event","collection_id":"7a1d4c3b-2e5f-4a60-8b9c-0d1e2f3a4b5c","event_id":"3f0c2a9e-8b41-4d7a-9c55-1e2f6a7b8c90",' +
  '"payload":{"current":3,"engram_id":"mem_7Qx2","message":"Indexing «Q3 notes» – 3/10\\n\\"done\\"","stage":"embed","total":10,' +
  '"user_stage":"indexing"},"seq":42,"ts":"2025-01-15T10:30:00.000Z","type":"ingestion_progress"}';
const VECTOR_SHA256 = '86e3e46658b3a1a70f8779c89bcf37ec1cac52e5ff976a62abd91bfa54c6ba12';
const VECTOR_SIGNATURE = '_AjCYiPAZOOdXn_KyI1JikfZ6CZQ2SlpX595CQmQnt5hkD75ikEmaCkmqlBjfWO7hVXRzQBD4H2sBM5eZgC9BQ';

describe('the documented test vector', () => {
  it('is what the module produces, and verifies independently', async () => {
    const derivedX = createPublicKey(createPrivateKey({ key: VECTOR_JWK as JsonWebKey, format: 'jwk' })).export({ format: 'jwk' }).x;
    assert.equal(derivedX, VECTOR_JWK.x);
    assert.equal(referenceCanonical(VECTOR_FRAME), VECTOR_CANONICAL);
    assert.equal(createHash('sha256').update(VECTOR_CANONICAL, 'utf8').digest('hex'), VECTOR_SHA256);
    const signature = await signEventFrame(VECTOR_FRAME, { kid: VECTOR_KID, alg: 'Ed25519', private_jwk: VECTOR_JWK });
    assert.deepEqual(signature, {
      scheme: 'eddsa-detached',
      algorithm: 'Ed25519',
      canonicalization: 'json-sort-keys-v1',
      key_id: VECTOR_KID,
      signed_fields: ['action', 'collection_id', 'event_id', 'payload', 'seq', 'ts', 'type'],
      encoding: 'base64url',
      value: VECTOR_SIGNATURE,
    });
    const jwks = { keys: [{ kty: 'OKP', crv: 'Ed25519', x: VECTOR_JWK.x, kid: VECTOR_KID, alg: 'EdDSA', use: 'sig' }] };
    const text = JSON.stringify({ ...VECTOR_FRAME, signature });
    assert.equal(independentVerify(text, jwks), true);
    assert.equal(await verifyEventFrame(JSON.parse(text) as EventFrame, jwks), true);
  });
});

for (const alg of ['Ed25519', 'ES256'] as const) {
  describe(`${alg} signatures`, () => {
    const { signing, publicJwk } = testKey(alg, `test-${alg}`);
    const jwks = [publicJwk];

    it('round-trip through JSON text, and an independent node:crypto verifier agrees', async () => {
      const frame = await withSignature(sampleFrame(), signing);
      assert.equal(frame.signature.algorithm, alg);
      assert.equal(frame.signature.key_id, signing.kid);
      assert.deepEqual(frame.signature.signed_fields, [...SIGNED_FIELDS]);
      assert.equal(Buffer.from(frame.signature.value, 'base64url').length, 64, 'raw 64-byte signature (r||s for ES256), not DER');
      assert.match(frame.signature.value, /^[A-Za-z0-9_-]{86}$/);
      const text = JSON.stringify(frame);
      assert.equal(await verifyEventFrame(JSON.parse(text) as EventFrame, jwks), true);
      assert.equal(await verifyEventFrame(JSON.parse(text) as EventFrame, { keys: jwks }), true);
      assert.equal(independentVerify(text, { keys: [publicJwk as JsonWebKey] }), true);
    });

    it('fail when the payload, seq or any field changes, or a field is added', async () => {
      const frame = await withSignature(sampleFrame(), signing);
      const tampered: Record<string, unknown>[] = [
        { ...frame, payload: { ...frame.payload, fact_count: 1 } },
        { ...frame, payload: { ...frame.payload, nested: { z: [1, { b: 2, a: 2 }], a: null } } },
        { ...frame, seq: frame.seq + 1 },
        { ...frame, ts: '2025-03-01T12:00:00.124Z' },
        { ...frame, type: 'ingestion_progress' },
        { ...frame, collection_id: '00000000-0000-4000-8000-000000000000' },
        { ...frame, extra: 1 },
      ];
      for (const candidate of tampered) {
        assert.equal(await verifyEventFrame(candidate, jwks), false, JSON.stringify(candidate).slice(0, 120));
        assert.equal(independentVerify(JSON.stringify(candidate), { keys: [publicJwk as JsonWebKey] }), false);
      }
    });

    it('fail when a signature bit flips', async () => {
      const frame = await withSignature(sampleFrame(), signing);
      const bytes = Buffer.from(frame.signature.value, 'base64url');
      for (const index of [0, 31, 32, 63]) {
        const flipped = Buffer.from(bytes);
        flipped[index] = (flipped[index] ?? 0) ^ 0x01;
        const candidate = { ...frame, signature: { ...frame.signature, value: flipped.toString('base64url') } };
        assert.equal(await verifyEventFrame(candidate, jwks), false, `byte ${index}`);
      }
    });

    it('fail for an unknown kid, another key under the same kid, or an empty keyset', async () => {
      const frame = await withSignature(sampleFrame(), signing);
      const other = testKey(alg, signing.kid).publicJwk;
      assert.equal(await verifyEventFrame({ ...frame, signature: { ...frame.signature, key_id: 'nope' } }, jwks), false);
      assert.equal(await verifyEventFrame(frame, [{ ...publicJwk, kid: 'different' }]), false);
      assert.equal(await verifyEventFrame(frame, [other]), false);
      assert.equal(await verifyEventFrame(frame, [other, publicJwk]), true, 'any key with the kid may verify');
      assert.equal(await verifyEventFrame(frame, []), false);
      assert.equal(await verifyEventFrame(frame, { keys: [] }), false);
    });
  });
}

describe('verifyEventFrame', () => {
  const ed = testKey('Ed25519', 'ed');
  const es = testKey('ES256', 'es');

  it('rejects a signature claiming another algorithm than its key', async () => {
    const frame = await withSignature(sampleFrame(), ed.signing);
    assert.equal(await verifyEventFrame({ ...frame, signature: { ...frame.signature, algorithm: 'ES256' } }, [ed.publicJwk]), false);
    const sameKid = { ...es.publicJwk, kid: 'ed' };
    assert.equal(await verifyEventFrame(frame, [sameKid]), false);
    assert.equal(await verifyEventFrame(frame, [sameKid, ed.publicJwk]), true);
  });

  it('accepts Ed25519 JWKs with alg EdDSA, Ed25519 or none; not with use=enc or alg ES256', async () => {
    const frame = await withSignature(sampleFrame(), ed.signing);
    for (const alg of ['EdDSA', 'Ed25519', undefined] as const) {
      assert.equal(await verifyEventFrame(frame, [{ ...ed.publicJwk, alg }]), true, String(alg));
    }
    assert.equal(await verifyEventFrame(frame, [{ ...ed.publicJwk, use: 'enc' }]), false);
    assert.equal(await verifyEventFrame(frame, [{ ...ed.publicJwk, alg: 'ES256' }]), false);
  });

  it('returns false, never throws, for malformed frames and signature objects', async () => {
    const frame = await withSignature(sampleFrame(), ed.signing);
    const { signature } = frame;
    const padded = `${signature.value}==`;
    const malformed: unknown[] = [
      null,
      'text',
      [],
      { ...frame, signature: undefined },
      { ...frame, signature: 'abc' },
      { ...frame, signature: { ...signature, scheme: 'jws' } },
      { ...frame, signature: { ...signature, canonicalization: 'jcs' } },
      { ...frame, signature: { ...signature, encoding: 'base64' } },
      { ...frame, signature: { ...signature, algorithm: 'EdDSA' } },
      { ...frame, signature: { ...signature, key_id: 5 } },
      { ...frame, signature: { ...signature, signed_fields: 'all' } },
      { ...frame, signature: { ...signature, value: padded } },
      { ...frame, signature: { ...signature, value: signature.value.slice(0, 80) } },
      { ...frame, signature: { ...signature, value: `${signature.value.slice(0, 85)}+` } },
      { ...frame, payload: { n: NaN } },
    ];
    for (const candidate of malformed) {
      assert.equal(await verifyEventFrame(candidate as EventFrame, [ed.publicJwk]), false, JSON.stringify(candidate)?.slice(0, 100));
    }
    assert.equal(await verifyEventFrame(frame, [{ kty: 'OKP', crv: 'Ed25519', x: 'short', kid: 'ed' }]), false, 'bad key material');
    assert.equal(await verifyEventFrame(frame, null as unknown as JWK[]), false);
  });

  it('covers optional fields present when signing, and lists them in signed_fields', async () => {
    const frame = await withSignature(sampleFrame({ trace: { hop: 1 } }), ed.signing);
    assert.deepEqual(frame.signature.signed_fields, ['action', 'collection_id', 'event_id', 'payload', 'seq', 'trace', 'ts', 'type']);
    assert.equal(await verifyEventFrame(frame, [ed.publicJwk]), true);
    assert.equal(await verifyEventFrame({ ...frame, trace: { hop: 2 } }, [ed.publicJwk]), false);
    assert.equal(await verifyEventFrame({ ...frame, signature: { ...frame.signature, signed_fields: [] } }, [ed.publicJwk]), true);
  });
});

describe('signEventFrame', () => {
  const ed = testKey('Ed25519', 'ed');

  it('refuses frames that are already signed, incomplete, or not canonicalisable', async () => {
    const signed = await withSignature(sampleFrame(), ed.signing);
    await assert.rejects(signEventFrame(signed as unknown as EventFrameWithoutSignature, ed.signing), /already has a signature/);
    const { seq: _seq, ...noSeq } = sampleFrame();
    await assert.rejects(signEventFrame(noSeq as unknown as EventFrameWithoutSignature, ed.signing), /no seq/);
    await assert.rejects(signEventFrame(sampleFrame({ payload: { at: new Date() } }), ed.signing), { name: 'CanonicalJsonError' });
    await assert.rejects(signEventFrame(sampleFrame({ payload: { n: Infinity } }), ed.signing), { name: 'CanonicalJsonError' });
  });

  it('refuses keys that do not fit the algorithm or have no private part', async () => {
    const es = testKey('ES256', 'es');
    await assert.rejects(signEventFrame(sampleFrame(), { ...es.signing, alg: 'Ed25519' }), /not a private Ed25519 key/);
    await assert.rejects(signEventFrame(sampleFrame(), { ...ed.signing, private_jwk: ed.publicJwk }), /not a private/);
    await assert.rejects(signEventFrame(sampleFrame(), { ...ed.signing, alg: 'RS256' as SigningAlgorithm }), /unsupported/);
  });

  it('is deterministic for Ed25519 and ignores the key order of the input', async () => {
    const a = await signEventFrame(sampleFrame(), ed.signing);
    const reordered = Object.fromEntries(Object.entries(sampleFrame()).reverse()) as EventFrameWithoutSignature;
    const b = await signEventFrame(reordered, ed.signing);
    assert.equal(a.value, b.value);
  });
});
