/**
 * The embedded store keeps what it acknowledged: the durability soak (bench/soak.ts) at CI size.
 * A stand-in of its own (the journal backend `npm run dev` uses) takes 20,000 documents from
 * concurrent writers, with updates and deletes among them, is SIGKILLed at 3 random points and
 * restarted after each, then stopped cleanly and started again; every acknowledged write must
 * be there, intact, and the files must stay within 3x the data.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runStoreSoak } from '../../bench/soak.js';

describe('the embedded store under SIGKILL', () => {
  it('loses no acknowledged write across 3 kills and a restart, logs no storage error, and keeps the disk within 3x the data', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-store-soak-'));
    try {
      const result = await runStoreSoak({
        docs: 20_000,
        kills: 3,
        writers: 6,
        docBytes: 1000,
        backend: 'journal',
        dataDir,
        heapMb: 512,
        seed: 11,
      });
      assert.equal(result.kills, 3);
      assert.ok(result.acknowledgedInserts >= 20_000, `acknowledged inserts: ${result.acknowledgedInserts}`);
      assert.ok(result.acknowledgedUpdates > 0 && result.acknowledgedDeletes > 0, 'the run updated and deleted documents too');
      assert.equal(result.lost, 0, 'acknowledged writes lost');
      assert.equal(result.corrupt, 0, 'documents read back with other content than written');
      assert.equal(result.storageErrors, 0, 'storage errors in the store log');
      assert.ok(result.logicalBytesAfterRestart > 10_000_000, `logical bytes: ${result.logicalBytesAfterRestart}`);
      assert.ok(
        result.diskBytesAfterRestart <= 3 * result.logicalBytesAfterRestart,
        `disk ${result.diskBytesAfterRestart} bytes for ${result.logicalBytesAfterRestart} bytes of data after the restart`,
      );
      assert.ok(
        result.diskBytesAfterLoad <= 3 * result.logicalBytesAfterLoad,
        `disk ${result.diskBytesAfterLoad} bytes for ${result.logicalBytesAfterLoad} bytes of data after the load`,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
