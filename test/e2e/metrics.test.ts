/** GET /metrics scraped like Prometheus would, after real traffic. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createMemory, eventually, newTenant, stack, waitForStatus, type TenantFixture } from '../support/client.js';
import { closeDatabase } from '../support/db.js';
import { RawSocket } from '../support/ws.js';

after(closeDatabase);

/** The value of one sample line, e.g. sample(text, 'engram_index_entries{index="vector"}'). */
function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
}

describe('Prometheus metrics', () => {
  let tenant: TenantFixture;
  before(async () => {
    tenant = await newTenant('metrics');
  });

  it('scrapes HTTP, workflow, search, WebSocket, event-log and index metrics after real traffic', async () => {
    const id = await createMemory(tenant, { raw_text: 'The harbour master of Kirkwall is Morag.' });
    await waitForStatus(tenant.api, id, ['complete']);
    assert.equal((await tenant.api.search([tenant.collectionId], 'Who is the harbour master?')).status, 200);
    const socket = await RawSocket.open(tenant.api);
    socket.send({ action: 'subscribe', collections: [tenant.collectionId], event_types: [] });
    await socket.next((frame) => frame.action === 'subscribed');

    const response = await fetch(`${stack().apiUrl}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
    const text = await response.text();
    socket.close();

    const created = sample(text, 'engram_http_request_duration_seconds_count{method="POST",route="/v1/memories",status="202"}');
    assert.ok(created !== null && created >= 1, 'POST /v1/memories 202 is counted under its route template');
    const gets = sample(text, 'engram_http_request_duration_seconds_count{method="GET",route="/v1/memories/:memory_id",status="200"}');
    assert.ok(gets !== null && gets >= 1, 'memory ids do not become labels');
    assert.ok((sample(text, 'engram_workflows_started_total{workflow="ingestMemory"}') ?? 0) >= 1);
    for (const phase of ['embed', 'index', 'graph', 'fetch', 'total']) {
      assert.ok((sample(text, `engram_search_duration_seconds_count{phase="${phase}"}`) ?? 0) >= 1, phase);
    }
    assert.ok((sample(text, 'engram_websocket_sessions') ?? 0) >= 1);
    assert.notEqual(sample(text, 'engram_websocket_slow_consumers_total'), null);
    assert.ok((sample(text, 'engram_event_log_head_seq') ?? 0) >= 1);
    assert.notEqual(sample(text, 'engram_event_follower_lag_events'), null);
    assert.ok((sample(text, 'engram_index_entries{index="vector"}') ?? 0) >= 1);
    assert.ok((sample(text, 'engram_index_bytes{index="vector"}') ?? 0) > 0);
    assert.ok((sample(text, 'engram_index_bytes{index="lexical"}') ?? 0) > 0);
    assert.ok((sample(text, 'engram_process_resident_memory_bytes') ?? 0) > 0);
  });

  it('scrapes the worker process: ingestion outcomes and embedding batches', async () => {
    const id = await createMemory(tenant, { raw_text: 'The ferry to Stromness leaves at nine.' });
    await waitForStatus(tenant.api, id, ['complete']);
    const url = stack().workerMetricsUrl;
    assert.ok(url, 'the test stack starts its worker with WORKER_METRICS_PORT');
    const response = await fetch(url);
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.ok((sample(text, 'engram_ingestion_progress_total{user_stage="complete"}') ?? 0) >= 1);
    assert.ok((sample(text, 'engram_ingestion_progress_total{user_stage="reading"}') ?? 0) >= 1);
    assert.ok((sample(text, 'engram_embedding_batch_size_count') ?? 0) >= 1);
    const stages = [...text.matchAll(/^engram_activity_duration_seconds_count\{activity="([^"]+)",outcome="completed"\} (\d+)/gm)];
    // One single-pass activity ingests a memory (workflows/ingest-memory.ts); other activity types
    // appear only when other suites ran first, so only the one this memory used is required.
    assert.ok(
      stages.some(([, activity, count]) => activity === 'ingestContent' && Number(count) >= 1),
      `ingestion is timed per activity:\n${stages.map((match) => match[0]).join('\n')}`,
    );
    assert.ok((sample(text, 'engram_embedding_batch_duration_seconds_count') ?? 0) >= 1);
    assert.equal((await fetch(url.replace('/metrics', '/other'))).status, 404);
  });

  it('logs the request id beside the workflow id it started', async () => {
    const requestId = `req-${Date.now().toString(36)}`;
    const response = await tenant.api.post(
      '/v1/memories',
      { collection_id: tenant.collectionId, raw_text: 'Correlate me.' },
      { 'X-Request-Id': requestId },
    );
    assert.equal(response.status, 202);
    assert.equal(response.headers.get('x-request-id'), requestId);
    const file = path.join(stack().logDir, 'api.log');
    const line = await eventually(
      async () => {
        const logged = readFileSync(file, 'utf8')
          .split('\n')
          .filter((entry) => entry.includes(requestId))
          .map((entry) => JSON.parse(entry) as { requestId?: string; workflowId?: string })
          .find((entry) => entry.workflowId);
        assert.ok(logged, 'the access log line carries the workflow id');
        return logged;
      },
      5_000,
      100,
    );
    assert.equal(line.workflowId, response.body.results.workflow_id);
  });

  it('runs the API and the worker with the service node flags, so new space is capped (runtime/gc-tuning.ts)', async () => {
    for (const [log, started] of [
      ['api.log', 'API listening'],
      ['worker.log', 'worker metrics listening'],
    ] as const) {
      const text = readFileSync(path.join(stack().logDir, log), 'utf8');
      assert.ok(text.includes(started), `${log} is the log of a started process`);
      assert.ok(!text.includes('ENGRAM_NODE_FLAGS'), `${log}: started without the service flags`);
    }
    const metrics = await (await fetch(`${stack().apiUrl}/metrics`)).text();
    const newSpace = sample(metrics, 'engram_nodejs_heap_space_size_total_bytes{space="new"}');
    assert.ok(newSpace !== null && newSpace > 0 && newSpace <= 32 * 2 ** 20, `new space of the API process: ${newSpace} bytes`);
  });

  it('answers a loopback scrape whatever Authorization header it carries (no METRICS_TOKEN set)', async () => {
    const response = await fetch(`${stack().apiUrl}/metrics`, { headers: { Authorization: `Bearer ${tenant.apiKey}` } });
    assert.equal(response.status, 200);
  });
});
