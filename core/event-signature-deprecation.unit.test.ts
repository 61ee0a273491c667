/**
 * Its own file, so its own process: Node prints a deprecation warning once per process, and any
 * earlier signature in the same process would hide it from this test.
 */
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { it } from 'node:test';
import { type JWK } from 'jose';
import { type SigningAlgorithm, verifyEventFrame, withSignature } from './event-signature.js';

function testKey(alg: SigningAlgorithm): { signing: { kid: string; alg: SigningAlgorithm; private_jwk: JWK }; publicJwk: JWK } {
  const { privateKey } = alg === 'Ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = `k-${alg}`;
  return {
    signing: { kid, alg, private_jwk: privateKey.export({ format: 'jwk' }) as JWK },
    publicJwk: { ...(createPublicKey(privateKey).export({ format: 'jwk' }) as JWK), kid, use: 'sig' },
  };
}

it('signs and verifies with both algorithms without a Node deprecation warning (DEP0204)', async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error & { code?: string }): void => {
    warnings.push(warning.code ?? warning.name);
  };
  process.on('warning', onWarning);
  try {
    for (const alg of ['Ed25519', 'ES256'] as const) {
      const key = testKey(alg);
      const frame = await withSignature(
        {
          action: 'event',
          seq: 1,
          event_id: '0f8e2d6c-4b3a-4e1f-9a8b-7c6d5e4f3a2b',
          type: 'ingestion_progress',
          collection_id: '1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d',
          payload: {},
          ts: '2026-11-26T00:00:00.000Z',
        },
        key.signing,
      );
      assert.equal(await verifyEventFrame(frame, [key.publicJwk]), true);
    }
    // Warnings are emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(
    warnings.filter((code) => code.startsWith('DEP')),
    [],
  );
});
