/** GET /v1/workflows(/{instance_id}) and GET /v1/workflow-patterns(/{pattern_id}): read-only, per collection. */
import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiDeps, AppState } from '../../context.js';
import { handle } from '../../middleware/validate.js';
import { listEnvelope } from '../envelope.js';
import { presentInstanceDetail, presentInstanceSummary, presentPatternDetail, presentPatternSummary } from './presenter.js';
import { instanceParams, instanceQuery, listInstancesQuery, listPatternsQuery, patternParams, patternQuery } from './schema.js';

export function workflowsRouter({ services }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1' });
  const { procedures } = services;

  // Without a graph read backend every procedure read is 503, whatever its parameters.
  const available: Middleware<AppState> = async (_ctx, next) => {
    procedures.assertAvailable();
    await next();
  };

  router.get(
    '/workflows',
    available,
    handle({ query: listInstancesQuery }, async (ctx, { query }) => {
      const page = await procedures.listInstances(ctx.state.principal.tenantId, {
        collectionId: query.collection_id,
        patternId: query.pattern_id ?? null,
        includeUnpatterned: query.include_unpatterned,
        offset: query.offset,
        limit: query.limit,
      });
      ctx.body = listEnvelope(page, presentInstanceSummary);
    }),
  );

  router.get(
    '/workflows/:instance_id',
    available,
    handle({ params: instanceParams, query: instanceQuery }, async (ctx, { params, query }) => {
      const detail = await procedures.getInstance(ctx.state.principal.tenantId, params.instance_id, {
        collectionId: query.collection_id,
        historyLimit: query.history_limit,
        similarLimit: query.similar_limit,
      });
      ctx.body = { results: presentInstanceDetail(detail) };
    }),
  );

  router.get(
    '/workflow-patterns',
    available,
    handle({ query: listPatternsQuery }, async (ctx, { query }) => {
      const { collection_id: collectionId, offset, limit } = query;
      ctx.body = listEnvelope(
        await procedures.listPatterns(ctx.state.principal.tenantId, { collectionId, offset, limit }),
        presentPatternSummary,
      );
    }),
  );

  router.get(
    '/workflow-patterns/:pattern_id',
    available,
    handle({ params: patternParams, query: patternQuery }, async (ctx, { params, query }) => {
      const detail = await procedures.getPattern(ctx.state.principal.tenantId, params.pattern_id, {
        collectionId: query.collection_id,
        instanceOffset: query.instance_offset,
        instanceLimit: query.instance_limit,
      });
      ctx.body = { results: presentPatternDetail(detail) };
    }),
  );

  return router;
}
