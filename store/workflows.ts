/**
 * Workflow reads' storage: procedure traces, observed instances and mined patterns, one set per
 * collection (scoped by tenant and collection exactly like the graph). docs/workflows.md.
 *
 *   workflow_traces     one row per trace of a memory in a collection (its text: description,
 *                       subject, states), with the instance it currently belongs to;
 *   workflow_instances  one row per execution chain, recomputed from its traces (chaining rule in
 *                       extractors/procedures/chaining.ts); `memory_ids` lists the memories behind it;
 *   workflow_patterns   patterns mined from the instances (extractors/procedures/mining.ts);
 *   workflow_mining     per collection: instances at the last full mine, changes since, the mining lease.
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
 * is amortised over many memories as a collection grows.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter } from 'mongodb';
import { deterministicUuid } from '../core/ids.js';
import { chainTraces, MAX_CASE_MEMORIES, SUBJECT_CHAIN_WINDOW_MS, type ChainTrace } from '../extractors/procedures/chaining.js';
import { classesAfter, classesBefore } from '../extractors/procedures/lexicon.js';
import type { TraceDraft } from '../extractors/procedures/derive.js';
import type { WorkflowInstance, WorkflowPattern, WorkflowTrace } from '../core/workflow-model.js';
import { isDuplicateKeyError } from './db.js';
import { fromStored, type Stored } from './stored.js';
import { describePattern, minePatterns, MIN_SUPPORT, SignatureIndex, signatureKey, signatureOf } from '../extractors/procedures/mining.js';
import type { GraphScope } from './graph.js';

export type WorkflowTraceDoc = Stored<WorkflowTrace>;
/** `link_epoch`: the epoch of the full mine that last wrote the pattern link (fencing, see mineOnce). */
export type WorkflowInstanceDoc = Stored<WorkflowInstance> & { link_epoch?: number };
/** `mine_epoch`: the epoch of the full mine that wrote the pattern (fencing, see mineOnce). */
export type WorkflowPatternDoc = Stored<WorkflowPattern> & { mine_epoch?: number };

interface MiningStateDoc {
  _id: string;
  tenant_id: string;
  instances_at_mine: number;
  changes_since: number;
  /** Bumped by every change: a mine that saw it move re-runs (see mineCollection). */
  version: number;
  mined_at: Date;
  /** While a full mine runs: its lease (one mine at a time per collection, see refreshPatterns). */
  mining_until?: Date;
  /** The lease holder's epoch (claim time in ms): renewals and the mine's writes are fenced by it. */
  mining_epoch?: number;
  /**
   * A full mine is owed: one was due while another held the lease, or the holder ran out of
   * re-runs while changes kept coming. Cleared as a mine starts; sweepDueMines runs what is owed.
   */
  remine_due?: boolean;
  /** When the last change arrived: the sweep waits for a quiet collection. */
  changed_at?: Date;
}

/** What derivation hands the store for one trace: the draft plus its resolved graph facts. */
export interface NewTrace extends TraceDraft {
  factIds: string[];
}

const REMINE_SHARE = 0.1;
/** Re-runs of a full mine when the collection changed while it ran, before the sweep takes over. */
const MINE_RERUNS = 3;
/** How often an incremental assignment re-counts a pattern that other writers keep changing. */
const PATTERN_COUNT_ROUNDS = 5;
/** How long a full mine may hold its collection's lease without renewing it before another may take over (a crashed miner). */
const MINE_LEASE_MS = 120_000;

/** A full mine found its lease taken over (it stalled past MINE_LEASE_MS): its remaining writes are refused. */
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

/** Fenced-write filter: rows never written by a mine, or written by one no newer than `epoch`. */
const notNewerThan = (field: 'mine_epoch' | 'link_epoch', epoch: number) => ({
  $or: [{ [field]: { $exists: false } }, { [field]: { $lte: epoch } }],
});

export const traceIdFor = (scope: GraphScope, memoryId: string, seq: number): string =>
  deterministicUuid('workflow-trace', scope.tenantId, scope.collectionId, memoryId, String(seq));
const stateIdFor = (traceId: string): string => deterministicUuid('workflow-state', traceId);
const patternIdFor = (scope: GraphScope, signature: string[]): string =>
  deterministicUuid('workflow-pattern', scope.tenantId, scope.collectionId, signatureKey(signature));
const orderKeyOf = (memoryTime: Date, memoryId: string, seq: number): string =>
  `${memoryTime.toISOString()}|${memoryId}|${String(seq).padStart(6, '0')}`;

type ChainRow = Pick<
  WorkflowTraceDoc,
  '_id' | 'memory_id' | 'memory_time' | 'seq' | 'case_keys' | 'instance_id' | 'subject' | 'verb_class'
>;
const CHAIN_PROJECTION = {
  _id: 1,
  memory_id: 1,
  memory_time: 1,
  seq: 1,
  case_keys: 1,
  instance_id: 1,
  subject: 1,
  verb_class: 1,
} as const;
/** Rule 4's look-ups: candidates per direction, and memories looked up per change. */
const SUBJECT_CANDIDATES = 5;
const SUBJECT_MEMORIES = 16;

