/**
 * Kill -9 the worker in the middle of embedding a memory, start a new one, and check that the
 * memory completes exactly once with no duplicate chunks: Temporal retries the activity after
 * its heartbeat times out, and the activity resumes from the vectors already stored.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { spawnService } from '../../dev/stack.js';
import { buildPdf, renderTextJpeg } from '../fixtures/documents.js';
import { createMemory, eventually, newTenant, stack, until, waitForStatus } from '../support/client.js';
import { closeDatabase, database, terminalEventOf } from '../support/db.js';

// One client per file, closed once every suite in the file is done (an open client keeps the file's process alive).
after(closeDatabase);

describe('worker crash mid-ingestion', () => {
  it('completes the memory once, with every chunk exactly once', async () => {
    const info = stack();
    const tenant = await newTenant('crash');
    const sections = Array.from(
      { length: 160 },
      (_, i) => `Section ${i}: the crash-test manuscript describes harbour cranes number ${i}. ${'steel cables and pulleys '.repeat(40)}`,
    );
    const id = await createMemory(tenant, { raw_text: sections.join('\n\n') });
    const db = await database();

    // Wait until some, but not all, vectors are stored: the worker is mid-embedding.
    await until(
      async () => (await db.collection('chunks').countDocuments({ memory_id: id, embedding_model: { $ne: null } })) > 0,
      'embedding to start',
      60_000,
    );
    process.kill(info.workerPid, 'SIGKILL');
    const total = await db.collection('chunks').countDocuments({ memory_id: id });
    const embeddedAtKill = await db.collection('chunks').countDocuments({ memory_id: id, embedding_model: { $ne: null } });
    assert.ok(embeddedAtKill < total, `killed mid-run (${embeddedAtKill}/${total} embedded)`);

    // It lives as long as the test runner (its watchdog follows the runner, not this file's
    // process), so later suites have a worker; it must not keep this process from exiting.
    const replacement = spawnService(
      'workers/main.js',
      { ...info.serviceEnv, ROLE: 'worker' },
      path.join(info.logDir, 'worker-2.log'),
      info.runnerPid,
    );
    replacement.unref();
    writeFileSync(info.stackFile, JSON.stringify({ ...info, workerPid: replacement.pid }, null, 2));

    const done = await waitForStatus(tenant.api, id, ['complete'], 180_000);
    const chunkCount = done.body.results.chunk_count as number;
    assert.equal(done.body.results.chunks.length, chunkCount);
    const chunks = await db
      .collection('chunks')
      .find({ memory_id: id }, { projection: { index: 1, embedding_model: 1 } })
      .toArray();
    assert.equal(chunks.length, chunkCount, 'no duplicate chunks');
    assert.deepEqual(
      chunks.map((chunk) => chunk.index as number).sort((a, b) => a - b),
      Array.from({ length: chunkCount }, (_, i) => i),
    );
    assert.ok(
      chunks.every((chunk) => chunk.embedding_model),
      'every chunk has its vector',
    );
    await terminalEventOf(id);
    const completes = await db.collection('memory_events').countDocuments({ 'payload.engram_id': id, 'payload.user_stage': 'complete' });
    assert.equal(completes, 1, 'completed exactly once');

    const search = await tenant.api.post('/v1/memories/search', {
      query: 'harbour cranes manuscript',
      collection_ids: [tenant.collectionId],
    });
    assert.equal(search.body.results.hits[0]?.memory_id, id);
  });

  it('survives a kill during OCR of a scanned PDF: the read stage reruns, chunks are not duplicated', async () => {
    const tenant = await newTenant('crash-ocr');
    const pageCount = 12;
    const pages = await Promise.all(
      Array.from({ length: pageCount }, async (_, i) => ({
        kind: 'image' as const,
        jpeg: await renderTextJpeg([`Ledger page ${i + 1}`, `Shipment of barrels number ${100 + i}`], 900, 400, 40),
        width: 900,
        height: 400,
      })),
    );
    const pdf = buildPdf(pages);
    // Above the inline limit: it goes through a presigned upload, as a client would send it.
    const issued = await tenant.api.post('/v1/uploads', {
      collection_id: tenant.collectionId,
      filename: 'ledger.pdf',
      media_type: 'application/pdf',
      size: pdf.length,
    });
    const put = await fetch(issued.body.results.upload_url, { method: 'PUT', body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    assert.equal(put.status, 200);
    const id = await createMemory(tenant, { content_parts: [{ type: 'document', upload_id: issued.body.results.upload_id }] });
    const db = await database();
    const progress = await eventually(
      async () => {
        const event = await db
          .collection('memory_events')
          .findOne({ 'payload.engram_id': id, 'payload.stage': 'extract', 'payload.current': { $gte: 1 } });
        if (!event) throw new Error('no OCR page done yet');
        return event.payload as { current: number; total: number };
      },
      60_000,
      10,
    );
    assert.ok(progress && progress.current < progress.total, `killed mid-OCR (${JSON.stringify(progress)})`);
    const info = stack();
    process.kill(info.workerPid, 'SIGKILL');
    const replacement = spawnService(
      'workers/main.js',
      { ...info.serviceEnv, ROLE: 'worker' },
      path.join(info.logDir, 'worker-3.log'),
      info.runnerPid,
    );
    replacement.unref();
    writeFileSync(info.stackFile, JSON.stringify({ ...info, workerPid: replacement.pid }, null, 2));

    const done = await waitForStatus(tenant.api, id, ['complete'], 180_000);
    const sources = done.body.results.chunk_sources as { page: number }[];
    assert.deepEqual(
      [...new Set(sources.map((source) => source.page))].sort((a, b) => a - b),
      Array.from({ length: pageCount }, (_, i) => i + 1),
    );
    const stored = await db.collection('chunks').countDocuments({ memory_id: id });
    assert.equal(stored, done.body.results.chunk_count, 'no duplicate chunks');
    assert.match((done.body.results.chunks as string[]).join(' ').toLowerCase(), /barrels/);
    await terminalEventOf(id);
    const completes = await db.collection('memory_events').countDocuments({ 'payload.engram_id': id, 'payload.user_stage': 'complete' });
    assert.equal(completes, 1);
  });
});
