import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, defaultEmbeddedHeapMb, loadConfig } from './index.js';

it('applies defaults and treats empty variables as unset', () => {
  const config = loadConfig({ MONGODB_URI: '', PORT: '9000' });
  assert.equal(config.MONGODB_URI, undefined);
  assert.equal(config.PORT, 9000);
  assert.equal(config.ROLE, 'all');
  assert.equal(config.EMBEDDING_MODEL, 'Xenova/e5-small-v2');
});

it('sizes the embedded store heap at a quarter of the machine, at least 4 GiB, unless set', () => {
  const gib = 1024 ** 3;
  assert.equal(defaultEmbeddedHeapMb(8 * gib), 4096);
  assert.equal(defaultEmbeddedHeapMb(24 * gib), 6144);
  assert.equal(defaultEmbeddedHeapMb(64 * gib), 16384);
  assert.equal(loadConfig({}).EMBEDDED_MONGO_HEAP_MB, defaultEmbeddedHeapMb(os.totalmem()));
  assert.equal(loadConfig({ EMBEDDED_MONGO_HEAP_MB: '2048' }).EMBEDDED_MONGO_HEAP_MB, 2048);
});

it('names every invalid variable', () => {
  assert.throws(
    () => loadConfig({ PORT: 'eighty', ROLE: 'boss' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /PORT/);
      assert.match(error.message, /ROLE/);
      return true;
    },
  );
});

it('reads the procedure read backend switch: mongodb by default, none to turn the reads off', () => {
  assert.equal(loadConfig({}).GRAPH_READ_BACKEND, 'mongodb');
  assert.equal(loadConfig({ GRAPH_READ_BACKEND: 'none' }).GRAPH_READ_BACKEND, 'none');
  assert.throws(
    () => loadConfig({ GRAPH_READ_BACKEND: 'neo4j' }),
    (error: unknown) => error instanceof ConfigError && /GRAPH_READ_BACKEND/.test(error.message),
  );
});

it('refuses the unsafe test-only outbound origin unless ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN=true', () => {
  for (const env of [
    { OUTBOUND_UNSAFE_TEST_ORIGIN: 'snapshots.test:8443' },
    { OUTBOUND_UNSAFE_TEST_ORIGIN: 'snapshots.test:8443', ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: 'false' },
  ]) {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) =>
        error instanceof ConfigError && /OUTBOUND_UNSAFE_TEST_ORIGIN: .*ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN=true/.test(error.message),
      JSON.stringify(env),
    );
  }
  const allowed = loadConfig({ OUTBOUND_UNSAFE_TEST_ORIGIN: 'snapshots.test:8443', ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: 'true' });
  assert.equal(allowed.OUTBOUND_UNSAFE_TEST_ORIGIN, 'snapshots.test:8443');
  assert.equal(loadConfig({}).OUTBOUND_UNSAFE_TEST_ORIGIN, undefined);
  assert.equal(loadConfig({}).ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN, false);
});

