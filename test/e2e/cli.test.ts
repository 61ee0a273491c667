/**
 * The user CLI (bin/cli.ts) as a person runs it: ingest a folder in a real terminal (tmux) and
 * read the screen back, then search, list and delete from a script.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { projectRoot } from '../../config/index.js';
import { newTenant, sleep, stack, type TenantFixture } from '../support/client.js';
import { closeDatabase } from '../support/db.js';

after(closeDatabase);
const execFileAsync = promisify(execFile);
const CLI = path.join(projectRoot(), 'dist', 'bin', 'cli.js');

describe('user CLI', () => {
  let tenant: TenantFixture;
  let folder: string;
  const session = `engram-cli-${process.pid}`;
  before(async () => {
    tenant = await newTenant('cli');
    folder = mkdtempSync(path.join(tmpdir(), 'engram-cli-'));
    writeFileSync(path.join(folder, 'alpha.txt'), 'The keeper of the Sumburgh lighthouse is Ingrid.');
    writeFileSync(path.join(folder, 'beta.md'), '# Ferries\n\nThe ferry to Fair Isle sails on Tuesdays.');
    writeFileSync(path.join(folder, 'gamma.txt'), Array.from({ length: 400 }, (_, i) => `Tide note ${i}: all calm at Lerwick.`).join('\n'));
  });
  after(() => {
    try {
      execFileSync('tmux', ['kill-session', '-t', session], { stdio: 'ignore' });
    } catch {
      // already gone
    }
    rmSync(folder, { recursive: true, force: true });
  });

  const args = (...rest: string[]) => [...rest, '--url', stack().apiUrl, '--key', tenant.apiKey, '--collection', tenant.collectionId];

  it('ingests a folder in a terminal with a progress bar per file that ends complete', async () => {
    const command = [process.execPath, CLI, ...args('ingest', folder)].map((part) => `'${part.replaceAll("'", "'\\''")}'`).join(' ');
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '150', '-y', '30', `${command}; echo EXIT=$?; sleep 120`]);
    let screen = '';
    for (let waited = 0; waited < 120_000 && !screen.includes('EXIT='); waited += 250) {
      await sleep(250);
      screen = execFileSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' });
    }
    assert.match(screen, /EXIT=0/, screen);
    assert.match(screen, /Done: 3 of 3 file\(s\) ingested\./, screen);
    for (const name of ['alpha.txt', 'beta.md', 'gamma.txt']) {
      const line = screen.split('\n').find((entry) => entry.startsWith(name));
      assert.ok(line, `${name} has a line:\n${screen}`);
      assert.match(line, /\[#{20}\] 100% complete/, line);
    }
    // Redrawn in place: each file has exactly one line on screen.
    assert.equal(screen.split('\n').filter((entry) => entry.startsWith('alpha.txt')).length, 1, screen);
  });

  it('searches and prints a table, lists, and deletes', async () => {
    const search = await execFileAsync(process.execPath, [CLI, ...args('search', 'Who keeps the Sumburgh lighthouse?')]);
    const lines = search.stdout.split('\n');
    assert.match(lines[0]!, /^#\s+score\s+memory\s+name\s+text$/);
    assert.match(lines[2]!, /^1\s+\d\.\d{3}\s+[0-9a-f-]{36}\s+alpha\.txt\s+.*Ingrid/);

    const list = await execFileAsync(process.execPath, [CLI, ...args('list')]);
    assert.match(list.stdout, /^id\s+status\s+kind\s+name\s+chunks\s+created/);
    assert.match(list.stdout, /3 memorie\(s\)/);
    const ids = [...list.stdout.matchAll(/^([0-9a-f-]{36})\s+complete/gm)].map((match) => match[1]!);
    assert.equal(ids.length, 3);

    const removed = await execFileAsync(process.execPath, [CLI, ...args('delete', ids[0]!)]);
    assert.equal(removed.stdout.trim(), `deleted ${ids[0]}`);
    await assert.rejects(
      execFileAsync(process.execPath, [CLI, ...args('delete', ids[0]!)]),
      (error: { code?: number; stdout?: string }) => {
        assert.equal(error.code, 1);
        assert.match(error.stdout ?? '', /not found/);
        return true;
      },
    );
  });

  it('refuses bad usage with the usage text and exit code 2', async () => {
    await assert.rejects(
      execFileAsync(process.execPath, [CLI, 'frobnicate', '--key', 'k']),
      (error: { code?: number; stderr?: string }) => {
        assert.equal(error.code, 2);
        assert.match(error.stderr ?? '', /unknown command frobnicate[\s\S]*Usage: npm run cli/);
        return true;
      },
    );
  });
});
