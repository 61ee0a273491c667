/**
 * The procedure bench (BENCH_ONLY=workflows: the scenario and its metrics are named after the
 * /v1/workflows reads): quality and speed of procedure-trace derivation,
 * chaining and pattern mining on generated procedural conversations with known answers
 * (generator.ts).
 *
 * Quality runs the same pure code the ingestion activity runs (the local structure extractor for
 * entities, then derivation, the chaining rule and the miner), per collection:
 *   workflow_pattern_precision / _recall   mined patterns against the planted processes
 *   workflow_planted_top_k_share            planted processes among the k most confident patterns
 *   workflow_instance_linking_accuracy      planted steps found in their case's instance
 *   workflow_position_accuracy              cases at the right {step, of} of the right pattern
 *   workflow_verb_class_accuracy            planted steps derived with their class
 *   workflow_small_talk_traces              traces found in small talk (should be 0)
 * Speed:
 *   workflow_derive_ms_per_memory           derivation of one conversation (pure)
 *   workflow_store_ms_per_memory_first/last storing a memory's traces (re-chaining and bounded
 *                                           re-mining included) at the start and at >= 10k traces
 *   workflow_mine_10k_traces_ms             a full re-mine of a collection of >= 10k traces (store;
 *                                           480 cases per process: ~10.4k traces, workflow_store_traces)
 *   workflow_mine_10k_traces_pure_ms        the miner alone on the same instances
 *   workflow_store_full_remines             full re-mines during that ingestion (bounded re-mining)
 * The stand-in scans for secondary-index queries (measured: a memory_id lookup costs 12 ms at 1k
 * rows and 28 ms at 10k), so the per-memory store figures grow with the collection there; on
 * MongoDB every query of store/procedures.ts is served by an index (docs/workflows.md).
 * BENCH_WORKFLOWS_SKIP_STORE=1 leaves out the store part (it boots a MongoDB stand-in of its own).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadEmbeddedMongoConfig } from '../../config/index.js';
import { freePort, startMongoStandin } from '../../dev/embedded.js';
import { chainTraces } from '../../extractors/procedures/chaining.js';
import { deriveTraces, type LinkableEntity, type TraceDraft } from '../../extractors/procedures/derive.js';
import { VERB_CLASSES } from '../../extractors/procedures/lexicon.js';
import { minePatterns, signatureOf, type MiningInstance } from '../../extractors/procedures/mining.js';
import { extractChunkStructure } from '../../extractors/structure/local-extractor.js';
import { connectDatabase } from '../../store/db.js';
import { ProcedureRepository } from '../../store/procedures.js';
import { ProcedureDerivation } from '../../core/procedures/derivation.js';
import { info, mean, metric, percentile } from '../stats.js';
import { generateCollections, PROCESSES, type BenchCollection, type BenchConversation } from './generator.js';

interface DerivedTrace extends TraceDraft {
  id: string;
  memoryId: string;
  memoryTime: number;
  /** Planted case of the step message it came from (null: not a step message). */
  caseId: string | null;
  plantedClass: string | null;
}

function deriveConversation(conversation: BenchConversation): { traces: DerivedTrace[]; ms: number } {
  const entities = new Map<string, LinkableEntity>();
  for (const message of conversation.messages) {
    for (const entity of extractChunkStructure(message.content, { speaker: message.role }).entities) {
      if (!entities.has(entity.key))
        entities.set(entity.key, { id: entity.key, key: entity.key, name: entity.name, aliases: entity.aliases });
    }
  }
  const started = performance.now();
  const drafts = deriveTraces({
    memoryTime: conversation.memoryTime,
    chunks: conversation.messages.map((message, index) => ({ index, text: message.content, role: message.role })),
    entities: [...entities.values()],
  });
  const ms = performance.now() - started;
  return {
    ms,
    traces: drafts.map((draft) => {
      const step = conversation.messages[draft.chunkIndex]?.step;
      return {
        ...draft,
        id: `${conversation.memoryId}#${draft.seq}`,
        memoryId: conversation.memoryId,
        memoryTime: conversation.memoryTime.getTime(),
        caseId: step ? conversation.caseId : null,
        plantedClass: step?.verbClass ?? null,
      };
    }),
  };
}

