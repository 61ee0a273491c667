/** Procedure traces for tests of derivation and mining (unit tests over arrays, e2e over the store). */
import type { NewTrace } from '../../core/procedures/rules.js';

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
