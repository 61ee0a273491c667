/**
 * Full pattern mines against the stack's database (the stand-in in CI), in a database of their
 * own so that the stack's worker does not mine it too. Two repositories (and the derivation over each) play two processes: a
 * mine that stalls past its lease (read, then nothing for longer than the lease) must not
 * overwrite or delete what the mine that took over wrote, and a change made while a mine holds the
 * lease writes no pattern beside it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectDatabase, type Database } from '../../store/db.js';
import { ProcedureDerivation } from '../../core/procedures/derivation.js';
import { ProcedureRepository } from '../../store/procedures.js';
import { stack } from '../support/client.js';
import { addClaims, caseTraces } from '../support/procedure-traces.js';

const DAY = 86_400_000;
const base = new Date('2026-11-01T00:00:00Z');

/** Runs `test` on a database of its own in the stack's store, dropped after. */
async function withOwnDatabase(name: string, test: (database: Database) => Promise<void>): Promise<void> {
  const own = await connectDatabase(stack().serviceEnv.MONGODB_URI!, `${name}_${Date.now().toString(36)}`);
  try {
    await test(own);
  } finally {
    await own.db.dropDatabase();
    await own.close();
  }
}

describe('procedure pattern mining under a lease', () => {
  it('a mine that stalled past its lease cannot delete the patterns of the mine that took over', () =>
    withOwnDatabase('mining_fence', async (database) => {
      const stalledRecords = new ProcedureRepository(database.db);
      const currentRecords = new ProcedureRepository(database.db);
      const stalled = new ProcedureDerivation(stalledRecords);
      const current = new ProcedureDerivation(currentRecords);
      await stalledRecords.ensureIndexes();
      const scope = { tenantId: 'tenant-fence', collectionId: 'collection-fence' };
      await addClaims(current, scope, 3, base);

      // The first mine reads the instances, then stalls (a long pause) until released.
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let reads = 0;
      const find = stalledRecords.instances.find.bind(stalledRecords.instances);
      const stalledFind = (...args: Parameters<typeof find>) => {
        const cursor = find(...args);
        const toArray = cursor.toArray.bind(cursor);
        if (reads++ === 0)
          cursor.toArray = async () => {
            const rows = await toArray();
            await gate;
            return rows;
          };
        return cursor;
      };
      stalledRecords.instances.find = stalledFind as unknown as typeof stalledRecords.instances.find; // the stall, injected
      const firstMine = stalled.mineCollection(scope);
      await new Promise((resolve) => setTimeout(resolve, 300));

      // Meanwhile a second procedure recurs, its lease runs out (the stall outlived it), and another mine runs.
      for (let i = 0; i < 3; i++) {
        await current.replaceMemoryTraces(
          scope,
          `ticket-${i}`,
          new Date(base.getTime() + (10 + i) * DAY),
          caseTraces(['create', 'assign', 'complete'], `ticket ${i}`, base),
        );
      }
      await database.db
        .collection('workflow_mining')
        .updateOne({ _id: scope.collectionId } as never, { $set: { mining_until: new Date(0) } });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await current.mineCollection(scope);
      const patternsAfterTakeover = await currentRecords.patterns.find({ collection_id: scope.collectionId }).toArray();
      assert.equal(patternsAfterTakeover.length, 2, 'the mine that took over found both procedures');

      release();
      await firstMine.catch(() => undefined);

      const patterns = new Set((await currentRecords.patterns.find({ collection_id: scope.collectionId }).toArray()).map((row) => row._id));
      const instances = await currentRecords.instances.find({ collection_id: scope.collectionId }).toArray();
      const dangling = instances.filter((instance) => instance.pattern_id !== null && !patterns.has(instance.pattern_id));
      assert.deepEqual(
        dangling.map((instance) => instance._id),
        [],
        'no instance links to a deleted pattern',
      );
      assert.equal(patterns.size, 2, 'the stale mine deleted nothing');
      assert.equal(instances.filter((instance) => instance.pattern_id !== null).length, 6);
    }));

  it('takes the lease after a holder whose clock ran ahead, each claim with a larger epoch', async () => {
    await withOwnDatabase('mining_skew', async (skewed) => {
      const records = new ProcedureRepository(skewed.db);
      const scope = { tenantId: 'tenant-skew', collectionId: 'collection-skew' };
      await records.noteChanges(scope, 1);
      // The last holder ran on a host an hour ahead (epochs were its claim times) and released its lease.
      const ahead = Date.now() + 3_600_000;
      await skewed.db
        .collection('workflow_mining')
        .updateOne({ _id: scope.collectionId } as never, { $set: { mining_epoch: ahead, mining_until: new Date(0) } });
      const first = await records.claimMineLease(scope);
      assert.ok(first !== null && first > ahead, `claimed with epoch ${first}`);
      assert.equal(await records.claimMineLease(scope), null, 'held: no second claim');
      await records.releaseMineLease(scope.collectionId, first);
      const second = await records.claimMineLease(scope);
      assert.ok(second !== null && second > first);
    });
  });

  it('writes no pattern or link beside a running mine: a change that waited for the lease in vain owes a mine, which counts it', async () => {
    await withOwnDatabase('mining_serial', async (serial) => {
      const minerRecords = new ProcedureRepository(serial.db);
      await minerRecords.ensureIndexes();
      const miner = new ProcedureDerivation(minerRecords);
      const changes = new ProcedureDerivation(new ProcedureRepository(serial.db));
      const scope = { tenantId: 'tenant-serial', collectionId: 'collection-serial' };
      await addClaims(changes, scope, 4, base);
      await miner.mineCollection(scope);
      const patterns = () => minerRecords.patterns.find({ collection_id: scope.collectionId }).toArray();
      assert.deepEqual(
        (await patterns()).map((row) => row.instance_count),
        [4],
      );

      // A mine holds the lease, paused between its reading and its writes.
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let paused: () => void = () => undefined;
      const reached = new Promise<void>((resolve) => (paused = resolve));
      miner.beforeMineWrites = async () => {
        paused();
        await gate;
      };
      const mine = miner.mineCollection(scope);
      await reached;
      // Meanwhile a request-path change (a DELETE) takes a whole instance away.
      await changes.removeMemories(['claim-0']);
      assert.deepEqual(
        (await patterns()).map((row) => row.instance_count),
        [4],
        'the change wrote no count beside the mine',
      );
      const owed = await serial.db
        .collection<{ _id: string; remine_due?: boolean }>('workflow_mining')
        .findOne({ _id: scope.collectionId });
      assert.equal(owed?.remine_due, true, 'the change owes a mine');

      release();
      assert.equal(await mine, 1);
      // The mine saw the version move and ran again: the pattern counts the members it has.
      const [pattern] = await patterns();
      assert.equal(pattern?.instance_count, 3);
      assert.equal(await minerRecords.instances.countDocuments({ collection_id: scope.collectionId, pattern_id: pattern!._id }), 3);
    });
  });
});
