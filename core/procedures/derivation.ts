/**
 * Procedure derivation over a collection's records (docs/workflows.md): a memory's traces are
 * replaced, the instances around them re-chained, and the patterns refreshed. The rules are pure
 * (extractors/procedures/ and ./rules.ts); this applies them through ProcedureRecords
 * (store/procedures.ts over MongoDB).
 *
 * Traces are the source of truth; instances and patterns are derived from them. Without
 * transactions every step is idempotent and ordered so that re-running it converges: a memory's
 * traces are replaced, then the instances around them are re-chained (trace rows first, then
 * instance rows, then stale instance rows go), then patterns are refreshed. A removal finds the
 * instances a memory fed through their `memory_ids` as well, so a retried removal whose traces
 * are already gone still repairs them.
 *
 * Mining is bounded: a change re-assigns only the instances it touched to the existing patterns
 * (and recounts those patterns' instances); a full re-mine of the collection
 * runs when the changes since the last one reach 10 % of its instances (at least 1), so its cost
 * is amortised over many memories as a collection grows. A change whose instance finds no pattern
 * while another instance without one has its exact signature owes a mine sooner (recursUnlinked):
 * that is a new pattern, which only a mine can find.
 *
 * Pattern rows and instances' pattern links are written only under the collection's lease, by a
 * full mine or by a change's bounded refresh, one at a time. A change writes its instances first
 * and then moves the version, so a mine either read them or sees the version moved and runs
 * again; a change that cannot take the lease in time owes a mine (the sweep runs it). Without
 * the lease around the bounded refresh, a refresh that read the patterns before a mine rewrote
 * them could undo the mine's links or dissolve a pattern it had just found, after the mine's last
 * look at the version: the collection then kept a wrong pattern until it changed again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { GraphScope } from '../graph-model.js';
import type { ProcedureInstance, ProcedurePattern } from '../procedure-model.js';
import { chainTraces, MAX_CASE_MEMORIES, SUBJECT_CHAIN_WINDOW_MS, type ChainTrace } from '../../extractors/procedures/chaining.js';
import { classesAfter, classesBefore } from '../../extractors/procedures/lexicon.js';
import { describePattern, minePatterns, MIN_SIGNATURE_LENGTH, MIN_SUPPORT, signatureKey } from '../../extractors/procedures/mining.js';
import type { ChainRow, ProcedureRecords, SubjectQuery } from './records.js';
import {
  assignToNearest,
  chainMoves,
  fullMineDue,
  instanceOf,
  isCommonCaseKey,
  patternIdFor,
  traceRecord,
  type InstanceFields,
  type NewTrace,
  type PatternLink,
} from './rules.js';

/** Re-runs of a full mine when the collection changed while it ran, before the sweep takes over. */
const MINE_RERUNS = 3;
/**
 * How long a change waits for its collection's lease (another change's refresh, a few store
 * round trips, or a full mine) before it leaves its refresh to an owed mine; the pauses between
 * tries double from the first, up to the longest.
 */
const LEASE_WAIT = { ms: 1000, firstPauseMs: 10, longestPauseMs: 200 } as const;
/** Rule 4's look-ups: candidates per direction, and memories looked up per change. */
const SUBJECT_CANDIDATES = 5;
const SUBJECT_MEMORIES = 16;
/** A full mine's instance links are written in batches of this many, renewing the lease before each. */
const LINK_BATCH = 1000;

/** A full mine found its lease taken over (it stalled past the lease): its remaining writes are refused. */
export class MineLeaseLost extends Error {
  constructor(collectionId: string) {
    super(`the mining lease of collection ${collectionId} was taken over; this mine's writes stop`);
  }
}

/** The lease of one full mine: its epoch fences its writes; `heartbeat` reports liveness (a Temporal activity's). */
interface MineLease {
  epoch: number;
  heartbeat: () => void;
}

export class ProcedureDerivation {
  /** Full re-mines this process ran (the bench reports how rarely ingestion needs one). */
  fullMines = 0;

  private readonly leaseWaitMs: number;

  constructor(
    private readonly records: ProcedureRecords,
    /** `leaseWaitMs`: how long a change waits for the lease (LEASE_WAIT; shorter in unit tests). */
    options: { leaseWaitMs?: number } = {},
  ) {
    this.leaseWaitMs = options.leaseWaitMs ?? LEASE_WAIT.ms;
  }

