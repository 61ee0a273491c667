/**
 * 11b) device-open: what one device search costs on a 1,000-memory snapshot, in-process and in CPU
 * time (steady on a shared machine, where the `device` scenario's HTTP latencies and its ingestion
 * through the pipeline are not). The snapshot is built the way device creates build it (the local
 * extractor, the embedding model, the graph builder over a SnapshotGraph), then each search is what
 * the API does with it: the request's JSON parse, the open, the graph index and the ranking.
 *   - format 1.1 (mentions by target id, opened in full each call): the cost before issue 28;
 *   - format 2.0, opened in full each call (a snapshot this process has not seen);
 *   - format 2.0, prepared (sent again: snapshot/prepared-cache.ts);
 *   - format 2.0 sent again as the same bytes, found by their digest before any parse (core/json-span.ts);
 * with bytes per memory and whether the three rank the same top-5 entities.
 */
import { CompactSign, importJWK } from 'jose';
import { extractChunks, GraphBuilder } from '../activities/graph-builder.js';
import { canonicalJsonBytes } from '../core/canonical-json.js';
import { locateObjectSpan, withoutSpan } from '../core/json-span.js';
import { PredicateClassifier, type FactLexicon } from '../core/fact-lexicon.js';
import { generateKeysetEntry, type SigningKeyset } from '../core/signing-keyset.js';
import { planChunks } from '../extractors/chunking.js';
import { createLocalExtractor } from '../extractors/structure/local-extractor.js';
import type { Embedder } from '../models/embedder.js';
import { matchGraph } from '../search/graph-match.js';
import { graphSignal, visibleGraph } from '../services/graph-search.js';
import { digestOf, documentEpisode, headerOf, type WireBody } from '../snapshot/format.js';
import { resolveTargets } from '../snapshot/wire.js';
import { PreparedSnapshotCache } from '../snapshot/prepared-cache.js';
import { EMPTY_BODY, openPrepared, openSnapshot, sealSnapshot, type OpenedSnapshot } from '../snapshot/seal.js';
import { SnapshotGraph } from '../snapshot/snapshot-graph.js';
import { info, metric, percentile } from './stats.js';
import { makeQueries, makeTexts } from './texts.js';
import { benchNumber } from './env.js';
import { sentAgainOverHttp } from './device-http-phase.js';

const MEMORIES = benchNumber('BENCH_DEVICE_MEMORIES', 1000);
const QUERIES = 40;
/** Rounds of the QUERIES searches over HTTP (bench/device-http-phase.ts). */
const HTTP_ROUNDS = benchNumber('BENCH_DEVICE_HTTP_ROUNDS', 5);
const TENANT = 'bench-tenant';
const CAPS = { maxEpisodes: 20_000, maxEntities: 200_000, maxFacts: 400_000, maxMentions: 2_000_000, maxChunks: 1000 };

const cpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

