/**
 * The chaining rule: which procedure traces form one observed execution (a workflow instance).
 *
 *   1. Narrative continuation. Inside one memory, traces are read in order (chunk, then sentence);
 *      each continues the chain before it: a conversation or a document tells one procedure.
 *   2. Case identifiers split and join. A trace whose subject carries an identifier ("order 1182",
 *      "ticket #4521") belongs to that case's chain: inside a memory, a trace naming a different
 *      case than the current chain starts (or returns to) that case's chain; traces without an
 *      identifier continue the current chain.
 *   3. Across memories, chains sharing a case identifier are one instance (union–find), so "order
 *      1182 shipped" in one conversation continues "I ordered 1182" in another.
 *
 * An instance's traces are ordered by (memory time, memory id, position in the memory); its id is
 * the id of its first (root) trace. Deleting a memory re-runs the rule over what is left, which
 * can shrink, re-root or split an instance.
 */

export interface ChainTrace {
  id: string;
  memoryId: string;
  /** The memory's time in ms: orders chains of different memories. */
  memoryTime: number;
  /** Position in the memory. */
  seq: number;
  caseKeys: string[];
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
  const sorted = [...traces].sort(compareTraces);
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
  const byRoot = new Map<number, string[]>();
  for (const trace of sorted) {
    const root = unions.find(segmentOf.get(trace.id)!);
    const list = byRoot.get(root) ?? [];
    list.push(trace.id);
    byRoot.set(root, list);
  }
  return [...byRoot.values()].map((traceIds) => ({ id: traceIds[0]!, traceIds }));
}