  /** Test hook: awaited between a mine's computing and its writes (a stalled miner in tests). */
  beforeMineWrites: (scope: GraphScope) => Promise<void> = () => Promise.resolve();

  // ---- changes --------------------------------------------------------------------------------

  /** Replaces a memory's traces in one collection and re-chains and re-mines around them. Idempotent. */
  async replaceMemoryTraces(
    scope: GraphScope,
    memoryId: string,
    memoryTime: Date,
    drafts: NewTrace[],
    /** Given (by the worker's activity), a full mine that falls due runs here, heartbeating; else it is owed to the sweep. */
    heartbeat?: () => void,
  ): Promise<void> {
    const old = await this.records.memoryTraceInstances(scope, memoryId);
    const rows = drafts.map((draft) => {
      const row = traceRecord(scope, memoryId, memoryTime, draft, null);
      return { ...row, instance_id: old.find((previous) => previous.id === row.id)?.instance_id ?? null };
    });
    const keep = new Set(rows.map((row) => row.id));
    const gone = old.filter((row) => !keep.has(row.id)).map((row) => row.id);
    await this.records.replaceTraces(gone, rows);
    const seedInstances = [...new Set(old.map((row) => row.instance_id).filter((id): id is string => id !== null))];
    await this.rechain(
      scope,
      { memoryIds: [memoryId], instanceIds: seedInstances, caseKeys: drafts.flatMap((draft) => draft.caseKeys) },
      rows,
      heartbeat,
    );
  }

  /**
   * Removes memories' traces (from every collection, or only from the named ones; with `fromChunk`,
   * only those of chunks from there on) and repairs the instances and patterns they fed.
   */
  async removeMemories(memoryIds: string[], onlyCollections?: string[], fromChunk?: number): Promise<void> {
    if (memoryIds.length === 0) return;
    const rows = await this.records.tracesOfMemories(memoryIds, onlyCollections, fromChunk);
    const fed = await this.records.instancesFedBy(memoryIds, onlyCollections);
    if (rows.length > 0) await this.records.deleteTraces(rows.map((row) => row.id));

    const scopes = new Map<string, { scope: GraphScope; instanceIds: Set<string> }>();
    const note = (tenantId: string, collectionId: string, instanceId: string | null) => {
      const key = `${tenantId}\n${collectionId}`;
      const entry = scopes.get(key) ?? { scope: { tenantId, collectionId }, instanceIds: new Set<string>() };
      if (instanceId) entry.instanceIds.add(instanceId);
      scopes.set(key, entry);
    };
    for (const row of rows) note(row.tenant_id, row.collection_id, row.instance_id);
    for (const instance of fed) note(instance.tenant_id, instance.collection_id, instance.id);
    for (const { scope, instanceIds } of scopes.values()) {
      // The memories themselves seed the re-chaining too: with `fromChunk`, their earlier traces stay.
      await this.rechain(scope, { memoryIds: fromChunk === undefined ? [] : memoryIds, instanceIds: [...instanceIds], caseKeys: [] });
    }
  }

  // ---- chaining -------------------------------------------------------------------------------

