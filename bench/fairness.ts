/**
 * Fair sharing under load (issue 20), on loopback, bounded in count and time. It runs against an
 * API process of its own (ROLE=api, beside the bench's service, whose worker ingests) with a
 * small SEARCH_INDEX_MAX_BYTES and small WebSocket session caps, so the limits are reached with
 * few requests. Tenant A floods weak searches over more collections than the index budget holds
 * (pairs of collections in rotation, and now and then all of them at once, which the budget
 * refuses with 422) and holds WebSocket sessions at its per-key cap with one key and at its
 * per-tenant cap with a second key (each one more is refused with 4429), while tenant B ingests,
 * subscribes, drops its socket mid-stream and resumes with last_ack_seq. Printed: B's memories
 * whose completion event B never received (counted against the ids B created; must be 0), B's
 * search p95 idle and under A's load (same run), what A managed to do, and the process's index
 * bytes (peak and budget, from /v1/health) beside its RSS.
 */
import WebSocket from 'ws';
import type { Store } from '../store/index.js';
import { ApiClient } from './client.js';
import { info, metric, percentile, sleep } from './stats.js';
import { benchNumber } from './env.js';

const LOAD_SECONDS = benchNumber('BENCH_FAIRNESS_SECONDS', 20);
const FLOOD_CONCURRENCY = 8;
const B_MEMORIES = 12;
const BASELINE_SEARCHES = 40;
const B_QUERY = 'Who manages the harbour office?';
/** A's collections, each with a few memories: together well past the index budget. */
const A_COLLECTIONS = 8;
const A_MEMORIES_PER_COLLECTION = 3;
/** The fairness process's limits (small, so a bounded run reaches them). */
export const FAIRNESS_LIMITS = {
  SEARCH_INDEX_MAX_BYTES: String(benchNumber('BENCH_FAIRNESS_INDEX_BYTES', 512 * 1024)),
  WS_MAX_SESSIONS_PER_KEY: '4',
  WS_MAX_SESSIONS_PER_TENANT: '6',
};
/** Connect attempts per key at most, whatever the caps (bounded in count). */
const MAX_CONNECTS = 20;

interface Subscriber {
  ws: WebSocket;
  seqs: number[];
  /** Memory ids whose `complete` progress event arrived, with the event's seq. */
  completions: { seq: number; memoryId: string }[];
  gaps: number;
  refusal: { scope: string; limit: number } | null;
  closed: Promise<{ code: number; reason: string }>;
}

interface IndexHealth {
  bytes: number;
  max_bytes: number | null;
  loads: number;
  evictions: number;
}

