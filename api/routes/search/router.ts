import Router from '@koa/router';
import { AppError } from '../../../core/errors.js';
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
    const outcome = await services.search.search(ctx.state.principal.tenantId, {
      query: body.query,
      collectionIds: body.collection_ids,
      limit: body.limit ?? config.SEARCH_DEFAULT_LIMIT,
    });
    ctx.body = { results: presentSearch(body.query, outcome) };
  });

  return router;
}