  /**
   * Re-runs the chaining rule over every trace connected to the seeds (their memories, case keys and
   * instances, and the instances their subjects may continue or be continued by: rule 4), rewrites
   * the instances it yields and drops the ones that no longer exist.
   */
  private async rechain(
    scope: GraphScope,
    seeds: { memoryIds: string[]; instanceIds: string[]; caseKeys: string[] },
    /** The seed memory's rows just written, when it is the only seed. */
    justWritten?: ChainRow[],
    heartbeat?: () => void,
  ): Promise<void> {
    const memoryIds = new Set(seeds.memoryIds);
    const instanceIds = new Set(seeds.instanceIds);
    const caseKeys = new Set<string>();
    // Keys too common to be a case (chaining rule 3's cap): they join nothing, so they pull nothing in.
    const commonKeys = new Set<string>();
    const addKeys = async (keys: Iterable<string>): Promise<void> => {
      const fresh = [...new Set(keys)].filter((key) => !caseKeys.has(key) && !commonKeys.has(key));
      const common = await Promise.all(fresh.map((key) => this.isCommonCaseKey(scope, key)));
      fresh.forEach((key, index) => (common[index] ? commonKeys : caseKeys).add(key));
    };
    await addKeys(seeds.caseKeys);
    // Closure: one memory's chain is decided with its whole memory, and a case key pulls in every
    // instance that shares it. Stored instances are already closed, so this settles in a few rounds.
    const close = async (): Promise<ChainRow[]> => {
      let rows: ChainRow[] = [];
      for (let round = 0; round < 4; round++) {
        if (memoryIds.size + instanceIds.size + caseKeys.size === 0) break;
        rows = await this.records.chainRows(scope, { memoryIds: [...memoryIds], instanceIds: [...instanceIds], caseKeys: [...caseKeys] });
        const before = memoryIds.size + instanceIds.size + caseKeys.size;
        for (const row of rows) {
          memoryIds.add(row.memory_id);
          if (row.instance_id) instanceIds.add(row.instance_id);
        }
        await addKeys(rows.flatMap((row) => row.case_keys));
        if (memoryIds.size + instanceIds.size + caseKeys.size === before) break;
      }
      return rows;
    };
    // A memory with no case identifier that fed no instance yet needs no closure: its own rows.
    const alone = justWritten !== undefined && seeds.memoryIds.length === 1 && instanceIds.size === 0 && caseKeys.size === 0;
    let rows = alone ? justWritten : await close();
    // Every chain of these rows is rewritten (a retried change repairs what a crash left);
    // instances pulled in below only for rule 4 are rewritten only if the rule changed them.
    const settled = new Set(rows.map((row) => row.id));
    const neighbours = await this.subjectNeighbours(scope, rows);
    const before = memoryIds.size + instanceIds.size;
    for (const id of neighbours.memoryIds) memoryIds.add(id);
    for (const id of neighbours.instanceIds) instanceIds.add(id);
    if (memoryIds.size + instanceIds.size > before) rows = await close();

    const chains = chainTraces(
      rows.map((row): ChainTrace => ({
        id: row.id,
        memoryId: row.memory_id,
        memoryTime: row.memory_time.getTime(),
        seq: row.seq,
        caseKeys: commonKeys.size === 0 ? row.case_keys : row.case_keys.filter((key) => !commonKeys.has(key)),
        subject: row.subject,
        verbClass: row.verb_class,
      })),
    );
    const { moves, dirty } = chainMoves(rows, chains, settled);
    if (moves.length > 0) await this.records.moveTraces(moves);

    const now = new Date();
    // Each dirty chain's members at once: a round trip each, on a memory's path to searchable.
    const dirtyChains = chains.filter((chain) => dirty.has(chain.id));
    const members = await Promise.all(dirtyChains.map((chain) => this.records.chainMembers(scope, chain.traceIds)));
    const written: InstanceFields[] = [];
    dirtyChains.forEach((chain, index) => {
      const instance = instanceOf(scope, chain.id, members[index]!, now);
      if (instance) written.push(instance);
    });
    // Pattern links are kept for now (the refresh below re-decides them), so reads never see a gap.
    if (written.length > 0) await this.records.upsertInstances(written);
    const alive = new Set(chains.map((chain) => chain.id));
    const stale = [...instanceIds].filter((id) => !alive.has(id));
    // A vanished instance's pattern loses a member: noted before the row goes, so that the bounded
    // refresh recounts it (and re-picks its canonical instance, or dissolves it) like any other.
    const vanishedPatternIds = stale.length > 0 ? await this.records.deleteInstances(scope, stale) : [];
    if (written.length + stale.length > 0) {
      await this.refreshPatterns(
        scope,
        written.map((instance) => instance.id),
        vanishedPatternIds,
        written.length + stale.length,
        heartbeat,
      );
    }
  }

  /**
   * Whether a case key is named in more than MAX_CASE_MEMORIES memories of the collection: read
   * with a bound, so a common key costs at most a few hundred rows, not every trace naming it.
   * A key on that many traces of fewer memories is as useless to chain by, and as costly.
   */
  private async isCommonCaseKey(scope: GraphScope, key: string): Promise<boolean> {
    const limit = (MAX_CASE_MEMORIES + 1) * 4;
    return isCommonCaseKey(await this.records.memoriesNamingCaseKey(scope, key, limit), limit, MAX_CASE_MEMORIES);
  }

