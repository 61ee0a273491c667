/**
 * docker-compose.yml runs the service in production mode, with both shared secrets wired from one
 * place into every API replica and a data volume (issue 20, item 6). No YAML parser is a
 * dependency, so the checks read the file's blocks as text: each names the line it expects.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { projectRoot } from './index.js';

const compose = readFileSync(path.join(projectRoot(), 'docker-compose.yml'), 'utf8');

/** The lines of a top-level block (`name:` at column 0) or of an anchor (`x-app: &app`). */
function block(header: string): string[] {
  const lines = compose.split('\n');
  const start = lines.findIndex((line) => line === header || line.startsWith(`${header} `));
  assert.ok(start >= 0, `docker-compose.yml has ${header}`);
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => /^\S/.test(line));
  return rest.slice(0, end < 0 ? undefined : end);
}

it('turns production mode on for every app service and points at the shared secrets', () => {
  const env = block('x-app-env:').map((line) => line.trim());
  assert.ok(env.includes("PRODUCTION_MODE: 'true'"));
  assert.ok(env.includes('UPLOAD_SIGNING_SECRET_FILE: /run/secrets/upload_signing_secret'));
  assert.ok(env.includes('EVENT_SIGNING_KEYSET_PATH: /run/secrets/event_signing_keyset'));
  assert.ok(env.includes('SNAPSHOT_SIGNING_KEYSET_PATH: /run/secrets/snapshot_signing_keyset'));
  assert.ok(!env.some((line) => line.startsWith('UPLOAD_SIGNING_SECRET:') || line.startsWith('EVENT_SIGNING_KEYSET:')), 'no secret inline');
});

it('mounts both secrets and a data volume into every app container', () => {
  const app = block('x-app:').map((line) => line.trim());
  assert.ok(app.includes('- upload_signing_secret'));
  assert.ok(app.includes('- event_signing_keyset'));
  assert.ok(app.includes('- snapshot_signing_keyset'));
  assert.ok(app.includes('- engram-data:/data'));
  assert.ok(block('volumes:').some((line) => line.trim() === 'engram-data:'));
});

it('reads every secret from one folder', () => {
  const files = block('secrets:')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('file:'));
  assert.deepEqual(files, [
    'file: ${ENGRAM_SECRETS_DIR:-./deploy/secrets}/upload-signing.secret',
    'file: ${ENGRAM_SECRETS_DIR:-./deploy/secrets}/event-signing-keyset.json',
    'file: ${ENGRAM_SECRETS_DIR:-./deploy/secrets}/snapshot-signing-keyset.json',
  ]);
});

it('builds the api and worker services from the shared anchors', () => {
  const api = block('services:').join('\n');
  for (const service of ['api', 'worker']) {
    const own = api.split(`\n  ${service}:\n`)[1]?.split(/\n {2}\S/)[0] ?? '';
    assert.match(own, /<<: \*app\n/, `${service} uses x-app`);
    assert.match(own, /<<: \*app-env\n/, `${service} uses x-app-env`);
  }
});

it('publishes the api on a host port range, so two replicas can run side by side', () => {
  const services = block('services:').join('\n');
  const api = services.split('\n  api:\n')[1]?.split(/\n {2}\S/)[0] ?? '';
  const published = [...api.matchAll(/- '(\d+)(?:-(\d+))?:8080'/g)];
  assert.equal(published.length, 1, 'one port mapping for the API container');
  const [, first, last] = published[0]!;
  assert.ok(last !== undefined && Number(last) > Number(first!), `a range of host ports, not one fixed port: ${published[0]![0]}`);
});
