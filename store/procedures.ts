/**
 * Procedure storage: traces, observed instances and mined patterns, one set per collection (scoped
 * by tenant and collection exactly like the graph), read at /v1/workflows and /v1/workflow-patterns
 * (docs/workflows.md). The collections keep their `workflow_*` names: renaming them would strand
 * the rows of existing deployments.
 *
 *   workflow_traces     one row per trace of a memory in a collection (its text: description,
 *                       subject, states), with the instance it currently belongs to;
 *   workflow_instances  one row per execution chain, recomputed from its traces; `memory_ids`
 *                       lists the memories behind it;
 *   workflow_patterns   patterns mined from the instances;
 *   workflow_mining     per collection: instances at the last full mine, changes since, the mining lease.
 *
 * Typed reads and writes only: the rules that decide what to write (chaining, assignment, when to
 * mine and how a mine is fenced) are core/procedures/derivation.ts, which writes through the
 * ProcedureRecords methods here.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter } from 'mongodb';
import type { GraphScope } from '../core/graph-model.js';
import type { ChainRow, ProcedureRecords, SubjectQuery } from '../core/procedures/records.js';
import type { ChainMember, InstanceFields, MiningPacing, PatternLink } from '../core/procedures/rules.js';
import type { ProcedureInstance, ProcedurePattern, ProcedureTrace } from '../core/procedure-model.js';
import { signatureKey } from '../extractors/procedures/mining.js';
import { isDuplicateKeyError } from './db.js';
import { fromStored, toStored, type Stored } from './stored.js';

export type ProcedureTraceDoc = Stored<ProcedureTrace>;
/** `link_epoch`: the epoch of the full mine that last wrote the pattern link (fencing, see core/procedures/derivation.ts). */
export type ProcedureInstanceDoc = Stored<ProcedureInstance> & {
  link_epoch?: number;
  /**
   * The signature as mining keys it (signatureKey), for the exact look-up of hasUnlinkedTwin: an
   * index serves equality on a string in both stores, on an array not in the embedded one. Rows
   * written before it: absent.
   */
  signature_key?: string;
};

/** `mine_epoch`: the epoch of the full mine that wrote the pattern (fencing, see core/procedures/derivation.ts). */
export type ProcedurePatternDoc = Stored<ProcedurePattern> & { mine_epoch?: number };

interface MiningStateDoc {
  _id: string;
  tenant_id: string;
  instances_at_mine: number;
  changes_since: number;
  /** Bumped by every change: a mine that saw it move re-runs. */
  version: number;
  mined_at: Date;
  /** While a full mine runs: its lease (one mine at a time per collection). */
  mining_until?: Date;
  /** The lease holder's epoch (the claims so far): renewals and the mine's writes are fenced by it. */
  mining_epoch?: number;
  /**
   * A full mine is owed: one was due while another held the lease, or the holder ran out of
   * re-runs while changes kept coming. Cleared as a mine starts; the sweep runs what is owed.
   */
  remine_due?: boolean;
  /** When the last change arrived: the sweep waits for a quiet collection. */
  changed_at?: Date;
}

/** What paces re-mining, from a collection's mining record (null: none yet). */
const pacingOf = (state: Pick<MiningStateDoc, 'instances_at_mine' | 'changes_since'> | null): MiningPacing | null =>
  state ? { instancesAtMine: state.instances_at_mine ?? 0, changesSince: state.changes_since } : null;

/** How long a full mine may hold its collection's lease without renewing it before another may take over (a crashed miner). */
const MINE_LEASE_MS = 120_000;

/** Fenced-write filter: rows never written by a mine, or written by one no newer than `epoch`. */
const notNewerThan = (field: 'mine_epoch' | 'link_epoch', epoch: number) => ({
  $or: [{ [field]: { $exists: false } }, { [field]: { $lte: epoch } }],
});

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