  /**
   * Rule 4's look-ups (extractors/procedures/chaining.ts): for each memory of `rows` whose traces
   * carry no case identifier, the latest traces of the same subject within the window that its
   * first step can follow, and the earliest unnumbered ones within the window that can follow its
   * last step. A few of each (SUBJECT_CANDIDATES): the rule picks the most recent that fits, and
   * a trace of an instance already further along is not one. Their memories and instances join
   * the closure.
   */
  private async subjectNeighbours(scope: GraphScope, rows: ChainRow[]): Promise<{ memoryIds: string[]; instanceIds: string[] }> {
    const byMemory = new Map<string, ChainRow[]>();
    for (const row of rows) byMemory.set(row.memory_id, [...(byMemory.get(row.memory_id) ?? []), row]);
    const queries: SubjectQuery[] = [];
    const unnumbered = [...byMemory.entries()].filter(([, own]) => own.every((row) => row.case_keys.length === 0));
    for (const [memoryId, own] of unnumbered.slice(0, SUBJECT_MEMORIES)) {
      own.sort((a, b) => a.seq - b.seq);
      const first = own[0]!;
      const last = own[own.length - 1]!;
      const time = first.memory_time.getTime();
      if (first.subject !== '') {
        queries.push({
          subject: first.subject,
          notMemoryId: memoryId,
          from: new Date(time - SUBJECT_CHAIN_WINDOW_MS),
          to: first.memory_time,
          verbClasses: classesBefore(first.verb_class),
          unnumberedOnly: false,
          direction: -1,
          limit: SUBJECT_CANDIDATES,
        });
      }
      if (last.subject !== '') {
        queries.push({
          subject: last.subject,
          notMemoryId: memoryId,
          from: last.memory_time,
          to: new Date(time + SUBJECT_CHAIN_WINDOW_MS),
          verbClasses: classesAfter(last.verb_class),
          unnumberedOnly: true,
          direction: 1,
          limit: SUBJECT_CANDIDATES,
        });
      }
    }
    const found = (await Promise.all(queries.map((query) => this.records.subjectTraces(scope, query)))).flat();
    return {
      memoryIds: [...new Set(found.map((row) => row.memory_id))],
      instanceIds: [...new Set(found.map((row) => row.instance_id).filter((id): id is string => id !== null))],
    };
  }

  // ---- patterns -------------------------------------------------------------------------------

  /** Bounded re-mining (module comment): incremental assignment, full re-mine every 10 % of changes, under the lease. */
  private async refreshPatterns(
    scope: GraphScope,
    changedInstanceIds: string[],
    vanishedPatternIds: string[],
    changes: number,
    heartbeat?: () => void,
  ): Promise<void> {
    // The version moves after this change's instances are written (the module comment).
    const due = fullMineDue(await this.records.noteChanges(scope, changes));
    const refreshed = await this.underLease(scope, this.leaseWaitMs, async (epoch) => {
      // A mine that held the lease while this change waited may have paid what was due: decided
      // again under the lease, or a burst of changes that all found a mine due would run one each.
      const stillDue = due && fullMineDue(await this.records.miningPacing(scope.collectionId));
      // A full mine runs only where a heartbeat is given (the worker's derivation activity): never
      // on a request path (DELETE, PATCH) nor in an API process. There it is owed, and the
      // worker's sweep (sweepDueMines) runs it; meanwhile the change is assigned incrementally.
      if (stillDue && heartbeat) return this.mineCollectionLeased(scope, { epoch, heartbeat });
      if (stillDue) await this.records.markMineOwed(scope.collectionId);
      const unlinked = await this.assignToPatterns(scope, changedInstanceIds, vanishedPatternIds);
      // A process seen a second time since the last mine makes a pattern that only a mine can
      // find: owed, so the sweep finds it once the collection is quiet, not 10 % of changes later.
      if (!stillDue && (await this.recursUnlinked(scope, unlinked))) await this.records.markMineOwed(scope.collectionId);
    });
    // The holder is mining or refreshing: a mine that started before this change sees the version
    // moved; in any case the mine owed is noted, in case the holder has looked for the last time.
    if (refreshed === null) await this.records.markMineOwed(scope.collectionId);
  }

