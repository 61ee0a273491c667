/**
 * The whole stack for the dev command, the test runner and the bench: the backing services
 * (embedded unless MONGODB_URI / TEMPORAL_ADDRESS are set) and the service processes.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadEmbeddedMongoConfig, projectRoot } from '../config/index.js';
import { freePort, registerCleanup, spawnNodeService, startMongoStandin, startTemporal, type MongoStandinBackend } from './embedded.js';

export interface BackingServices {
  mongoUri: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  embedded: { mongo: boolean; temporal: boolean };
  /** The embedded store only (null otherwise): a clean stop and a start on the same files and port. */
  restartMongo: (() => Promise<void>) | null;
  stop(): Promise<void>;
}

export interface BackingOptions {
  dataDir: string;
  /** Default: EMBEDDED_MONGO_BACKEND (journal). */
  mongoBackend?: MongoStandinBackend;
  temporalPort?: number;
  /** null: headless (no Web UI). */
  temporalUiPort?: number | null;
  mongoPort?: number;
}

export async function startBackingServices(options: BackingOptions): Promise<BackingServices> {
  mkdirSync(options.dataDir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    stops.length = 0;
  };
  registerCleanup(stopAll);
  try {
    let mongoUri = process.env.MONGODB_URI;
    let restartMongo: (() => Promise<void>) | null = null;
    if (!mongoUri) {
      const settings = loadEmbeddedMongoConfig(process.env);
      const standinOptions = {
        dataDir: options.dataDir,
        port: options.mongoPort ?? (await freePort()),
        backend: options.mongoBackend ?? settings.EMBEDDED_MONGO_BACKEND,
        heapMb: settings.EMBEDDED_MONGO_HEAP_MB,
        fsyncMs: settings.EMBEDDED_MONGO_FSYNC_MS,
      };
      let mongo = await startMongoStandin(standinOptions);
      stops.push(() => mongo.stop());
      mongoUri = mongo.uri;
      restartMongo = async () => {
        await mongo.stop();
        mongo = await startMongoStandin(standinOptions);
      };
    }
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    let temporalUiUrl: string | null = process.env.TEMPORAL_UI_URL ?? null;
    if (!temporalAddress) {
      const temporal = await startTemporal({
        dataDir: options.dataDir,
        port: options.temporalPort ?? (await freePort()),
        uiPort: options.temporalUiPort === undefined ? null : options.temporalUiPort,
      });
      stops.push(() => temporal.stop());
      temporalAddress = temporal.address;
      temporalUiUrl = temporal.uiUrl;
    }
    return {
      mongoUri,
      temporalAddress,
      temporalUiUrl,
      embedded: { mongo: !process.env.MONGODB_URI, temporal: !process.env.TEMPORAL_ADDRESS },
      restartMongo,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Starts `node dist/<entry>` with the given environment, logging to a file (a descriptor, not a
 * pipe, so its output never depends on this process). It cannot outlive this process.
 */
/** `watchdogPid`: the process whose end stops this one (default: the caller). */
export function spawnService(entry: string, env: Record<string, string>, logFile: string, watchdogPid?: number): ChildProcess {
  return spawnNodeService(
    path.basename(entry, '.js'),
    path.join(projectRoot(), 'dist', entry),
    { ...process.env, ...env },
    logFile,
    watchdogPid,
  );
}

export async function waitForReady(baseUrl: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'not ready';
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`service exited with code ${child.exitCode} before it was ready`);
    try {
      const response = await fetch(`${baseUrl}/v1/ready`);
      if (response.ok) return;
      lastError = `${response.status} ${await response.text()}`;
    } catch (error) {
      lastError = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`service at ${baseUrl} not ready after ${timeoutMs} ms: ${lastError}`);
}

export async function stopChild(child: ChildProcess | undefined, graceMs = 10_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
