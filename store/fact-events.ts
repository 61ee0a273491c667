/**
 * The events facts that change over time put on the durable log (docs/events.md): a
 * `fact_superseded` when a memory's facts supersede others, and a `fact_restored` when removing a
 * memory's rows (a delete, a memory leaving a collection, a failed run taking back what it wrote)
 * undoes a supersession. Both are computed by replaying the subjects' rows with and without the
 * memory (core/fact-timeline.ts); nothing about validity is stored beyond the rows.
 */
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import { deletionChanges, newSupersessions, type Supersession, type TimelineFact } from '../core/fact-timeline.js';
import type { GraphScope } from '../core/graph-model.js';
import type { EventLog } from './events.js';
import type { GraphRepository } from './graph.js';

export class FactEvents {
  constructor(
    private readonly graph: GraphRepository,
    private readonly events: EventLog,
    private readonly classifier: PredicateClassifier,
  ) {}

  /**
   * One `fact_superseded` per supersession `memoryId`'s facts brought about among `subjectIds`,
   * in validity order. A retried stage may append one twice: delivery is at least once, and
   * (old_fact_id, new_fact_id, superseded_at) identifies it.
   */
  async announceSupersessions(scope: GraphScope, memoryId: string, subjectIds: string[]): Promise<void> {
    const { facts, names } = await this.graph.subjectTimelines(scope, subjectIds);
    await this.appendSuperseded(scope, newSupersessions(facts, memoryId, this.classifier), facts, names);
  }

  /**
   * Removes the memories' graph rows (in `onlyCollections` when given), announcing first what that
   * changes: a `fact_restored` per supersession undone whose old fact holds again, and a
   * `fact_superseded` per supersession the removal brings about. Announcing before removing makes
   * a crash in between repeat the events on the retry rather than lose them.
   */
  async removeMemories(memoryIds: string[], onlyCollections?: string[]): Promise<void> {
    const removed = new Set(memoryIds);
    for (const { scope, subjectIds } of await this.graph.subjectsBackedBy(memoryIds, onlyCollections)) {
      const { facts, names } = await this.graph.subjectTimelines(scope, subjectIds);
      const { restored, superseded } = deletionChanges(facts, removed, this.classifier);
      const byId = new Map(facts.map((fact) => [fact.id, fact]));
      for (const change of restored) {
        const old = byId.get(change.oldFactId)!;
        // Only what survives the delete is named: the restored fact's subject and object are
        // stated by other memories; of the newer fact only its id is given (its memory is gone).
        await this.events.append('fact_restored', scope.tenantId, scope.collectionId, {
          ...oldFactFields(change, old, names),
          new_fact_id: change.newFactId,
          superseded_at: change.at.toISOString(),
          valid_to: change.validTo?.toISOString() ?? null,
        });
      }
      await this.appendSuperseded(scope, superseded, facts, names);
    }
    await this.graph.removeMemories(memoryIds, onlyCollections);
  }

  private async appendSuperseded(
    scope: GraphScope,
    changes: Supersession[],
    facts: TimelineFact[],
    names: Map<string, string>,
  ): Promise<void> {
    const byId = new Map(facts.map((fact) => [fact.id, fact]));
    for (const change of changes) {
      const old = byId.get(change.oldFactId)!;
      const replacement = byId.get(change.newFactId)!;
      await this.events.append('fact_superseded', scope.tenantId, scope.collectionId, {
        ...oldFactFields(change, old, names),
        new_fact_id: replacement.id,
        new_predicate: replacement.predicate,
        new_object_id: replacement.objectId,
        new_object: names.get(replacement.objectId) ?? '',
        superseded_at: change.at.toISOString(),
      });
    }
  }
}

/** What fact_superseded and fact_restored both say: the memory, the class and the older fact, named. */
function oldFactFields(
  change: { memoryId: string; className: string },
  old: TimelineFact,
  names: Map<string, string>,
): Record<string, string> {
  return {
    memory_id: change.memoryId,
    predicate_class: change.className,
    subject_id: old.subjectId,
    subject: names.get(old.subjectId) ?? '',
    predicate: old.predicate,
    old_fact_id: old.id,
    old_object_id: old.objectId,
    old_object: names.get(old.objectId) ?? '',
  };
}