export interface InstancePage {
  items: WorkflowInstance[];
  total: number;
}

export class WorkflowRepository {
  readonly traces: Collection<WorkflowTraceDoc>;
  readonly instances: Collection<WorkflowInstanceDoc>;
  readonly patterns: Collection<WorkflowPatternDoc>;
  private readonly mining: Collection<MiningStateDoc>;
  /** Full re-mines this process ran (the bench reports how rarely ingestion needs one). */
  fullMines = 0;

  constructor(db: Db) {
    this.traces = db.collection<WorkflowTraceDoc>('workflow_traces');
    this.instances = db.collection<WorkflowInstanceDoc>('workflow_instances');
    this.patterns = db.collection<WorkflowPatternDoc>('workflow_patterns');
    this.mining = db.collection<MiningStateDoc>('workflow_mining');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.traces.createIndex({ collection_id: 1, memory_id: 1 }),
      this.traces.createIndex({ memory_id: 1 }),
      this.traces.createIndex({ collection_id: 1, instance_id: 1, order_key: 1 }),
      this.traces.createIndex({ collection_id: 1, case_keys: 1 }),
      // Chaining rule 4: the traces of one subject around a memory's time.
      this.traces.createIndex({ collection_id: 1, subject: 1, memory_time: 1 }),
      // GET /v1/workflows: newest activity first, optionally one pattern's instances.
      this.instances.createIndex({ tenant_id: 1, collection_id: 1, last_activity_at: -1, _id: 1 }),
      this.instances.createIndex({ tenant_id: 1, collection_id: 1, pattern_id: 1, last_activity_at: -1, _id: 1 }),
      // A pattern's members closest first: similar_instances, a pattern's instance ids, a new canonical instance.
      this.instances.createIndex({ tenant_id: 1, collection_id: 1, pattern_id: 1, pattern_distance: 1, last_activity_at: -1, _id: 1 }),
      this.instances.createIndex({ memory_ids: 1 }),
      // GET /v1/workflow-patterns: most confident first.
      this.patterns.createIndex({ tenant_id: 1, collection_id: 1, confidence: -1, _id: 1 }),
      // The mine sweep (sweepDueMines): owed mines, quiet longest first.
      this.mining.createIndex({ remine_due: 1, changed_at: 1 }),
    ]);
  }

  // ---- writes -------------------------------------------------------------------------------

  /** Replaces a memory's traces in one collection and re-chains and re-mines around them. Idempotent. */
  async replaceMemoryTraces(
    scope: GraphScope,
    memoryId: string,
    memoryTime: Date,
    drafts: NewTrace[],
    /** Given (by the worker's activity), a full mine that falls due runs here, heartbeating; else it is owed to the sweep. */
    heartbeat?: () => void,
  ): Promise<void> {
    const old = await this.traces
      .find(
        { tenant_id: scope.tenantId, collection_id: scope.collectionId, memory_id: memoryId },
        { projection: { _id: 1, instance_id: 1 } },
      )
      .toArray();
    const rows: WorkflowTraceDoc[] = drafts.map((draft) => {
      const id = traceIdFor(scope, memoryId, draft.seq);
      return {
        _id: id,
        tenant_id: scope.tenantId,
        collection_id: scope.collectionId,
        memory_id: memoryId,
        memory_time: memoryTime,
        chunk_index: draft.chunkIndex,
        seq: draft.seq,
        order_key: orderKeyOf(memoryTime, memoryId, draft.seq),
        verb_class: draft.verbClass,
        verb_lemma: draft.verbLemma,
        description: draft.description,
        occurred_at: draft.occurredAt,
        occurred_at_source: draft.occurredAtSource,
        extraction_confidence: draft.extractionConfidence,
        acting_entity_ids: draft.actingEntityIds,
        affected_entity_ids: draft.affectedEntityIds,
        fact_ids: draft.factIds,
        subject: draft.subject,
        case_keys: draft.caseKeys,
        before_state: draft.beforeState,
        after_state: draft.afterState,
        state_id: stateIdFor(id),
        instance_id: old.find((row) => row._id === id)?.instance_id ?? null,
      };
    });
    const keep = new Set(rows.map((row) => row._id));
    const gone = old.filter((row) => !keep.has(row._id)).map((row) => row._id);
    if (gone.length > 0) await this.traces.deleteMany({ _id: { $in: gone } });
    if (rows.length > 0) {
      await this.traces.bulkWrite(
        rows.map((row) => ({ replaceOne: { filter: { _id: row._id }, replacement: row, upsert: true } })),
        { ordered: false },
      );
    }
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
    const filter: Filter<WorkflowTraceDoc> = { memory_id: { $in: memoryIds } };
    if (onlyCollections) filter.collection_id = { $in: onlyCollections };
    if (fromChunk !== undefined) filter.chunk_index = { $gte: fromChunk };
    const rows = await this.traces.find(filter, { projection: { _id: 1, tenant_id: 1, collection_id: 1, instance_id: 1 } }).toArray();
    const instanceFilter: Filter<WorkflowInstanceDoc> = { memory_ids: { $in: memoryIds } };
    if (onlyCollections) instanceFilter.collection_id = { $in: onlyCollections };
    const fed = await this.instances.find(instanceFilter, { projection: { _id: 1, tenant_id: 1, collection_id: 1 } }).toArray();
    if (rows.length > 0) await this.traces.deleteMany({ _id: { $in: rows.map((row) => row._id) } });

    const scopes = new Map<string, { scope: GraphScope; instanceIds: Set<string> }>();
    const note = (tenantId: string, collectionId: string, instanceId: string | null) => {
      const key = `${tenantId}\n${collectionId}`;
      const entry = scopes.get(key) ?? { scope: { tenantId, collectionId }, instanceIds: new Set<string>() };
      if (instanceId) entry.instanceIds.add(instanceId);
      scopes.set(key, entry);
    };
    for (const row of rows) note(row.tenant_id, row.collection_id, row.instance_id);
    for (const instance of fed) note(instance.tenant_id, instance.collection_id, instance._id);
    for (const { scope, instanceIds } of scopes.values()) {
      // The memories themselves seed the re-chaining too: with `fromChunk`, their earlier traces stay.
      await this.rechain(scope, { memoryIds: fromChunk === undefined ? [] : memoryIds, instanceIds: [...instanceIds], caseKeys: [] });
    }
  }

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
    const base = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    const memoryIds = new Set(seeds.memoryIds);
    const instanceIds = new Set(seeds.instanceIds);
    const caseKeys = new Set<string>();
    // Keys too common to be a case (chaining rule 3's cap): they join nothing, so they pull nothing in.
    const commonKeys = new Set<string>();
    const addKeys = async (keys: Iterable<string>): Promise<void> => {
      const fresh = [...new Set(keys)].filter((key) => !caseKeys.has(key) && !commonKeys.has(key));
      const common = await Promise.all(fresh.map((key) => this.isCommonCaseKey(base, key)));
      fresh.forEach((key, index) => (common[index] ? commonKeys : caseKeys).add(key));
    };
    await addKeys(seeds.caseKeys);
    // Closure: one memory's chain is decided with its whole memory, and a case key pulls in every
    // instance that shares it. Stored instances are already closed, so this settles in a few rounds.
    const close = async (): Promise<ChainRow[]> => {
      let rows: ChainRow[] = [];
      for (let round = 0; round < 4; round++) {
        const or: Filter<WorkflowTraceDoc>[] = [];
        if (memoryIds.size > 0) or.push({ memory_id: { $in: [...memoryIds] } });
        if (instanceIds.size > 0) or.push({ instance_id: { $in: [...instanceIds] } });
        if (caseKeys.size > 0) or.push({ case_keys: { $in: [...caseKeys] } });
        if (or.length === 0) break;
        // One query per branch, merged by _id, rather than one $or: the stand-in plans no $or and
        // read every trace of the collection through the collection_id prefix (the cost grew with
        // the collection); MongoDB serves each branch from its own index either way.
        const merged = new Map<string, ChainRow>();
        for (const branch of or) {
          for (const row of await this.traces.find({ ...base, ...branch }, { projection: CHAIN_PROJECTION }).toArray())
            merged.set(row._id, row);
        }
        rows = [...merged.values()];
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
    const settled = new Set(rows.map((row) => row._id));
    const neighbours = await this.subjectNeighbours(base, rows);
    const before = memoryIds.size + instanceIds.size;
    for (const id of neighbours.memoryIds) memoryIds.add(id);
    for (const id of neighbours.instanceIds) instanceIds.add(id);
    if (memoryIds.size + instanceIds.size > before) rows = await close();

    const chains = chainTraces(
      rows.map((row): ChainTrace => ({
        id: row._id,
        memoryId: row.memory_id,
        memoryTime: row.memory_time.getTime(),
        seq: row.seq,
        caseKeys: commonKeys.size === 0 ? row.case_keys : row.case_keys.filter((key) => !commonKeys.has(key)),
        subject: row.subject,
        verbClass: row.verb_class,
      })),
    );
    const instanceOfTrace = new Map<string, string>();
    for (const chain of chains) for (const traceId of chain.traceIds) instanceOfTrace.set(traceId, chain.id);
    const moved = rows.filter((row) => row.instance_id !== instanceOfTrace.get(row._id));
    const moves: AnyBulkWriteOperation<WorkflowTraceDoc>[] = moved.map((row) => ({
      updateOne: { filter: { _id: row._id }, update: { $set: { instance_id: instanceOfTrace.get(row._id)! } } },
    }));
    if (moves.length > 0) await this.traces.bulkWrite(moves, { ordered: false });
    const dirty = new Set<string>();
    for (const row of moved) {
      dirty.add(instanceOfTrace.get(row._id)!);
      if (row.instance_id) dirty.add(row.instance_id);
    }
    for (const id of settled) {
      const chainId = instanceOfTrace.get(id);
      if (chainId) dirty.add(chainId);
    }

    const now = new Date();
    const written: WorkflowInstanceDoc[] = [];
    for (const chain of chains) {
      if (!dirty.has(chain.id)) continue;
      const traces = await this.traces
        .find(
          { ...base, _id: { $in: chain.traceIds } },
          {
            projection: {
              _id: 1,
              memory_id: 1,
              order_key: 1,
              verb_class: 1,
              occurred_at: 1,
              after_state: 1,
              acting_entity_ids: 1,
              affected_entity_ids: 1,
              case_keys: 1,
            },
          },
        )
        .toArray();
      traces.sort((a, b) => (a.order_key < b.order_key ? -1 : a.order_key > b.order_key ? 1 : 0));
      const last = traces[traces.length - 1];
      if (!last) continue;
      const linked = traces.filter(
        (trace) => trace.acting_entity_ids.length + trace.affected_entity_ids.length + trace.case_keys.length > 0,
      );
      written.push({
        _id: chain.id,
        tenant_id: scope.tenantId,
        collection_id: scope.collectionId,
        memory_ids: [...new Set(traces.map((trace) => trace.memory_id))],
        trace_count: traces.length,
        last_activity_at: new Date(Math.max(...traces.map((trace) => trace.occurred_at.getTime()))),
        signature: signatureOf(traces.map((trace) => trace.verb_class)),
        evidence: linked.length / traces.length,
        current_trace_id: last._id,
        current_state_description: last.after_state,
        pattern_id: null,
        pattern_distance: null,
        position: null,
        updated_at: now,
      });
    }
    // Pattern links are kept for now (the refresh below re-decides them), so reads never see a gap.
    if (written.length > 0) {
      await this.instances.bulkWrite(
        written.map((doc) => {
          const { pattern_id: _p, pattern_distance: _d, position: _s, ...fields } = doc;
          return {
            updateOne: {
              filter: { _id: doc._id },
              update: { $set: fields, $setOnInsert: { pattern_id: null, pattern_distance: null, position: null } },
              upsert: true,
            },
          };
        }),
        { ordered: false },
      );
    }
    const alive = new Set(chains.map((chain) => chain.id));
    const stale = [...instanceIds].filter((id) => !alive.has(id));
    // A vanished instance's pattern loses a member: noted before the row goes, so that the bounded
    // refresh recounts it (and re-picks its canonical instance, or dissolves it) like any other.
    const vanishedPatternIds: string[] = [];
    if (stale.length > 0) {
      const links = await this.instances
        .find({ ...base, _id: { $in: stale }, pattern_id: { $ne: null } }, { projection: { pattern_id: 1 } })
        .toArray();
      for (const link of links) if (link.pattern_id) vanishedPatternIds.push(link.pattern_id);
      await this.instances.deleteMany({ ...base, _id: { $in: stale } });
    }
    if (written.length + stale.length > 0) {
      await this.refreshPatterns(
        scope,
        written.map((doc) => doc._id),
        vanishedPatternIds,
        written.length + stale.length,
        heartbeat,
      );
    }
  }

  /**
   * Whether a case key is named in more than MAX_CASE_MEMORIES memories of the collection: read
   * with a bound, so a common key costs at most a few hundred rows, not every trace naming it.
   */
  private async isCommonCaseKey(base: { tenant_id: string; collection_id: string }, key: string): Promise<boolean> {
    const limit = (MAX_CASE_MEMORIES + 1) * 4;
    const rows = await this.traces.find({ ...base, case_keys: key }, { projection: { _id: 0, memory_id: 1 }, limit }).toArray();
    // A key on that many traces of fewer memories is as useless to chain by, and as costly.
    return rows.length >= limit || new Set(rows.map((row) => row.memory_id)).size > MAX_CASE_MEMORIES;
  }

  /**
   * Rule 4's look-ups (extractors/procedures/chaining.ts): for each memory of `rows` whose traces
   * carry no case identifier, the latest traces of the same subject within the window that its
   * first step can follow, and the earliest unnumbered ones within the window that can follow its
   * last step. A few of each (SUBJECT_CANDIDATES): the rule picks the most recent that fits, and
   * a trace of an instance already further along is not one. Their memories and instances join
   * the closure.
   */
  private async subjectNeighbours(
    base: { tenant_id: string; collection_id: string },
    rows: ChainRow[],
  ): Promise<{ memoryIds: string[]; instanceIds: string[] }> {
    const byMemory = new Map<string, ChainRow[]>();
    for (const row of rows) byMemory.set(row.memory_id, [...(byMemory.get(row.memory_id) ?? []), row]);
    const lookups: Promise<Pick<WorkflowTraceDoc, 'memory_id' | 'instance_id'>[]>[] = [];
    const find = (filter: Filter<WorkflowTraceDoc>, direction: 1 | -1) =>
      this.traces
        .find(filter, { sort: { memory_time: direction, _id: 1 }, limit: SUBJECT_CANDIDATES, projection: { memory_id: 1, instance_id: 1 } })
        .toArray();
    const unnumbered = [...byMemory.entries()].filter(([, own]) => own.every((row) => row.case_keys.length === 0));
    for (const [memoryId, own] of unnumbered.slice(0, SUBJECT_MEMORIES)) {
      own.sort((a, b) => a.seq - b.seq);
      const first = own[0]!;
      const last = own[own.length - 1]!;
      const time = first.memory_time.getTime();
      if (first.subject !== '') {
        lookups.push(
          find(
            {
              ...base,
              subject: first.subject,
              memory_id: { $ne: memoryId },
              memory_time: { $gte: new Date(time - SUBJECT_CHAIN_WINDOW_MS), $lte: first.memory_time },
              verb_class: { $in: classesBefore(first.verb_class) },
            },
            -1,
          ),
        );
      }
      if (last.subject !== '') {
        lookups.push(
          find(
            {
              ...base,
              subject: last.subject,
              memory_id: { $ne: memoryId },
              memory_time: { $gte: last.memory_time, $lte: new Date(time + SUBJECT_CHAIN_WINDOW_MS) },
              verb_class: { $in: classesAfter(last.verb_class) },
              case_keys: { $size: 0 },
            },
            1,
          ),
        );
      }
    }
    const found = (await Promise.all(lookups)).flat();
    return {
      memoryIds: [...new Set(found.map((row) => row.memory_id))],
      instanceIds: [...new Set(found.map((row) => row.instance_id).filter((id): id is string => id !== null))],
    };
  }

  /** Bounded re-mining (module comment): incremental assignment, full re-mine every 10 % of changes. */
  private async refreshPatterns(
    scope: GraphScope,
    changedInstanceIds: string[],
    vanishedPatternIds: string[],
    changes: number,
    heartbeat?: () => void,
  ): Promise<void> {
    const state = await this.mining.findOneAndUpdate(
      { _id: scope.collectionId },
      // The stand-in's concurrent $inc may lose a count: these only pace re-mining and detect change.
      {
        $inc: { changes_since: changes, version: 1 },
        $set: { changed_at: new Date() },
        $setOnInsert: { tenant_id: scope.tenantId, instances_at_mine: 0, mined_at: new Date(0) },
      },
      { upsert: true, returnDocument: 'after' },
    );
    const threshold = Math.max(1, Math.floor((state?.instances_at_mine ?? 0) * REMINE_SHARE));
    const due = !state || state.changes_since >= threshold;
    // A full mine runs only where a heartbeat is given (the worker's derivation activity): never on
    // a request path (DELETE, PATCH) nor in an API process. Elsewhere it is owed, and the worker's
    // sweep (sweepDueMines) runs it.
    if (due && heartbeat && (await this.mineUnderLease(scope, heartbeat)) !== null) return;
    // Below the threshold, or another activity is mining this collection: that mine runs again
    // when it sees the version moved, so this change is in its result; meanwhile it is assigned
    // incrementally. Without the lease every memory ingested during a mine started one of its own
    // (and re-ran it, as the version kept moving): concurrent ingestion spent its time mining.
    // The mine owed is noted, in case the holder has already looked for changes for the last time.
    if (due) await this.mining.updateOne({ _id: scope.collectionId }, { $set: { remine_due: true } });
    await this.assignToPatterns(scope, changedInstanceIds, vanishedPatternIds);
  }

  /**
   * A full mine under the collection's lease: the patterns it found, or null (nothing done) when
   * another mine holds the lease or took it over meanwhile.
   */
  private async mineUnderLease(scope: GraphScope, heartbeat: () => void): Promise<number | null> {
    const epoch = await this.claimMine(scope);
    if (epoch === null) return null;
    try {
      return await this.mineCollectionLeased(scope, { epoch, heartbeat });
    } catch (error) {
      if (error instanceof MineLeaseLost) return null;
      throw error;
    } finally {
      // Only our own lease: a mine that outlived it may have been taken over meanwhile.
      await this.mining.updateOne({ _id: scope.collectionId, mining_epoch: epoch }, { $set: { mining_until: new Date(0) } });
    }
  }

  /** Extends the lease by MINE_LEASE_MS from now if it is still ours; throws MineLeaseLost if not. */
  private async renewLease(scope: GraphScope, lease: MineLease): Promise<void> {
    lease.heartbeat();
    const renewed = await this.mining.updateOne(
      { _id: scope.collectionId, mining_epoch: lease.epoch },
      { $set: { mining_until: new Date(Date.now() + MINE_LEASE_MS) } },
    );
    if (renewed.matchedCount !== 1) throw new MineLeaseLost(scope.collectionId);
  }

  /**
   * Runs the full mines owed (remine_due) in collections quiet for `quietMs` whose lease is free:
   * without it, a burst of ingestion whose last changes came while a mine ran, after that mine's
   * last re-run, would keep an older mine's patterns until the collection changed again.
   */
  async sweepDueMines(quietMs: number, limit = 20, heartbeat: () => void = () => undefined): Promise<number> {
    const now = new Date();
    const owed = await this.mining
      .find(
        {
          remine_due: true,
          changed_at: { $lt: new Date(now.getTime() - quietMs) },
          $or: [{ mining_until: { $exists: false } }, { mining_until: { $lt: now } }],
        },
        { projection: { _id: 1, tenant_id: 1 }, limit },
      )
      .toArray();
    let mined = 0;
    for (const row of owed)
      if ((await this.mineUnderLease({ tenantId: row.tenant_id, collectionId: row._id }, heartbeat)) !== null) mined++;
    return mined;
  }

  /**
   * Takes the collection's mining lease: its expiry for the one caller that set it, else null. On
   * the stand-in two racing claims may both succeed (its updates are not serialised); that costs a
   * second mine, never a wrong result.
   */
  private async claimMine(scope: GraphScope): Promise<number | null> {
    const now = new Date();
    // The epoch is the claim time: a lease is claimed only after the previous one expired or was
    // released, so a later holder has a larger epoch (clocks of the processes roughly agree).
    const epoch = now.getTime();
    const claimed = await this.mining.updateOne(
      {
        _id: scope.collectionId,
        $and: [
          { $or: [{ mining_until: { $exists: false } }, { mining_until: { $lt: now } }] },
          { $or: [{ mining_epoch: { $exists: false } }, { mining_epoch: { $lt: epoch } }] },
        ],
      },
      { $set: { mining_until: new Date(epoch + MINE_LEASE_MS), mining_epoch: epoch } },
    );
    return claimed.modifiedCount === 1 ? epoch : null;
  }

  /**
   * Links instances to the nearest existing pattern and refreshes the numbers of the patterns touched:
   * those the instances left or joined, and those that lost a member which no longer exists.
   */
  private async assignToPatterns(scope: GraphScope, instanceIds: string[], vanishedPatternIds: string[]): Promise<void> {
    const base = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    const patterns = await this.patterns.find(base, { projection: { _id: 1, signature: 1, canonical_instance_id: 1 } }).toArray();
    const instances = await this.instances
      .find({ ...base, _id: { $in: instanceIds } }, { projection: { _id: 1, signature: 1, pattern_id: 1 } })
      .toArray();
    const touched = new Set<string>(vanishedPatternIds);
    const updates: AnyBulkWriteOperation<WorkflowInstanceDoc>[] = [];
    const index = new SignatureIndex(patterns.map((pattern) => pattern.signature));
    for (const instance of instances) {
      const found = index.nearest(instance.signature);
      const patternId = found ? patterns[found.index]!._id : null;
      if (instance.pattern_id) touched.add(instance.pattern_id);
      if (patternId) touched.add(patternId);
      updates.push({
        updateOne: {
          filter: { _id: instance._id },
          update: {
            $set: {
              pattern_id: patternId,
              pattern_distance: found ? found.alignment.distance : null,
              position: found ? { step: found.alignment.step, of: found.alignment.of } : null,
            },
          },
        },
      });
    }
    if (updates.length > 0) await this.instances.bulkWrite(updates, { ordered: false });
    // Between full mines a touched pattern keeps an exact instance count and a canonical instance
    // that still belongs to it; confidence and weighted frequency are those of the last full mine
    // (at most 10 % of changes old). Recomputing them here would read every member per memory.
    for (const patternId of touched) {
      const pattern = patterns.find((candidate) => candidate._id === patternId);
      // Another process may be assigning to the same pattern: a count read before its assignment
      // can be written after its count. So the writer re-counts after writing until the two agree
      // (the last writer then leaves the true count); past PATTERN_COUNT_ROUNDS the mine is owed.
      let written: number | null = null;
      for (let round = 0; ; round++) {
        const count = await this.instances.countDocuments({ ...base, pattern_id: patternId });
        if (count === written) break;
        if (round === PATTERN_COUNT_ROUNDS) {
          await this.mining.updateOne({ _id: scope.collectionId }, { $set: { remine_due: true } });
          break;
        }
        if (!pattern || count < MIN_SUPPORT) {
          await this.patterns.deleteOne({ ...base, _id: patternId });
          await this.instances.updateMany(
            { ...base, pattern_id: patternId },
            { $set: { pattern_id: null, pattern_distance: null, position: null } },
          );
          break;
        }
        const set: Partial<WorkflowPatternDoc> = {
          instance_count: count,
          description: describePattern(pattern.signature, count).description,
        };
        const canonicalStays = await this.instances.findOne(
          { ...base, _id: pattern.canonical_instance_id, pattern_id: patternId },
          { projection: { _id: 1 } },
        );
        if (!canonicalStays) {
          const closest = await this.instances.findOne(
            { ...base, pattern_id: patternId },
            { sort: { pattern_distance: 1, last_activity_at: -1, _id: 1 }, projection: { _id: 1 } },
          );
          if (closest) set.canonical_instance_id = closest._id;
        }
        await this.patterns.updateOne({ _id: patternId }, { $set: set });
        written = count;
      }
    }
  }

  /**
   * A full re-mine of one collection under its lease (the bench times it on 10k traces): the
   * patterns found, or null when another mine holds the lease.
   */
  mineCollection(scope: GraphScope, heartbeat: () => void = () => undefined): Promise<number | null> {
    return this.mineUnderLease(scope, heartbeat);
  }

  /**
   * A mine that read older instances must not be the last word: one that sees the collection
   * change while it ran runs again, up to MINE_RERUNS times; past that, and for changes that found
   * the lease taken, the mine is owed (remine_due) and sweepDueMines runs it once the collection is quiet.
   */
  private async mineCollectionLeased(scope: GraphScope, lease: MineLease): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      // Starting a mine pays what was owed; a change during it owes again (refreshPatterns).
      const before =
        (await this.mining.findOneAndUpdate({ _id: scope.collectionId }, { $set: { remine_due: false } }, { returnDocument: 'before' }))
          ?.version ?? 0;
      const patterns = await this.mineOnce(scope, lease);
      this.fullMines++;
      const after = (await this.mining.findOne({ _id: scope.collectionId }))?.version ?? 0;
      if (after === before) return patterns;
      if (attempt === MINE_RERUNS) {
        // Still changing: the rest is owed, for the next change or the sweep once ingestion pauses.
        await this.mining.updateOne({ _id: scope.collectionId }, { $set: { remine_due: true } });
        return patterns;
      }
    }
  }

  /** Test hook: awaited between a mine's computing and its writes (a stalled miner in tests). */
  beforeMineWrites: (scope: GraphScope) => Promise<void> = () => Promise.resolve();

  /**
   * One full mine. Fenced by the lease: it renews the lease before each write step (and stops with
   * MineLeaseLost when it was taken over), and every row it writes carries its epoch, so that a
   * stale holder's late writes never overwrite a newer mine's (pattern rows and links are only
   * written over rows of an older or equal epoch, and only older patterns are deleted).
   */
  private async mineOnce(scope: GraphScope, lease: MineLease): Promise<number> {
    const { epoch } = lease;
    const base = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    const minedAt = new Date();
    const instances = await this.instances
      .find(base, { projection: { _id: 1, signature: 1, last_activity_at: 1, evidence: 1, pattern_id: 1 } })
      .toArray();
    lease.heartbeat();
    const mined = minePatterns(
      instances.map((instance) => ({
        id: instance._id,
        signature: instance.signature,
        lastActivityAt: instance.last_activity_at.getTime(),
        evidence: instance.evidence,
      })),
    );
    await this.beforeMineWrites(scope);
    await this.renewLease(scope, lease);
    const patternIds: string[] = [];
    const linked = new Map<string, AnyBulkWriteOperation<WorkflowInstanceDoc>>();
    const patternWrites: AnyBulkWriteOperation<WorkflowPatternDoc>[] = [];
    for (const pattern of mined) {
      const id = patternIdFor(scope, pattern.signature);
      patternIds.push(id);
      const { name, description } = describePattern(pattern.signature, pattern.stats.instanceCount);
      const doc: WorkflowPatternDoc = {
        _id: id,
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
        mine_epoch: epoch,
      };
      // A newer mine's row does not match: the upsert then collides on _id, and this mine stops.
      patternWrites.push({ replaceOne: { filter: { _id: id, ...notNewerThan('mine_epoch', epoch) }, replacement: doc, upsert: true } });
      for (const member of pattern.members) {
        linked.set(member.id, {
          updateOne: {
            filter: { _id: member.id, ...notNewerThan('link_epoch', epoch) },
            update: {
              $set: {
                pattern_id: id,
                pattern_distance: member.distance,
                position: { step: member.step, of: pattern.signature.length },
                link_epoch: epoch,
              },
            },
          },
        });
      }
    }
    // Patterns first, then links to them, then unlinking and old patterns: a reader never follows a
    // link to a missing pattern for long, and a crash anywhere leaves what the next mine repairs.
    if (patternWrites.length > 0) {
      try {
        await this.patterns.bulkWrite(patternWrites, { ordered: false });
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new MineLeaseLost(scope.collectionId);
        throw error;
      }
    }
    const unlink = instances
      .filter((instance) => instance.pattern_id !== null && !linked.has(instance._id))
      .map((instance) => instance._id);
    const writes = [...linked.values()];
    for (let offset = 0; offset < writes.length; offset += 1000) {
      await this.renewLease(scope, lease);
      await this.instances.bulkWrite(writes.slice(offset, offset + 1000), { ordered: false });
    }
    await this.renewLease(scope, lease);
    if (unlink.length > 0) {
      await this.instances.updateMany(
        { ...base, _id: { $in: unlink }, ...notNewerThan('link_epoch', epoch) },
        { $set: { pattern_id: null, pattern_distance: null, position: null, link_epoch: epoch } },
      );
    }
    // Only older mines' patterns go: a newer mine's, and the links to them, stay.
    await this.patterns.deleteMany({
      ...base,
      _id: { $nin: patternIds },
      $or: [{ mine_epoch: { $exists: false } }, { mine_epoch: { $lt: epoch } }],
    });
    await this.mining.updateOne(
      { _id: scope.collectionId, mining_epoch: epoch },
      { $set: { tenant_id: scope.tenantId, instances_at_mine: instances.length, changes_since: 0, mined_at: minedAt } },
    );
    return mined.length;
  }

  // ---- reads --------------------------------------------------------------------------------

  async listInstances(
    scope: GraphScope,
    query: { patternId: string | null; includeUnpatterned: boolean; offset: number; limit: number },
  ): Promise<InstancePage> {
    const filter: Filter<WorkflowInstanceDoc> = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    if (query.patternId) filter.pattern_id = query.patternId;
    else if (!query.includeUnpatterned) filter.pattern_id = { $ne: null };
    const [items, total] = await Promise.all([
      this.instances.find(filter, { sort: { last_activity_at: -1, _id: 1 }, skip: query.offset, limit: query.limit }).toArray(),
      this.instances.countDocuments(filter),
    ]);
    return { items: items.map(fromStored<WorkflowInstance>), total };
  }

  /** An instance by its id, or the instance holding the trace with that id. */
  async findInstance(scope: GraphScope, id: string): Promise<WorkflowInstance | null> {
    const base = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    let found = await this.instances.findOne({ ...base, _id: id });
    if (!found) {
      const trace = await this.traces.findOne({ ...base, _id: id }, { projection: { instance_id: 1 } });
      if (trace?.instance_id) found = await this.instances.findOne({ ...base, _id: trace.instance_id });
    }
    return found ? fromStored<WorkflowInstance>(found) : null;
  }

  /** The newest `limit` traces of an instance, oldest first, and whether older ones were left out. */
  async history(scope: GraphScope, instanceId: string, limit: number): Promise<{ traces: WorkflowTrace[]; truncated: boolean }> {
    const newestFirst = await this.traces
      .find(
        { tenant_id: scope.tenantId, collection_id: scope.collectionId, instance_id: instanceId },
        { sort: { order_key: -1 }, limit: limit + 1 },
      )
      .toArray();
    return {
      traces: newestFirst
        .slice(0, limit)
        .reverse()
        .map(fromStored<WorkflowTrace>),
      truncated: newestFirst.length > limit,
    };
  }

  async traceById(scope: GraphScope, id: string): Promise<WorkflowTrace | null> {
    const found = await this.traces.findOne({ tenant_id: scope.tenantId, collection_id: scope.collectionId, _id: id });
    return found ? fromStored<WorkflowTrace>(found) : null;
  }

  /** Siblings in the same pattern, closest to it first, then most recent. */
  async similarInstances(scope: GraphScope, instance: WorkflowInstance, limit: number): Promise<WorkflowInstance[]> {
    if (!instance.pattern_id || limit === 0) return [];
    const siblings = await this.instances
      .find(
        { tenant_id: scope.tenantId, collection_id: scope.collectionId, pattern_id: instance.pattern_id, _id: { $ne: instance.id } },
        { sort: { pattern_distance: 1, last_activity_at: -1, _id: 1 }, limit },
      )
      .toArray();
    return siblings.map(fromStored<WorkflowInstance>);
  }

  async listPatterns(scope: GraphScope, offset: number, limit: number): Promise<{ items: WorkflowPattern[]; total: number }> {
    const filter = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    const [items, total] = await Promise.all([
      this.patterns.find(filter, { sort: { confidence: -1, _id: 1 }, skip: offset, limit }).toArray(),
      this.patterns.countDocuments(filter),
    ]);
    return { items: items.map(fromStored<WorkflowPattern>), total };
  }

  async findPattern(scope: GraphScope, id: string): Promise<WorkflowPattern | null> {
    const found = await this.patterns.findOne({ tenant_id: scope.tenantId, collection_id: scope.collectionId, _id: id });
    return found ? fromStored<WorkflowPattern>(found) : null;
  }

  /** A page of a pattern's instance ids (closest first) and how many there are. */
  async patternInstanceIds(scope: GraphScope, patternId: string, offset: number, limit: number): Promise<{ ids: string[]; total: number }> {
    const filter = { tenant_id: scope.tenantId, collection_id: scope.collectionId, pattern_id: patternId };
    const [rows, total] = await Promise.all([
      this.instances
        .find(filter, { sort: { pattern_distance: 1, last_activity_at: -1, _id: 1 }, skip: offset, limit, projection: { _id: 1 } })
        .toArray(),
      this.instances.countDocuments(filter),
    ]);
    return { ids: rows.map((row) => row._id), total };
  }
}
