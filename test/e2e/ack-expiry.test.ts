/**
 * Issue 26, item 7: `ws_acks` rows are keyed by a client-chosen subscriber id, so the API's ack
 * repair (runtime/roles.ts) removes the rows not moved for WS_ACK_RETENTION_HOURS. The repair as
 * the process schedules it, on the real repository against the stack's store (the stand-in in CI),
 * in a database of its own: the cutoff itself is unit-tested beside roles.ts.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { apiRepairs } from '../../runtime/roles.js';
import { connectDatabase, type Database } from '../../store/db.js';
import { EventAckRepository } from '../../store/event-acks.js';
import { stack } from '../support/client.js';

const HOUR_MS = 3_600_000;
const RETENTION_HOURS = 168;

describe('WebSocket ack expiry in the store', () => {
  let database: Database | null = null;
  after(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it('removes the acks not moved for longer than WS_ACK_RETENTION_HOURS and keeps the others', async () => {
    database = await connectDatabase(stack().serviceEnv.MONGODB_URI!, `ack_expiry_${Date.now().toString(36)}`);
    const acks = new EventAckRepository(database.db);
    await acks.ensureIndexes();
    const rows = database.db.collection<{ _id: string; seq: number; updated_at: Date }>('ws_acks');
    const now = Date.now();
    /** An ack recorded through the repository, then last moved `hoursAgo` (time cannot pass in a test). */
    const ackedAgo = async (identity: string, seq: number, hoursAgo: number) => {
      await acks.record(identity, seq);
      await rows.updateOne({ _id: identity }, { $set: { updated_at: new Date(now - hoursAgo * HOUR_MS) } });
    };
    await ackedAgo('key-a:abandoned', 10, RETENTION_HOURS + 1);
    await ackedAgo('key-a:long-gone', 11, 30 * 24);
    await ackedAgo('key-b:quiet', 12, RETENTION_HOURS - 1);
    await acks.record('key-b:live', 13);
    // Old, but it acknowledged a later event just now: moved, so kept.
    await ackedAgo('key-c:returned', 14, RETENTION_HOURS + 1);
    await acks.record('key-c:returned', 15);
    // Old, but its subscriber is connected (services/event-stream.ts expireAcks touches it first):
    // kept, its seq unchanged; touching an identity with no row creates none.
    await ackedAgo('key-d:connected', 16, RETENTION_HOURS + 1);
    await acks.touch(['key-d:connected', 'key-x:never-acked'], new Date(now));

    const tasks = apiRepairs(
      {
        RECONCILE_INTERVAL_MS: 30_000,
        DELETE_SWEEP_INTERVAL_MS: 10_000,
        EPHEMERAL_SWEEP_INTERVAL_MS: 30_000,
        WS_ACK_RETENTION_HOURS: RETENTION_HOURS,
      },
      {
        reconcileQueued: async () => 0,
        reconcileCollectionChanges: async () => 0,
        sweepDeletions: async () => 0,
        sweepExpiredCollections: async () => 0,
        sweepUploads: async () => 0,
        expireAcks: (olderThan) => acks.expire(olderThan),
      },
      () => now,
    );
    const counts = await Promise.all(tasks.map((task) => task.run()));
    assert.equal(
      counts.reduce<number>((sum, count) => sum + (count ?? 0), 0),
      2,
      'the repair reports the two it removed',
    );

    const left = await rows.find({}, { sort: { _id: 1 } }).toArray();
    assert.deepEqual(
      left.map((row) => [row._id, row.seq]),
      [
        ['key-b:live', 13],
        ['key-b:quiet', 12],
        ['key-c:returned', 15],
        ['key-d:connected', 16],
      ],
    );
    // A subscriber whose ack expired resumes from the log's head (services/event-stream.ts).
    assert.equal(await acks.lastAck('key-a:abandoned'), null);
    assert.equal(await acks.lastAck('key-b:quiet'), 12);
    // Nothing else is old enough: a second run removes nothing.
    assert.equal(await acks.expire(new Date(now - RETENTION_HOURS * HOUR_MS)), 0);
  });
});
