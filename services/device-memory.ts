/**
 * Device memory (docs/device-memory.md): the client keeps its graph as a signed snapshot and the
 * service only processes it. Create and search hold nothing between calls; export reads a
 * collection; import copies a snapshot into an ephemeral, read-only collection that expires.
 *
 * Extraction, entity resolution (activities/graph-builder.ts) and graph ranking
 * (search/graph-index.ts via services/graph-search.ts) are the collection-mode code, run over a
 * SnapshotGraph instead of MongoDB.
 */
import { extractChunks, GraphBuilder } from '../activities/graph-builder.js';
import { canonicalJson } from '../core/canonical-json.js';
import type { JsonTextDigest } from '../core/json-body.js';
import { AppError, unprocessable, validationError } from '../core/errors.js';
import { deviceCallsActive } from '../core/metrics.js';
import { deterministicUuid, newId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { OutboundClient } from '../core/outbound/client.js';
import { publicJwks, type PublicKeyset } from '../core/signing-keyset.js';
import { TimeSlicer } from '../core/time-slice.js';
import { WorkSlots } from '../core/work-slots.js';
import type { WorkerPool } from '../core/worker-pool.js';
import { planChunks } from '../extractors/chunking.js';
import type { StructureExtractor } from '../extractors/structure/types.js';
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import { applyValidity, type RelationshipValidity, type ValidityRequest } from './fact-validity.js';
import { pooledExtractor, type CpuTasks } from '../models/cpu-tasks.js';
import { parseJson } from '../models/json-tasks.js';
import type { Embedder } from '../models/embedder.js';
import { matchGraph } from '../search/graph-match.js';
import { capExceeded, countsOf, documentEpisode, encodeFloat16, type SnapshotBody, type SnapshotCaps } from '../snapshot/format.js';
import type { PreparedSnapshotCache } from '../snapshot/prepared-cache.js';
import { openedOf, openPrepared, openSnapshot, sealSnapshot, type OpenedSnapshot, type SealedSnapshot } from '../snapshot/seal.js';
import { SnapshotGraph } from '../snapshot/snapshot-graph.js';
import type { CollectionRepository } from '../store/collections.js';
import type { IndexChangeFeed } from '../store/index-changes.js';
import { ExportBudgetExceeded, type SnapshotRepository } from '../store/snapshots.js';
import type { PurgeOptions } from '../store/memory-purge.js';
import type { CollectionService } from './collections.js';
import { graphSignal, visibleGraph, type GraphEntityResult, type GraphRelationshipResult } from './graph-search.js';
import type { KeysetSource } from './keyset-source.js';
import { outbound, outboundHeaders, policyChecked, tooLarge, translate } from './device-errors.js';
import { translateIds } from './device-import.js';

export interface SnapshotRef {
  type?: 'signed_url' | undefined;
  collection_id: string;
  get_url?: string | undefined;
  put_url?: string | undefined;
  get_headers?: Record<string, string> | undefined;
  put_headers?: Record<string, string> | undefined;
}

/**
 * Where a snapshot comes from: inline in the request (with the digest of its body's JSON text when
 * a worker thread parsed the request, and the digest of its exact bytes), or inline as bytes this
 * tenant sent before and already held prepared (`preparedBySpan`: not parsed again), or fetched
 * from a signed URL.
 */
export type SnapshotSource =
  { snapshot: unknown; sent?: JsonTextDigest; spanDigest?: string } | { prepared: OpenedSnapshot } | { snapshotRef: SnapshotRef };

/** What a PUT to a signed URL answers instead of the snapshot (docs/device-memory.md). */
export interface SnapshotReceipt {
  destination: 'signed_url';
  collection_id: string;
  bytes: number;
  digest: string;
  format_version: string;
  graph_id: string;
  counts: Record<string, number>;
  created_at: string;
}

/** `replayed`: an Idempotency-Key whose episode the snapshot already held; nothing was added. */
export type SnapshotOutcome = ({ snapshot: SealedSnapshot } | { receipt: SnapshotReceipt }) & { replayed?: boolean };

/** The spec's SnapshotSearchResult: collection search's entities and relationships, fewer fields. */
export interface SnapshotSearchResult {
  entities: Pick<GraphEntityResult, 'id' | 'name' | 'category' | 'description' | 'score'>[];
  relationships: (Pick<GraphRelationshipResult, 'id' | 'subject_id' | 'object_id' | 'predicate' | 'description' | 'weight'> &
    RelationshipValidity)[];
}

export interface DeviceMemoryOptions {
  caps: SnapshotCaps;
  maxBytes: number;
  chunkMaxChars: number;
  entitySimilarityThreshold: number;
  ephemeralTtlSeconds: number;
  /** DEVICE_MAX_CONCURRENCY: device calls at once in this process. */
  maxConcurrency: number;
  /** DEVICE_MAX_CONCURRENCY_PER_TENANT: device calls of one tenant at once in this process. */
  maxConcurrencyPerTenant: number;
}

/**
 * A device create's passages go to the model thread (models/model-tasks.ts) one per model call,
 * so a search's query, which rides alone in the next call, waits for one passage at most. Batching
 * saves nothing on these CPUs: 24 passages of 1,200 characters took 2.5-2.7 s of CPU in calls of
 * 1, 2, 4 or 8, while a call of 4 took 2.5-2.9 s of wall time on the loaded machine (one: 0.7 s).
 */
const DEVICE_PASSAGES_PER_MODEL_CALL = 1;

/** What device memory asks of storage (unit tests hand in-memory ones: test/support/fakes). */
export interface DeviceMemoryStore {
  snapshots: Pick<SnapshotRepository, 'countCollection' | 'readCollection' | 'writeImport' | 'memoryIdsOf' | 'removeLeftoversOf'>;
  collections: Pick<CollectionRepository, 'expired' | 'remove'>;
  indexChanges: Pick<IndexChangeFeed, 'publishCollectionDropped'>;
}

export function createDeviceMemoryService(deps: {
  store: DeviceMemoryStore;
  collections: Pick<CollectionService, 'assertReadable' | 'createEphemeral'>;
  embedder: () => Promise<Embedder>;
  /** Inline extractor, for a search's query only (one short text). */
  extractor: StructureExtractor;
  /** The functional-predicate lexicon: validity and supersession of facts, as in collection mode. */
  classifier: PredicateClassifier;
  /**
   * The worker-thread pool: a device create's chunks are extracted there, and a large snapshot
   * downloaded by reference is parsed (and its body hashed) there, never on the event loop.
   */
  cpu: { pool: Pick<WorkerPool<CpuTasks>, 'run'> };
  keys: KeysetSource;
  /** Snapshots already opened, prepared, per tenant, under the search index's budget. */
  snapshotCache: PreparedSnapshotCache;
  outbound: Pick<OutboundClient, 'get' | 'put' | 'precheck'>;
  /** The one delete cascade, for an import that fails part-way and for expiry. */
  deleteMemories: (tenantId: string, ids: string[], options?: PurgeOptions) => Promise<unknown>;
  options: DeviceMemoryOptions;
  logger: Logger;
}) {
  const { store, options } = deps;
  const slots = new WorkSlots(options.maxConcurrency, options.maxConcurrencyPerTenant, (active) => deviceCallsActive.set(active));

  /**
   * Device calls do outbound I/O and CPU-heavy work: a bounded number run at once, per process and
   * per tenant; the rest get 503 at once. The slot is given back as soon as the request is
   * abandoned (its deadline answered), and the work stops at its next step (it takes `signal`).
   */
  async function bounded<T>(tenantId: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    const slot = slots.acquire(tenantId, signal);
    if ('refused' in slot) {
      const message =
        slot.refused === 'process'
          ? `Device memory is at its limit of ${options.maxConcurrency} concurrent calls (DEVICE_MAX_CONCURRENCY); retry shortly`
          : `This tenant already runs ${options.maxConcurrencyPerTenant} device calls (DEVICE_MAX_CONCURRENCY_PER_TENANT); retry shortly`;
      throw new AppError(503, 'device_busy', message, undefined, { 'Retry-After': '1' });
    }
    try {
      return await work();
    } finally {
      slot.release();
    }
  }

  async function openContext(tenantId: string) {
    const embedder = await deps.embedder();
    return {
      embedder,
      context: {
        tenantId,
        embeddingModel: embedder.modelId,
        dimensions: embedder.dimensions,
        caps: options.caps,
        keyset: await deps.keys.current(),
        cache: deps.snapshotCache,
      },
    };
  }

  /** Opens an inline or referenced snapshot; a reference's collection is authorized before its URL is touched. */
  async function load(tenantId: string, source: SnapshotSource, signal?: AbortSignal): Promise<OpenedSnapshot & { embedder: Embedder }> {
    const { embedder, context } = await openContext(tenantId);
    if ('prepared' in source) return withEmbedder(await translate(() => openPrepared(source.prepared, context)), embedder);
    if ('snapshot' in source)
      return withEmbedder(
        await translate(() => openSnapshot(source.snapshot, context, 'snapshot', source.sent, source.spanDigest)),
        embedder,
      );
    const ref = source.snapshotRef;
    await deps.collections.assertReadable(tenantId, [ref.collection_id], 'snapshot_ref.collection_id');
    if (!ref.get_url) throw validationError([{ field: 'snapshot_ref.get_url', issue: 'get_url is required to read the snapshot' }]);
    const headers = outboundHeaders(ref.get_headers, 'snapshot_ref.get_headers');
    const bytes = await outbound('snapshot_ref.get_url', () => deps.outbound.get(ref.get_url!, headers, options.maxBytes, signal));
    // Parsed as a posted snapshot is (the same co-body parse, on a pool thread from 1 MiB on, its
    // body's digest worked out there): 32 MiB of JSON held the event loop for every tenant otherwise.
    const parsed = await parseJson(deps.cpu.pool, bytes, { strict: false, digestPaths: [['body']] }, { key: tenantId, signal });
    // Not JSON, or no text at all (co-body gives '' for an empty text when not strict).
    if (!parsed.ok || parsed.value === '') {
      throw new AppError(
        400,
        'snapshot_invalid',
        'snapshot_ref.get_url: the downloaded snapshot is not valid JSON (truncated or not a snapshot)',
        [{ field: 'snapshot_ref.get_url', issue: 'not valid JSON' }],
      );
    }
    const { value } = parsed;
    const sent = isObject(value) && isObject(value.body) ? parsed.digests.get(value.body) : undefined;
    return withEmbedder(await translate(() => openSnapshot(value, context, 'snapshot_ref', sent)), embedder);
  }

  /** Writes a sealed snapshot to a signed URL (the collection already authorized), answering the receipt. */
  async function deliver(
    sealed: SealedSnapshot,
    collectionId: string,
    putUrl: string,
    headers: Record<string, string>,
    field: string,
    signal?: AbortSignal,
  ) {
    // An abandoned request never starts its upload: the client was told to retry.
    signal?.throwIfAborted();
    await outbound(field, () => deps.outbound.put(putUrl, headers, sealed.pieces, 'application/json', signal));
    const receipt: SnapshotReceipt = {
      destination: 'signed_url',
      collection_id: collectionId,
      bytes: sealed.bytes,
      digest: sealed.header.digest,
      format_version: sealed.header.format_version,
      graph_id: sealed.header.graph_id,
      counts: { ...sealed.header.counts },
      created_at: sealed.header.created_at,
    };
    return receipt;
  }

  function precheck(url: string, field: string): void {
    policyChecked(field, () => deps.outbound.precheck(url));
  }

  function checkSize(sealed: SealedSnapshot, what: string): void {
    if (sealed.bytes > options.maxBytes) {
      throw new AppError(413, 'snapshot_too_large', `${what} would be ${sealed.bytes} bytes; the snapshot cap is ${options.maxBytes}`);
    }
  }

  return {
    /**
     * The snapshot these exact bytes (their SHA-256) opened to for this tenant, while it is held
     * prepared: the request's body parser then leaves them unparsed (api/middleware/pooled-json-body.ts).
     */
    preparedBySpan(tenantId: string, digest: string): OpenedSnapshot | null {
      return deps.snapshotCache.bySpan(tenantId, digest);
    },

    async publicKeys(): Promise<PublicKeyset> {
      return publicJwks(await deps.keys.current());
    },

    exportSnapshot(
      tenantId: string,
      collectionId: string,
      destination?: { collection_id: string; put_url: string; put_headers?: Record<string, string> | undefined },
      signal?: AbortSignal,
    ): Promise<SnapshotOutcome> {
      return bounded(tenantId, signal, async () => {
        await deps.collections.assertReadable(tenantId, [collectionId], 'collection_id');
        if (destination && destination.collection_id !== collectionId) {
          await deps.collections.assertReadable(tenantId, [destination.collection_id], 'destination.collection_id');
        }
        const headers = destination ? outboundHeaders(destination.put_headers, 'destination.put_headers') : {};
        if (destination) precheck(destination.put_url, 'destination.put_url');
        const { embedder } = await openContext(tenantId);
        // Counts first: a collection over a cap is refused before any of it is read.
        const excess = capExceeded(await store.snapshots.countCollection(tenantId, collectionId), options.caps);
        if (excess) {
          throw tooLarge(
            `collection_id: the collection has ${excess.count} ${excess.what}; a snapshot holds at most ${excess.cap} (${excess.setting})`,
            'collection_id',
          );
        }
        let data: Awaited<ReturnType<typeof store.snapshots.readCollection>>;
        try {
          data = await store.snapshots.readCollection(tenantId, collectionId, embedder.modelId, options.maxBytes);
        } catch (error) {
          if (!(error instanceof ExportBudgetExceeded)) throw error;
          throw tooLarge(
            `collection_id: the exported snapshot would be larger than ${options.maxBytes} bytes (SNAPSHOT_MAX_BYTES)`,
            'collection_id',
          );
        }
        signal?.throwIfAborted();
        const body: SnapshotBody = {
          episodes: data.memories.map((memory) => ({
            id: memory.id,
            kind: memory.kind,
            name: memory.name,
            metadata: memory.metadata,
            created_at: memory.createdAt.toISOString(),
            chunks: memory.chunks.map((chunk) => ({
              index: chunk.index,
              text: chunk.text,
              source: { ...chunk.source },
              vector: chunk.vector ? encodeFloat16(chunk.vector) : null,
            })),
          })),
          entities: [],
          facts: [],
          mentions: [],
        };
        const graph = new SnapshotGraph(body, embedder.dimensions);
        const scope = { tenantId, collectionId };
        await graph.write(
          scope,
          data.entities.map((entity) => ({ ...entity })),
          data.facts,
          data.mentions,
        );
        const sealed = await sealSnapshot(
          { graphId: collectionId, tenantId, embeddingModel: embedder.modelId, body: await graph.toBody() },
          await deps.keys.current(),
        );
        checkSize(sealed, 'the exported snapshot');
        if (!destination) return { snapshot: sealed };
        return { receipt: await deliver(sealed, destination.collection_id, destination.put_url, headers, 'destination.put_url', signal) };
      });
    },

    importSnapshot(
      tenantId: string,
      source: SnapshotSource,
      signal?: AbortSignal,
    ): Promise<{ ephemeralCollectionId: string; expiresAt: Date }> {
      return bounded(tenantId, signal, async () => {
        const started = performance.now();
        const opened = await load(tenantId, source, signal);
        signal?.throwIfAborted();
        const loadedAt = performance.now();
        const collection = await deps.collections.createEphemeral(tenantId, options.ephemeralTtlSeconds);
        const scope = { tenantId, collectionId: collection.id };
        const { memories, graph } = translateIds(opened, scope, opened.embedder.dimensions);
        try {
          await store.snapshots.writeImport(scope, collection.expires_at!, opened.embedder.modelId, memories, graph);
          deps.logger.info(
            {
              collectionId: collection.id,
              episodes: memories.length,
              mentions: graph.mentions.length,
              open_ms: Math.round(loadedAt - started),
              write_ms: Math.round(performance.now() - loadedAt),
            },
            'snapshot imported',
          );
        } catch (error) {
          // Nothing half-written: undo what was written (a crash here is left to expiry).
          await deps
            .deleteMemories(
              tenantId,
              memories.map((memory) => memory.id),
              { indexNotices: 'by_caller' },
            )
            .catch(() => undefined);
          await store.snapshots.removeLeftoversOf(tenantId, collection.id).catch(() => undefined);
          await store.collections.remove(collection.id).catch(() => undefined);
          await store.indexChanges.publishCollectionDropped(tenantId, collection.id).catch(() => undefined);
          throw error;
        }
        return { ephemeralCollectionId: collection.id, expiresAt: collection.expires_at! };
      });
    },

    create(
      tenantId: string,
      source: SnapshotSource,
      input: { rawText: string; metadata: Record<string, unknown>; idempotencyKey?: string | null },
      signal?: AbortSignal,
    ): Promise<SnapshotOutcome> {
      return bounded(tenantId, signal, async () => {
        const putUrl = 'snapshotRef' in source ? source.snapshotRef.put_url : undefined;
        const putHeaders = 'snapshotRef' in source ? outboundHeaders(source.snapshotRef.put_headers, 'snapshot_ref.put_headers') : {};
        if (putUrl && 'snapshotRef' in source) {
          await deps.collections.assertReadable(tenantId, [source.snapshotRef.collection_id], 'snapshot_ref.collection_id');
          precheck(putUrl, 'snapshot_ref.put_url');
        }
        const opened = await load(tenantId, source, signal);
        const { embedder } = opened;
        const planned = planChunks({ raw_text: input.rawText }, options.chunkMaxChars).map((chunk, index) => ({ ...chunk, index }));
        // With an Idempotency-Key the episode's id is derived from it, so a retry (after a 503 whose
        // upload had landed) finds its episode already in the snapshot and adds nothing.
        const episodeId = input.idempotencyKey ? deterministicUuid('device-episode', opened.graphId, input.idempotencyKey) : newId();
        const earlier = input.idempotencyKey ? opened.body.episodes.find((episode) => episode.id === episodeId) : undefined;
        if (earlier) {
          const same =
            earlier.chunks.map((chunk) => chunk.text).join('\u0000') === planned.map((chunk) => chunk.text).join('\u0000') &&
            canonicalJson(earlier.metadata) === canonicalJson(input.metadata);
          if (!same) {
            throw unprocessable(
              'idempotency_key_reused',
              'This Idempotency-Key already added a different memory to this snapshot',
              'Idempotency-Key',
            );
          }
          const sealed = await sealSnapshot(
            { graphId: opened.graphId, tenantId, embeddingModel: embedder.modelId, body: opened.body },
            await deps.keys.current(),
          );
          if (!putUrl || !('snapshotRef' in source)) return { snapshot: sealed, replayed: true };
          const receipt = await deliver(sealed, source.snapshotRef.collection_id, putUrl, putHeaders, 'snapshot_ref.put_url', signal);
          return { receipt, replayed: true };
        }
        const graph = await SnapshotGraph.inSlices(opened.body, embedder.dimensions, new TimeSlicer(), opened.wire);
        // Device episodes carry no time of their own: their facts hold from now on.
        const createdAt = new Date();
        // Extraction on the worker threads (fair across tenants) while the model embeds on the bulk
        // model thread, never in the pool or on the event loop; searches embed their queries on
        // a thread of their own meanwhile (models/model-thread-client.ts).
        const job = { key: tenantId, signal };
        const extractor = pooledExtractor(deps.cpu.pool, job);
        const [extractions, vectors] = await Promise.all([
          extractChunks(
            extractor,
            planned,
            () => undefined,
            () => createdAt,
          ),
          embedder.embedPassages(
            planned.map((chunk) => chunk.text),
            { signal, maxPerCall: DEVICE_PASSAGES_PER_MODEL_CALL },
          ),
        ]);
        signal?.throwIfAborted();
        // From here the work runs on the event loop (it calls the embedder and the graph), in
        // slices with the loop given a turn between them (core/time-slice.ts): ~2 s of CPU for a
        // 2M-character text, which in one stretch stalled every tenant's requests.
        const slicer = new TimeSlicer();
        graph.addEpisode(await documentEpisode(episodeId, input.metadata, createdAt, planned, vectors, slicer));
        const builder = new GraphBuilder({
          graph,
          extractor,
          embedder,
          similarityThreshold: options.entitySimilarityThreshold,
          classifier: deps.classifier,
        });
        await builder.writeToCollection({ tenantId, collectionId: opened.graphId }, episodeId, extractions);
        signal?.throwIfAborted();
        const body = await graph.toBody(slicer);
        signal?.throwIfAborted();
        // Never answer a snapshot that the next open would refuse: the caps hold on what is made, too.
        const excess = capExceeded(countsOf(body), options.caps);
        if (excess) {
          throw tooLarge(
            `the updated snapshot would hold ${excess.count} ${excess.what}; the cap is ${excess.cap} (${excess.setting})`,
            'snapshot',
          );
        }
        const sealed = await sealSnapshot(
          { graphId: opened.graphId, tenantId, embeddingModel: embedder.modelId, body, sent: graph.sentMentions() },
          await deps.keys.current(),
        );
        checkSize(sealed, 'the updated snapshot');
        // The client's next call usually sends this snapshot back: it opens prepared.
        deps.snapshotCache.store(tenantId, openedOf(sealed));
        if (!putUrl || !('snapshotRef' in source)) return { snapshot: sealed };
        return { receipt: await deliver(sealed, source.snapshotRef.collection_id, putUrl, putHeaders, 'snapshot_ref.put_url', signal) };
      });
    },

    search(
      tenantId: string,
      source: SnapshotSource,
      query: string,
      validity: ValidityRequest,
      signal?: AbortSignal,
    ): Promise<SnapshotSearchResult> {
      return bounded(tenantId, signal, async () => {
        const opened = await load(tenantId, source, signal);
        // Built once per snapshot and kept with it while it stays prepared (it is only read here).
        // In slices: a body near the caps took about 1 s of CPU to index in one stretch.
        const partition = await deps.snapshotCache.partitionOf(tenantId, opened, async () => {
          const slicer = new TimeSlicer();
          return (await SnapshotGraph.inSlices(opened.body, opened.embedder.dimensions, slicer)).partitionInSlices(slicer);
        });
        // Every episode of a snapshot is visible to its holder: descriptions come from backing episodes, as in collection mode.
        const ranked = visibleGraph(await graphSignal((keys) => matchGraph([partition], keys), deps.extractor, query), () => true);
        const timelines = partition.timelines(
          ranked.relationships.map((relationship) => relationship.id),
          deps.classifier,
        );
        const { relationships } = applyValidity(ranked, timelines, query, deps.classifier, validity, new Date());
        return {
          entities: ranked.entities.map(({ id, name, category, description, score }) => ({ id, name, category, description, score })),
          relationships: relationships.map(({ id, subject_id, object_id, predicate, description, weight, ...held }) => ({
            id,
            subject_id,
            object_id,
            predicate,
            description,
            weight,
            predicate_class: held.predicate_class,
            status: held.status,
            valid_from: held.valid_from,
            valid_to: held.valid_to,
            closed_by: held.closed_by,
          })),
        };
      });
    },

    /** Removes ephemeral collections past their time, through the one delete cascade. Returns how many went. */
    async sweepExpired(): Promise<number> {
      let removed = 0;
      for (const collection of await store.collections.expired(new Date(), 20)) {
        for (;;) {
          const ids = await store.snapshots.memoryIdsOf(collection.tenant_id, collection.id, 500);
          if (ids.length === 0) break;
          // No notice per memory: the one below covers the whole collection (its memories are in no other).
          await deps.deleteMemories(collection.tenant_id, ids, { indexNotices: 'by_caller' });
        }
        await store.snapshots.removeLeftoversOf(collection.tenant_id, collection.id);
        await store.collections.remove(collection.id);
        // Every API process (this one included) drops the collection's index partitions when it reads this.
        await store.indexChanges.publishCollectionDropped(collection.tenant_id, collection.id);
        removed += 1;
      }
      return removed;
    },
  };
}

export type DeviceMemoryService = ReturnType<typeof createDeviceMemoryService>;

/**
 * The fields a device call works with, read once: not a spread, which would also read a sealed
 * snapshot's lazy `bodySent` (the whole body parsed again, in one stretch of the event loop).
 */
function withEmbedder(opened: OpenedSnapshot, embedder: Embedder): OpenedSnapshot & { embedder: Embedder } {
  const { graphId, snapshotId, body, bodyBytes, wire, partition } = opened;
  return {
    graphId,
    snapshotId,
    body,
    bodyBytes,
    ...(wire ? { wire } : {}),
    ...(partition ? { partition } : {}),
    embedder,
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
