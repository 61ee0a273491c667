import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

import { projectRoot } from '../config/index.js';
import { NEW_SPACE_CAPACITY_FLAG, SERVICE_NODE_FLAGS, startedWithServiceFlags } from './gc-tuning.js';

const tuning = fileURLToPath(new URL('./gc-tuning.js', import.meta.url));

/**
 * A child process with about 60 MB of live heap that allocates and drops 64 KiB Buffers, as request
 * bodies' socket pieces and driver replies are, and counts its major collections.
 */
const CHURN = `
const { PerformanceObserver, constants } = await import('node:perf_hooks');
if (process.argv[1] === 'tuned') (await import(process.argv[2])).tuneGarbageCollector();
const live = [];
for (let i = 0; i < 600_000; i++) live.push({ i, text: 'row ' + i });
let major = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
}).observe({ entryTypes: ['gc'] });
let sum = 0;
for (let round = 0; round < 200; round++) {
  for (let piece = 0; piece < 48; piece++) sum += Buffer.allocUnsafeSlow(64 * 1024).fill(piece)[0];
  await new Promise((resolve) => setImmediate(resolve));
}
await new Promise((resolve) => setTimeout(resolve, 50));
process.stdout.write(JSON.stringify({ major, live: live.length, sum }));
`;

async function majorCollections(mode: 'tuned' | 'default'): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHURN, mode, tuning]);
  return (JSON.parse(stdout) as { major: number }).major;
}

describe('garbage collector tuning', () => {
  it('lets short-lived Buffers go in scavenges, not in major collections of the whole heap', async () => {
    // 600 MiB of 64 KiB Buffers, 3 MiB per event-loop turn (a device search's body is 2.8 MiB).
    const [tuned, untuned] = await Promise.all([majorCollections('tuned'), majorCollections('default')]);
    assert.ok(tuned <= 1, `${tuned} major collections tuned (${untuned} without the tuning)`);
  });
});

/**
 * A child process whose young objects partly survive (rows kept until 200,000 pile up), the pattern
 * that grows new space, tuned from inside as a service does; prints new space's size in MB.
 */
const GROWTH = `
const v8 = await import('node:v8');
(await import(process.argv[1])).tuneGarbageCollector();
let kept = [];
for (let i = 0; i < 3_000_000; i++) {
  kept.push({ i, text: 'row ' + i, pair: [i, i] });
  if (kept.length > 200_000) kept = [];
}
const newSpace = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
process.stdout.write(String(newSpace.space_size / 2 ** 20));
`;

async function newSpaceMb(flags: readonly string[]): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [...flags, '--input-type=module', '-e', GROWTH, tuning]);
  return Number(stdout);
}

describe('service node flags', () => {
  it('cap new space only from the command line: the same churn grows it past the cap when the flag is set from inside', async () => {
    const [fromCommandLine, fromInside] = await Promise.all([newSpaceMb(SERVICE_NODE_FLAGS), newSpaceMb([])]);
    // 8 MB of capacity: V8 counts both semi-spaces, each twice as large without pointer compression.
    assert.ok(fromCommandLine <= 32, `${fromCommandLine} MB of new space with the service flags`);
    assert.ok(fromInside > 32, `${fromInside} MB of new space with the flag set from inside (the churn must grow it)`);
  });

  const cases: { name: string; execArgv: string[]; started: boolean }[] = [
    { name: 'no flags', execArgv: [], started: false },
    { name: 'the flags', execArgv: [...SERVICE_NODE_FLAGS], started: true },
    { name: 'the flags among others', execArgv: ['--enable-source-maps', NEW_SPACE_CAPACITY_FLAG, '--cpu-prof'], started: true },
    { name: 'another capacity', execArgv: ['--scavenger-max-new-space-capacity-mb=16'], started: false },
    { name: 'only a prefix of the flag', execArgv: ['--scavenger-max-new-space-capacity-mb'], started: false },
  ];
  for (const { name, execArgv, started } of cases) {
    it(`a process started with ${name} is ${started ? '' : 'not '}taken as started with the service flags`, () => {
      assert.equal(startedWithServiceFlags(execArgv), started);
    });
  }
});

/**
 * Every command that starts a service process outside the code (which passes SERVICE_NODE_FLAGS
 * itself, dev/embedded.ts): package.json's scripts, the image's CMD, docker-compose's commands. They
 * cannot import the constant, so each is read here as words: the script, and what comes before it.
 */
function launchCommands(): { name: string; words: string[] }[] {
  const root = projectRoot();
  const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  const commands = ['dev', 'start', 'api', 'worker'].map((name) => ({
    name: `package.json ${name}`,
    // The last command of the script (`dev` sets up first).
    words: scripts[name]!.split('&&').at(-1)!.trim().split(/\s+/),
  }));
  const cmd = read('Dockerfile')
    .split('\n')
    .filter((line) => line.startsWith('CMD '));
  assert.equal(cmd.length, 1, 'the Dockerfile has one CMD');
  commands.push({ name: 'Dockerfile CMD', words: JSON.parse(cmd[0]!.slice(4)) as string[] });
  const compose = [...read('docker-compose.yml').matchAll(/command: (\[.*'dist\/.*\])/g)];
  assert.equal(compose.length, 2, 'docker-compose starts the API and the worker');
  for (const [index, match] of compose.entries())
    commands.push({ name: `docker-compose command ${index + 1}`, words: JSON.parse(match[1]!.replaceAll("'", '"')) as string[] });
  return commands;
}

describe('service launch commands', () => {
  for (const { name, words } of launchCommands()) {
    it(`${name} starts node with the service flags before the script`, () => {
      const script = words.findIndex((word) => word.startsWith('dist/') && word.endsWith('.js'));
      assert.ok(script > 0, `${name}: no dist/ script in ${words.join(' ')}`);
      for (const flag of SERVICE_NODE_FLAGS)
        assert.ok(words.slice(0, script).includes(flag), `${name}: ${flag} missing in ${words.join(' ')}`);
    });
  }
});
