/**
 * `npm run cli -- <command>`: the user CLI on top of the typed REST client and the events client.
 * ingest a file or a folder (a progress bar per file, from upload to the live ingestion events),
 * search (a table of hits), list, delete. Run with --help.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fetchSigningKeys, MemoryEventsClient } from '../client/memory-events.js';
import { ApiError, MemoryServiceClient } from '../client/rest.js';
import { isIngestionProgress } from '../client/frames.js';
import { progressBar, progressFraction, sanitize } from '../client/tail-view.js';

const USAGE = `Usage: npm run cli -- <command> [options]

  ingest <file-or-folder>      upload every file (folders recursively) and follow its ingestion live
  search <query>               search and print the hits as a table   (--limit <n>, default 10)
  list                         list memories                           (--limit <n>, --offset <n>)
  delete <memory-id>...        delete memories permanently

Options:
  --collection <uuid>   the collection (default: ENGRAM_COLLECTION)
  --url <url>           service URL (default: ENGRAM_URL, else http://127.0.0.1:8080)
  --key <key>           API key (default: ENGRAM_API_KEY)
  --help`;

const MEDIA_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

class UsageError extends Error {}

function filesUnder(target: string): string[] {
  const stat = statSync(target);
  if (stat.isFile()) return [target];
  return readdirSync(target, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => filesUnder(path.join(target, entry.name)));
}

/** One line per file, redrawn in place on a terminal; plain lines when piped. */
class FileBoard {
  readonly #lines: string[] = [];
  #drawn = 0;
  constructor(
    readonly names: string[],
    private readonly tty: boolean,
  ) {
    this.#lines = names.map((name) => this.#format(name, 0, 'waiting'));
    this.#render();
  }