const linkFields = (link: PatternLink) => ({ pattern_id: link.patternId, pattern_distance: link.distance, position: link.position });
const unlinked = { pattern_id: null, pattern_distance: null, position: null };

export interface InstancePage {
  items: ProcedureInstance[];
  total: number;
}

export class ProcedureRepository implements ProcedureRecords {
  readonly traces: Collection<ProcedureTraceDoc>;
  readonly instances: Collection<ProcedureInstanceDoc>;
  readonly patterns: Collection<ProcedurePatternDoc>;
  private readonly mining: Collection<MiningStateDoc>;

  constructor(db: Db) {
    this.traces = db.collection<ProcedureTraceDoc>('workflow_traces');
    this.instances = db.collection<ProcedureInstanceDoc>('workflow_instances');
    this.patterns = db.collection<ProcedurePatternDoc>('workflow_patterns');
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
      // hasUnlinkedTwin: the collection's instances without a pattern, by signature.
      this.instances.createIndex({ tenant_id: 1, collection_id: 1, pattern_id: 1, signature_key: 1 }),
      // GET /v1/workflow-patterns: most confident first.
      this.patterns.createIndex({ tenant_id: 1, collection_id: 1, confidence: -1, _id: 1 }),
      // The mine sweep (sweepDueMines): owed mines, quiet longest first.
      this.mining.createIndex({ remine_due: 1, changed_at: 1 }),
    ]);
  }

  private base(scope: GraphScope) {
    return { tenant_id: scope.tenantId, collection_id: scope.collectionId };
  }

  // ---- traces (ProcedureRecords) ------------------------------------------------------------

  async memoryTraceInstances(scope: GraphScope, memoryId: string): Promise<Pick<ProcedureTrace, 'id' | 'instance_id'>[]> {
    const rows = await this.traces.find({ ...this.base(scope), memory_id: memoryId }, { projection: { _id: 1, instance_id: 1 } }).toArray();
    return rows.map((row) => ({ id: row._id, instance_id: row.instance_id }));
  }

  async replaceTraces(goneIds: string[], traces: ProcedureTrace[]): Promise<void> {
    if (goneIds.length > 0) await this.traces.deleteMany({ _id: { $in: goneIds } });
    if (traces.length > 0) {
      await this.traces.bulkWrite(
        traces.map((trace) => ({ replaceOne: { filter: { _id: trace.id }, replacement: toStored(trace), upsert: true } })),
        { ordered: false },
      );
    }
  }

  async tracesOfMemories(
    memoryIds: string[],
    onlyCollections?: string[],
    fromChunk?: number,
  ): Promise<Pick<ProcedureTrace, 'id' | 'tenant_id' | 'collection_id' | 'instance_id'>[]> {
    const filter: Filter<ProcedureTraceDoc> = { memory_id: { $in: memoryIds } };
    if (onlyCollections) filter.collection_id = { $in: onlyCollections };
    if (fromChunk !== undefined) filter.chunk_index = { $gte: fromChunk };
    const rows = await this.traces.find(filter, { projection: { _id: 1, tenant_id: 1, collection_id: 1, instance_id: 1 } }).toArray();
    return rows.map((row) => ({ id: row._id, tenant_id: row.tenant_id, collection_id: row.collection_id, instance_id: row.instance_id }));
  }

  async deleteTraces(ids: string[]): Promise<void> {
    await this.traces.deleteMany({ _id: { $in: ids } });
  }

  async memoriesNamingCaseKey(scope: GraphScope, key: string, limit: number): Promise<string[]> {
    const rows = await this.traces.find({ ...this.base(scope), case_keys: key }, { projection: { _id: 0, memory_id: 1 }, limit }).toArray();
    return rows.map((row) => row.memory_id);
  }

  async chainRows(scope: GraphScope, seeds: { memoryIds: string[]; instanceIds: string[]; caseKeys: string[] }): Promise<ChainRow[]> {
    const branches: Filter<ProcedureTraceDoc>[] = [];
    if (seeds.memoryIds.length > 0) branches.push({ memory_id: { $in: seeds.memoryIds } });
    if (seeds.instanceIds.length > 0) branches.push({ instance_id: { $in: seeds.instanceIds } });
    if (seeds.caseKeys.length > 0) branches.push({ case_keys: { $in: seeds.caseKeys } });
    // One query per branch, merged by _id, rather than one $or: the stand-in plans no $or and
    // read every trace of the collection through the collection_id prefix (the cost grew with
    // the collection); MongoDB serves each branch from its own index either way.
    const merged = new Map<string, ChainRow>();
    for (const branch of branches) {
      for (const row of await this.traces.find({ ...this.base(scope), ...branch }, { projection: CHAIN_PROJECTION }).toArray()) {
        const { _id, ...fields } = row;
        merged.set(_id, { id: _id, ...fields });
      }
    }
    return [...merged.values()];
  }

  async subjectTraces(scope: GraphScope, query: SubjectQuery): Promise<Pick<ProcedureTrace, 'memory_id' | 'instance_id'>[]> {
    const filter: Filter<ProcedureTraceDoc> = {
      ...this.base(scope),
      subject: query.subject,
      memory_id: { $ne: query.notMemoryId },
      memory_time: { $gte: query.from, $lte: query.to },
      verb_class: { $in: query.verbClasses },
    };
    if (query.unnumberedOnly) filter.case_keys = { $size: 0 };
    return this.traces
      .find(filter, { sort: { memory_time: query.direction, _id: 1 }, limit: query.limit, projection: { memory_id: 1, instance_id: 1 } })
      .toArray();
  }

  async moveTraces(moves: { traceId: string; instanceId: string }[]): Promise<void> {
    await this.traces.bulkWrite(
      moves.map((move) => ({ updateOne: { filter: { _id: move.traceId }, update: { $set: { instance_id: move.instanceId } } } })),
      { ordered: false },
    );
  }

  async chainMembers(scope: GraphScope, traceIds: string[]): Promise<ChainMember[]> {
    const rows = await this.traces
      .find(
        { ...this.base(scope), _id: { $in: traceIds } },
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
    return rows.map(({ _id, ...fields }) => ({ id: _id, ...fields }));
  }

  // ---- instances (ProcedureRecords) ---------------------------------------------------------

  async instancesFedBy(
    memoryIds: string[],
    onlyCollections?: string[],
  ): Promise<Pick<ProcedureInstance, 'id' | 'tenant_id' | 'collection_id'>[]> {
    const filter: Filter<ProcedureInstanceDoc> = { memory_ids: { $in: memoryIds } };
    if (onlyCollections) filter.collection_id = { $in: onlyCollections };
    const rows = await this.instances.find(filter, { projection: { _id: 1, tenant_id: 1, collection_id: 1 } }).toArray();
    return rows.map((row) => ({ id: row._id, tenant_id: row.tenant_id, collection_id: row.collection_id }));
  }

  async upsertInstances(instances: InstanceFields[]): Promise<void> {
    await this.instances.bulkWrite(
      instances.map(({ id, ...fields }) => ({
        updateOne: {
          filter: { _id: id },
          update: { $set: { ...fields, signature_key: signatureKey(fields.signature) }, $setOnInsert: unlinked },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }

  async deleteInstances(scope: GraphScope, ids: string[]): Promise<string[]> {
    const base = this.base(scope);
    const links = await this.instances
      .find({ ...base, _id: { $in: ids }, pattern_id: { $ne: null } }, { projection: { pattern_id: 1 } })
      .toArray();
    await this.instances.deleteMany({ ...base, _id: { $in: ids } });
    return links.flatMap((link) => (link.pattern_id ? [link.pattern_id] : []));
  }

  async instancesByIds(scope: GraphScope, ids: string[]): Promise<Pick<ProcedureInstance, 'id' | 'signature' | 'pattern_id'>[]> {
    const rows = await this.instances
      .find({ ...this.base(scope), _id: { $in: ids } }, { projection: { _id: 1, signature: 1, pattern_id: 1 } })
      .toArray();
    return rows.map((row) => ({ id: row._id, signature: row.signature, pattern_id: row.pattern_id }));
  }

  async hasUnlinkedTwin(scope: GraphScope, instanceId: string, signature: readonly string[]): Promise<boolean> {
    const twin = await this.instances.findOne(
      { ...this.base(scope), pattern_id: null, signature_key: signatureKey(signature), _id: { $ne: instanceId } },
      { projection: { _id: 1 } },
    );
    return twin !== null;
  }

  async instancesToMine(
    scope: GraphScope,
  ): Promise<Pick<ProcedureInstance, 'id' | 'signature' | 'last_activity_at' | 'evidence' | 'pattern_id'>[]> {
    const rows = await this.instances
      .find(this.base(scope), { projection: { _id: 1, signature: 1, last_activity_at: 1, evidence: 1, pattern_id: 1 } })
      .toArray();
    return rows.map((row) => ({
      id: row._id,
      signature: row.signature,
      last_activity_at: row.last_activity_at,
      evidence: row.evidence,
      pattern_id: row.pattern_id,
    }));
  }

  async setPatternLinks(links: PatternLink[]): Promise<void> {
    await this.instances.bulkWrite(
      links.map((link) => ({ updateOne: { filter: { _id: link.instanceId }, update: { $set: linkFields(link) } } })),
      { ordered: false },
    );
  }

  // ---- patterns between full mines (ProcedureRecords) ---------------------------------------

  async patternsOf(scope: GraphScope): Promise<Pick<ProcedurePattern, 'id' | 'signature' | 'canonical_instance_id'>[]> {
    const rows = await this.patterns.find(this.base(scope), { projection: { _id: 1, signature: 1, canonical_instance_id: 1 } }).toArray();
    return rows.map((row) => ({ id: row._id, signature: row.signature, canonical_instance_id: row.canonical_instance_id }));
  }

  countPatternMembers(scope: GraphScope, patternId: string): Promise<number> {
    return this.instances.countDocuments({ ...this.base(scope), pattern_id: patternId });
  }

  async dissolvePattern(scope: GraphScope, patternId: string): Promise<void> {
    const base = this.base(scope);
    await this.patterns.deleteOne({ ...base, _id: patternId });
    await this.instances.updateMany({ ...base, pattern_id: patternId }, { $set: unlinked });
  }

  async isPatternMember(scope: GraphScope, instanceId: string, patternId: string): Promise<boolean> {
    return (
      (await this.instances.findOne({ ...this.base(scope), _id: instanceId, pattern_id: patternId }, { projection: { _id: 1 } })) !== null
    );
  }

  async closestPatternMember(scope: GraphScope, patternId: string): Promise<string | null> {
    const closest = await this.instances.findOne(
      { ...this.base(scope), pattern_id: patternId },
      { sort: { pattern_distance: 1, last_activity_at: -1, _id: 1 }, projection: { _id: 1 } },
    );
    return closest?._id ?? null;
  }

  async updatePattern(
    patternId: string,
    set: Partial<Pick<ProcedurePattern, 'instance_count' | 'description' | 'canonical_instance_id'>>,
  ): Promise<void> {
    await this.patterns.updateOne({ _id: patternId }, { $set: set });
  }

  // ---- a full mine's fenced writes (ProcedureRecords) ---------------------------------------

  async writeMinedPatterns(patterns: ProcedurePattern[], epoch: number): Promise<boolean> {
    // A newer mine's row does not match the filter: the upsert then collides on _id.
    const writes: AnyBulkWriteOperation<ProcedurePatternDoc>[] = patterns.map((pattern) => ({
      replaceOne: {
        filter: { _id: pattern.id, ...notNewerThan('mine_epoch', epoch) },
        replacement: { ...toStored(pattern), mine_epoch: epoch },
        upsert: true,
      },
    }));
    try {
      await this.patterns.bulkWrite(writes, { ordered: false });
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async linkMinedInstances(links: PatternLink[], epoch: number): Promise<void> {
    await this.instances.bulkWrite(
      links.map((link) => ({
        updateOne: {
          filter: { _id: link.instanceId, ...notNewerThan('link_epoch', epoch) },
          update: { $set: { ...linkFields(link), link_epoch: epoch } },
        },
      })),
      { ordered: false },
    );
  }

  async unlinkMinedInstances(scope: GraphScope, instanceIds: string[], epoch: number): Promise<void> {
    await this.instances.updateMany(
      { ...this.base(scope), _id: { $in: instanceIds }, ...notNewerThan('link_epoch', epoch) },
      { $set: { ...unlinked, link_epoch: epoch } },
    );
  }

  async deleteOlderPatterns(scope: GraphScope, keepIds: string[], epoch: number): Promise<void> {
    await this.patterns.deleteMany({
      ...this.base(scope),
      _id: { $nin: keepIds },
      $or: [{ mine_epoch: { $exists: false } }, { mine_epoch: { $lt: epoch } }],
    });
  }

  async recordMine(scope: GraphScope, epoch: number, instanceCount: number, minedAt: Date): Promise<void> {
    await this.mining.updateOne(
      { _id: scope.collectionId, mining_epoch: epoch },
      { $set: { tenant_id: scope.tenantId, instances_at_mine: instanceCount, changes_since: 0, mined_at: minedAt } },
    );
  }

  // ---- the mining record and its lease (ProcedureRecords) -----------------------------------

  async noteChanges(scope: GraphScope, changes: number): Promise<MiningPacing | null> {
    const state = await this.mining.findOneAndUpdate(
      { _id: scope.collectionId },
      {
        $inc: { changes_since: changes, version: 1 },
        $set: { changed_at: new Date() },
        $setOnInsert: { tenant_id: scope.tenantId, instances_at_mine: 0, mined_at: new Date(0) },
      },
      { upsert: true, returnDocument: 'after' },
    );
    return pacingOf(state);
  }

  async miningPacing(collectionId: string): Promise<MiningPacing | null> {
    return pacingOf(await this.mining.findOne({ _id: collectionId }, { projection: { instances_at_mine: 1, changes_since: 1 } }));
  }

  async markMineOwed(collectionId: string): Promise<void> {
    await this.mining.updateOne({ _id: collectionId }, { $set: { remine_due: true } });
  }

  async startMine(collectionId: string): Promise<number> {
    const before = await this.mining.findOneAndUpdate({ _id: collectionId }, { $set: { remine_due: false } }, { returnDocument: 'before' });
    return before?.version ?? 0;
  }

  async miningVersion(collectionId: string): Promise<number> {
    return (await this.mining.findOne({ _id: collectionId }))?.version ?? 0;
  }

  /**
   * One conditional update of one document: atomic in MongoDB, and in the embedded store, which
   * applies a collection's updates one at a time; so of racing claims at most one succeeds. The
   * epoch counts the claims, so each holder's is larger than every earlier one's whatever the
   * processes' clocks say (every change claims the lease, from any process); time only decides
   * when an unreleased lease has lapsed.
   */
  async claimMineLease(scope: GraphScope): Promise<number | null> {
    const now = new Date();
    const claimed = await this.mining.findOneAndUpdate(
      { _id: scope.collectionId, $or: [{ mining_until: { $exists: false } }, { mining_until: { $lt: now } }] },
      { $inc: { mining_epoch: 1 }, $set: { mining_until: new Date(now.getTime() + MINE_LEASE_MS) } },
      { returnDocument: 'after', projection: { mining_epoch: 1 } },
    );
    return claimed?.mining_epoch ?? null;
  }

  async renewMineLease(collectionId: string, epoch: number): Promise<boolean> {
    const renewed = await this.mining.updateOne(
      { _id: collectionId, mining_epoch: epoch },
      { $set: { mining_until: new Date(Date.now() + MINE_LEASE_MS) } },
    );
    return renewed.matchedCount === 1;
  }

  async releaseMineLease(collectionId: string, epoch: number): Promise<void> {
    await this.mining.updateOne({ _id: collectionId, mining_epoch: epoch }, { $set: { mining_until: new Date(0) } });
  }

  async owedMines(quietMs: number, limit: number): Promise<GraphScope[]> {
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
    return owed.map((row) => ({ tenantId: row.tenant_id, collectionId: row._id }));
  }

  // ---- reads --------------------------------------------------------------------------------

  async listInstances(
    scope: GraphScope,
    query: { patternId: string | null; includeUnpatterned: boolean; offset: number; limit: number },
  ): Promise<InstancePage> {
    const filter: Filter<ProcedureInstanceDoc> = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    if (query.patternId) filter.pattern_id = query.patternId;
    else if (!query.includeUnpatterned) filter.pattern_id = { $ne: null };
    const [items, total] = await Promise.all([
      this.instances.find(filter, { sort: { last_activity_at: -1, _id: 1 }, skip: query.offset, limit: query.limit }).toArray(),
      this.instances.countDocuments(filter),
    ]);
    return { items: items.map(fromStored<ProcedureInstance>), total };
  }

  /** An instance by its id, or the instance holding the trace with that id. */
  async findInstance(scope: GraphScope, id: string): Promise<ProcedureInstance | null> {
    const base = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    let found = await this.instances.findOne({ ...base, _id: id });
    if (!found) {
      const trace = await this.traces.findOne({ ...base, _id: id }, { projection: { instance_id: 1 } });
      if (trace?.instance_id) found = await this.instances.findOne({ ...base, _id: trace.instance_id });
    }
    return found ? fromStored<ProcedureInstance>(found) : null;
  }

  /** The newest `limit` traces of an instance, oldest first, and whether older ones were left out. */
  async history(scope: GraphScope, instanceId: string, limit: number): Promise<{ traces: ProcedureTrace[]; truncated: boolean }> {
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
        .map(fromStored<ProcedureTrace>),
      truncated: newestFirst.length > limit,
    };
  }

  async traceById(scope: GraphScope, id: string): Promise<ProcedureTrace | null> {
    const found = await this.traces.findOne({ tenant_id: scope.tenantId, collection_id: scope.collectionId, _id: id });
    return found ? fromStored<ProcedureTrace>(found) : null;
  }

  /** Siblings in the same pattern, closest to it first, then most recent. */
  async similarInstances(scope: GraphScope, instance: ProcedureInstance, limit: number): Promise<ProcedureInstance[]> {
    if (!instance.pattern_id || limit === 0) return [];
    const siblings = await this.instances
      .find(
        { tenant_id: scope.tenantId, collection_id: scope.collectionId, pattern_id: instance.pattern_id, _id: { $ne: instance.id } },
        { sort: { pattern_distance: 1, last_activity_at: -1, _id: 1 }, limit },
      )
      .toArray();
    return siblings.map(fromStored<ProcedureInstance>);
  }

  async listPatterns(scope: GraphScope, offset: number, limit: number): Promise<{ items: ProcedurePattern[]; total: number }> {
    const filter = { tenant_id: scope.tenantId, collection_id: scope.collectionId };
    const [items, total] = await Promise.all([
      this.patterns.find(filter, { sort: { confidence: -1, _id: 1 }, skip: offset, limit }).toArray(),
      this.patterns.countDocuments(filter),
    ]);
    return { items: items.map(fromStored<ProcedurePattern>), total };
  }

  async findPattern(scope: GraphScope, id: string): Promise<ProcedurePattern | null> {
    const found = await this.patterns.findOne({ tenant_id: scope.tenantId, collection_id: scope.collectionId, _id: id });
    return found ? fromStored<ProcedurePattern>(found) : null;
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
