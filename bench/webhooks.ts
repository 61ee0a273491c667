/**
 * Webhook delivery: events/s delivered to one subscription and to 20 (each event to each), and the
 * latency from an event's append (as a worker appends it) to its receipt by a loopback HTTPS
 * receiver. The deliverer is a process of its own (ROLE=all, so it also serves the API that
 * registers the subscriptions), admitted to the receiver through the test-only outbound origin.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../dev/embedded.js';
import { spawnService, stopChild, waitForReady } from '../dev/stack.js';
import { newId } from '../core/ids.js';
import type { Store } from '../store/index.js';
import { startDnsServer } from '../test/support/dns-server.js';
import { TEST_CA_FILE } from '../test/support/https-origin.js';
import { startWebhookReceiver } from '../test/support/webhook-receiver.js';
import { CpuMeter, type CpuUsage } from './cpu.js';
import { info, metric, percentile, sleep } from './stats.js';

const HOST = 'hooks.snapshots.test';
const ONE_EVENTS = 2000;
const FANOUT_SUBSCRIPTIONS = 20;
const FANOUT_EVENTS = 100;
const LATENCY_EVENTS = 200;

export interface WebhookBenchEnv {
  serviceEnv: Record<string, string>;
  logDir: string;
  store: Store;
  tenantId: string;
  apiKey: string;
}

async function post(baseUrl: string, apiKey: string, urlPath: string, body: unknown): Promise<string> {
  const response = await fetch(`${baseUrl}${urlPath}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`POST ${urlPath} failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { results: { id: string } }).results.id;
}

/** Each part of the scenario has a collection of its own; its subscriptions filter on it. */
const collection = (baseUrl: string, apiKey: string, name: string) =>
  post(baseUrl, apiKey, '/v1/collections', { name: `${name}-${Date.now().toString(36)}` });
const subscribe = (baseUrl: string, apiKey: string, url: string, collectionId: string) =>
  post(baseUrl, apiKey, '/v1/webhooks', { url, event_types: ['ingestion_progress'], collection_ids: [collectionId] });

/** An event shaped like the pipeline's; `probe` lets the latency part find its append time. */
const progress = (probe: string) => ({ engram_id: probe, stage: 'embed', user_stage: 'indexing', current: 1, total: 2, message: null });

async function appendBurst(store: Store, tenantId: string, collectionId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - i) }, () =>
        store.events.append('ingestion_progress', tenantId, collectionId, progress('')),
      ),
    );
  }
}

async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate() && Date.now() < deadline) await sleep(20);
  return predicate();
}

/**
 * CPU per delivered request of the delivering process and of the database (the stand-in): a figure
 * that contention on a shared machine changes far less than events/s, with the machine's busy share beside it.
 */
function cpuPerDelivery(label: string, usage: CpuUsage | null, deliveries: number): void {
  if (!usage || deliveries === 0) return;
  metric(`webhook_deliverer_cpu_ms_per_request_${label}`, (1000 * (usage.seconds.service ?? 0)) / deliveries, 'ms');
  metric(`webhook_mongo_cpu_ms_per_request_${label}`, (1000 * (usage.seconds.mongo ?? 0)) / deliveries, 'ms');
  metric(`webhook_machine_busy_${label}`, usage.machineBusyPct, '%');
}

