/** Child process for the sequencer test: appends N entries concurrently to a shared log. */
import { connectDatabase } from '../../store/db.js';
import { SequencedLog, type LogEntry } from '../../store/sequenced-log.js';

const [uri, dbName, collection, countArg, label] = process.argv.slice(2);
const database = await connectDatabase(uri!, dbName!);
const log = await SequencedLog.open<LogEntry & { writer: string; n: number }>(database.db, collection!, database.capabilities, {
  maxEntries: 1_000_000,
  maxBytes: 64 * 1024 * 1024,
});
const count = Number(countArg);
await Promise.all(Array.from({ length: count }, (_, n) => log.append({ _id: `${label}-${n}`, writer: label!, n })));
await database.close();
