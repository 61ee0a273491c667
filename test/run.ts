/**
 * `npm test`: boots the real stack (embedded Temporal dev server and MongoDB stand-in, unless
 * MONGODB_URI / TEMPORAL_ADDRESS are set), an API process and a separate worker process, then
 * runs the unit tests and the end-to-end suites with node's test runner, and tears it all down.
 * The suites talk to the API over HTTP like any client; the stack file tells them where it is.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../config/index.js';
import { exitWithCleanup, freePort, registerCleanup } from '../dev/embedded.js';
import { spawnService, startBackingServices, stopChild, waitForReady } from '../dev/stack.js';
import type { StackInfo } from './support/stack-info.js';

const root = projectRoot();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-test-'));
const logDir = path.join(root, 'data', 'test-logs');
rmSync(logDir, { recursive: true, force: true });

function findTests(dir: string, suffix: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findTests(full, suffix));
    else if (entry.name.endsWith(suffix)) found.push(full);
  }
  return found.sort();
}

const started = Date.now();
// The same embedded store `npm run dev` uses (EMBEDDED_MONGO_BACKEND, default journal).
const backing = await startBackingServices({ dataDir });
// A database of its own per run, so a real MongoDB given by MONGODB_URI is never polluted.
const dbName = `engram_test_${Date.now().toString(36)}`;
const apiPort = await freePort();
const serviceEnv: Record<string, string> = {
  MONGODB_URI: backing.mongoUri,
  MONGODB_DB: dbName,
  TEMPORAL_ADDRESS: backing.temporalAddress,
  TEMPORAL_TASK_QUEUE: `memory-ingest-${dbName}`,
  DATA_DIR: dataDir,
  PORT: String(apiPort),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  RATE_LIMIT_PER_SECOND: '1000',
  RATE_LIMIT_BURST: '2000',
  EVENT_LOG_MAX_EVENTS_PER_TENANT: '100000',
  // Small enough that the bad-content and body-limit cases stay fast.
  MAX_CHUNKS_PER_MEMORY: '200',
  BODY_LIMIT_BYTES: String(4 * 1024 * 1024),
  // Small limits so the upload suite exercises them with small files, and URLs expire quickly.
  INLINE_PART_MAX_BYTES: String(128 * 1024),
  UPLOAD_MAX_BYTES: String(2 * 1024 * 1024),
  UPLOAD_URL_TTL_SECONDS: '15',
  // Deletes interrupted by the fault-injection suite are finished within a second or two.
  DELETE_SWEEP_INTERVAL_MS: '1000',
  // Collection changes left unfinished (Temporal unreachable) are reconciled within seconds.
  RECONCILE_INTERVAL_MS: '2000',
  // Pattern mines owed by quiet collections are run within a second or two.
  WORKFLOW_MINE_SWEEP_INTERVAL_MS: '1000',
  // The shared worker delivers no webhooks: the webhooks suite runs its own delivering worker,
  // admitted to its loopback receiver through the test-only outbound origin.
  WEBHOOK_DELIVERY: 'false',
};
const api = spawnService('api/main.js', { ...serviceEnv, ROLE: 'api' }, path.join(logDir, 'api.log'));
const workerMetricsPort = await freePort();
const worker = spawnService(
  'workers/main.js',
  { ...serviceEnv, ROLE: 'worker', WORKER_METRICS_PORT: String(workerMetricsPort) },
  path.join(logDir, 'worker.log'),
);
const stackFile = path.join(dataDir, 'stack.json');
const apiUrl = `http://127.0.0.1:${apiPort}`;
const workerMetricsUrl = `http://127.0.0.1:${workerMetricsPort}/metrics`;
const info: StackInfo = { apiUrl, serviceEnv, workerPid: worker.pid ?? 0, runnerPid: process.pid, logDir, stackFile, workerMetricsUrl };
writeFileSync(stackFile, JSON.stringify(info, null, 2));

registerCleanup(async () => {
  await stopChild(api);
  await stopChild(worker);
  // The crash test may have replaced the worker: stop whichever one the stack file names now.
  try {
    const current = JSON.parse((await import('node:fs')).readFileSync(stackFile, 'utf8')) as StackInfo;
    if (current.workerPid && current.workerPid !== worker.pid) process.kill(current.workerPid, 'SIGTERM');
  } catch {
    // already gone
  }
  await backing.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

await waitForReady(apiUrl, 120_000, api);
process.stderr.write(`stack ready in ${((Date.now() - started) / 1000).toFixed(1)} s (logs: ${logDir})\n`);

const dist = path.join(root, 'dist');
const files = [
  ...[
    'client',
    'mcp',
    'config',
    'core',
    'extractors',
    'models',
    'search',
    'snapshot',
    'store',
    'api',
    'services',
    'workflows',
    'activities',
    'runtime',
    'bench',
  ].flatMap((dir) => {
    try {
      // Unit tests, then the tests beside a module that load a real model (OCR, speech): slower, so
      // they stay out of `npm run test:unit` and run here and in `npm run test:models`.
      return [...findTests(path.join(dist, dir), '.unit.test.js'), ...findTests(path.join(dist, dir), '.model.test.js')];
    } catch {
      return [];
    }
  }),
  // The worker-crash suite replaces the stack's worker with one that lives as long as this runner,
  // so the suites after it (node's runner orders files by name) still have a worker.
  ...findTests(path.join(dist, 'test', 'e2e'), '.test.js'),
];
// TEST_FILTER=word runs only the files whose path contains it (for working on one suite).
const selected = process.env.TEST_FILTER ? files.filter((file) => file.includes(process.env.TEST_FILTER!)) : files;
const testRun = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...selected], {
  stdio: 'inherit',
  env: { ...process.env, STACK_FILE: stackFile },
});
const code = await new Promise<number>((resolve) => testRun.on('exit', (exitCode) => resolve(exitCode ?? 1)));
await exitWithCleanup(code);
