/**
 * The client of the device-search timing (bench/device.ts), in a process of its own, as a device
 * holding a prepared snapshot is: its heap holds the snapshot's bytes and little else. Timed in
 * the bench's own process, the calls also carried that process's collections (its heap holds the
 * earlier scenarios and the parsed snapshot): in one run 3 of the 4 calls over 50 ms had one of
 * 6 to 16 ms of the bench's own inside them.
 *
 *   device-client.js <baseUrl> <snapshot file> <queries file (JSON array)>   (DEVICE_CLIENT_KEY: the API key)
 *
 * Prints one JSON array: per query, the call's milliseconds (request to whole response) and the
 * response text.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { recordCollections } from './collections.js';

/** Bytes kept before the snapshot for a query: `{"query":<query>` and spaces, then `,"snapshot":`. */
const QUERY_ROOM = 1024;

/**
 * Device search bodies as a device holding a prepared snapshot sends them: its bytes, encoded
 * once, with only the query written in front of them per call (JSON allows the spaces that pad
 * it), rather than a new 2.8 MB string and its UTF-8 copy per call. Calls must not overlap:
 * every body is the same buffer.
 */
function deviceSearchBodies(snapshot: Buffer): (query: string) => Uint8Array {
  const body = Buffer.alloc(QUERY_ROOM + snapshot.length + 1, ' ');
  snapshot.copy(body, QUERY_ROOM);
  body[body.length - 1] = '}'.charCodeAt(0);
  const separator = Buffer.from(',"snapshot":');
  return (query) => {
    const head = Buffer.from(`{"query":${JSON.stringify(query)}`);
    if (head.length + separator.length > QUERY_ROOM) throw new Error('device bench query too long for its room');
    body.fill(' ', 0, QUERY_ROOM);
    head.copy(body, 0);
    separator.copy(body, QUERY_ROOM - separator.length);
    return body;
  };
}

/** A POST timed from the call to the whole response; a status of 300 or more throws. */
export async function timedPost(
  baseUrl: string,
  apiKey: string,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status >= 300) throw new Error(`POST ${path} → ${response.status}: ${text.slice(0, 300)}`);
  return { status: response.status, text, ms };
}

export interface DeviceCall {
  ms: number;
  text: string;
  /** Milliseconds of this client process's own garbage collections inside the call (prepared calls only). */
  clientGcMs?: number;
}

/** Runs the device searches in a client process of their own (this module as a script). */
export async function deviceSearchesInClient(
  baseUrl: string,
  apiKey: string,
  snapshotFile: string,
  queriesFile: string,
): Promise<DeviceCall[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(import.meta.url), baseUrl, snapshotFile, queriesFile], {
    env: { ...process.env, DEVICE_CLIENT_KEY: apiKey },
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(stdout) as DeviceCall[];
}

async function main(baseUrl: string, snapshotFile: string, queriesFile: string, apiKey: string): Promise<void> {
  const body = deviceSearchBodies(readFileSync(snapshotFile));
  const queries = JSON.parse(readFileSync(queriesFile, 'utf8')) as string[];
  // The connection and the HTTP client's first use, before the timed calls (a device's client is warm).
  await (await fetch(`${baseUrl}/v1/ready`)).text();
  // The client's own collections, to tell a slow call the client made from one the service or
  // the way made: a device's runtime is not the service's to tune.
  const recording = recordCollections();
  const calls: (DeviceCall & { start: number })[] = [];
  for (const query of queries) {
    const start = performance.now();
    const { ms, text } = await timedPost(baseUrl, apiKey, '/v1/memories/search', body(query));
    calls.push({ ms, text, start });
  }
  await recording.stop();
  const overlap = (call: { start: number; ms: number }): number =>
    recording.collections.reduce(
      (sum, gc) => sum + Math.max(0, Math.min(gc.start + gc.ms, call.start + call.ms) - Math.max(gc.start, call.start)),
      0,
    );
  process.stdout.write(JSON.stringify(calls.map((call) => ({ ms: call.ms, text: call.text, clientGcMs: overlap(call) }))));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [baseUrl, snapshotFile, queriesFile] = process.argv.slice(2);
  const apiKey = process.env.DEVICE_CLIENT_KEY;
  if (!baseUrl || !snapshotFile || !queriesFile || !apiKey) {
    process.stderr.write('usage: device-client.js <baseUrl> <snapshot file> <queries file>   (DEVICE_CLIENT_KEY)\n');
    process.exit(2);
  }
  await main(baseUrl, snapshotFile, queriesFile, apiKey);
}