describe('production mode', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'engram-config-'));
  const secretFile = path.join(dir, 'upload.secret');
  const shortFile = path.join(dir, 'short.secret');
  const keysetFile = path.join(dir, 'keyset.json');
  writeFileSync(secretFile, `${'s'.repeat(40)}\n`);
  writeFileSync(shortFile, 'too-short');
  writeFileSync(keysetFile, '{}');
  const secret = 'x'.repeat(32);
  const refusals: { name: string; env: Record<string, string>; field: RegExp }[] = [
    { name: 'no secrets at all', env: {}, field: /UPLOAD_SIGNING_SECRET:.*\n.*EVENT_SIGNING_KEYSET:/ },
    { name: 'no upload secret', env: { EVENT_SIGNING_KEYSET_PATH: keysetFile }, field: /UPLOAD_SIGNING_SECRET: PRODUCTION_MODE requires/ },
    { name: 'no keyset', env: { UPLOAD_SIGNING_SECRET: secret }, field: /EVENT_SIGNING_KEYSET: PRODUCTION_MODE requires/ },
    {
      name: 'a keyset path that does not exist',
      env: { UPLOAD_SIGNING_SECRET: secret, EVENT_SIGNING_KEYSET_PATH: path.join(dir, 'missing.json') },
      field: /EVENT_SIGNING_KEYSET_PATH: .*not created in production/,
    },
    {
      name: 'unsigned event frames',
      env: { UPLOAD_SIGNING_SECRET: secret, EVENT_SIGNING: 'false' },
      field: /EVENT_SIGNING: PRODUCTION_MODE requires signed/,
    },
    {
      name: 'a secret file that does not exist',
      env: { UPLOAD_SIGNING_SECRET_FILE: path.join(dir, 'nope'), EVENT_SIGNING_KEYSET_PATH: keysetFile },
      field: /UPLOAD_SIGNING_SECRET_FILE: cannot read/,
    },
    {
      name: 'a secret file that is too short',
      env: { UPLOAD_SIGNING_SECRET_FILE: shortFile, EVENT_SIGNING_KEYSET_PATH: keysetFile },
      field: /UPLOAD_SIGNING_SECRET_FILE: .*at least 32/,
    },
    {
      name: 'both the secret and its file',
      env: { UPLOAD_SIGNING_SECRET: secret, UPLOAD_SIGNING_SECRET_FILE: secretFile, EVENT_SIGNING_KEYSET_PATH: keysetFile },
      field: /not both/,
    },
  ];
  refusals.push({
    name: 'no snapshot keyset',
    env: { UPLOAD_SIGNING_SECRET: secret, EVENT_SIGNING_KEYSET_PATH: keysetFile },
    field: /SNAPSHOT_SIGNING_KEYSET: PRODUCTION_MODE requires/,
  });
  for (const refusal of refusals) {
    it(`refuses ${refusal.name}, naming the variable`, () => {
      assert.throws(
        () => loadConfig({ PRODUCTION_MODE: 'true', ROLE: 'api', ...refusal.env }),
        (error: unknown) => error instanceof ConfigError && refusal.field.test(error.message),
      );
    });
  }

  it('accepts the shared secrets, from a file or the environment', () => {
    const fromFile = loadConfig({
      PRODUCTION_MODE: 'true',
      ROLE: 'api',
      UPLOAD_SIGNING_SECRET_FILE: secretFile,
      EVENT_SIGNING_KEYSET_PATH: keysetFile,
      SNAPSHOT_SIGNING_KEYSET_PATH: keysetFile,
    });
    assert.equal(fromFile.UPLOAD_SIGNING_SECRET, 's'.repeat(40), 'read from the file, trimmed');
    const fromEnv = loadConfig({
      PRODUCTION_MODE: 'true',
      ROLE: 'all',
      UPLOAD_SIGNING_SECRET: secret,
      EVENT_SIGNING_KEYSET: '{"keys":[]}',
      SNAPSHOT_SIGNING_KEYSET: '{"keys":[]}',
    });
    assert.equal(fromEnv.PRODUCTION_MODE, true);
  });

  it('refuses the unsafe test-only outbound origin, in every role, even with the secrets in place', () => {
    const complete = {
      PRODUCTION_MODE: 'true',
      UPLOAD_SIGNING_SECRET: secret,
      EVENT_SIGNING_KEYSET: '{"keys":[]}',
      SNAPSHOT_SIGNING_KEYSET: '{"keys":[]}',
    };
    assert.equal(loadConfig({ ...complete, ROLE: 'api' }).PRODUCTION_MODE, true, 'the baseline is accepted');
    for (const role of ['api', 'all', 'worker']) {
      assert.throws(
        () => loadConfig({ ...complete, ROLE: role, ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: 'true' }),
        (error: unknown) =>
          error instanceof ConfigError && /ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: PRODUCTION_MODE refuses/.test(error.message),
        role,
      );
      assert.throws(
        () =>
          loadConfig({
            ...complete,
            ROLE: role,
            ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: 'true',
            OUTBOUND_UNSAFE_TEST_ORIGIN: 'snapshots.test:8443',
          }),
        (error: unknown) => error instanceof ConfigError && /PRODUCTION_MODE refuses the unsafe test-only/.test(error.message),
        role,
      );
    }
  });

  it('asks a worker-only process only for the event keyset, and only when it delivers signed webhooks', () => {
    assert.throws(
      () => loadConfig({ PRODUCTION_MODE: 'true', ROLE: 'worker' }),
      (error: unknown) =>
        error instanceof ConfigError && /EVENT_SIGNING_KEYSET: PRODUCTION_MODE: a worker delivering webhooks/.test(error.message),
    );
    assert.equal(loadConfig({ PRODUCTION_MODE: 'true', ROLE: 'worker', WEBHOOK_DELIVERY: 'false' }).ROLE, 'worker');
    assert.equal(loadConfig({ PRODUCTION_MODE: 'true', ROLE: 'worker', EVENT_SIGNING: 'false' }).ROLE, 'worker');
    assert.equal(loadConfig({ PRODUCTION_MODE: 'true', ROLE: 'worker', EVENT_SIGNING_KEYSET: '{"keys":[]}' }).ROLE, 'worker');
    assert.throws(() => loadConfig({ PRODUCTION_MODE: 'true', ROLE: 'worker', EVENT_SIGNING_KEYSET_PATH: '/nonexistent/keyset.json' }));
    assert.equal(loadConfig({ ROLE: 'api' }).PRODUCTION_MODE, false);
  });

  it('keeps webhook attempts within 15 s and validates the retry schedule', () => {
    assert.throws(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '15001' }), /WEBHOOK_TIMEOUT_MS/);
    assert.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '0,5s' }), /WEBHOOK_RETRY_SCHEDULE_MS/);
    assert.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '0' }), /WEBHOOK_RETRY_SCHEDULE_MS/);
    assert.deepEqual(loadConfig({}).WEBHOOK_RETRY_SCHEDULE_MS, [0, 5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000]);
    assert.deepEqual(loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '0, 50 ,100' }).WEBHOOK_RETRY_SCHEDULE_MS, [0, 50, 100]);
  });
});
