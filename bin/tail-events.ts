/**
 * `npm run events -- [options]`: tails the live memory events of a running service in the
 * terminal (ingestion progress as live progress bars; other events one line each). Signatures are
 * verified against the signing keys fetched at start, pinned for the session. Run with --help.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isUuid } from '../core/ids.js';
import {
  type ControlFrame,
  fetchSigningKeys,
  HttpError,
  MemoryEventsClient,
  type MemoryEventsError,
  type SigningJwk,
  UpgradeRejectedError,
} from '../client/memory-events.js';
import { TailView } from '../client/tail-view.js';

const USAGE = `Usage: npm run events -- [options]

  --collection <uuid>   a collection to follow (repeatable); none = every collection the key can read
  --types <t1,t2>       event types to follow (repeatable or comma-separated), e.g. ingestion_progress; none = all
  --url <url>           service URL (default: ENGRAM_URL, else the running \`npm run dev\` stack, else http://127.0.0.1:8080)
  --key <key>           API key (default: ENGRAM_API_KEY; \`npm run dev\` prints the dev key)
  --subscriber <name>   stable subscriber id: the server remembers its acks, so a restart resumes where it stopped
  --since-seq <n>       resume after this seq (printed when the tail stops)
  --no-verify           do not verify event signatures
  --help

Ctrl-C stops.`;

class UsageError extends Error {}

function projectRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.resolve(here, path.basename(path.dirname(here)) === 'dist' ? '../..' : '..');
}

/** apiUrl from data/dev-stack.json, which `npm run dev` writes while the dev stack runs. */
function devStackUrl(): string | undefined {
  const dataDir = process.env.DATA_DIR ?? path.join(projectRoot(), 'data');
  try {
    const stack = JSON.parse(readFileSync(path.join(dataDir, 'dev-stack.json'), 'utf8')) as { apiUrl?: unknown };
    return typeof stack.apiUrl === 'string' && stack.apiUrl ? stack.apiUrl : undefined;
  } catch {
    return undefined;
  }
}

interface Settings {
  url: string;
  key: string;
  collections: string[];
  types: string[];
  subscriberId: string | undefined;
  sinceSeq: number | undefined;
  verify: boolean;
}

function parseSettings(argv: string[]): Settings | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      collection: { type: 'string', multiple: true },
      types: { type: 'string', multiple: true },
      url: { type: 'string' },
      key: { type: 'string' },
      subscriber: { type: 'string' },
      'since-seq': { type: 'string' },
      'no-verify': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  const key = values.key ?? process.env.ENGRAM_API_KEY;
  if (!key) throw new UsageError('an API key is required: pass --key <key> or set ENGRAM_API_KEY (`npm run dev` prints the dev key)');
  const collections = values.collection ?? [];
  for (const id of collections) if (!isUuid(id)) throw new UsageError(`--collection ${id} is not a uuid`);
  const types = (values.types ?? [])
    .flatMap((value) => value.split(','))
    .map((type) => type.trim())
    .filter(Boolean);
  let sinceSeq: number | undefined;
  if (values['since-seq'] !== undefined) {
    sinceSeq = Number(values['since-seq']);
    if (!Number.isSafeInteger(sinceSeq) || sinceSeq < 0) throw new UsageError('--since-seq must be a non-negative integer');
  }
  const url = values.url ?? process.env.ENGRAM_URL ?? devStackUrl() ?? 'http://127.0.0.1:8080';
  try {
    new URL(url);
  } catch {
    throw new UsageError(`--url ${url} is not a URL`);
  }
  if (values.subscriber !== undefined && !/^[\w.:-]{1,128}$/.test(values.subscriber)) {
    throw new UsageError('--subscriber must be 1 to 128 letters, digits, or . _ : -');
  }
  return { url, key, collections, types, subscriberId: values.subscriber, sinceSeq, verify: !values['no-verify'] };
}

async function main(): Promise<number> {
  let settings: Settings | undefined;
  try {
    settings = parseSettings(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (!settings) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }

  const view = new TailView(process.stdout);
  // Status lines join the live block on a terminal; with stdout piped they go to stderr.
  const note = (text: string) => (process.stdout.isTTY ? view.note(text) : process.stderr.write(`${text}\n`));

  let keys: SigningJwk[] = [];
  if (settings.verify) {
    try {
      keys = await fetchSigningKeys(settings.url, settings.key);
    } catch (error) {
      const hint = error instanceof HttpError && error.isAuthFailure ? '' : ' (or run with --no-verify)';
      process.stderr.write(`Cannot fetch the signing keys: ${(error as Error).message}${hint}\n`);
      return 1;
    }
    if (keys.length === 0) note('! The server publishes no signing keys: events are shown unverified.');
    else note(`Verifying signatures with pinned key${keys.length > 1 ? 's' : ''} ${keys.map((key) => key.kid).join(', ')}`);
  } else {
    note('! Signature verification is off (--no-verify).');
  }

  let subscriptions = 0;
  const client = new MemoryEventsClient({
    baseUrl: settings.url,
    apiKey: settings.key,
    collections: settings.collections,
    eventTypes: settings.types,
    subscriberId: settings.subscriberId,
    lastProcessedSeq: settings.sinceSeq,
    verify: keys.length > 0 ? { jwks: keys } : false,
    onEvent: (frame) => view.event(frame),
    onControl: (frame: ControlFrame) => {
      if (frame.action !== 'subscribed') return;
      subscriptions += 1;
      const collections = Array.isArray(frame.collections) && frame.collections.length ? frame.collections.join(', ') : 'all readable';
      const types = Array.isArray(frame.event_types) && frame.event_types.length ? frame.event_types.join(', ') : 'all';
      const resumed = client.highWaterSeq !== undefined ? ` (after seq ${client.highWaterSeq})` : '';
      note(`${subscriptions === 1 ? 'Subscribed' : 'Resubscribed'}${resumed}: collections ${collections}; types ${types}. Ctrl-C stops.`);
    },
    onError: (error: MemoryEventsError) => {
      const retrying =
        error.code === 'connection_lost' ||
        error.code === 'heartbeat_timeout' ||
        (error instanceof UpgradeRejectedError && error.retryable) ||
        error.code === 'handler_failed' ||
        (error instanceof HttpError && !error.isAuthFailure);
      note(`! ${error.message}${retrying ? ' — reconnecting' : ''}`);
    },
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      process.exit(130); // a second Ctrl-C: do not wait for the clean close
    }
    stopping = true;
    await client.stop();
    view.close();
    const seq = client.highWaterSeq;
    process.stderr.write(`Stopped (${signal}).${seq !== undefined ? ` Last processed seq ${seq}: resume with --since-seq ${seq}.` : ''}\n`);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  try {
    await client.start();
  } catch (error) {
    view.close();
    process.stderr.write(`Cannot subscribe: ${(error as Error).message}\n`);
    return 1;
  }
  const failure = await client.done;
  view.close();
  if (failure && !stopping) {
    process.stderr.write(`Stopped: ${failure.message}\n`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
