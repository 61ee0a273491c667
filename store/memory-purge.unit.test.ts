import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PURGE_STEPS, type PurgeStep } from '../core/purge-steps.js';
import { fakeStore, memoryRecord } from '../test/support/fakes/index.js';

const A = 'tenant-a';
const B = 'tenant-b';

/** A store with memories m1, m2 of tenant A and m3 of tenant B, each with a chunk. */
function setup() {
  const store = fakeStore();
  const seed = (id: string, tenant: string) => {
    const memory = memoryRecord({ id, tenant_id: tenant, collection_ids: [`${tenant}-c`] });
    store.memories.rows.set(id, memory);
    store.chunks.seed(memory, [`text of ${id}`]);
    return memory;
  };
  const memories = [seed('m1', A), seed('m2', A), seed('m3', B)];
  const steps: PurgeStep[] = [];
  store.purge.onStep = (step) => void steps.push(step);
  return { store, memories, steps };
}

describe('memory purge: the one delete cascade', () => {
  it('runs its steps in the documented order (core/purge-steps.ts), each once', async () => {
    const { store, steps } = setup();
    const purges = await store.purge.begin(A, ['m1']);
    await store.purge.finish(purges);
    assert.deepEqual(steps, [...PURGE_STEPS]);
  });

  it('the record goes only after the intent is durable, and the intent only after everything else', async () => {
    const { store } = setup();
    await store.purge.finish(await store.purge.begin(A, ['m1', 'm2']));
    const names = store.journal.names();
    assert.equal(names[0], 'intents.record');
    assert.equal(names[1], 'memories.deleteMany');
    assert.equal(names.at(-1), 'intents.remove');
    // The persisted lexical partitions go after the remove notices: a snapshot written later sees them.
    assert.ok(names.indexOf('indexChanges.publishRemoves') < names.indexOf('indexSnapshots.removeForTenant'));
  });

  it("begin takes only the tenant's own memories: another tenant's id is neither recorded nor deleted", async () => {
    const { store } = setup();
    const purges = await store.purge.begin(A, ['m1', 'm3', 'missing']);
    assert.deepEqual(
      purges.map((purge) => purge.memoryId),
      ['m1'],
    );
    assert.deepEqual([...store.intents.rows.keys()], ['m1']);
    assert.ok(store.memories.rows.has('m3'));
  });

  it("begin with nothing of the tenant's writes nothing", async () => {
    const { store, steps } = setup();
    assert.deepEqual(await store.purge.begin(A, ['m3']), []);
    await store.purge.finish([]);
    assert.deepEqual(store.journal.names(), []);
    assert.deepEqual(steps, []);
  });

  it('removes every derived row of the deleted memories and of no other', async () => {
    const { store } = setup();
    await store.purge.finish(await store.purge.begin(A, ['m1']));
    assert.deepEqual([...store.chunks.rows.keys()].sort(), ['m2:0', 'm3:0']);
    for (const at of [
      'factEvents.removeMemories',
      'procedures.removeMemories',
      'files.deleteForMemories',
      'uploads.forgetMemories',
      'idempotency.forgetMemories',
    ]) {
      assert.deepEqual(store.journal.argsOf(at)[0]?.[0], ['m1'], at);
    }
    assert.equal(store.journal.argsOf('factEvents.removeMemories')[0]?.[1], undefined, 'the graph goes from every collection');
  });

  it('notices go per tenant, each naming only its own memories', async () => {
    const { store } = setup();
    const purges = [...(await store.purge.begin(A, ['m1', 'm2'])), ...(await store.purge.begin(B, ['m3']))];
    await store.purge.finish(purges);
    assert.deepEqual(store.journal.argsOf('indexChanges.publishRemoves'), [
      [A, ['m1', 'm2']],
      [B, ['m3']],
    ]);
    assert.deepEqual(store.journal.argsOf('indexSnapshots.removeForTenant'), [[A], [B]]);
  });

  it('by_caller: no remove notice per memory, but the persisted partitions still go', async () => {
    const { store, steps } = setup();
    await store.purge.finish(await store.purge.begin(A, ['m1']), { indexNotices: 'by_caller' });
    assert.deepEqual(store.journal.argsOf('indexChanges.publishRemoves'), []);
    assert.deepEqual(store.journal.argsOf('indexSnapshots.removeForTenant'), [[A]]);
    assert.ok(steps.includes('index_feed'), 'the step still reports, so fault injection can name it');
  });

  it('pending hands over interrupted deletes older than the bound, oldest first, at most `limit`', async () => {
    const { store } = setup();
    await store.purge.begin(A, ['m2']);
    await store.purge.begin(A, ['m1']);
    await store.purge.begin(B, ['m3']);
    const at = (id: string, msAgo: number) => (store.intents.rows.get(id)!.requestedAt = new Date(Date.now() - msAgo));
    at('m1', 30_000);
    at('m2', 20_000);
    at('m3', 1_000);
    const pending = await store.purge.pending(new Date(Date.now() - 10_000), 5);
    assert.deepEqual(
      pending.map((purge) => purge.memoryId),
      ['m1', 'm2'],
    );
    assert.equal((await store.purge.pending(new Date(), 1)).length, 1);
  });

  // A crash after any step: the sweeper's resume finishes the delete, the records included.
  for (const crashAfter of PURGE_STEPS.filter((step) => step !== 'done')) {
    it(`a crash after "${crashAfter}" is finished by resume: nothing of the memory is left`, async () => {
      const { store } = setup();
      store.purge.onStep = (step) => {
        if (step === crashAfter) throw new Error(`crash after ${step}`);
      };
      await assert.rejects(async () => store.purge.finish(await store.purge.begin(A, ['m1'])), /crash/);
      store.purge.onStep = () => undefined;
      const pending = await store.purge.pending(new Date(Date.now() + 1000), 10);
      assert.deepEqual(
        pending.map((purge) => purge.memoryId),
        ['m1'],
      );
      store.journal.clear();
      await store.purge.resume(pending);
      assert.equal(store.memories.rows.has('m1'), false);
      assert.equal(store.chunks.rows.has('m1:0'), false);
      assert.equal(store.intents.rows.size, 0);
      assert.deepEqual(store.journal.argsOf('memories.deleteMany'), [[A, ['m1']]]);
      assert.ok(store.memories.rows.has('m2') && store.memories.rows.has('m3'));
    });
  }

  it("resume deletes each tenant's records under that tenant only", async () => {
    const { store } = setup();
    await store.purge.resume([
      { memoryId: 'm1', tenantId: A, workflowId: 'w1' },
      { memoryId: 'm3', tenantId: B, workflowId: 'w3' },
    ]);
    assert.deepEqual(store.journal.argsOf('memories.deleteMany'), [
      [A, ['m1']],
      [B, ['m3']],
    ]);
    assert.equal(store.memories.rows.size, 1);
  });
});