async function connect(baseUrl: string, apiKey: string): Promise<Subscriber> {
  const minted = await fetch(`${baseUrl}/v1/users/ws-ticket`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}` } });
  const { ws_url: url } = ((await minted.json()) as { results: { ws_url: string } }).results;
  const ws = new WebSocket(url);
  const subscriber: Subscriber = {
    ws,
    seqs: [],
    completions: [],
    gaps: 0,
    refusal: null,
    closed: new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: String(reason) }))),
  };
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as {
      action: string;
      seq?: number;
      type?: string;
      reason?: string;
      scope?: string;
      limit?: number;
      payload?: { engram_id?: string; user_stage?: string };
    };
    if (frame.action === 'event' && typeof frame.seq === 'number') {
      subscriber.seqs.push(frame.seq);
      if (frame.type === 'ingestion_progress' && frame.payload?.user_stage === 'complete' && frame.payload.engram_id) {
        subscriber.completions.push({ seq: frame.seq, memoryId: frame.payload.engram_id });
      }
    }
    if (frame.reason === 'replay_gap') subscriber.gaps++;
    if (frame.reason === 'too_many_sessions') subscriber.refusal = { scope: frame.scope ?? '?', limit: frame.limit ?? 0 };
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return subscriber;
}

async function subscribe(subscriber: Subscriber, frame: Record<string, unknown>): Promise<void> {
  const done = new Promise<void>((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      if ((JSON.parse(String(data)) as { action: string }).action === 'subscribed') {
        subscriber.ws.off('message', onMessage);
        resolve();
      }
    };
    subscriber.ws.on('message', onMessage);
  });
  subscriber.ws.send(JSON.stringify({ action: 'subscribe', event_types: [], ...frame }));
  await done;
}

/** Opens sessions with one key until one is refused (4429) or MAX_CONNECTS; returns those held. */
async function holdSessions(baseUrl: string, apiKey: string): Promise<{ held: Subscriber[]; refusal: Subscriber['refusal'] }> {
  const held: Subscriber[] = [];
  for (let i = 0; i < MAX_CONNECTS; i++) {
    const socket = await connect(baseUrl, apiKey);
    const outcome = await Promise.race([socket.closed, sleep(150).then(() => null)]);
    if (outcome) return { held, refusal: outcome.code === 4429 ? socket.refusal : null };
    await subscribe(socket, { collections: [] });
    held.push(socket);
  }
  return { held, refusal: null };
}

/** B's refused searches (any non-200), counted rather than ending the run: must stay 0. */
let bSearchFailures = 0;

async function timedSearches(api: ApiClient, collectionId: string, until: () => boolean, max: number): Promise<number[]> {
  const times: number[] = [];
  while (times.length < max && until()) {
    const started = performance.now();
    try {
      await api.search(B_QUERY, [collectionId], { track_access: false });
    } catch (error) {
      bSearchFailures++;
      info(`   fairness: B's search failed: ${String(error).slice(0, 200)}`);
      await sleep(1000);
      continue;
    }
    times.push(performance.now() - started);
  }
  return times;
}

async function waitComplete(api: ApiClient, ids: string[], deadline: number): Promise<void> {
  for (const id of ids) {
    while ((await api.getMemory(id)).status !== 'complete') {
      if (Date.now() > deadline) throw new Error(`memory ${id} not complete in time`);
      await sleep(100);
    }
  }
}