export async function deviceOpenScenario(
  embedder: Embedder,
  options: { chunkMaxChars: number; similarityThreshold: number; lexicon: FactLexicon },
): Promise<void> {
  info(
    `11b) device-open: one device search on a ${MEMORIES}-memory snapshot, in-process CPU time (1.1 in full, 2.0 in full, 2.0 prepared)`,
  );
  const extractor = createLocalExtractor();
  const classifier = new PredicateClassifier(options.lexicon);
  const graphId = crypto.randomUUID();
  const graph = new SnapshotGraph(EMPTY_BODY(), embedder.dimensions);
  const built = performance.now();
  for (const [i, text] of makeTexts(MEMORIES, 1010, 600).entries()) {
    const planned = planChunks({ raw_text: text.text }, options.chunkMaxChars).map((chunk, index) => ({ ...chunk, index }));
    const createdAt = new Date(Date.UTC(2026, 0, 1) + i * 60_000);
    const extractions = await extractChunks(
      extractor,
      planned,
      () => undefined,
      () => createdAt,
    );
    const vectors = await embedder.embedPassages(planned.map((chunk) => chunk.text));
    const id = crypto.randomUUID();
    graph.addEpisode(await documentEpisode(id, {}, createdAt, planned, vectors));
    const builder = new GraphBuilder({ graph, extractor, embedder, similarityThreshold: options.similarityThreshold, classifier });
    await builder.writeToCollection({ tenantId: TENANT, collectionId: graphId }, id, extractions);
  }
  info(`   built in ${((performance.now() - built) / 1000).toFixed(1)} s`);

  const keyset: SigningKeyset = { keys: [{ ...(await generateKeysetEntry('Ed25519')), status: 'active' }] };
  const sealed = await sealSnapshot({ graphId, tenantId: TENANT, embeddingModel: embedder.modelId, body: await graph.toBody() }, keyset);
  const current = Buffer.concat(sealed.pieces).toString('utf8');
  // The same body as 1.1 sent it (a JSON object per mention, its target by id), signed as 1.1.
  const document = JSON.parse(current) as Record<string, unknown> & { body: WireBody };
  const byId = resolveTargets(document.body).body;
  const older: Record<string, unknown> = { ...document, format_version: '1.1', body: byId, digest: digestOf(byId) };
  const key = keyset.keys[0]!;
  older.signature = await new CompactSign(canonicalJsonBytes(headerOf(older)))
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'engram-snapshot+jws' })
    .sign(await importJWK(key.private_jwk, 'EdDSA'));
  const previous = JSON.stringify(older);
  metric('device_open_kib_per_memory_1_1', Buffer.byteLength(previous) / 1024 / MEMORIES, 'KiB');
  metric('device_open_kib_per_memory', Buffer.byteLength(current) / 1024 / MEMORIES, 'KiB');

  const queries = makeQueries(QUERIES, 1011);
  /** `bytesKnown`: as a request of 1 MiB or more is read, its snapshot's bytes looked up before any parse (pooled-json-body.ts). */
  const run = async (label: string, text: string, cache: PreparedSnapshotCache | null, bytesKnown = false): Promise<string[]> => {
    const cpu: number[] = [];
    const tops: string[] = [];
    for (const query of queries) {
      const request = `{"query":${JSON.stringify(query)},"snapshot":${text}}`;
      const started = cpuMs();
      const context = { tenantId: TENANT, embeddingModel: embedder.modelId, dimensions: embedder.dimensions, caps: CAPS, keyset };
      const bytes = bytesKnown ? Buffer.from(request) : null;
      const span = bytes ? locateObjectSpan(bytes, 'snapshot') : null;
      const known = span && cache ? cache.bySpan(TENANT, span.digest) : null;
      let opened: OpenedSnapshot;
      if (known && bytes && span) {
        JSON.parse(withoutSpan(bytes, span).toString('utf8'));
        opened = await openPrepared(known, context);
      } else {
        const parsed = JSON.parse(request) as { snapshot: unknown };
        opened = await openSnapshot(parsed.snapshot, cache ? { ...context, cache } : context, 'snapshot', undefined, span?.digest);
      }
      const build = async () => new SnapshotGraph(opened.body, embedder.dimensions).partition();
      const partition = cache ? await cache.partitionOf(TENANT, opened, build) : await build();
      const ranked = visibleGraph(await graphSignal((keys) => matchGraph([partition], keys), extractor, query), () => true);
      cpu.push(cpuMs() - started);
      tops.push(
        ranked.entities
          .slice(0, 5)
          .map((entity) => entity.name)
          .join('|'),
      );
    }
    metric(`device_open_search_cpu_p50_ms_${label}`, percentile(cpu, 50), 'ms');
    metric(`device_open_search_cpu_p95_ms_${label}`, percentile(cpu, 95), 'ms');
    return tops;
  };
  const before = await run('1_1_full', previous, null);
  await run('full', current, null);
  const after = await run('prepared', current, new PreparedSnapshotCache(8));
  // The same snapshot bytes sent again: found by their digest, not parsed (the first call opens it in full).
  const again = await run('sent_again', current, new PreparedSnapshotCache(8), true);
  metric('device_open_same_top5_ratio', after.filter((top, i) => top === before[i] && again[i] === top).length / queries.length, 'ratio');
  // The same, over HTTP through the API's body middleware: CPU of the event loop and garbage collections.
  const overHttp = await sentAgainOverHttp({
    snapshotText: current,
    queries,
    tenantId: TENANT,
    embeddingModel: embedder.modelId,
    dimensions: embedder.dimensions,
    caps: CAPS,
    keyset,
    extractor,
    rounds: HTTP_ROUNDS,
  });
  metric('device_open_http_same_top5_ratio', overHttp.filter((top, i) => top === before[i]).length / queries.length, 'ratio');
}
