/**
 * Fair sharing under load (issue 20), on loopback against the bench's service process, bounded
 * in count and time. Tenant A floods weak searches over five empty collections (each one a
 * memory_unconfident candidate) and holds WebSocket sessions at its per-key cap (one more is
 * refused with 4429), while tenant B ingests, subscribes, drops its socket mid-stream and
 * resumes with last_ack_seq. Printed: B's events lost (must be 0), B's search p95 idle and under
 * A's load (same run), what A managed to do, and the service's RSS.
 */
import WebSocket from 'ws';
import type { Store } from '../store/index.js';
import { ApiClient } from './client.js';
import { info, metric, percentile, sleep } from './stats.js';

const LOAD_SECONDS = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 20);
const FLOOD_CONCURRENCY = 8;
const B_MEMORIES = 12;
const BASELINE_SEARCHES = 40;
const B_QUERY = 'Who manages the harbour office?';

interface Subscriber {
  ws: WebSocket;
  seqs: number[];
  gaps: number;
  closed: Promise<{ code: number; reason: string }>;
}

async function connect(baseUrl: string, apiKey: string): Promise<Subscriber> {
  const minted = await fetch(`${baseUrl}/v1/users/ws-ticket`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}` } });
  const { ws_url: url } = ((await minted.json()) as { results: { ws_url: string } }).results;
  const ws = new WebSocket(url);
  const subscriber: Subscriber = {
    ws,
    seqs: [],
    gaps: 0,
    closed: new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: String(reason) }))),
  };
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { action: string; seq?: number; reason?: string };
    if (frame.action === 'event' && typeof frame.seq === 'number') subscriber.seqs.push(frame.seq);
    if (frame.reason === 'replay_gap') subscriber.gaps++;
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

async function timedSearches(api: ApiClient, collectionId: string, until: () => boolean, max: number): Promise<number[]> {
  const times: number[] = [];
  while (times.length < max && until()) {
    const started = performance.now();
    await api.search(B_QUERY, [collectionId], { track_access: false });
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

export async function fairnessScenario(deps: {
  baseUrl: string;
  store: Store;
  tenant: (name: string) => Promise<{ tenantId: string; apiKey: string; collectionId: string }>;
  rssMb: () => number | null;
}): Promise<void> {
  const { baseUrl, store } = deps;
  const noisy = await deps.tenant('fairness-noisy');
  const quiet = await deps.tenant('fairness-quiet');
  const a = new ApiClient(baseUrl, noisy.apiKey);
  const b = new ApiClient(baseUrl, quiet.apiKey);
  const noisyCollections = [noisy.collectionId];
  for (let i = 0; i < 4; i++) noisyCollections.push((await a.createCollection(`noisy-${i}-${Date.now().toString(36)}`)).id);

  // B's content, and its idle baseline: nothing else runs.
  const seed = await Promise.all(
    Array.from({ length: 4 }, (_, i) => b.createMemory(quiet.collectionId, `Maria manages the harbour office number ${i} in Kiel.`)),
  );
  await waitComplete(
    b,
    seed.map((memory) => memory.id),
    Date.now() + 120_000,
  );
  for (let i = 0; i < 5; i++) await b.search(B_QUERY, [quiet.collectionId], { track_access: false });
  const idle = await timedSearches(b, quiet.collectionId, () => true, BASELINE_SEARCHES);

  // A: sessions up to its key's cap, and one more (refused).
  const held: Subscriber[] = [];
  let refused = 0;
  for (let i = 0; i < 200; i++) {
    const socket = await connect(baseUrl, noisy.apiKey);
    const outcome = await Promise.race([socket.closed, sleep(150).then(() => null)]);
    if (outcome) {
      if (outcome.code === 4429) refused++;
      break;
    }
    await subscribe(socket, { collections: [] });
    held.push(socket);
  }

  const startSeq = await store.events.log.latestSeq();
  const loadEnds = Date.now() + LOAD_SECONDS * 1000;
  const loading = () => Date.now() < loadEnds;
  let weakSearches = 0;
  const flood = Promise.all(
    Array.from({ length: FLOOD_CONCURRENCY }, async (_, worker) => {
      for (let i = 0; loading(); i++) {
        await a.search(`qwzx plorth ${worker}-${i} vibbleglunk`, noisyCollections, { track_access: false });
        weakSearches++;
      }
    }),
  );

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
  const firstSeqs = first.seqs.filter((seq) => seq <= lastProcessed);
  for (let i = B_MEMORIES / 2; i < B_MEMORIES; i++)
    created.push((await b.createMemory(quiet.collectionId, `Jonas inspects the crane number ${i} at the harbour.`)).id);
  await sleep(2000); // disconnected while B's ingestion goes on
  const second = await connect(baseUrl, quiet.apiKey);
  await subscribe(second, { collections: [quiet.collectionId], last_ack_seq: lastProcessed });
  await waitComplete(b, created, Date.now() + 180_000);

  const loadTimes = await bSearches;
  await flood;
  const rss = deps.rssMb();
  // Everything B's subscriptions should have seen: its events after the start, from the log itself.
  const expected = (
    await store.events.readFor({ tenantId: quiet.tenantId, collectionIds: [quiet.collectionId], eventTypes: [] }, startSeq, 100_000)
  ).map((entry) => entry.seq);
  const deadline = Date.now() + 30_000;
  const received = () => new Set([...firstSeqs, ...second.seqs]);
  while (expected.some((seq) => !received().has(seq)) && Date.now() < deadline) await sleep(50);
  const got = received();
  const lost = expected.filter((seq) => !got.has(seq)).length;
  const unconfident = await store.events.log.collection.countDocuments({ tenant_id: noisy.tenantId, type: 'memory_unconfident' });

  second.ws.close();
  for (const socket of held) socket.ws.close();

  metric('fairness_b_events_expected', expected.length, 'count');
  metric('fairness_b_events_lost', lost, 'count');
  metric('fairness_b_replay_gaps', first.gaps + second.gaps, 'count');
  metric('fairness_b_search_p95_idle', percentile(idle, 95), 'ms');
  metric('fairness_b_search_p95_under_load', percentile(loadTimes, 95), 'ms');
  metric('fairness_b_search_p50_idle', percentile(idle, 50), 'ms');
  metric('fairness_b_search_p50_under_load', percentile(loadTimes, 50), 'ms');
  metric('fairness_a_weak_searches', weakSearches, 'count');
  metric('fairness_a_unconfident_events', unconfident, 'count');
  metric('fairness_a_sessions_held', held.length, 'count');
  metric('fairness_a_sessions_refused', refused, 'count');
  if (rss !== null) metric('fairness_service_rss_mb', rss, 'MB');
  info(
    `   fairness: A ran ${weakSearches} weak searches over 5 collections in ${LOAD_SECONDS} s (${unconfident} memory_unconfident events kept), held ${held.length} sockets (${refused} refused); ` +
      `B received ${got.size} of ${expected.length} events across a disconnect, ${loadTimes.length} searches under load`,
  );
}
