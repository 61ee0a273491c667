/**
 * Procedure derivation over records kept in arrays (ProcedureRecords as store/procedures.ts keeps
 * them in MongoDB): chaining across memories, the bounded refresh and its dissolving, full mines
 * when due, and the collection's lease around every pattern write (a change that finds it held
 * writes nothing beside the holder and owes a mine). test/e2e/procedure-mining.test.ts runs the
 * same rules against the stack's store.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GraphScope } from '../graph-model.js';
import type { ProcedureInstance, ProcedurePattern, ProcedureTrace } from '../procedure-model.js';
import { signatureKey } from '../../extractors/procedures/mining.js';
import { ProcedureDerivation } from './derivation.js';
import type { ChainRow, ProcedureRecords, SubjectQuery } from './records.js';
import type { ChainMember, InstanceFields, MiningPacing, PatternLink } from './rules.js';
import { addClaims, caseTraces } from '../../test/support/procedure-traces.js';

interface MiningState extends MiningPacing {
  tenantId: string;
  version: number;
  changedAt: number;
  remineDue: boolean;
  /** The lease: its holder's epoch while held. */
  leaseEpoch: number;
  leaseHeld: boolean;
}

/** The pacing part of a mining record, as the store's noteChanges and miningPacing return it. */
const pacingOf = ({ instancesAtMine, changesSince }: MiningPacing): MiningPacing => ({ instancesAtMine, changesSince });

const inScope = (row: { tenant_id: string; collection_id: string }, scope: GraphScope): boolean =>
  row.tenant_id === scope.tenantId && row.collection_id === scope.collectionId;

const unlinked = { pattern_id: null, pattern_distance: null, position: null };

/** ProcedureRecords over maps, with the same fencing and lease rules as the MongoDB repository. */
class ArrayProcedureRecords implements ProcedureRecords {
  readonly traces = new Map<string, ProcedureTrace>();
  readonly instances = new Map<string, ProcedureInstance & { linkEpoch?: number }>();
  readonly patterns = new Map<string, ProcedurePattern & { mineEpoch?: number }>();
  readonly mining = new Map<string, MiningState>();
  private epochs = 0;

  /** The lease lapses, as it does when its holder stalls past it. */
  expireLease(collectionId: string): void {
    const state = this.mining.get(collectionId);
    if (state) state.leaseHeld = false;
  }

  memoryTraceInstances(scope: GraphScope, memoryId: string) {
    return Promise.resolve(
      [...this.traces.values()]
        .filter((trace) => inScope(trace, scope) && trace.memory_id === memoryId)
        .map((trace) => ({ id: trace.id, instance_id: trace.instance_id })),
    );
  }
  replaceTraces(goneIds: string[], traces: ProcedureTrace[]) {
    for (const id of goneIds) this.traces.delete(id);
    for (const trace of traces) this.traces.set(trace.id, { ...trace });
    return Promise.resolve();
  }
  tracesOfMemories(memoryIds: string[], onlyCollections?: string[], fromChunk?: number) {
    return Promise.resolve(
      [...this.traces.values()]
        .filter(
          (trace) =>
            memoryIds.includes(trace.memory_id) &&
            (!onlyCollections || onlyCollections.includes(trace.collection_id)) &&
            (fromChunk === undefined || trace.chunk_index >= fromChunk),
        )
        .map(({ id, tenant_id, collection_id, instance_id }) => ({ id, tenant_id, collection_id, instance_id })),
    );
  }
  deleteTraces(ids: string[]) {
    for (const id of ids) this.traces.delete(id);
    return Promise.resolve();
  }
  memoriesNamingCaseKey(scope: GraphScope, key: string, limit: number) {
    return Promise.resolve(
      [...this.traces.values()]
        .filter((trace) => inScope(trace, scope) && trace.case_keys.includes(key))
        .slice(0, limit)
        .map((trace) => trace.memory_id),
    );
  }
  chainRows(scope: GraphScope, seeds: { memoryIds: string[]; instanceIds: string[]; caseKeys: string[] }): Promise<ChainRow[]> {
    return Promise.resolve(
      [...this.traces.values()]
        .filter(
          (trace) =>
            inScope(trace, scope) &&
            (seeds.memoryIds.includes(trace.memory_id) ||
              (trace.instance_id !== null && seeds.instanceIds.includes(trace.instance_id)) ||
              trace.case_keys.some((key) => seeds.caseKeys.includes(key))),
        )
        .map(({ id, memory_id, memory_time, seq, case_keys, instance_id, subject, verb_class }) => ({
          id,
          memory_id,
          memory_time,
          seq,
          case_keys,
          instance_id,
          subject,
          verb_class,
        })),
    );
  }
  subjectTraces(scope: GraphScope, query: SubjectQuery) {
    return Promise.resolve(
      [...this.traces.values()]
        .filter(
          (trace) =>
            inScope(trace, scope) &&
            trace.subject === query.subject &&
            trace.memory_id !== query.notMemoryId &&
            trace.memory_time >= query.from &&
            trace.memory_time <= query.to &&
            query.verbClasses.includes(trace.verb_class) &&
            (!query.unnumberedOnly || trace.case_keys.length === 0),
        )
        .sort((a, b) => (a.memory_time.getTime() - b.memory_time.getTime()) * query.direction || (a.id < b.id ? -1 : 1))
        .slice(0, query.limit)
        .map((trace) => ({ memory_id: trace.memory_id, instance_id: trace.instance_id })),
    );
  }
  moveTraces(moves: { traceId: string; instanceId: string }[]) {
    for (const move of moves) {
      const trace = this.traces.get(move.traceId);
      if (trace) trace.instance_id = move.instanceId;
    }
    return Promise.resolve();
  }
  chainMembers(scope: GraphScope, traceIds: string[]): Promise<ChainMember[]> {
    return Promise.resolve(
      traceIds.flatMap((id) => {
        const trace = this.traces.get(id);
        return trace && inScope(trace, scope) ? [trace] : [];
      }),
    );
  }

