/**
 * Issue 20, item 6: in production mode an API process refuses to start without the secrets every
 * replica must share (it used to make its own, so two replicas refused about half of each other's
 * upload PUTs and pinned signing keys broke on every redeploy); with the secrets wired from one
 * place, two API processes with separate data directories accept each other's upload URLs and
 * publish the same signing keys.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadOrCreateKeyset } from '../../core/signing-keyset.js';
import { spawnService, stopChild } from '../../dev/stack.js';
import { Api, newTenant, stack, type TenantFixture } from '../support/client.js';
import { startApiProcess, type ApiProcess } from '../support/processes.js';

/** The variables that carry the secrets, cleared so that only what a case sets is given. */
const NO_SECRETS = {
  UPLOAD_SIGNING_SECRET: '',
  UPLOAD_SIGNING_SECRET_FILE: '',
  EVENT_SIGNING_KEYSET: '',
  EVENT_SIGNING_KEYSET_PATH: '',
  SNAPSHOT_SIGNING_KEYSET: '',
  SNAPSHOT_SIGNING_KEYSET_PATH: '',
};

function exitOf(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms: it did not refuse to start`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('production mode', () => {
  const secrets = mkdtempSync(path.join(os.tmpdir(), 'engram-secrets-'));
  const secretFile = path.join(secrets, 'upload-signing.secret');
  const keysetFile = path.join(secrets, 'event-signing-keyset.json');
  const snapshotKeysetFile = path.join(secrets, 'snapshot-signing-keyset.json');
  const processes: ApiProcess[] = [];
  let tenant: TenantFixture;

  before(async () => {
    writeFileSync(secretFile, randomBytes(48).toString('base64url'));
    await loadOrCreateKeyset(keysetFile);
    await loadOrCreateKeyset(snapshotKeysetFile);
    tenant = await newTenant('production');
  });
  after(async () => {
    await Promise.all(processes.map((started) => stopChild(started.child)));
  });

  const refusals: { name: string; env: Record<string, string>; names: RegExp[] }[] = [
    { name: 'no secrets', env: {}, names: [/UPLOAD_SIGNING_SECRET/, /EVENT_SIGNING_KEYSET/, /SNAPSHOT_SIGNING_KEYSET/] },
    {
      name: 'no snapshot signing keyset',
      env: { UPLOAD_SIGNING_SECRET_FILE: secretFile, EVENT_SIGNING_KEYSET_PATH: keysetFile },
      names: [/SNAPSHOT_SIGNING_KEYSET/],
    },
    { name: 'no event signing keyset', env: { UPLOAD_SIGNING_SECRET_FILE: secretFile }, names: [/EVENT_SIGNING_KEYSET/] },
    { name: 'no upload signing secret', env: { EVENT_SIGNING_KEYSET_PATH: keysetFile }, names: [/UPLOAD_SIGNING_SECRET/] },
    {
      name: 'a keyset file that does not exist',
      env: { UPLOAD_SIGNING_SECRET_FILE: secretFile, EVENT_SIGNING_KEYSET_PATH: path.join(secrets, 'missing.json') },
      names: [/EVENT_SIGNING_KEYSET_PATH/],
    },
  ];
  for (const refusal of refusals) {
    it(`an API process refuses to start with ${refusal.name}, naming what is missing`, async () => {
      const logFile = path.join(stack().logDir, `api-production-refusal-${refusals.indexOf(refusal)}.log`);
      const child = spawnService(
        'api/main.js',
        {
          ...stack().serviceEnv,
          ...NO_SECRETS,
          ROLE: 'api',
          PORT: '0',
          DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'engram-data-')),
          PRODUCTION_MODE: 'true',
          ...refusal.env,
        },
        logFile,
      );
      const code = await exitOf(child, 60_000);
      assert.notEqual(code, 0, 'it exits with an error');
      const log = readFileSync(logFile, 'utf8');
      assert.match(log, /Invalid configuration/);
      for (const name of refusal.names) assert.match(log, name);
    });
  }

  it('two API processes sharing the wired secrets accept each other’s upload URLs and serve the same signing keys', async () => {
    const env = (): Record<string, string> => ({
      ...NO_SECRETS,
      PRODUCTION_MODE: 'true',
      UPLOAD_SIGNING_SECRET_FILE: secretFile,
      EVENT_SIGNING_KEYSET_PATH: keysetFile,
      SNAPSHOT_SIGNING_KEYSET_PATH: snapshotKeysetFile,
      // Separate data directories: nothing but the wired secrets can make them agree.
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'engram-data-')),
    });
    const [first, second] = await Promise.all([startApiProcess('api-production-1', env()), startApiProcess('api-production-2', env())]);
    processes.push(first, second);
    const pairs = [
      [first, second],
      [second, first],
    ] as const;
    for (const [issuer, receiver] of pairs) {
      const issued = await new Api(issuer.baseUrl, tenant.apiKey).post('/v1/uploads', {
        collection_id: tenant.collectionId,
        filename: 'note.md',
        media_type: 'text/markdown',
        size: 11,
      });
      assert.equal(issued.status, 201, JSON.stringify(issued.body));
      const url = new URL(issued.body.results.upload_url as string);
      const elsewhere = `${receiver.baseUrl}${url.pathname}${url.search}`;
      const put = await fetch(elsewhere, { method: 'PUT', body: '# A note\n\nx', headers: { 'Content-Type': 'text/markdown' } });
      assert.equal(put.status, 200, `a URL issued by one replica is accepted by the other: ${await put.text()}`);
    }
    const keys = await Promise.all(
      [first, second].map(async (started) => (await new Api(started.baseUrl, tenant.apiKey).get('/v1/memory-events/signing-keys')).body),
    );
    assert.ok(keys[0].keys.length > 0);
    assert.deepEqual(keys[0], keys[1], 'both replicas publish the one wired keyset');

    // A device snapshot sealed by one replica opens on the other: they share the snapshot keyset.
    const snapshot = await new Api(first.baseUrl, tenant.apiKey).post('/v1/memories', {
      snapshot: {},
      raw_text: 'Alice manages the Berlin office.',
    });
    assert.equal(snapshot.status, 200, JSON.stringify(snapshot.body));
    const searched = await new Api(second.baseUrl, tenant.apiKey).post('/v1/memories/search', {
      query: 'Berlin office',
      snapshot: snapshot.body.results.snapshot,
    });
    assert.equal(searched.status, 200, JSON.stringify(searched.body));
  });
});