  #format(name: string, fraction: number, stage: string, note = ''): string {
    const label = name.length > 28 ? `…${name.slice(-27)}` : name.padEnd(28);
    return `${label} ${progressBar(fraction)} ${`${Math.floor(fraction * 100)}%`.padStart(4)} ${stage.padEnd(11)}${note ? ` ${note}` : ''}`;
  }

  update(index: number, fraction: number, stage: string, note = ''): void {
    const line = this.#format(this.names[index]!, fraction, stage, sanitize(note));
    if (line === this.#lines[index]) return;
    this.#lines[index] = line;
    if (this.tty) this.#render();
    else if (stage !== 'uploading') process.stdout.write(`${line}\n`);
  }

  #render(): void {
    if (!this.tty) return;
    const up = this.#drawn > 0 ? `\u001b[${this.#drawn}A` : '';
    process.stdout.write(`${up}${this.#lines.map((line) => `\r\u001b[2K${line}`).join('\n')}\n`);
    this.#drawn = this.#lines.length;
  }
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

const clip = (text: string, max: number) => {
  const clean = sanitize(text).replace(/\s+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
};

async function ingest(
  client: MemoryServiceClient,
  settings: { url: string; key: string; collection: string },
  target: string,
): Promise<number> {
  const files = filesUnder(target);
  if (files.length === 0) throw new UsageError(`no files under ${target}`);
  const names = files.map((file) => (files.length === 1 ? path.basename(file) : path.relative(target, file)));
  const board = new FileBoard(names, Boolean(process.stdout.isTTY));
  const fileOf = new Map<string, number>();
  const pending = new Map<string, { fraction: number; stage: string; message: string }>();
  const settled = new Map<number, 'complete' | 'failed'>();
  let allSettled: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allSettled = resolve));

  const apply = (index: number, update: { fraction: number; stage: string; message: string }) => {
    board.update(index, update.fraction, update.stage, update.message);
    if (update.stage === 'complete' || update.stage === 'failed') {
      settled.set(index, update.stage);
      if (settled.size === files.length) allSettled();
    }
  };

  const keys = await fetchSigningKeys(settings.url, settings.key);
  const events = new MemoryEventsClient({
    baseUrl: settings.url,
    apiKey: settings.key,
    collections: [settings.collection],
    eventTypes: ['ingestion_progress'],
    verify: keys.length > 0 ? { jwks: keys } : false,
    onEvent: (frame) => {
      if (!isIngestionProgress(frame)) return;
      const update = { fraction: progressFraction(frame.payload), stage: frame.payload.user_stage, message: frame.payload.message ?? '' };
      const index = fileOf.get(frame.payload.engram_id);
      if (index === undefined) pending.set(frame.payload.engram_id, update);
      else if (!settled.has(index)) apply(index, update);
    },
  });
  // Subscribed before the first upload, so no event of these memories is missed.
  await events.start();
  await events.waitFor((c) => c.stats.subscriptions >= 1, 15_000);

  for (const [index, file] of files.entries()) {
    const data = readFileSync(file);
    try {
      const accepted = await client.memories.createFromFile({
        collectionId: settings.collection,
        filename: path.basename(file),
        mediaType: MEDIA_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        data,
        name: names[index],
        inlineMaxBytes: 0,
        onProgress: ({ sentBytes, totalBytes }) => board.update(index, totalBytes ? (sentBytes / totalBytes) * 0.25 : 0, 'uploading'),
      });
      fileOf.set(accepted.id, index);
      board.update(index, 0.25, 'queued');
      const early = pending.get(accepted.id);
      if (early) apply(index, early);
    } catch (error) {
      apply(index, {
        fraction: 0,
        stage: 'failed',
        message: error instanceof ApiError ? `${error.code}: ${error.message}` : String(error),
      });
    }
  }
  await finished;
  await events.stop();
  const failed = [...settled.values()].filter((outcome) => outcome === 'failed').length;
  process.stdout.write(`Done: ${files.length - failed} of ${files.length} file(s) ingested${failed ? `, ${failed} failed` : ''}.\n`);
  return failed > 0 ? 1 : 0;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      collection: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
      limit: { type: 'string' },
      offset: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const url = values.url ?? process.env.ENGRAM_URL ?? 'http://127.0.0.1:8080';
  const key = values.key ?? process.env.ENGRAM_API_KEY;
  if (!key) throw new UsageError('an API key is required: --key or ENGRAM_API_KEY');
  const collection = values.collection ?? process.env.ENGRAM_COLLECTION;
  const client = new MemoryServiceClient({ baseUrl: url, apiKey: key });
  const limit = values.limit ? Number(values.limit) : undefined;

  switch (command) {
    case 'ingest': {
      if (!collection) throw new UsageError('ingest needs --collection (or ENGRAM_COLLECTION)');
      if (rest.length !== 1) throw new UsageError('ingest takes one file or folder');
      return ingest(client, { url, key, collection }, rest[0]!);
    }
    case 'search': {
      if (!collection) throw new UsageError('search needs --collection (or ENGRAM_COLLECTION)');
      const query = rest.join(' ');
      if (!query) throw new UsageError('search needs a query');
      const result = await client.memories.search({ query, collection_ids: [collection], limit: limit ?? 10 });
      const rows = result.hits.map((hit, rank) => [
        String(rank + 1),
        hit.score.toFixed(3),
        hit.memory_id,
        clip(hit.memory.name ?? '', 24),
        clip(hit.text, 60),
      ]);
      process.stdout.write(`${table(['#', 'score', 'memory', 'name', 'text'], rows)}\n${result.total_hits} hit(s)\n`);
      return 0;
    }
    case 'list': {
      const page = await client.memories.list({
        collectionIds: collection ? [collection] : undefined,
        limit: limit ?? 20,
        offset: values.offset ? Number(values.offset) : undefined,
      });
      const rows = page.results.map((memory) => [
        memory.id,
        memory.status,
        memory.kind,
        clip(memory.name ?? '', 32),
        String(memory.chunk_count ?? ''),
        memory.created_at,
      ]);
      process.stdout.write(`${table(['id', 'status', 'kind', 'name', 'chunks', 'created'], rows)}\n${page.total_entries} memorie(s)\n`);
      return 0;
    }
    case 'delete': {
      if (rest.length === 0) throw new UsageError('delete needs at least one memory id');
      const result = await client.memories.deleteMany(rest);
      for (const id of result.deleted) process.stdout.write(`deleted ${id}\n`);
      for (const id of result.not_found) process.stdout.write(`not found ${id}\n`);
      return result.not_found.length > 0 ? 1 : 0;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`${error instanceof ApiError ? `${error.code ?? 'error'}: ${error.message}` : String(error)}\n`);
    process.exitCode = 1;
  }
}