interface Scores {
  steps: number;
  classRight: number;
  smallTalkTraces: number;
  linkedTraces: number;
  linkedRight: number;
  mined: number;
  minedRight: number;
  planted: number;
  recovered: number;
  topK: number;
  processCases: number;
  positionRight: number;
  deriveMs: number[];
}

function scoreCollection(collection: BenchCollection, scores: Scores): void {
  const traces: DerivedTrace[] = [];
  for (const conversation of collection.conversations) {
    const derived = deriveConversation(conversation);
    scores.deriveMs.push(derived.ms);
    traces.push(...derived.traces);
    conversation.messages.forEach((message, index) => {
      const found = derived.traces.filter((trace) => trace.chunkIndex === index);
      if (message.step) {
        scores.steps++;
        if (found[0]?.verbClass === message.step.verbClass) scores.classRight++;
      } else {
        scores.smallTalkTraces += found.length;
      }
    });
  }

  const byId = new Map(traces.map((trace) => [trace.id, trace]));
  const instances = chainTraces(
    traces.map((trace) => ({
      id: trace.id,
      memoryId: trace.memoryId,
      memoryTime: trace.memoryTime,
      seq: trace.seq,
      caseKeys: trace.caseKeys,
      subject: trace.subject,
      verbClass: trace.verbClass,
    })),
  );
  const majorityCase = new Map<string, string | null>();
  const home = new Map<string, { instanceId: string; count: number }>();
  for (const instance of instances) {
    const counts = new Map<string, number>();
    for (const id of instance.traceIds) {
      const caseId = byId.get(id)!.caseId;
      if (caseId) counts.set(caseId, (counts.get(caseId) ?? 0) + 1);
    }
    const top = [...counts].sort((a, b) => b[1] - a[1])[0];
    majorityCase.set(instance.id, top?.[0] ?? null);
    for (const [caseId, count] of counts) {
      const best = home.get(caseId);
      if (!best || count > best.count) home.set(caseId, { instanceId: instance.id, count });
    }
  }
  for (const instance of instances) {
    for (const id of instance.traceIds) {
      const caseId = byId.get(id)!.caseId;
      if (!caseId) continue;
      scores.linkedTraces++;
      if (home.get(caseId)?.instanceId === instance.id && majorityCase.get(instance.id) === caseId) scores.linkedRight++;
    }
  }

  const mining: MiningInstance[] = instances.map((instance) => {
    const own = instance.traceIds.map((id) => byId.get(id)!);
    return {
      id: instance.id,
      signature: signatureOf(own.map((trace) => trace.verbClass)),
      lastActivityAt: Math.max(...own.map((trace) => trace.occurredAt.getTime())),
      evidence:
        own.filter((trace) => trace.actingEntityIds.length + trace.affectedEntityIds.length + trace.caseKeys.length > 0).length /
        own.length,
    };
  });
  const patterns = minePatterns(mining);
  const processOfInstance = (instanceId: string): string | null => {
    const caseId = majorityCase.get(instanceId);
    return caseId ? (collection.cases.get(caseId)?.process ?? null) : null;
  };
  const recovered = new Map<string, number>(); // process → pattern index
  patterns.forEach((pattern, index) => {
    const counts = new Map<string, number>();
    for (const member of pattern.members) {
      const process = processOfInstance(member.id);
      if (process) counts.set(process, (counts.get(process) ?? 0) + 1);
    }
    const top = [...counts].sort((a, b) => b[1] - a[1])[0];
    if (top && !recovered.has(top[0]) && top[1] * 2 > pattern.members.length) recovered.set(top[0], index);
  });
  scores.mined += patterns.length;
  scores.minedRight += recovered.size;
  scores.planted += collection.processes.length;
  scores.recovered += collection.processes.filter((process) => recovered.has(process)).length;
  const k = collection.processes.length;
  scores.topK += collection.processes.filter((process) => (recovered.get(process) ?? Infinity) < k).length;

  for (const planted of collection.cases.values()) {
    if (!planted.process) continue;
    scores.processCases++;
    const instanceId = home.get(planted.id)?.instanceId;
    const patternIndex = recovered.get(planted.process);
    if (instanceId === undefined || patternIndex === undefined) continue;
    const pattern = patterns[patternIndex]!;
    const member = pattern.members.find((candidate) => candidate.id === instanceId);
    const of = PROCESSES.find((process) => process.name === planted.process)!.steps.length;
    if (member && member.step === planted.lastTemplateStep && pattern.signature.length === of) scores.positionRight++;
  }
}

