/**
 * Ingesting a bench corpus through the API: a fixed number of memories in flight, each polled
 * until it is complete, and a progress line now and then (bench/retrieval, bench/locomo).
 */
import type { ApiClient } from './client.js';
import { info, sleep } from './stats.js';

/** Runs `work` over the jobs, `concurrency` at a time, with a progress line every 10 s naming `unit`. */
export async function runPool<J>(jobs: readonly J[], concurrency: number, unit: string, work: (job: J) => Promise<void>): Promise<void> {
  const started = performance.now();
  let next = 0;
  let done = 0;
  let lastReport = started;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) {
        await work(jobs[next++]!);
        done += 1;
        const now = performance.now();
        if (now - lastReport > 10_000) {
          info(`   ${done}/${jobs.length} ${unit} complete after ${((now - started) / 1000).toFixed(1)} s`);
          lastReport = now;
        }
      }
    }),
  );
}

/** Polls the memory every `pollMs` until it is complete; a failure, or still running at `deadline` (performance.now()), throws naming `label`. */
export async function waitUntilComplete(api: ApiClient, id: string, label: string, deadline: number, pollMs: number): Promise<void> {
  for (;;) {
    const record = await api.getMemory(id);
    if (record.status === 'complete') return;
    if (record.status === 'failed') throw new Error(`${label} (memory ${id}) failed: ${record.status_message ?? '(no message)'}`);
    if (performance.now() > deadline) throw new Error(`${label} (memory ${id}) still ${record.status} at the ingestion deadline`);
    await sleep(pollMs);
  }
}
