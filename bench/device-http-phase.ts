/**
 * 11b, last part) device searches sending the same snapshot bytes again, over loopback HTTP into
 * this process, through the API's own body middleware (api/middleware/pooled-json-body.ts: the
 * body read, the span located and hashed on a CPU-pool thread, the rest parsed) and the prepared
 * open, index and ranking a device search runs. What the HTTP `device` scenario's prepared searches
 * cost the service, without its ingestion and without the rest of a `ROLE=all` process: the main
 * thread's CPU per call, and the garbage collections (count and pause) the calls caused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants as perfConstants } from 'node:perf_hooks';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import type { AppState } from '../api/context.js';
import { errorHandler } from '../api/middleware/errors.js';
import { pooledJsonBody } from '../api/middleware/pooled-json-body.js';
import { SharedBodyBuffers } from '../api/middleware/shared-body.js';
import { inlineSnapshot } from '../api/routes/device-memory/presenter.js';
import { createLogger } from '../core/logger.js';
import type { SigningKeyset } from '../core/signing-keyset.js';
import { WorkerPool } from '../core/worker-pool.js';
import type { StructureExtractor } from '../extractors/structure/types.js';
import { jsonThreadScript, type JsonTasks } from '../models/json-tasks.js';
import { matchGraph } from '../search/graph-match.js';
import { graphSignal, visibleGraph } from '../services/graph-search.js';
import { PreparedSnapshotCache } from '../snapshot/prepared-cache.js';
import { openPrepared, openSnapshot, type OpenContext } from '../snapshot/seal.js';
import { SnapshotGraph } from '../snapshot/snapshot-graph.js';
import { recordCollections } from './collections.js';
import { metric, percentile } from './stats.js';

const LIMIT = 32 * 1024 * 1024;

const threadCpuMs = (): number => {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
};

export async function sentAgainOverHttp(options: {
  snapshotText: string;
  queries: string[];
  tenantId: string;
  embeddingModel: string;
  dimensions: number;
  caps: OpenContext['caps'];
  keyset: SigningKeyset;
  extractor: StructureExtractor;
  rounds: number;
}): Promise<string[]> {
  const { tenantId } = options;
  const pool = new WorkerPool<JsonTasks>(jsonThreadScript, 1);
  const cache = new PreparedSnapshotCache(8);
  const context: OpenContext = {
    tenantId,
    embeddingModel: options.embeddingModel,
    dimensions: options.dimensions,
    caps: options.caps,
    keyset: options.keyset,
    cache,
  };
  const koa = new Koa<AppState>();
  koa.use(errorHandler(createLogger('bench', 'silent'), LIMIT));
  koa.use(async (ctx, next) => {
    ctx.state.requestId = 'r';
    ctx.state.principal = { tenantId } as AppState['principal'];
    ctx.state.signal = new AbortController().signal;
    await next();
  });
  koa.use(
    pooledJsonBody({
      pool,
      limit: LIMIT,
      digestPaths: [['snapshot', 'body']],
      knownSpan: { key: 'snapshot', lookup: (tenant, digest) => cache.bySpan(tenant, digest) },
      buffers: new SharedBodyBuffers(),
    }),
  );
  koa.use(bodyParser({ enableTypes: ['json'], jsonLimit: LIMIT, jsonStrict: true }));
  koa.use(async (ctx) => {
    const body = ctx.request.body as { query: string; snapshot: Record<string, unknown> };
    const source = inlineSnapshot(ctx, body.snapshot);
    const opened =
      'prepared' in source
        ? await openPrepared(source.prepared, context)
        : 'snapshot' in source
          ? await openSnapshot(source.snapshot, context, 'snapshot', source.sent, source.spanDigest)
          : null;
    if (!opened) throw new Error('no snapshot');
    const partition = await cache.partitionOf(tenantId, opened, async () => new SnapshotGraph(opened.body, options.dimensions).partition());
    const ranked = visibleGraph(await graphSignal((keys) => matchGraph([partition], keys), options.extractor, body.query), () => true);
    ctx.body = { results: { entities: ranked.entities.slice(0, 10), prepared: 'prepared' in source } };
  });
  const server = http.createServer(koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (body: Buffer) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/',
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (part: Buffer) => parts.push(part));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });

  const requests = options.queries.map((query) => Buffer.from(`{"query":${JSON.stringify(query)},"snapshot":${options.snapshotText}}`));
  const wall: number[] = [];
  const cpu: number[] = [];
  const tops: string[] = [];
  let notPrepared = 0;
  // The first call opens it in full; the rest find it prepared.
  await post(requests[0]!);
  const recording = recordCollections();
  for (let round = 0; round < options.rounds; round++) {
    for (const request of requests) {
      const started = performance.now();
      const cpuStarted = threadCpuMs();
      const answer = await post(request);
      cpu.push(threadCpuMs() - cpuStarted);
      wall.push(performance.now() - started);
      if (answer.status !== 200) throw new Error(`device search answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      const results = (JSON.parse(answer.text) as { results: { entities: { name: string }[]; prepared: boolean } }).results;
      if (!results.prepared) notPrepared++;
      if (round === 0)
        tops.push(
          results.entities
            .slice(0, 5)
            .map((entity) => entity.name)
            .join('|'),
        );
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  await recording.stop();
  const gcs = recording.collections;
  server.close();
  agent.destroy();
  await pool.close();
  const calls = wall.length;
  const major = gcs.filter((gc) => gc.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR);
  const minor = gcs.filter((gc) => gc.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR);
  metric('device_open_http_sent_again_p50_ms', percentile(wall, 50), 'ms');
  metric('device_open_http_sent_again_p95_ms', percentile(wall, 95), 'ms');
  metric('device_open_http_sent_again_loop_cpu_p50_ms', percentile(cpu, 50), 'ms');
  metric('device_open_http_sent_again_loop_cpu_p95_ms', percentile(cpu, 95), 'ms');
  metric('device_open_http_sent_again_major_gcs_per_100_calls', (major.length * 100) / calls, 'count');
  metric('device_open_http_sent_again_minor_gcs_per_100_calls', (minor.length * 100) / calls, 'count');
  metric('device_open_http_sent_again_major_gc_max_ms', Math.max(0, ...major.map((gc) => gc.ms)), 'ms');
  metric('device_open_http_sent_again_gc_ms_per_call', gcs.reduce((sum, gc) => sum + gc.ms, 0) / calls, 'ms');
  metric('device_open_http_sent_again_not_prepared', notPrepared, 'count');
  return tops;
}