export async function webhookScenario(env: WebhookBenchEnv): Promise<void> {
  const { store, tenantId, apiKey } = env;
  const dns = await startDnsServer();
  const receiver = await startWebhookReceiver();
  dns.set(HOST, { A: ['127.0.0.1'] });
  const port = await freePort();
  let deliverer: ChildProcess | undefined;
  try {
    deliverer = spawnService(
      'api/main.js',
      {
        ...env.serviceEnv,
        ROLE: 'all',
        PORT: String(port),
        TEMPORAL_TASK_QUEUE: `webhooks-bench-${newId()}`,
        WEBHOOK_DELIVERY: 'true',
        OUTBOUND_DNS_SERVERS: dns.address,
        OUTBOUND_ALLOWED_PORTS: String(receiver.port),
        ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN: 'true',
        OUTBOUND_UNSAFE_TEST_ORIGIN: `${HOST}:${receiver.port}`,
        NODE_EXTRA_CA_CERTS: TEST_CA_FILE,
      },
      path.join(env.logDir, 'webhooks-deliverer.log'),
    );
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForReady(baseUrl, 180_000, deliverer);
    const hook = (urlPath: string) => `https://${HOST}:${receiver.port}${urlPath}`;

    // One subscription, a burst appended as fast as this process writes.
    const one = await collection(baseUrl, apiKey, 'webhooks-one');
    await subscribe(baseUrl, apiKey, hook('/one'), one);
    let meter = new CpuMeter(deliverer.pid ?? 0);
    let started = performance.now();
    await appendBurst(store, tenantId, one, ONE_EVENTS);
    const oneDone = await waitFor(() => receiver.at('/one').length >= ONE_EVENTS, 300_000);
    const oneSeconds = (performance.now() - started) / 1000;
    metric('webhook_events_per_s_1_subscription', receiver.at('/one').length / oneSeconds, 'events/s');
    cpuPerDelivery('1_subscription', meter.stop(), receiver.at('/one').length);
    if (!oneDone) info(`   only ${receiver.at('/one').length} of ${ONE_EVENTS} events arrived at one subscription`);

    // 20 subscriptions, every event to each.
    const fan = await collection(baseUrl, apiKey, 'webhooks-fanout');
    for (let i = 0; i < FANOUT_SUBSCRIPTIONS; i++) await subscribe(baseUrl, apiKey, hook(`/fan-${i}`), fan);
    const fanned = () => receiver.requests.filter((request) => request.path.startsWith('/fan-')).length;
    meter = new CpuMeter(deliverer.pid ?? 0);
    started = performance.now();
    await appendBurst(store, tenantId, fan, FANOUT_EVENTS);
    const total = FANOUT_SUBSCRIPTIONS * FANOUT_EVENTS;
    const fanDone = await waitFor(() => fanned() >= total, 300_000);
    const fanSeconds = (performance.now() - started) / 1000;
    metric('webhook_events_per_s_20_subscriptions', fanned() / FANOUT_SUBSCRIPTIONS / fanSeconds, 'events/s');
    metric('webhook_requests_per_s_20_subscriptions', fanned() / fanSeconds, 'requests/s');
    cpuPerDelivery('20_subscriptions', meter.stop(), fanned());
    if (!fanDone) info(`   only ${fanned()} of ${total} requests arrived at the 20 subscriptions`);

    // Latency: one event every 20 ms, like a steady pipeline; append → receipt.
    const steady = await collection(baseUrl, apiKey, 'webhooks-latency');
    await subscribe(baseUrl, apiKey, hook('/latency'), steady);
    const appendedAt = new Map<string, number>();
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const probe = newId();
      appendedAt.set(probe, Date.now());
      await store.events.append('ingestion_progress', tenantId, steady, progress(probe));
      await sleep(20);
    }
    await waitFor(() => receiver.at('/latency').length >= LATENCY_EVENTS, 60_000);
    const delays = receiver.at('/latency').map((request) => {
      const body = JSON.parse(request.body.toString('utf8')) as { data: { engram_id: string } };
      return request.at - (appendedAt.get(body.data.engram_id) ?? request.at);
    });
    metric('webhook_latency_p50', percentile(delays, 50), 'ms');
    metric('webhook_latency_p95', percentile(delays, 95), 'ms');
    metric('webhook_latency_lost', LATENCY_EVENTS - receiver.at('/latency').length, 'count');
    info(`   (the WebSocket figures of the events scenario, event_latency_p95, are the baseline for append → receipt)`);
  } finally {
    await stopChild(deliverer);
    await receiver.close();
    await dns.close();
  }
}
