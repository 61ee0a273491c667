import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { type EventFrameWithoutSignature, verifyEventFrame, withSignature } from './event-signature.js';
import {
  activeKey,
  DEFAULT_RETENTION_MS,
  generateKeysetEntry,
  KeysetError,
  keysetFromEnv,
  loadOrCreateKeyset,
  parseKeyset,
  publicJwks,
  readKeysetFile,
  rotateKeyset,
} from './signing-keyset.js';

const directories: string[] = [];
async function tempFile(name = 'keyset.json'): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), 'signing-keyset-'));
  directories.push(directory);
  return path.join(directory, 'nested', name);
}
after(async () => {
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

const frame: EventFrameWithoutSignature = {
  action: 'event',
  seq: 1,
  event_id: '6a0f3c1e-2b4d-4e8f-9a1b-3c5d7e9f0a2b',
  type: 'ingestion_progress',
  collection_id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  payload: { engram_id: 'm1', stage: 's', user_stage: 'reading', current: 0, total: 1, message: null },
  ts: '2025-01-01T00:00:00.000Z',
};

const DAY = 24 * 60 * 60 * 1000;

describe('loadOrCreateKeyset', () => {
  it('creates the file (and its directory) mode 0600 with one active Ed25519 key', async () => {
    const file = await tempFile();
    const keyset = await loadOrCreateKeyset(file);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal(keyset.keys.length, 1);
    const key = activeKey(keyset);
    assert.equal(key.alg, 'Ed25519');
    assert.equal(key.status, 'active');
    assert.equal(key.private_jwk.kty, 'OKP');
    assert.equal(typeof key.private_jwk.d, 'string');
    assert.ok(!Number.isNaN(Date.parse(key.created_at)));
    assert.equal(key.kid, await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: String(key.private_jwk.x) }, 'sha256'));
    assert.deepEqual(await readdir(path.dirname(file)), ['keyset.json'], 'no temp files left behind');
  });

  it('returns the same key when called again, and when racing itself', async () => {
    const file = await tempFile();
    const first = await loadOrCreateKeyset(file);
    const second = await loadOrCreateKeyset(file);
    assert.deepEqual(second, first);

    const raced = await tempFile();
    const results = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateKeyset(raced)));
    const kids = new Set(results.map((keyset) => activeKey(keyset).kid));
    assert.equal(kids.size, 1);
    assert.deepEqual(await readKeysetFile(raced), results[0]);
  });

  it('can create an ES256 keyset', async () => {
    const keyset = await loadOrCreateKeyset(await tempFile(), { alg: 'ES256' });
    const key = activeKey(keyset);
    assert.equal(key.alg, 'ES256');
    assert.equal(key.private_jwk.crv, 'P-256');
    const signed = await withSignature(frame, key);
    assert.equal(await verifyEventFrame(signed, publicJwks(keyset).keys), true);
  });

  it('refuses a file that is not a valid keyset, without echoing key material', async () => {
    const file = await tempFile();
    await loadOrCreateKeyset(file);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, -10));
    await assert.rejects(loadOrCreateKeyset(file), (error: Error) => error instanceof KeysetError && !error.message.includes('"d"'));
  });
});

describe('readKeysetFile', () => {
  it('is undefined for a missing file and creates nothing', async () => {
    const file = await tempFile();
    assert.equal(await readKeysetFile(file), undefined);
    await assert.rejects(stat(file), { code: 'ENOENT' });
  });
});

describe('rotateKeyset', () => {
  it('adds an active key, retires the previous one, keeps the file 0600, and old signatures still verify', async () => {
    const file = await tempFile();
    const original = await loadOrCreateKeyset(file);
    const oldKey = activeKey(original);
    const signedBefore = await withSignature(frame, oldKey);

    const result = await rotateKeyset(file);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal(result.retired?.kid, oldKey.kid);
    assert.equal(result.retired?.status, 'retired');
    assert.ok(result.retired?.retired_at);
    assert.deepEqual(result.dropped, []);
    assert.notEqual(result.added.kid, oldKey.kid);

    const reloaded = await loadOrCreateKeyset(file);
    assert.deepEqual(reloaded, result.keyset);
    assert.equal(activeKey(reloaded).kid, result.added.kid);
    assert.deepEqual(
      reloaded.keys.map((key) => [key.kid, key.status]),
      [
        [result.added.kid, 'active'],
        [oldKey.kid, 'retired'],
      ],
    );

    const jwks = publicJwks(reloaded);
    assert.equal(await verifyEventFrame(signedBefore, jwks), true, 'the retired key still verifies');
    const signedAfter = await withSignature(frame, activeKey(reloaded));
    assert.equal(signedAfter.signature.key_id, result.added.kid);
    assert.equal(await verifyEventFrame(signedAfter, jwks), true);
    assert.deepEqual(await readdir(path.dirname(file)), ['keyset.json'], 'no temp or lock files left behind');
  });

  it('drops retired keys once their retention (counted from retirement) has passed', async () => {
    const file = await tempFile();
    const start = new Date('2025-01-01T00:00:00.000Z');
    const at = (days: number) => () => new Date(start.getTime() + days * DAY);
    await loadOrCreateKeyset(file, { now: at(0) });
    const first = await rotateKeyset(file, { now: at(100) }); // key 0 retired at day 100
    const kid0 = first.retired?.kid;
    const second = await rotateKeyset(file, { now: at(120) }); // key 0 is 20 days retired: kept
    assert.deepEqual(second.dropped, []);
    assert.equal(second.keyset.keys.length, 3);
    const third = await rotateKeyset(file, { now: at(131) }); // key 0 is 31 days retired: dropped
    assert.deepEqual(
      third.dropped.map((key) => key.kid),
      [kid0],
    );
    assert.equal(third.keyset.keys.length, 3);
    assert.equal(DEFAULT_RETENTION_MS, 30 * DAY);

    const short = await rotateKeyset(file, { now: at(132), retentionMs: 0 });
    assert.equal(short.keyset.keys.length, 2, 'only the new key and the one retired just now');
  });

  it('can switch the algorithm, and creates the file when it is absent', async () => {
    const file = await tempFile();
    const created = await rotateKeyset(file);
    assert.equal(created.retired, undefined);
    assert.equal(created.keyset.keys.length, 1);
    const switched = await rotateKeyset(file, { alg: 'ES256' });
    assert.equal(switched.added.alg, 'ES256');
    const kept = await rotateKeyset(file);
    assert.equal(kept.added.alg, 'ES256', 'defaults to the algorithm of the current active key');
  });

  it('refuses to run while another rotation holds the lock', async () => {
    const file = await tempFile();
    await loadOrCreateKeyset(file);
    await writeFile(`${file}.lock`, '1\n');
    await assert.rejects(rotateKeyset(file), (error: Error) => error instanceof KeysetError && /another rotation/.test(error.message));
    assert.equal((await readKeysetFile(file))?.keys.length, 1);
  });
});