  /**
   * Links instances to the nearest existing pattern and refreshes the numbers of the patterns touched:
   * those the instances left or joined, and those that lost a member which no longer exists. Runs
   * under the lease, so no other writer links instances to these patterns meanwhile.
   */
  private async assignToPatterns(
    scope: GraphScope,
    instanceIds: string[],
    vanishedPatternIds: string[],
  ): Promise<Pick<ProcedureInstance, 'id' | 'signature'>[]> {
    const [patterns, instances] = await Promise.all([this.records.patternsOf(scope), this.records.instancesByIds(scope, instanceIds)]);
    const { links, touched } = assignToNearest(patterns, instances, vanishedPatternIds);
    const unlinked = instances.filter((_, at) => links[at]!.patternId === null);
    if (links.length > 0) await this.records.setPatternLinks(links);
    // Between full mines a touched pattern keeps an exact instance count and a canonical instance
    // that still belongs to it; confidence and weighted frequency are those of the last full mine
    // (at most 10 % of changes old). Recomputing them here would read every member per memory.
    for (const patternId of touched) {
      const pattern = patterns.find((candidate) => candidate.id === patternId);
      // An instance whose rows another change deletes meanwhile (outside the lease) leaves this
      // count one high: that change refreshes the pattern it took the member from after this one.
      // Whether its canonical instance is still a member is read beside the count (one round trip, not two).
      const [count, canonicalStays] = await Promise.all([
        this.records.countPatternMembers(scope, patternId),
        pattern ? this.records.isPatternMember(scope, pattern.canonical_instance_id, patternId) : true,
      ]);
      if (!pattern || count < MIN_SUPPORT) {
        await this.records.dissolvePattern(scope, patternId);
        continue;
      }
      const set: Partial<Pick<ProcedurePattern, 'instance_count' | 'description' | 'canonical_instance_id'>> = {
        instance_count: count,
        description: describePattern(pattern.signature, count).description,
      };
      if (!canonicalStays) {
        const closest = await this.records.closestPatternMember(scope, patternId);
        if (closest) set.canonical_instance_id = closest;
      }
      await this.records.updatePattern(patternId, set);
    }
    return unlinked;
  }

  /**
   * Whether one of these instances, left without a pattern, shares its exact signature with
   * another instance without one: mining's rule for a new pattern (extractors/procedures/mining.ts:
   * a chain seen MIN_SUPPORT times, at least MIN_SIGNATURE_LENGTH steps long). A one-off owes nothing.
   */
  private async recursUnlinked(scope: GraphScope, unlinked: Pick<ProcedureInstance, 'id' | 'signature'>[]): Promise<boolean> {
    for (const instance of unlinked)
      if (instance.signature.length >= MIN_SIGNATURE_LENGTH && (await this.records.hasUnlinkedTwin(scope, instance.id, instance.signature)))
        return true;
    return false;
  }

  /**
   * A full re-mine of one collection under its lease (the bench times it on 10k traces): the
   * patterns found, or null when another mine holds the lease.
   */
  mineCollection(scope: GraphScope, heartbeat: () => void = () => undefined): Promise<number | null> {
    return this.mineUnderLease(scope, heartbeat);
  }

  /**
   * Runs the full mines owed (remine_due) in collections quiet for `quietMs` whose lease is free:
   * without it, a burst of ingestion whose last changes came while a mine ran, after that mine's
   * last re-run, would keep an older mine's patterns until the collection changed again.
   */
  async sweepDueMines(quietMs: number, limit = 20, heartbeat: () => void = () => undefined): Promise<number> {
    let mined = 0;
    for (const scope of await this.records.owedMines(quietMs, limit)) if ((await this.mineUnderLease(scope, heartbeat)) !== null) mined++;
    return mined;
  }

  /** A full mine under the collection's lease: the patterns it found, or null (nothing done) when the lease is held. */
  private mineUnderLease(scope: GraphScope, heartbeat: () => void): Promise<number | null> {
    return this.underLease(scope, 0, (epoch) => this.mineCollectionLeased(scope, { epoch, heartbeat }));
  }

  /**
   * Runs `work` holding the collection's lease, waiting up to `waitMs` for it: its result, or null
   * when the lease stayed held by another or was taken over from a mine that stalled past it.
   */
  private async underLease<T>(scope: GraphScope, waitMs: number, work: (epoch: number) => Promise<T>): Promise<T | null> {
    const deadline = Date.now() + waitMs;
    let epoch = await this.records.claimMineLease(scope);
    for (
      let pause: number = LEASE_WAIT.firstPauseMs;
      epoch === null && Date.now() + pause <= deadline;
      pause = Math.min(pause * 2, LEASE_WAIT.longestPauseMs)
    ) {
      await sleep(pause);
      epoch = await this.records.claimMineLease(scope);
    }
    if (epoch === null) return null;
    try {
      return await work(epoch);
    } catch (error) {
      if (error instanceof MineLeaseLost) return null;
      throw error;
    } finally {
      // Only our own lease: a mine that outlived it may have been taken over meanwhile.
      await this.records.releaseMineLease(scope.collectionId, epoch);
    }
  }

