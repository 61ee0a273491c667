/** The one data layer: every MongoDB access in the service goes through these repositories. */
import type { Config } from '../config/index.js';
import { PredicateClassifier } from '../core/fact-lexicon.js';
import { ChunkRepository } from './chunks.js';
import { CollectionRepository } from './collections.js';
import { connectDatabase, ping, type Database } from './db.js';
import { EventAckRepository } from './event-acks.js';
import { EventLog } from './events.js';
import { FactEvents } from './fact-events.js';
import { FileRepository } from './files.js';
import { GraphRepository } from './graph.js';
import { IdempotencyRepository } from './idempotency.js';
import { IndexChangeFeed } from './index-changes.js';
import { IndexSnapshotRepository } from './index-snapshots.js';
import { MemoryRepository } from './memories.js';
import { MemoryPurge, PurgeIntentRows } from './memory-purge.js';
import { SnapshotRepository } from './snapshots.js';
import { TenantRepository } from './tenants.js';
import { TicketRepository } from './tickets.js';
import { UploadRepository } from './uploads.js';
import { WebhookRepository } from './webhooks.js';
import { ProcedureRepository } from './procedures.js';
import { ProcedureDerivation } from '../core/procedures/derivation.js';

export interface Store {
  database: Database;
  tenants: TenantRepository;
  collections: CollectionRepository;
  memories: MemoryRepository;
  chunks: ChunkRepository;
  files: FileRepository;
  graph: GraphRepository;
  /**
   * Removing a memory's graph rows goes through here (it announces the supersessions that undoes),
   * and so does announcing the ones a memory's facts bring about (store/fact-events.ts).
   */
  factEvents: FactEvents;
  /** Procedure traces, observed instances and mined patterns (store/procedures.ts): typed reads and writes. */
  procedureRecords: ProcedureRepository;
  /** The derivation rules applied over `procedureRecords`: replacing and removing traces, mining (core/procedures/derivation.ts). */
  procedures: ProcedureDerivation;
  uploads: UploadRepository;
  tickets: TicketRepository;
  eventAcks: EventAckRepository;
  events: EventLog;
  indexChanges: IndexChangeFeed;
  /** Persisted lexical partitions, so a cold index load does not re-tokenise (store/index-snapshots.ts). */
  indexSnapshots: IndexSnapshotRepository;
  idempotency: IdempotencyRepository;
  /** Deleting memories: the one cascade (store/memory-purge.ts). */
  purge: MemoryPurge;
  /** Device snapshots: export reads and import writes (store/snapshots.ts). */
  snapshots: SnapshotRepository;
  /** Webhook subscriptions, their delivery cursors and attempts (store/webhooks.ts). */
  webhooks: WebhookRepository;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function openStore(
  config: Pick<
    Config,
    'MONGODB_DB' | 'EVENT_LOG_MAX_EVENTS_PER_TENANT' | 'IDEMPOTENCY_TTL_SECONDS' | 'INDEX_FEED_MAX_ENTRIES' | 'FACT_LEXICON'
  >,
  uri: string,
): Promise<Store> {
  const database = await connectDatabase(uri, config.MONGODB_DB);
  const { db, capabilities } = database;
  const events = await EventLog.open(db, capabilities, config.EVENT_LOG_MAX_EVENTS_PER_TENANT);
  const graph = new GraphRepository(db);
  const procedureRecords = new ProcedureRepository(db);
  const procedures = new ProcedureDerivation(procedureRecords);
  const indexChanges = await IndexChangeFeed.open(db, capabilities, config.INDEX_FEED_MAX_ENTRIES);
  const repositories = {
    memories: new MemoryRepository(db),
    chunks: new ChunkRepository(db),
    files: new FileRepository(db),
    graph,
    factEvents: new FactEvents(graph, events, indexChanges, new PredicateClassifier(config.FACT_LEXICON)),
    uploads: new UploadRepository(db),
    indexChanges,
    indexSnapshots: new IndexSnapshotRepository(db),
    idempotency: new IdempotencyRepository(db, config.IDEMPOTENCY_TTL_SECONDS),
  };
  const store: Store = {
    database,
    ...repositories,
    tenants: new TenantRepository(db),
    collections: new CollectionRepository(db),
    tickets: new TicketRepository(db),
    eventAcks: new EventAckRepository(db),
    events,
    procedureRecords,
    procedures,
    purge: new MemoryPurge(new PurgeIntentRows(db), { ...repositories, procedures }),
    snapshots: new SnapshotRepository(repositories),
    webhooks: new WebhookRepository(db),
    ping: () => ping(db),
    close: () => database.close(),
  };
  await Promise.all([
    store.purge.ensureIndexes(),
    store.tenants.ensureIndexes(),
    store.collections.ensureIndexes(),
    store.memories.ensureIndexes(),
    store.chunks.ensureIndexes(),
    store.indexSnapshots.ensureIndexes(),
    store.files.ensureIndexes(),
    store.graph.ensureIndexes(),
    store.procedureRecords.ensureIndexes(),
    store.eventAcks.ensureIndexes(),
    store.uploads.ensureIndexes(),
    store.tickets.ensureIndexes(),
    store.idempotency.ensureIndexes(),
    store.webhooks.ensureIndexes(),
  ]);
  return store;
}

export type { ChunkDoc } from './chunks.js';
export type { MemoryStatus, MemoryKind } from './memories.js';
