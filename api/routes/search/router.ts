import Router from '@koa/router';
import { parseSignals } from '../../../services/search.js';
import type { ApiDeps, AppState } from '../../context.js';
import { handle } from '../../middleware/validate.js';
import { assertSnapshotBodySize, inlineSnapshot } from '../device-memory/presenter.js';
import { presentSearch } from './presenter.js';
import { searchBody } from './schema.js';

export function searchRouter({ services, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/memories' });

  router.post(
    '/search',
    handle({ body: searchBody }, async (ctx, input) => {
      const body = input.body;
      const validity = { asOf: body.as_of ?? null, includeHistory: body.include_history ?? false };
      if (!body.collection_ids) {
        if (body.snapshot !== undefined) assertSnapshotBodySize(ctx, config.SNAPSHOT_MAX_BYTES);
        const source = body.snapshot_ref ? { snapshotRef: body.snapshot_ref } : inlineSnapshot(ctx, body.snapshot!);
        ctx.body = {
          results: await services.deviceMemory.search(ctx.state.principal.tenantId, source, body.query, validity, ctx.state.signal),
        };
        return;
      }
      const outcome = await services.search.search(ctx.state.principal, {
        query: body.query,
        collectionIds: body.collection_ids,
        limit: body.limit ?? config.SEARCH_DEFAULT_LIMIT,
        signals: parseSignals(body.signals),
        trackAccess: body.track_access ?? true,
        filters: {
          metadata: body.metadata_filters ?? [],
          ...(body.created_after ? { createdAfter: body.created_after } : {}),
          ...(body.created_before ? { createdBefore: body.created_before } : {}),
          ...(body.kind ? { kind: body.kind } : {}),
        },
        validity,
      });
      ctx.body = { results: presentSearch(body.query, outcome) };
    }),
  );

  return router;
}