/**
 * The mine's cost where real documents take it: 10,000 instances with 5,000 distinct signatures
 * (each seen twice, so every one could seed a pattern), random chains of 3 to 8 steps.
 */
function mineManySignatures(): void {
  let state = 23;
  const next = () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
  const seen = new Set<string>();
  const signatures: string[][] = [];
  while (signatures.length < 5000) {
    const length = 3 + Math.floor(next() * 6);
    const signature: string[] = [];
    while (signature.length < length) {
      const verbClass = VERB_CLASSES[Math.floor(next() * VERB_CLASSES.length)]!;
      if (signature[signature.length - 1] !== verbClass) signature.push(verbClass);
    }
    if (!seen.has(signature.join(' '))) {
      seen.add(signature.join(' '));
      signatures.push(signature);
    }
  }
  const instances: MiningInstance[] = signatures.flatMap((signature, index) =>
    [0, 1].map((copy) => ({ id: `${index}-${copy}`, signature, lastActivityAt: copy, evidence: 0.5 })),
  );
  const cpu = process.cpuUsage();
  const started = performance.now();
  const patterns = minePatterns(instances);
  metric('workflow_mine_10k_traces_5k_signatures_ms', performance.now() - started, 'ms');
  metric('workflow_mine_10k_traces_5k_signatures_cpu_ms', process.cpuUsage(cpu).user / 1000, 'ms');
  info(`   mine of 10,000 instances with 5,000 distinct signatures: ${patterns.length} patterns`);
}

