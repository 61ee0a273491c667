/**
 * The events facts that change over time put on the durable log (docs/events.md): a
 * `fact_superseded` when a memory's facts supersede others, and a `fact_restored` when removing a
 * memory's rows (a delete, a memory leaving a collection, a failed run taking back what it wrote)
 * undoes a supersession. Both are computed by replaying the subjects' rows with and without the
 * memory (core/fact-timeline.ts); nothing about validity is stored beyond the rows.
 */
import type { PredicateClassifier } from '../core/fact-lexicon.js';
import type { RemovedFromGraph } from '../core/fact-event-redaction.js';
import { deletionChanges, newSupersessions, type Supersession, type TimelineFact, type ValidityRow } from '../core/fact-timeline.js';
import type { GraphScope } from '../core/graph-model.js';
import type { EventLog } from './events.js';
import type { GraphRepository } from './graph.js';
import type { IndexChangeFeed } from './index-changes.js';

export class FactEvents {
  constructor(
    private readonly graph: Pick<GraphRepository, 'subjectTimelines' | 'subjectsBackedBy' | 'removeMemories' | 'removeChunkProvenance'>,
    private readonly events: Pick<EventLog, 'append' | 'redactFactEvents'>,
    private readonly indexChanges: Pick<IndexChangeFeed, 'publishGraphRefresh'>,
    private readonly classifier: PredicateClassifier,
  ) {}

  /**
   * One `fact_superseded` per supersession `memoryId`'s facts brought about among `subjectIds`,
   * in validity order. A retried stage may append one twice: delivery is at least once, and
   * (old_fact_id, new_fact_id, superseded_at) identifies it.
   */
  async announceSupersessions(scope: GraphScope, memoryId: string, subjectIds: string[], predicates?: string[]): Promise<void> {
    // Only the timelines the memory's predicates take part in (their classes and those tied to
    // them): a subject's other facts cannot change, and reading them grew with its history.
    const only = predicates ? this.classifier.timelinePredicates(predicates) : undefined;
    if (only === null) return;
    const { facts, names } = await this.graph.subjectTimelines(scope, subjectIds, only);
    await this.appendSuperseded(scope, newSupersessions(facts, memoryId, this.classifier), facts, names);
  }

  /**
   * Removes `tenantId`'s memories' graph rows (in `onlyCollections` when given), announcing first
   * what that changes: a `fact_restored` per supersession undone whose old fact holds again, and a
   * `fact_superseded` per supersession the removal brings about. Announcing before removing makes
   * a crash in between repeat the events on the retry rather than lose them. The fact events that
   * describe what the removal takes out of the graph are redacted (core/fact-event-redaction.ts).
   * Then a `refresh_graph` notice names the entities and facts other memories still mention,
   * whose records the removal rewrote (GraphRepository.removeMemories): a search process may have
   * read them mid-rewrite, or never held the memory to know which they are, and reads them again.
   * Every removal of graph rows comes through here, so none can leave a stale name searchable.
   */
  async removeMemories(tenantId: string, memoryIds: string[], onlyCollections?: string[]): Promise<void> {
    if (memoryIds.length === 0) return;
    const removed = new Set(memoryIds);
    await this.removeRows(
      tenantId,
      memoryIds,
      onlyCollections,
      undefined,
      (row) => removed.has(row.memoryId),
      () => this.graph.removeMemories(memoryIds, onlyCollections),
    );
  }

  /**
   * The same for the rows of one memory's chunks from `fromChunk` on, in the named collections:
   * what a failed append wrote. A supersession it had announced is undone by a `fact_restored`.
   */
  async removeChunkRows(tenantId: string, memoryId: string, collectionIds: string[], fromChunk: number): Promise<void> {
    await this.removeRows(
      tenantId,
      [memoryId],
      collectionIds,
      fromChunk,
      (row) => row.memoryId === memoryId && (row.chunkIndex ?? 0) >= fromChunk,
      () => this.graph.removeChunkProvenance(memoryId, collectionIds, fromChunk),
    );
  }

  private async removeRows(
    tenantId: string,
    memoryIds: string[],
    onlyCollections: string[] | undefined,
    fromChunk: number | undefined,
    isRemoved: (row: ValidityRow) => boolean,
    remove: () => Promise<string[]>,
  ): Promise<void> {
    // Whole memories leave the collections they are removed from; a failed append's memory stays.
    const wholeMemories = fromChunk === undefined ? new Set(memoryIds) : new Set<string>();
    const redactions = new Map<string, Map<string, RemovedFromGraph>>();
    for (const { scope, subjectIds } of await this.graph.subjectsBackedBy(memoryIds, onlyCollections, fromChunk)) {
      const { facts, names } = await this.graph.subjectTimelines(scope, subjectIds);
      const { restored, superseded, goneFacts } = deletionChanges(facts, isRemoved, this.classifier);
      const byId = new Map(facts.map((fact) => [fact.id, fact]));
      for (const change of restored) {
        const old = byId.get(change.oldFactId)!;
        // Only what survives the removal is named: the restored fact's subject and object are
        // stated by other rows; the newer fact and its time only while a row still states it.
        const newer = goneFacts.has(change.newFactId) ? {} : { new_fact_id: change.newFactId, superseded_at: change.at.toISOString() };
        await this.events.append('fact_restored', scope.tenantId, scope.collectionId, {
          ...oldFactFields(change, old, names),
          ...newer,
          valid_to: change.validTo?.toISOString() ?? null,
        });
      }
      await this.appendSuperseded(scope, superseded, facts, names);
      const perTenant = redactions.get(scope.tenantId) ?? new Map<string, RemovedFromGraph>();
      perTenant.set(scope.collectionId, { facts: goneFacts, memories: wholeMemories });
      redactions.set(scope.tenantId, perTenant);
    }
    // Before the rows go (a crash after it finds them again on the retry), and once more after:
    // an event another memory's ingestion appended meanwhile may name a fact that is going.
    const redact = async () => {
      for (const [tenantId, removed] of redactions) await this.events.redactFactEvents(tenantId, removed);
    };
    await redact();
    const rewritten = await remove();
    await redact();
    await this.indexChanges.publishGraphRefresh(tenantId, memoryIds[0]!, rewritten);
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
