/**
 * Procedure reads (GET /v1/workflows, /v1/workflow-patterns): observed instances and mined patterns
 * of one collection (docs/workflows.md).
 * Read-only; every read is scoped to a collection the caller's tenant owns (404 otherwise, the same
 * as a missing one). A deployment configured without a graph read backend answers 503.
 */
import { AppError, notFound } from '../core/errors.js';
import type { Store } from '../store/index.js';
import type { GraphScope } from '../store/graph.js';
import type { ProcedureInstance, ProcedurePattern, ProcedureTrace } from '../core/procedure-model.js';
import type { CollectionService } from './collections.js';

export interface StateView {
  nodeId: string;
  description: string;
  enteredAt: Date | null;
  entities: { id: string; name: string }[];
  facts: { id: string; predicate: string; subject: string; object: string; description: string }[];
}

export interface HistoryEntry {
  state: StateView;
  trace: ProcedureTrace | null;
}

export interface InstanceDetail {
  instance: ProcedureInstance;
  currentState: StateView;
  history: HistoryEntry[];
  historyTruncated: boolean;
  similar: ProcedureInstance[];
}

export interface PatternDetail {
  pattern: ProcedurePattern;
  instanceIds: string[];
  instanceIdsTotal: number;
}

export const graphReadBackendUnavailable = (): AppError =>
  new AppError(
    503,
    'graph_read_backend_unavailable',
    'Workflow reads are not available: this deployment has no graph read backend (GRAPH_READ_BACKEND=none)',
  );

export function createProcedureService(deps: { store: Store; collections: CollectionService; backend: 'mongodb' | 'none' }) {
  const { store, collections } = deps;

  async function scopeOf(tenantId: string, collectionId: string): Promise<GraphScope> {
    if (deps.backend === 'none') throw graphReadBackendUnavailable();
    await collections.assertReadable(tenantId, [collectionId], 'collection_id');
    return { tenantId, collectionId };
  }

  /** States with their members: entities and facts still in the collection's graph (a deleted one simply drops out). */
  async function statesOf(scope: GraphScope, traces: ProcedureTrace[]): Promise<StateView[]> {
    const facts = (await store.graph.factsByIds([...new Set(traces.flatMap((trace) => trace.fact_ids))])).filter(
      (fact) => fact.tenant_id === scope.tenantId && fact.collection_id === scope.collectionId,
    );
    const entityIds = new Set(traces.flatMap((trace) => [...trace.acting_entity_ids, ...trace.affected_entity_ids]));
    for (const fact of facts) entityIds.add(fact.subject_id).add(fact.object_id);
    const entities = new Map(
      (await store.graph.entitiesByIds([...entityIds]))
        .filter((entity) => entity.tenant_id === scope.tenantId && entity.collection_id === scope.collectionId)
        .map((entity) => [entity.id, entity.name]),
    );
    const factsById = new Map(facts.map((fact) => [fact.id, fact]));
    return traces.map((trace) => ({
      nodeId: trace.state_id,
      description: trace.after_state,
      enteredAt: trace.occurred_at,
      entities: [...new Set([...trace.acting_entity_ids, ...trace.affected_entity_ids])]
        .filter((id) => entities.has(id))
        .map((id) => ({ id, name: entities.get(id)! })),
      facts: trace.fact_ids.flatMap((id) => {
        const fact = factsById.get(id);
        if (!fact) return [];
        return [
          {
            id,
            predicate: fact.predicate,
            subject: entities.get(fact.subject_id) ?? fact.subject_id,
            object: entities.get(fact.object_id) ?? fact.object_id,
            description: fact.description,
          },
        ];
      }),
    }));
  }

  return {
    async listInstances(
      tenantId: string,
      query: { collectionId: string; patternId: string | null; includeUnpatterned: boolean; offset: number; limit: number },
    ) {
      const scope = await scopeOf(tenantId, query.collectionId);
      return store.procedureRecords.listInstances(scope, query);
    },

    async getInstance(
      tenantId: string,
      instanceOrTraceId: string,
      query: { collectionId: string; historyLimit: number; similarLimit: number },
    ): Promise<InstanceDetail> {
      const scope = await scopeOf(tenantId, query.collectionId);
      const instance = await store.procedureRecords.findInstance(scope, instanceOrTraceId);
      if (!instance) throw notFound('workflow_instance', instanceOrTraceId);
      const [history, current, similar] = await Promise.all([
        store.procedureRecords.history(scope, instance.id, query.historyLimit),
        store.procedureRecords.traceById(scope, instance.current_trace_id),
        store.procedureRecords.similarInstances(scope, instance, query.similarLimit),
      ]);
      const states = await statesOf(scope, current ? [...history.traces, current] : history.traces);
      const currentState: StateView = current
        ? states[states.length - 1]!
        : { nodeId: instance.id, description: instance.current_state_description, enteredAt: null, entities: [], facts: [] };
      return {
        instance,
        currentState,
        history: history.traces.map((trace, index) => ({ state: states[index]!, trace })),
        historyTruncated: history.truncated,
        similar,
      };
    },

    async listPatterns(tenantId: string, query: { collectionId: string; offset: number; limit: number }) {
      const scope = await scopeOf(tenantId, query.collectionId);
      return store.procedureRecords.listPatterns(scope, query.offset, query.limit);
    },

    async getPattern(
      tenantId: string,
      patternId: string,
      query: { collectionId: string; instanceOffset: number; instanceLimit: number },
    ): Promise<PatternDetail> {
      const scope = await scopeOf(tenantId, query.collectionId);
      const pattern = await store.procedureRecords.findPattern(scope, patternId);
      if (!pattern) throw notFound('workflow_pattern', patternId);
      const page = await store.procedureRecords.patternInstanceIds(scope, patternId, query.instanceOffset, query.instanceLimit);
      return { pattern, instanceIds: page.ids, instanceIdsTotal: page.total };
    },

    /** Router guard: answers 503 before validation when the deployment has no graph read backend. */
    assertAvailable(): void {
      if (deps.backend === 'none') throw graphReadBackendUnavailable();
    },
  };
}

export type ProcedureService = ReturnType<typeof createProcedureService>;
