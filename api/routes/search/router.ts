import Router from '@koa/router';
import { AppError } from '../../../core/errors.js';
import type { SignalName } from '../../../search/fusion.js';
import { parseSignals } from '../../../services/search.js';
import type { ApiDeps, AppState } from '../../context.js';
import { validate } from '../../middleware/validate.js';
import { presentSearch } from './presenter.js';
import { searchBody, type SearchBody } from './schema.js';

export function searchRouter({ services, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/memories' });

  router.post('/search', validate({ body: searchBody }), async (ctx) => {
    const body = ctx.state.input.body as SearchBody;
    if (!body.collection_ids) {
      throw new AppError(501, 'device_mode_unavailable', 'Device memory search (snapshot, snapshot_ref) is not available in this release');
    }
    const outcome = await services.search.search(ctx.state.principal, {
      query: body.query,
      collectionIds: body.collection_ids,
      limit: body.limit ?? config.SEARCH_DEFAULT_LIMIT,
      signals: parseSignals(body.signals as SignalName[] | undefined),
      trackAccess: body.track_access ?? true,
      filters: {
        metadata: body.metadata_filters ?? {},
        ...(body.created_after ? { createdAfter: body.created_after } : {}),
        ...(body.created_before ? { createdBefore: body.created_before } : {}),
        ...(body.kind ? { kind: body.kind } : {}),
      },
    });
    ctx.body = { results: presentSearch(body.query, outcome) };
  });

  return router;
}
