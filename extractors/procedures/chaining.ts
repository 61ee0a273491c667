/**
 * The chaining rule: which procedure traces form one observed execution (a procedure instance).
 *
 *   1. Narrative continuation. Inside one memory, traces are read in order (chunk, then sentence);
 *      each continues the chain before it: a conversation or a document tells one procedure.
 *   2. Case identifiers split and join. A trace whose subject carries an identifier ("order 1182",
 *      "ticket #4521") belongs to that case's chain: inside a memory, a trace naming a different
 *      case than the current chain starts (or returns to) that case's chain; traces without an
 *      identifier continue the current chain.
 *   3. Across memories, chains sharing a case identifier are one instance (union–find), so "order
 *      1182 shipped" in one conversation continues "I ordered 1182" in another.
 *   4. Across memories without a case identifier, the same subject continues an open chain. A
 *      chain whose traces carry no case identifier, and whose first trace f names a subject
 *      ("expense report"), continues the most recent instance that acted on that subject before f
 *      and, at f, stands at a trace h of another memory at most SUBJECT_CHAIN_WINDOW_MS older,
 *      where f's verb class can follow h's (lexicon.ts `canFollow`: a later stage, h neither
 *      completed nor cancelled). So "the manager approved the expense report" continues "I
 *      submitted the expense report" told a day before, while a second "I submitted the expense
 *      report" starts a new instance. Chains are considered in order, so a continuation can itself
 *      be continued. The result depends only on the traces given (in any order); the store gives
 *      it a change's subject neighbours (core/procedures/derivation.ts `subjectNeighbours`).
 *
 * An instance's traces are ordered by (memory time, memory id, position in the memory); its id is
 * the id of its first (root) trace. Deleting a memory re-runs the rule over what is left, which
 * can shrink, re-root or split an instance.
 */

import { canFollow } from './lexicon.js';

/** How far back (memory time) rule 4 looks for the chain a subject continues: two weeks. */
export const SUBJECT_CHAIN_WINDOW_MS = 14 * 86_400_000;

/**
 * Rule 3's cap: a case key named in more memories than this is too common to identify one case
 * ("order 1182" recurs; a key in hundreds of memories is boilerplate or a mis-read), so it joins
 * none of them. Bounds an instance's size and the re-chaining work per change.
 */
export const MAX_CASE_MEMORIES = 200;

export interface ChainTrace {
  id: string;
  memoryId: string;
  /** The memory's time in ms: orders chains of different memories. */
  memoryTime: number;
  /** Position in the memory. */
  seq: number;
  caseKeys: string[];
  /** What the step acted on ("expense report"), '' when unknown (rule 4). */
  subject: string;
  verbClass: string;
}

export interface ChainedInstance {
  /** The root trace's id. */
  id: string;
  /** Ordered, root first. */
  traceIds: string[];
}

export const compareTraces = (a: ChainTrace, b: ChainTrace): number =>
  a.memoryTime - b.memoryTime || (a.memoryId < b.memoryId ? -1 : a.memoryId > b.memoryId ? 1 : 0) || a.seq - b.seq;

class UnionFind {
  private readonly parent = new Map<number, number>();
  find(x: number): number {
    let root = x;
    while ((this.parent.get(root) ?? root) !== root) root = this.parent.get(root)!;
    let node = x;
    while (node !== root) {
      const next = this.parent.get(node) ?? node;
      this.parent.set(node, root);
      node = next;
    }
    return root;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(Math.max(ra, rb), Math.min(ra, rb));
  }
}

