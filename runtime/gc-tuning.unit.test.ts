import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

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