  instancesFedBy(memoryIds: string[], onlyCollections?: string[]) {
    return Promise.resolve(
      [...this.instances.values()]
        .filter(
          (instance) =>
            instance.memory_ids.some((id) => memoryIds.includes(id)) &&
            (!onlyCollections || onlyCollections.includes(instance.collection_id)),
        )
        .map(({ id, tenant_id, collection_id }) => ({ id, tenant_id, collection_id })),
    );
  }
  upsertInstances(instances: InstanceFields[]) {
    for (const fields of instances) {
      const known = this.instances.get(fields.id);
      this.instances.set(fields.id, known ? { ...known, ...fields } : { ...fields, ...unlinked });
    }
    return Promise.resolve();
  }
  deleteInstances(scope: GraphScope, ids: string[]) {
    const linked: string[] = [];
    for (const id of ids) {
      const instance = this.instances.get(id);
      if (!instance || !inScope(instance, scope)) continue;
      if (instance.pattern_id) linked.push(instance.pattern_id);
      this.instances.delete(id);
    }
    return Promise.resolve(linked);
  }
  instancesByIds(scope: GraphScope, ids: string[]) {
    return Promise.resolve(
      ids.flatMap((id) => {
        const instance = this.instances.get(id);
        return instance && inScope(instance, scope) ? [{ id, signature: instance.signature, pattern_id: instance.pattern_id }] : [];
      }),
    );
  }
  hasUnlinkedTwin(scope: GraphScope, instanceId: string, signature: readonly string[]) {
    const key = signatureKey(signature);
    return Promise.resolve(
      [...this.instances.values()].some(
        (instance) =>
          inScope(instance, scope) && instance.id !== instanceId && !instance.pattern_id && signatureKey(instance.signature) === key,
      ),
    );
  }
  instancesToMine(scope: GraphScope) {
    return Promise.resolve(
      [...this.instances.values()].filter((instance) => inScope(instance, scope)).map((instance) => ({ ...instance })),
    );
  }
  setPatternLinks(links: PatternLink[]) {
    for (const link of links) this.link(link);
    return Promise.resolve();
  }

  patternsOf(scope: GraphScope) {
    return Promise.resolve([...this.patterns.values()].filter((pattern) => inScope(pattern, scope)).map((pattern) => ({ ...pattern })));
  }
  countPatternMembers(scope: GraphScope, patternId: string) {
    return Promise.resolve(this.membersOf(scope, patternId).length);
  }
  dissolvePattern(scope: GraphScope, patternId: string) {
    this.patterns.delete(patternId);
    for (const instance of this.membersOf(scope, patternId)) Object.assign(instance, unlinked);
    return Promise.resolve();
  }
  isPatternMember(scope: GraphScope, instanceId: string, patternId: string) {
    return Promise.resolve(this.membersOf(scope, patternId).some((instance) => instance.id === instanceId));
  }
  closestPatternMember(scope: GraphScope, patternId: string) {
    const [closest] = this.membersOf(scope, patternId).sort(
      (a, b) =>
        (a.pattern_distance ?? 0) - (b.pattern_distance ?? 0) ||
        b.last_activity_at.getTime() - a.last_activity_at.getTime() ||
        (a.id < b.id ? -1 : 1),
    );
    return Promise.resolve(closest?.id ?? null);
  }
  updatePattern(patternId: string, set: Partial<ProcedurePattern>) {
    const pattern = this.patterns.get(patternId);
    if (pattern) Object.assign(pattern, set);
    return Promise.resolve();
  }