async function storeScenario(): Promise<void> {
  const [big] = generateCollections({
    collections: 1,
    processesPerCollection: 6,
    casesPerProcess: 480,
    oneOffs: 150,
    smallTalk: 100,
    seed: 7,
  });
  const conversations = big!.conversations;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'engram-bench-workflows-'));
  // The embedded store `npm run dev` uses (EMBEDDED_MONGO_BACKEND, default journal); BENCH_MONGO_BACKEND=memory|h2 compares.
  const settings = loadEmbeddedMongoConfig(process.env);
  const backend =
    process.env.BENCH_MONGO_BACKEND === 'memory' || process.env.BENCH_MONGO_BACKEND === 'h2'
      ? process.env.BENCH_MONGO_BACKEND
      : settings.EMBEDDED_MONGO_BACKEND;
  const mongo = await startMongoStandin({ dataDir, port: await freePort(), backend, heapMb: settings.EMBEDDED_MONGO_HEAP_MB });
  const database = await connectDatabase(mongo.uri, `bench_workflows_${Date.now().toString(36)}`);
  try {
    const repository = new ProcedureRepository(database.db);
    const procedures = new ProcedureDerivation(repository);
    await repository.ensureIndexes();
    const scope = { tenantId: 'bench-tenant', collectionId: 'bench-collection' };
    const perMemory: number[] = [];
    let traceCount = 0;
    for (const conversation of conversations) {
      const { traces } = deriveConversation(conversation);
      const started = performance.now();
      await procedures.replaceMemoryTraces(
        scope,
        conversation.memoryId,
        conversation.memoryTime,
        traces.map((trace) => ({ ...trace, factIds: [] })),
      );
      perMemory.push(performance.now() - started);
      traceCount += traces.length;
      if (perMemory.length % 500 === 0) {
        info(
          `   stored ${perMemory.length}/${conversations.length} memories, ${traceCount} traces; last 100 p50 ${percentile(perMemory.slice(-100), 50).toFixed(1)} ms`,
        );
      }
    }
    const window = 200;
    metric('workflow_store_traces', traceCount, 'traces');
    metric('workflow_store_ms_per_memory_first_200_p50', percentile(perMemory.slice(0, window), 50), 'ms');
    metric('workflow_store_ms_per_memory_last_200_p50', percentile(perMemory.slice(-window), 50), 'ms');
    metric('workflow_store_ms_per_memory_last_200_mean', mean(perMemory.slice(-window)), 'ms');
    metric('workflow_store_full_remines', procedures.fullMines, 'mines');
    const mineStarted = performance.now();
    const patterns = await procedures.mineCollection(scope);
    metric('workflow_mine_10k_traces_ms', performance.now() - mineStarted, 'ms');
    info(`   full re-mine of ${traceCount} traces: ${patterns} patterns`);

    const rows = await repository.instances.find({ tenant_id: scope.tenantId, collection_id: scope.collectionId }).toArray();
    const pureStarted = performance.now();
    minePatterns(
      rows.map((row) => ({
        id: row._id,
        signature: row.signature,
        lastActivityAt: row.last_activity_at.getTime(),
        evidence: row.evidence,
      })),
    );
    metric('workflow_mine_10k_traces_pure_ms', performance.now() - pureStarted, 'ms');
    metric('workflow_store_instances', rows.length, 'instances');
  } finally {
    await database.close();
    await mongo.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function procedureScenario(): Promise<void> {
  const collections = generateCollections({
    collections: 3,
    processesPerCollection: 4,
    casesPerProcess: 12,
    oneOffs: 10,
    smallTalk: 10,
    seed: 19,
  });
  const scores: Scores = {
    steps: 0,
    classRight: 0,
    smallTalkTraces: 0,
    linkedTraces: 0,
    linkedRight: 0,
    mined: 0,
    minedRight: 0,
    planted: 0,
    recovered: 0,
    topK: 0,
    processCases: 0,
    positionRight: 0,
    deriveMs: [],
  };
  for (const collection of collections) scoreCollection(collection, scores);
  const conversations = collections.reduce((sum, collection) => sum + collection.conversations.length, 0);
  info(
    `   ${collections.length} collections, ${conversations} conversations, ${scores.steps} planted steps, ${scores.planted} planted processes`,
  );
  metric('workflow_pattern_precision', scores.mined === 0 ? 0 : scores.minedRight / scores.mined, 'ratio');
  metric('workflow_pattern_recall', scores.recovered / scores.planted, 'ratio');
  metric('workflow_planted_top_k_share', scores.topK / scores.planted, 'ratio');
  metric('workflow_instance_linking_accuracy', scores.linkedRight / Math.max(1, scores.linkedTraces), 'ratio');
  metric('workflow_position_accuracy', scores.positionRight / Math.max(1, scores.processCases), 'ratio');
  metric('workflow_verb_class_accuracy', scores.classRight / Math.max(1, scores.steps), 'ratio');
  metric('workflow_small_talk_traces', scores.smallTalkTraces, 'traces');
  metric('workflow_derive_ms_per_memory', mean(scores.deriveMs), 'ms');
  metric('workflow_derive_ms_per_memory_p95', percentile(scores.deriveMs, 95), 'ms');
  mineManySignatures();
  if (process.env.BENCH_WORKFLOWS_SKIP_STORE !== '1') await storeScenario();
}