describe('publicJwks', () => {
  it('has only public members, active first, and never d', async () => {
    const file = await tempFile();
    await loadOrCreateKeyset(file);
    await rotateKeyset(file, { alg: 'ES256' });
    const { keyset } = await rotateKeyset(file);
    const jwks = publicJwks(keyset);
    assert.doesNotMatch(JSON.stringify(jwks), /"d"/);
    assert.deepEqual(
      jwks.keys.map((key) => key.status),
      ['active', 'retired', 'retired'],
    );
    for (const key of jwks.keys) {
      const expected =
        key.kty === 'EC' ? ['alg', 'crv', 'kid', 'kty', 'status', 'use', 'x', 'y'] : ['alg', 'crv', 'kid', 'kty', 'status', 'use', 'x'];
      assert.deepEqual(Object.keys(key).sort(), expected);
      assert.equal(key.use, 'sig');
      assert.equal(key.alg, key.kty === 'EC' ? 'ES256' : 'EdDSA');
    }
  });
});

describe('keysetFromEnv / parseKeyset', () => {
  it('accepts the file format as an env value', async () => {
    const entry = await generateKeysetEntry();
    const keyset = keysetFromEnv(JSON.stringify({ keys: [entry] }));
    assert.equal(activeKey(keyset).kid, entry.kid);
  });

  it('keeps only known members of a private JWK', async () => {
    const entry = await generateKeysetEntry();
    const keyset = parseKeyset({ keys: [{ ...entry, private_jwk: { ...entry.private_jwk, ext: true, key_ops: ['sign'] } }] });
    assert.deepEqual(Object.keys(activeKey(keyset).private_jwk).sort(), ['crv', 'd', 'kty', 'x']);
  });

  it('rejects bad JSON without quoting it', () => {
    assert.throws(
      () => keysetFromEnv('{"keys":[{"d":"SECRETSECRET"'),
      (error: Error) => error instanceof KeysetError && !error.message.includes('SECRET'),
    );
  });

  it('rejects invalid keysets', async () => {
    const entry = await generateKeysetEntry();
    const other = await generateKeysetEntry();
    const es = await generateKeysetEntry('ES256');
    const { privateKey } = generateKeyPairSync('ed25519');
    const foreignD = (privateKey.export({ format: 'jwk' }) as JWK).d;
    const invalid: [string, unknown][] = [
      ['no keys', { keys: [] }],
      ['not an object', []],
      ['two active keys', { keys: [entry, other] }],
      ['no active key', { keys: [{ ...entry, status: 'retired' }] }],
      ['duplicate kid', { keys: [entry, { ...other, kid: entry.kid, status: 'retired' }] }],
      ['d not matching x', { keys: [{ ...entry, private_jwk: { ...entry.private_jwk, d: foreignD } }] }],
      ['alg not matching the key type', { keys: [{ ...es, alg: 'Ed25519' }] }],
      ['unknown alg', { keys: [{ ...entry, alg: 'RS256' }] }],
      ['missing d', { keys: [{ ...entry, private_jwk: { kty: 'OKP', crv: 'Ed25519', x: entry.private_jwk.x } }] }],
      ['bad created_at', { keys: [{ ...entry, created_at: 'yesterday' }] }],
    ];
    for (const [what, value] of invalid) {
      assert.throws(
        () => parseKeyset(value),
        (error: Error) => error instanceof KeysetError && !error.message.includes(String(entry.private_jwk.d)),
        what,
      );
    }
  });
});