  writeMinedPatterns(patterns: ProcedurePattern[], epoch: number) {
    // As the repository's unordered bulk upsert: rows of newer mines refuse theirs, the rest land.
    let refused = false;
    for (const pattern of patterns) {
      if ((this.patterns.get(pattern.id)?.mineEpoch ?? -Infinity) > epoch) refused = true;
      else this.patterns.set(pattern.id, { ...pattern, mineEpoch: epoch });
    }
    return Promise.resolve(!refused);
  }
  linkMinedInstances(links: PatternLink[], epoch: number) {
    for (const link of links) if ((this.instances.get(link.instanceId)?.linkEpoch ?? -Infinity) <= epoch) this.link(link, epoch);
    return Promise.resolve();
  }
  unlinkMinedInstances(scope: GraphScope, instanceIds: string[], epoch: number) {
    for (const id of instanceIds) {
      const instance = this.instances.get(id);
      if (instance && inScope(instance, scope) && (instance.linkEpoch ?? -Infinity) <= epoch)
        Object.assign(instance, unlinked, { linkEpoch: epoch });
    }
    return Promise.resolve();
  }
  deleteOlderPatterns(scope: GraphScope, keepIds: string[], epoch: number) {
    for (const pattern of [...this.patterns.values()]) {
      if (inScope(pattern, scope) && !keepIds.includes(pattern.id) && (pattern.mineEpoch ?? -Infinity) < epoch)
        this.patterns.delete(pattern.id);
    }
    return Promise.resolve();
  }
  recordMine(scope: GraphScope, epoch: number, instanceCount: number) {
    const state = this.mining.get(scope.collectionId);
    if (state?.leaseEpoch === epoch) Object.assign(state, { instancesAtMine: instanceCount, changesSince: 0 });
    return Promise.resolve();
  }

  noteChanges(scope: GraphScope, changes: number) {
    const state = this.mining.get(scope.collectionId) ?? {
      tenantId: scope.tenantId,
      instancesAtMine: 0,
      changesSince: 0,
      version: 0,
      changedAt: 0,
      remineDue: false,
      leaseEpoch: 0,
      leaseHeld: false,
    };
    Object.assign(state, { changesSince: state.changesSince + changes, version: state.version + 1, changedAt: Date.now() });
    this.mining.set(scope.collectionId, state);
    return Promise.resolve(pacingOf(state));
  }
  miningPacing(collectionId: string) {
    const state = this.mining.get(collectionId);
    return Promise.resolve(state ? pacingOf(state) : null);
  }
  markMineOwed(collectionId: string) {
    const state = this.mining.get(collectionId);
    if (state) state.remineDue = true;
    return Promise.resolve();
  }
  startMine(collectionId: string) {
    const state = this.mining.get(collectionId);
    if (state) state.remineDue = false;
    return Promise.resolve(state?.version ?? 0);
  }
  miningVersion(collectionId: string) {
    return Promise.resolve(this.mining.get(collectionId)?.version ?? 0);
  }
  claimMineLease(scope: GraphScope) {
    const state = this.mining.get(scope.collectionId);
    if (!state || state.leaseHeld) return Promise.resolve(null);
    state.leaseEpoch = ++this.epochs;
    state.leaseHeld = true;
    return Promise.resolve(state.leaseEpoch);
  }
  renewMineLease(collectionId: string, epoch: number) {
    const state = this.mining.get(collectionId);
    return Promise.resolve(state?.leaseEpoch === epoch && state.leaseHeld);
  }
  releaseMineLease(collectionId: string, epoch: number) {
    const state = this.mining.get(collectionId);
    if (state?.leaseEpoch === epoch) state.leaseHeld = false;
    return Promise.resolve();
  }
  owedMines(quietMs: number, limit: number) {
    return Promise.resolve(
      [...this.mining]
        .filter(([, state]) => state.remineDue && state.changedAt < Date.now() - quietMs && !state.leaseHeld)
        .slice(0, limit)
        .map(([collectionId, state]) => ({ tenantId: state.tenantId, collectionId })),
    );
  }