/** Applies the chaining rule to a set of traces (whole memories; see the module comment). */
export function chainTraces(traces: ChainTrace[]): ChainedInstance[] {
  const sorted = withoutCommonKeys(traces).sort(compareTraces);
  // Segments: chains inside one memory (rules 1 and 2).
  const segmentOf = new Map<string, number>();
  const segmentKeys: Set<string>[] = [];
  let memory: string | null = null;
  let current = -1;
  let memorySegments: number[] = [];
  for (const trace of sorted) {
    if (trace.memoryId !== memory) {
      memory = trace.memoryId;
      memorySegments = [];
      current = -1;
    }
    const keys = trace.caseKeys;
    if (current >= 0 && (keys.length === 0 || segmentKeys[current]!.size === 0 || keys.some((key) => segmentKeys[current]!.has(key)))) {
      for (const key of keys) segmentKeys[current]!.add(key);
    } else {
      const earlier = memorySegments.find((segment) => keys.some((key) => segmentKeys[segment]!.has(key)));
      if (earlier !== undefined) current = earlier;
      else {
        current = segmentKeys.length;
        segmentKeys.push(new Set(keys));
        memorySegments.push(current);
      }
      for (const key of keys) segmentKeys[current]!.add(key);
    }
    segmentOf.set(trace.id, current);
  }
  // Rule 3: segments sharing a case key are one instance.
  const unions = new UnionFind();
  const firstWithKey = new Map<string, number>();
  segmentKeys.forEach((keys, segment) => {
    for (const key of keys) {
      const first = firstWithKey.get(key);
      if (first === undefined) firstWithKey.set(key, segment);
      else unions.union(first, segment);
    }
  });
  const byRoot = new Map<number, ChainTrace[]>();
  for (const trace of sorted) {
    const root = unions.find(segmentOf.get(trace.id)!);
    const list = byRoot.get(root) ?? [];
    list.push(trace);
    byRoot.set(root, list);
  }
  // Rule 4, chains in order of their first trace (Map order is that of the sorted traces).
  const chains: ChainTrace[][] = [];
  const bySubject = new Map<string, ChainTrace[][]>();
  for (const group of byRoot.values()) {
    const first = group[0]!;
    const target = group.every((trace) => trace.caseKeys.length === 0) ? continued(first, bySubject.get(first.subject) ?? []) : null;
    if (target) {
      target.push(...group);
      target.sort(compareTraces);
    } else chains.push(group);
    const chain = target ?? group;
    for (const subject of new Set(group.map((trace) => trace.subject))) {
      if (subject === '') continue;
      const list = bySubject.get(subject) ?? [];
      if (!list.includes(chain)) list.push(chain);
      bySubject.set(subject, list);
    }
  }
  return chains.map((chain) => ({ id: chain[0]!.id, traceIds: chain.map((trace) => trace.id) }));
}

/** The traces with every case key named in more than MAX_CASE_MEMORIES memories dropped (rule 3's cap). */
function withoutCommonKeys(traces: ChainTrace[]): ChainTrace[] {
  const memoriesOf = new Map<string, Set<string>>();
  for (const trace of traces) {
    for (const key of trace.caseKeys) {
      const memories = memoriesOf.get(key) ?? new Set<string>();
      memories.add(trace.memoryId);
      memoriesOf.set(key, memories);
    }
  }
  const common = new Set([...memoriesOf].filter(([, memories]) => memories.size > MAX_CASE_MEMORIES).map(([key]) => key));
  if (common.size === 0) return [...traces];
  return traces.map((trace) => ({ ...trace, caseKeys: trace.caseKeys.filter((key) => !common.has(key)) }));
}

/** The chain an unnumbered chain starting at `first` continues under rule 4, if any. */
function continued(first: ChainTrace, candidates: ChainTrace[][]): ChainTrace[] | null {
  if (first.subject === '') return null;
  let best: { chain: ChainTrace[]; at: ChainTrace } | null = null;
  for (const chain of candidates) {
    // Where the chain stands when `first` is told: its latest earlier trace. The subject may have
    // been named a step before ("trained Bob on the onboarding plan" acts on Bob).
    const earlier = chain.filter((trace) => compareTraces(trace, first) < 0);
    const at = earlier[earlier.length - 1];
    if (!at || at.memoryId === first.memoryId || !earlier.some((trace) => trace.subject === first.subject)) continue;
    if (first.memoryTime - at.memoryTime > SUBJECT_CHAIN_WINDOW_MS || !canFollow(at.verbClass, first.verbClass)) continue;
    if (!best || compareTraces(at, best.at) > 0) best = { chain, at };
  }
  return best?.chain ?? null;
}
