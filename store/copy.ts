/**
 * Copies one database to another MongoDB (the embedded stand-in's data to a real MongoDB, or
 * back): every collection, its indexes and every document, in batches. Documents are read with
 * BSON's wrapper types kept (Int32, Double, Long, Binary stay exactly what they were), so the copy
 * holds the same bytes the source did. Meant for a quiescent source (the service stopped): writes
 * made while it runs may or may not be copied, and the summary says when the source changed.
 */
import type { Db, Document, IndexDescription } from 'mongodb';
import { connectDatabase, type Database } from './db.js';

export class StoreCopyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreCopyError';
  }
}

export interface StoreCopyOptions {
  sourceUri: string;
  sourceDb: string;
  targetUri: string;
  targetDb: string;
  /** Drop the target database first when it holds anything; otherwise a non-empty target is refused. */
  replace?: boolean;
  /** Documents per insert (default 1000); a batch also ends at BATCH_BYTES. */
  batchDocuments?: number;
  /** Called after each batch (for a progress line). */
  onProgress?: (collection: string, copied: number) => void;
}

export interface CopiedCollection {
  name: string;
  documents: number;
  /** Secondary indexes created on the target (the `_id` index is always there). */
  indexes: string[];
  /** Documents in the source when the copy of this collection ended: differs when it changed meanwhile. */
  sourceDocumentsAfter: number;
}

export interface StoreCopyResult {
  collections: CopiedCollection[];
  documents: number;
  /** Whether the target's old contents were dropped (`replace`). */
  replaced: boolean;
}

/** Bounds one insertMany's size well below the 48 MB message limit (chunks carry 1.5 KB vectors). */
const BATCH_BYTES = 8 * 1024 * 1024;

/** Collections that are the server's or this code's own scratch, never data. */
const isInternal = (name: string): boolean => name.startsWith('system.') || name.startsWith('_capability_probe_');

async function dataCollections(db: Db): Promise<{ name: string; options: Document }[]> {
  const infos = (await db.listCollections({}, { nameOnly: false }).toArray()) as { name: string; type?: string; options?: Document }[];
  return infos
    .filter((info) => !isInternal(info.name) && (info.type === undefined || info.type === 'collection'))
    .map((info) => ({ name: info.name, options: info.options ?? {} }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Index options that carry over (the rest, like `v` and `ns`, belong to the server that built it). */
const INDEX_OPTIONS = ['name', 'unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds', 'collation', 'hidden'] as const;

function indexDescription(index: Document): IndexDescription {
  const description: Document = { key: index.key as Document };
  for (const option of INDEX_OPTIONS) if (index[option] !== undefined) description[option] = index[option];
  return description as IndexDescription;
}

/** Collection options that carry over: capped size limits and validators; storage engine details do not. */
function creationOptions(options: Document): Document {
  const kept: Document = {};
  for (const key of ['capped', 'size', 'max', 'validator', 'validationLevel', 'validationAction', 'collation']) {
    if (options[key] !== undefined) kept[key] = options[key];
  }
  return kept;
}

export async function copyDatabase(options: StoreCopyOptions): Promise<StoreCopyResult> {
  if (options.sourceUri === options.targetUri && options.sourceDb === options.targetDb) {
    throw new StoreCopyError('the target is the source database itself');
  }
  const batchDocuments = options.batchDocuments ?? 1000;
  let source: Database | null = null;
  let target: Database | null = null;
  try {
    source = await connectDatabase(options.sourceUri, options.sourceDb);
    target = await connectDatabase(options.targetUri, options.targetDb);
    const existing = await dataCollections(target.db);
    let replaced = false;
    if (existing.length > 0) {
      const counts = await Promise.all(
        existing.map(async (info) => [info.name, await target!.db.collection(info.name).estimatedDocumentCount()] as const),
      );
      const nonEmpty = counts.filter(([, count]) => count > 0);
      if (nonEmpty.length > 0 && !options.replace) {
        throw new StoreCopyError(
          `the target database ${options.targetDb} is not empty (${nonEmpty.map(([name, count]) => `${name}: ${count}`).join(', ')}); ` +
            'pass --replace to drop it first',
        );
      }
      // Empty collections left by a service start (ensureIndexes) are dropped too: the copy brings its own.
      for (const info of existing) await target.db.dropCollection(info.name);
      replaced = nonEmpty.length > 0;
    }

    const copied: CopiedCollection[] = [];
    for (const { name, options: collectionOptions } of await dataCollections(source.db)) {
      await target.db.createCollection(name, creationOptions(collectionOptions));
      const from = source.db.collection(name);
      const to = target.db.collection(name);
      let documents = 0;
      let batch: Document[] = [];
      let batchBytes = 0;
      const flush = async (): Promise<void> => {
        if (batch.length === 0) return;
        await to.insertMany(batch, { ordered: false });
        documents += batch.length;
        batch = [];
        batchBytes = 0;
        options.onProgress?.(name, documents);
      };
      // Wrapper types kept: a re-serialised document is the one that was read, type for type.
      const cursor = from.find(
        {},
        { batchSize: batchDocuments, promoteValues: false, promoteLongs: false, promoteBuffers: false, bsonRegExp: true },
      );
      for await (const document of cursor) {
        batch.push(document);
        batchBytes += roughBsonBytes(document);
        if (batch.length >= batchDocuments || batchBytes >= BATCH_BYTES) await flush();
      }
      await flush();
      // Indexes after the documents: one build per index instead of per-insert upkeep on a real server.
      const indexes = (await from.listIndexes().toArray()).filter((index) => index.name !== '_id_');
      if (indexes.length > 0) await to.createIndexes(indexes.map(indexDescription));
      copied.push({
        name,
        documents,
        indexes: indexes.map((index) => String(index.name)),
        sourceDocumentsAfter: await from.countDocuments({}),
      });
    }
    return { collections: copied, documents: copied.reduce((sum, c) => sum + c.documents, 0), replaced };
  } finally {
    await source?.close();
    await target?.close();
  }
}

/** A cheap upper-bound-ish size for batching (exact BSON sizing would serialise every document twice). */
function roughBsonBytes(value: unknown): number {
  if (value === null || value === undefined) return 2;
  if (typeof value === 'string') return value.length + 6;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return 10;
  if (value instanceof Date) return 10;
  if (ArrayBuffer.isView(value)) return value.byteLength + 6;
  if (typeof value === 'object') {
    // BSON wrappers (Binary, Long, Double, ObjectId…) expose a small fixed set of fields.
    const buffer = (value as { buffer?: unknown }).buffer;
    if (buffer && ArrayBuffer.isView(buffer)) return buffer.byteLength + 6;
    let total = 5;
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) total += key.length + 2 + roughBsonBytes(item);
    return total;
  }
  return 10;
}