  /** The pattern's members, and the pattern row's count beside them. */
  pattern(scope: GraphScope, name: string): { count: number; members: number } | null {
    const pattern = [...this.patterns.values()].find((row) => inScope(row, scope) && row.name === name);
    return pattern ? { count: pattern.instance_count, members: this.membersOf(scope, pattern.id).length } : null;
  }

  private membersOf(scope: GraphScope, patternId: string) {
    return [...this.instances.values()].filter((instance) => inScope(instance, scope) && instance.pattern_id === patternId);
  }

  private link(link: PatternLink, epoch?: number): void {
    const instance = this.instances.get(link.instanceId);
    if (!instance) return;
    Object.assign(instance, { pattern_id: link.patternId, pattern_distance: link.distance, position: link.position });
    if (epoch !== undefined) instance.linkEpoch = epoch;
  }
}

const DAY = 86_400_000;
const base = new Date('2026-11-01T00:00:00Z');
const scope = { tenantId: 't1', collectionId: 'c1' };
const EXPENSES = 'Submit → Review → Approve';
/** A few milliseconds without changes: a sweep with no quiet period then finds the collection quiet. */
const quiet = () => new Promise((resolve) => setTimeout(resolve, 5));

/** One memory's traces, one step per verb class, all naming `caseKey` (one instance per key). */
const traces = (steps: string[], caseKey: string) => caseTraces(steps, caseKey, base);

/** A collection of `count` expense claims, mined once. */
async function minedClaims(count: number, leaseWaitMs = 20) {
  const records = new ArrayProcedureRecords();
  const derivation = new ProcedureDerivation(records, { leaseWaitMs });
  await addClaims(derivation, scope, count, base);
  assert.notEqual(await derivation.mineCollection(scope), null);
  return { records, derivation };
}