/** A's searches answer with a status, not a throw: refusals are part of what is measured. */
async function searchStatus(baseUrl: string, apiKey: string, query: string, collectionIds: string[]): Promise<number> {
  const response = await fetch(`${baseUrl}/v1/memories/search`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query, collection_ids: collectionIds, track_access: false }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function indexHealth(baseUrl: string): Promise<IndexHealth> {
  const response = await fetch(`${baseUrl}/v1/health`);
  return ((await response.json()) as { results: { index: IndexHealth } }).results.index;
}

export async function fairnessScenario(deps: {
  /** The fairness API process (started with FAIRNESS_LIMITS). */
  baseUrl: string;
  store: Store;
  tenant: (name: string) => Promise<{ tenantId: string; apiKey: string; collectionId: string }>;
  /** A second API key of a tenant. */
  extraKey: (tenantId: string) => Promise<string>;
  rssMb: () => number | null;
}): Promise<void> {
  const { baseUrl, store } = deps;
  const noisy = await deps.tenant('fairness-noisy');
  const quiet = await deps.tenant('fairness-quiet');
  const noisySecondKey = await deps.extraKey(noisy.tenantId);
  const a = new ApiClient(baseUrl, noisy.apiKey);
  const b = new ApiClient(baseUrl, quiet.apiKey);
  const noisyCollections = [noisy.collectionId];
  for (let i = 1; i < A_COLLECTIONS; i++) noisyCollections.push((await a.createCollection(`noisy-${i}-${Date.now().toString(36)}`)).id);

  // A's content (so each of its collections has partitions to load) and B's, then B's idle baseline.
  const noisySeed: string[] = [];
  for (const [c, collectionId] of noisyCollections.entries()) {
    for (let m = 0; m < A_MEMORIES_PER_COLLECTION; m++) {
      noisySeed.push((await a.createMemory(collectionId, `Shipment ${c}-${m}: crates of timber and rope leave the depot at dawn.`)).id);
    }
  }
  const seed = await Promise.all(
    Array.from({ length: 4 }, (_, i) => b.createMemory(quiet.collectionId, `Maria manages the harbour office number ${i} in Kiel.`)),
  );
  await waitComplete(a, noisySeed, Date.now() + 180_000);
  await waitComplete(
    b,
    seed.map((memory) => memory.id),
    Date.now() + 120_000,
  );
  for (let i = 0; i < 5; i++) await b.search(B_QUERY, [quiet.collectionId], { track_access: false });
  const idle = await timedSearches(b, quiet.collectionId, () => true, BASELINE_SEARCHES);

  // A: sessions up to its key's cap with one key, up to its tenant's cap with a second one.
  const firstKey = await holdSessions(baseUrl, noisy.apiKey);
  const secondKey = await holdSessions(baseUrl, noisySecondKey);
  const held = [...firstKey.held, ...secondKey.held];

  const startSeq = await store.events.log.latestSeq();
  const healthBefore = await indexHealth(baseUrl);
  const loadEnds = Date.now() + LOAD_SECONDS * 1000;
  const loading = () => Date.now() < loadEnds;
  const outcomes = new Map<number, number>();
  let weakSearches = 0;
  const flood = Promise.all(
    Array.from({ length: FLOOD_CONCURRENCY }, async (_, worker) => {
      for (let i = 0; loading(); i++) {
        // Pairs in rotation (more collections than the budget holds, so loads and evictions),
        // and every tenth search of worker 0 names all of them (more than the whole budget).
        const at = (worker + i) % A_COLLECTIONS;
        const collections =
          worker === 0 && i % 10 === 9 ? noisyCollections : [noisyCollections[at]!, noisyCollections[(at + 1) % A_COLLECTIONS]!];
        const status = await searchStatus(baseUrl, noisy.apiKey, `qwzx plorth ${worker}-${i} vibbleglunk`, collections);
        outcomes.set(status, (outcomes.get(status) ?? 0) + 1);
        weakSearches++;
        // A refused search is cheap: pace the retry as Retry-After asks (1 s), bounded by the run.
        if (status === 429 || status === 503) await sleep(Math.min(1000, Math.max(0, loadEnds - Date.now())));
      }
    }),
  );
  let peakIndexBytes = healthBefore.bytes;
  let peakRss = deps.rssMb() ?? 0;
  const sampler = (async () => {
    while (loading()) {
      peakIndexBytes = Math.max(peakIndexBytes, (await indexHealth(baseUrl)).bytes);
      peakRss = Math.max(peakRss, deps.rssMb() ?? 0);
      await sleep(200);
    }
  })();

  // B: subscribe, ingest, drop the socket part-way, resume from the last processed seq.
  const first = await connect(baseUrl, quiet.apiKey);
  await subscribe(first, { collections: [quiet.collectionId], last_ack_seq: startSeq });
  const bSearches = timedSearches(b, quiet.collectionId, loading, 10_000);
  const created: string[] = [];
  for (let i = 0; i < B_MEMORIES / 2; i++)
    created.push((await b.createMemory(quiet.collectionId, `Jonas inspects the crane number ${i} at the harbour.`)).id);
  await waitComplete(b, created, Date.now() + 120_000);
  const lastProcessed = first.seqs.at(-1) ?? startSeq;
  first.ws.terminate();
  // What B processed before the drop: events after lastProcessed count only if replayed.
  const firstCompletions = first.completions.filter((completion) => completion.seq <= lastProcessed);
  for (let i = B_MEMORIES / 2; i < B_MEMORIES; i++)
    created.push((await b.createMemory(quiet.collectionId, `Jonas inspects the crane number ${i} at the harbour.`)).id);
  await sleep(2000); // disconnected while B's ingestion goes on
  const second = await connect(baseUrl, quiet.apiKey);
  await subscribe(second, { collections: [quiet.collectionId], last_ack_seq: lastProcessed });
  await waitComplete(b, created, Date.now() + 180_000);

  const loadTimes = await bSearches;
  await flood;
  await sampler;
  const rss = deps.rssMb();
  const healthAfter = await indexHealth(baseUrl);
  // Lost: a memory B created whose completion event B never received, across the drop (counted
  // against B's own ids, so an event missing from the log counts too).
  const deadline = Date.now() + 30_000;
  const completed = () => new Set([...firstCompletions, ...second.completions].map((completion) => completion.memoryId));
  while (created.some((id) => !completed().has(id)) && Date.now() < deadline) await sleep(50);
  const got = completed();
  const lost = created.filter((id) => !got.has(id)).length;
  const unconfident = await store.events.log.collection.countDocuments({ tenant_id: noisy.tenantId, type: 'memory_unconfident' });

  second.ws.close();
  for (const socket of held) socket.ws.close();

  const refusedBy = (scope: string) => [firstKey.refusal, secondKey.refusal].filter((refusal) => refusal?.scope === scope).length;
  metric('fairness_b_memories_created', created.length, 'count');
  metric('fairness_b_events_lost', lost, 'count');
  metric('fairness_b_replay_gaps', first.gaps + second.gaps, 'count');
  metric('fairness_b_search_failures', bSearchFailures, 'count');
  metric('fairness_b_search_p95_idle', percentile(idle, 95), 'ms');
  metric('fairness_b_search_p95_under_load', percentile(loadTimes, 95), 'ms');
  metric('fairness_b_search_p50_idle', percentile(idle, 50), 'ms');
  metric('fairness_b_search_p50_under_load', percentile(loadTimes, 50), 'ms');
  metric('fairness_a_searches', weakSearches, 'count');
  for (const status of [200, 422, 429, 503]) metric(`fairness_a_searches_${status}`, outcomes.get(status) ?? 0, 'count');
  metric('fairness_a_unconfident_events', unconfident, 'count');
  metric('fairness_a_sessions_held_key1', firstKey.held.length, 'count');
  metric('fairness_a_sessions_held_key2', secondKey.held.length, 'count');
  metric('fairness_a_sessions_refused_key_cap', refusedBy('key'), 'count');
  metric('fairness_a_sessions_refused_tenant_cap', refusedBy('tenant'), 'count');
  metric('fairness_index_max_bytes', healthAfter.max_bytes ?? 0, 'bytes');
  metric('fairness_index_bytes_peak', peakIndexBytes, 'bytes');
  metric('fairness_index_bytes_end', healthAfter.bytes, 'bytes');
  metric('fairness_index_loads', healthAfter.loads - healthBefore.loads, 'count');
  metric('fairness_index_evictions', healthAfter.evictions - healthBefore.evictions, 'count');
  if (rss !== null) {
    metric('fairness_service_rss_mb', rss, 'MB');
    metric('fairness_service_rss_peak_sampled_mb', peakRss, 'MB');
  }
  info(
    `   fairness: A ran ${weakSearches} searches over ${A_COLLECTIONS} collections in ${LOAD_SECONDS} s (${[...outcomes].map(([status, count]) => `${count}×${status}`).join(', ')}; ` +
      `${unconfident} memory_unconfident events kept), held ${firstKey.held.length}+${secondKey.held.length} sockets with two keys ` +
      `(refused: ${firstKey.refusal?.scope ?? 'none'}, ${secondKey.refusal?.scope ?? 'none'}); index ${peakIndexBytes} bytes at peak of ${healthAfter.max_bytes} ` +
      `(RSS ${rss ?? '?'} MB); B received the completion of ${created.length - lost} of its ${created.length} memories across a disconnect, ${loadTimes.length} searches under load`,
  );
}
