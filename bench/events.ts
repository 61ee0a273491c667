/**
 * The live event stream: latency from append (as a worker does it) to receipt by a WebSocket
 * subscriber of the API process, and the sustained events/s one API process delivers.
 */
import WebSocket from 'ws';
import { newId } from '../core/ids.js';
import type { Store } from '../store/index.js';
import { info, metric, metricWithGoal, percentile, sleep } from './stats.js';

const LATENCY_EVENTS = 300;
/** Issue 28: append → WebSocket receipt. */
const EVENT_LATENCY_P95_GOAL_MS = 50;
const THROUGHPUT_EVENTS = 20_000;

/** An event frame as a subscriber received it, with when (performance.now()). */
export interface ReceivedEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
  at: number;
}

/** A WebSocket subscriber of the API process, subscribed (ticket, connect, subscribe) when this resolves. */
export async function openSubscriber(
  baseUrl: string,
  apiKey: string,
  collectionIds: string[],
  eventTypes: string[],
): Promise<{ ws: WebSocket; received: ReceivedEvent[] }> {
  const minted = await fetch(`${baseUrl}/v1/users/ws-ticket`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}` } });
  const { ws_url: url } = ((await minted.json()) as { results: { ws_url: string } }).results;
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const received: ReceivedEvent[] = [];
  let subscribed = false;
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { action: string; seq: number; type: string; payload: Record<string, unknown> };
    if (frame.action === 'subscribed') subscribed = true;
    if (frame.action === 'event') received.push({ seq: frame.seq, type: frame.type, payload: frame.payload, at: performance.now() });
  });
  ws.send(JSON.stringify({ action: 'subscribe', collections: collectionIds, event_types: eventTypes }));
  while (!subscribed) await sleep(5);
  return { ws, received };
}

export async function eventScenario(baseUrl: string, apiKey: string, store: Store, tenantId: string, collectionId: string): Promise<void> {
  // Latency: one event every 10 ms, like a steady pipeline.
  const latency = await openSubscriber(baseUrl, apiKey, [collectionId], ['bench_latency']);
  const sentAt = new Map<string, number>();
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const probe = newId();
    sentAt.set(probe, performance.now());
    await store.events.append('bench_latency', tenantId, collectionId, { probe });
    await sleep(10);
  }
  const deadline = Date.now() + 30_000;
  while (latency.received.length < LATENCY_EVENTS && Date.now() < deadline) await sleep(20);
  const delays = latency.received.map((event) => event.at - (sentAt.get(String(event.payload.probe)) ?? event.at));
  latency.ws.close();
  metric('event_latency_p50', percentile(delays, 50), 'ms');
  metricWithGoal('event_latency_p95', percentile(delays, 95), EVENT_LATENCY_P95_GOAL_MS, 'ms');
  metric('event_latency_lost', LATENCY_EVENTS - latency.received.length, 'count');

  // Throughput: appends as fast as this process can write them; delivery rate at the subscriber.
  const burst = await openSubscriber(baseUrl, apiKey, [collectionId], ['bench_burst']);
  const started = performance.now();
  for (let i = 0; i < THROUGHPUT_EVENTS; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, THROUGHPUT_EVENTS - i) }, () =>
        store.events.append('bench_burst', tenantId, collectionId, { probe: '' }),
      ),
    );
  }
  const appended = performance.now();
  const burstDeadline = Date.now() + 120_000;
  while (burst.received.length < THROUGHPUT_EVENTS && Date.now() < burstDeadline) await sleep(20);
  const finished = burst.received.at(-1)?.at ?? performance.now();
  burst.ws.close();
  const ordered = burst.received.every((event, index) => index === 0 || event.seq > burst.received[index - 1]!.seq);
  metric('event_append_per_second', THROUGHPUT_EVENTS / ((appended - started) / 1000), 'events/s');
  metric('event_delivery_per_second', burst.received.length / ((finished - started) / 1000), 'events/s');
  metric('event_delivery_lost', THROUGHPUT_EVENTS - burst.received.length, 'count');
  info(`   events: ${burst.received.length} of ${THROUGHPUT_EVENTS} delivered, in seq order: ${ordered}`);
}
