/** Procedure traces for tests of derivation and mining (unit tests over arrays, e2e over the store). */
import type { GraphScope } from '../../core/graph-model.js';
import type { ProcedureDerivation } from '../../core/procedures/derivation.js';
import type { NewTrace } from '../../core/procedures/rules.js';

const DAY = 86_400_000;

/**
 * One memory's traces: one step per verb class, each naming `caseKey` (so one instance per key),
 * a second apart from `at`.
 */
export function caseTraces(steps: string[], caseKey: string, at: Date): NewTrace[] {
  return steps.map((verbClass, seq) => ({
    chunkIndex: 0,
    seq,
    verbClass: verbClass as NewTrace['verbClass'],
    verbLemma: verbClass,
    description: `${verbClass} ${caseKey}`,
    occurredAt: new Date(at.getTime() + seq * 1000),
    occurredAtSource: 'memory_time',
    extractionConfidence: 0.8,
    actingEntityIds: [],
    affectedEntityIds: [],
    subject: caseKey,
    caseKeys: [caseKey],
    beforeState: null,
    afterState: `${caseKey} ${verbClass}`,
    factIds: [],
  }));
}

/**
 * `count` memories `claim-0`, `claim-1`, … of one expense claim each (submit, review, approve under
 * the claim's own case key: one instance each, one signature), a day apart from `at`.
 */
export async function addClaims(derivation: ProcedureDerivation, scope: GraphScope, count: number, at: Date): Promise<void> {
  for (let i = 0; i < count; i++) {
    await derivation.replaceMemoryTraces(
      scope,
      `claim-${i}`,
      new Date(at.getTime() + i * DAY),
      caseTraces(['submit', 'review', 'approve'], `claim ${i}`, at),
    );
  }
}
