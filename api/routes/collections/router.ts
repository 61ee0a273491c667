import Router from '@koa/router';
import type { z } from 'zod';
import type { ApiDeps, AppState } from '../../context.js';
import { validate } from '../../middleware/validate.js';
import { presentCollection } from './presenter.js';
import { collectionIdParams, collectionNameParams, createCollectionBody, listCollectionsQuery } from './schema.js';

export function collectionsRouter({ services }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/collections' });

  router.post('/', validate({ body: createCollectionBody }), async (ctx) => {
    const body = ctx.state.input.body as z.infer<typeof createCollectionBody>;
    const collection = await services.collections.create(ctx.state.principal.tenantId, body);
    ctx.status = 201;
    ctx.set('Location', `/v1/collections/${collection._id}`);
    ctx.body = { results: presentCollection(collection) };
  });

  router.get('/', validate({ query: listCollectionsQuery }), async (ctx) => {
    const query = ctx.state.input.query as z.infer<typeof listCollectionsQuery>;
    const { items, total } = await services.collections.list(ctx.state.principal.tenantId, query.offset, query.limit);
    ctx.body = { results: items.map(presentCollection), total_entries: total };
  });

  router.get('/by-name/:name', validate({ params: collectionNameParams }), async (ctx) => {
    const { name } = ctx.state.input.params as z.infer<typeof collectionNameParams>;
    ctx.body = { results: presentCollection(await services.collections.getByName(ctx.state.principal.tenantId, name)) };
  });

  router.get('/:collection_id', validate({ params: collectionIdParams }), async (ctx) => {
    const { collection_id } = ctx.state.input.params as z.infer<typeof collectionIdParams>;
    ctx.body = { results: presentCollection(await services.collections.get(ctx.state.principal.tenantId, collection_id)) };
  });

  return router;
}