  /** Reports liveness, then extends the lease if it is still ours; throws MineLeaseLost if not. */
  private async renewLease(scope: GraphScope, lease: MineLease): Promise<void> {
    lease.heartbeat();
    if (!(await this.records.renewMineLease(scope.collectionId, lease.epoch))) throw new MineLeaseLost(scope.collectionId);
  }

  /**
   * A mine that read older instances must not be the last word: one that sees the collection
   * change while it ran runs again, up to MINE_RERUNS times; past that, and for changes that found
   * the lease taken, the mine is owed (remine_due) and sweepDueMines runs it once the collection is quiet.
   */
  private async mineCollectionLeased(scope: GraphScope, lease: MineLease): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      // Starting a mine pays what was owed; a change during it owes again (refreshPatterns).
      const before = await this.records.startMine(scope.collectionId);
      const patterns = await this.mineOnce(scope, lease);
      this.fullMines++;
      const after = await this.records.miningVersion(scope.collectionId);
      if (after === before) return patterns;
      if (attempt === MINE_RERUNS) {
        // Still changing: the rest is owed, for the next change or the sweep once ingestion pauses.
        await this.records.markMineOwed(scope.collectionId);
        return patterns;
      }
    }
  }

  /**
   * One full mine. Fenced by the lease: it renews the lease before each write step (and stops with
   * MineLeaseLost when it was taken over), and every row it writes carries its epoch, so that a
   * stale holder's late writes never overwrite a newer mine's (pattern rows and links are only
   * written over rows of an older or equal epoch, and only older patterns are deleted).
   */
  private async mineOnce(scope: GraphScope, lease: MineLease): Promise<number> {
    const { epoch } = lease;
    const minedAt = new Date();
    const instances = await this.records.instancesToMine(scope);
    lease.heartbeat();
    const mined = minePatterns(
      instances.map((instance) => ({
        id: instance.id,
        signature: instance.signature,
        lastActivityAt: instance.last_activity_at.getTime(),
        evidence: instance.evidence,
      })),
    );
    await this.beforeMineWrites(scope);
    await this.renewLease(scope, lease);
    const patternIds: string[] = [];
    const linked = new Map<string, PatternLink>();
    const rows: ProcedurePattern[] = [];
    for (const pattern of mined) {
      const id = patternIdFor(scope, pattern.signature);
      patternIds.push(id);
      const { name, description } = describePattern(pattern.signature, pattern.stats.instanceCount);
      rows.push({
        id,
        tenant_id: scope.tenantId,
        collection_id: scope.collectionId,
        name,
        description,
        confidence: pattern.stats.confidence,
        instance_count: pattern.stats.instanceCount,
        pattern_size: pattern.signature.length,
        canonical_signature: signatureKey(pattern.signature),
        signature: pattern.signature,
        weighted_frequency: pattern.stats.weightedFrequency,
        canonical_instance_id: pattern.stats.canonicalInstanceId,
        mined_at: minedAt,
      });
      for (const member of pattern.members) {
        linked.set(member.id, {
          instanceId: member.id,
          patternId: id,
          distance: member.distance,
          position: { step: member.step, of: pattern.signature.length },
        });
      }
    }
    // Patterns first, then links to them, then unlinking and old patterns: a reader never follows a
    // link to a missing pattern for long, and a crash anywhere leaves what the next mine repairs.
    // A newer mine's pattern row refuses this mine's: it stops.
    if (rows.length > 0 && !(await this.records.writeMinedPatterns(rows, epoch))) throw new MineLeaseLost(scope.collectionId);
    const unlink = instances.filter((instance) => instance.pattern_id !== null && !linked.has(instance.id)).map((instance) => instance.id);
    const links = [...linked.values()];
    for (let offset = 0; offset < links.length; offset += LINK_BATCH) {
      await this.renewLease(scope, lease);
      await this.records.linkMinedInstances(links.slice(offset, offset + LINK_BATCH), epoch);
    }
    await this.renewLease(scope, lease);
    if (unlink.length > 0) await this.records.unlinkMinedInstances(scope, unlink, epoch);
    // Only older mines' patterns go: a newer mine's, and the links to them, stay.
    await this.records.deleteOlderPatterns(scope, patternIds, epoch);
    await this.records.recordMine(scope, epoch, instances.length, minedAt);
    return mined.length;
  }
}