describe('procedure derivation over array records', () => {
  it('chains memories sharing a case key into one instance, and a memory of its own starts another', async () => {
    const records = new ArrayProcedureRecords();
    const derivation = new ProcedureDerivation(records, { leaseWaitMs: 20 });
    await derivation.replaceMemoryTraces(scope, 'm1', base, traces(['submit', 'review'], 'claim 7'));
    await derivation.replaceMemoryTraces(scope, 'm2', new Date(base.getTime() + DAY), traces(['approve'], 'claim 7'));
    await derivation.replaceMemoryTraces(scope, 'm3', new Date(base.getTime() + DAY), traces(['submit'], 'claim 8'));
    const instances = [...records.instances.values()].sort((a, b) => b.trace_count - a.trace_count);
    assert.deepEqual(
      instances.map((instance) => [instance.memory_ids, instance.trace_count]),
      [
        [['m1', 'm2'], 3],
        [['m3'], 1],
      ],
    );
    // Its second memory goes: the instance shrinks back.
    await derivation.removeMemories(['m2']);
    assert.deepEqual([...records.instances.values()].map((instance) => instance.trace_count).sort(), [1, 2]);
  });

  it('assigns a new instance to the mined pattern on the bounded path, and dissolves a pattern left with one', async () => {
    const { records, derivation } = await minedClaims(3);
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 3, members: 3 });
    await derivation.replaceMemoryTraces(
      scope,
      'claim-3',
      new Date(base.getTime() + 3 * DAY),
      traces(['submit', 'review', 'approve'], 'claim 3'),
    );
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 4, members: 4 });
    await derivation.removeMemories(['claim-0', 'claim-1', 'claim-2']);
    assert.equal(records.pattern(scope, EXPENSES), null, 'one instance is no pattern');
    assert.ok([...records.instances.values()].every((instance) => instance.pattern_id === null));
  });

  it('runs a due full mine where a heartbeat is given, and owes it where none is', async () => {
    const records = new ArrayProcedureRecords();
    const derivation = new ProcedureDerivation(records, { leaseWaitMs: 20 });
    let beats = 0;
    const heartbeat = () => {
      beats += 1;
    };
    await derivation.replaceMemoryTraces(scope, 'claim-0', base, traces(['submit', 'review', 'approve'], 'claim 0'), heartbeat);
    await derivation.replaceMemoryTraces(scope, 'claim-1', base, traces(['submit', 'review', 'approve'], 'claim 1'), heartbeat);
    assert.equal(derivation.fullMines, 2, 'a small collection is mined at every change');
    assert.ok(beats > 0);
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 2, members: 2 });
    // A request path (no heartbeat) never mines: the mine is owed, and the sweep runs it once quiet.
    await derivation.replaceMemoryTraces(scope, 'claim-2', base, traces(['submit', 'review', 'approve'], 'claim 2'));
    assert.equal(derivation.fullMines, 2);
    assert.equal(records.mining.get(scope.collectionId)?.remineDue, true);
    assert.equal(await derivation.sweepDueMines(60_000), 0, 'not quiet yet');
    await quiet();
    assert.equal(await derivation.sweepDueMines(0), 1);
    assert.equal(records.mining.get(scope.collectionId)?.remineDue, false);
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 3, members: 3 });
  });

  it('owes a mine when a process is seen a second time after the last one, and not for a one-off', async () => {
    const { records, derivation } = await minedClaims(20, 1000);
    const mines = derivation.fullMines;
    const heartbeat = () => undefined;
    const owed = () => records.mining.get(scope.collectionId)?.remineDue ?? false;
    const flight = (n: number) => traces(['schedule', 'cancel'], `flight ${n}`);
    // 20 instances at the last mine: a full one is due every 2 changes. One change, then a mine
    // that saw it (a burst's last mine), then one change more: both bounded.
    await derivation.replaceMemoryTraces(scope, 'flight-1', base, flight(1), heartbeat);
    assert.equal(owed(), false, 'a one-off owes nothing');
    const lease = (await records.claimMineLease(scope))!;
    await records.recordMine(scope, lease, 21);
    await records.releaseMineLease(scope.collectionId, lease);
    await derivation.replaceMemoryTraces(scope, 'flight-2', base, flight(2), heartbeat);
    assert.equal(derivation.fullMines, mines, 'not due by the count of changes');
    assert.equal(records.pattern(scope, 'Schedule → Cancel'), null, 'a bounded refresh finds no new pattern');
    assert.equal(owed(), true, 'the second of the same chain owes a mine');
    await quiet();
    assert.equal(await derivation.sweepDueMines(0), 1);
    assert.deepEqual(records.pattern(scope, 'Schedule → Cancel'), { count: 2, members: 2 });
    assert.equal(owed(), false);
  });

  it('writes no pattern or link while another holds the lease: the change owes a mine, which counts it', async () => {
    const { records, derivation } = await minedClaims(4);
    const holder = await records.claimMineLease(scope);
    assert.notEqual(holder, null);
    await derivation.removeMemories(['claim-0']);
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 4, members: 3 }, 'the count was left to the holder');
    assert.equal(records.mining.get(scope.collectionId)?.remineDue, true);
    await records.releaseMineLease(scope.collectionId, holder!);
    await quiet();
    assert.equal(await derivation.sweepDueMines(0), 1);
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 3, members: 3 });
  });

  it('waits for a lease that is given back in time, then refreshes itself', async () => {
    const { records, derivation } = await minedClaims(4, 1000);
    const holder = (await records.claimMineLease(scope))!;
    setTimeout(() => void records.releaseMineLease(scope.collectionId, holder), 30);
    await derivation.removeMemories(['claim-0']);
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 3, members: 3 });
  });

  it('a change that found a mine due does not run another once the mine it waited for has paid it', async () => {
    const { records, derivation } = await minedClaims(20, 1000);
    const mines = derivation.fullMines;
    const heartbeat = () => undefined;
    const claim = (i: number) => traces(['submit', 'review', 'approve'], `claim ${i}`);
    // One change of the two a full mine of 20 instances waits for.
    await derivation.replaceMemoryTraces(scope, 'claim-20', base, claim(20), heartbeat);
    assert.equal(derivation.fullMines, mines);
    // Another process's mine holds the lease, and pays what was due before it gives the lease back.
    const holder = (await records.claimMineLease(scope))!;
    setTimeout(() => {
      void records.recordMine(scope, holder, 22).then(() => records.releaseMineLease(scope.collectionId, holder));
    }, 30);
    await derivation.replaceMemoryTraces(scope, 'claim-21', base, claim(21), heartbeat);
    assert.equal(derivation.fullMines, mines, 'no second mine');
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 22, members: 22 });
  });

  it('a mine whose lease lapsed and was taken over stops before its writes', async () => {
    const { records, derivation } = await minedClaims(3);
    const stalled = new ProcedureDerivation(records);
    stalled.beforeMineWrites = async () => {
      // Meanwhile the lease lapses, another process takes it and a claim is added.
      records.expireLease(scope.collectionId);
      const taker = (await records.claimMineLease(scope))!;
      await records.releaseMineLease(scope.collectionId, taker);
      await derivation.replaceMemoryTraces(scope, 'claim-3', base, traces(['submit', 'review', 'approve'], 'claim 3'));
    };
    assert.equal(await stalled.mineCollection(scope), null, 'its renewal was refused');
    assert.deepEqual(records.pattern(scope, EXPENSES), { count: 4, members: 4 });
  });
});
