import Router from '@koa/router';
import type { ApiDeps, AppState } from '../../context.js';
import { handle } from '../../middleware/validate.js';
import { listEnvelope } from '../envelope.js';
import { presentCollection } from './presenter.js';
import { collectionIdParams, collectionNameParams, createCollectionBody, listCollectionsQuery } from './schema.js';

export function collectionsRouter({ services }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/collections' });

  router.post(
    '/',
    handle({ body: createCollectionBody }, async (ctx, input) => {
      const body = input.body;
      const collection = await services.collections.create(ctx.state.principal.tenantId, body);
      ctx.status = 201;
      ctx.set('Location', `/v1/collections/${collection.id}`);
      ctx.body = { results: presentCollection(collection) };
    }),
  );

  router.get(
    '/',
    handle({ query: listCollectionsQuery }, async (ctx, input) => {
      const query = input.query;
      const page = await services.collections.list(ctx.state.principal.tenantId, query.offset, query.limit);
      ctx.body = listEnvelope(page, presentCollection);
    }),
  );

  router.get(
    '/by-name/:name',
    handle({ params: collectionNameParams }, async (ctx, input) => {
      const { name } = input.params;
      ctx.body = { results: presentCollection(await services.collections.getByName(ctx.state.principal.tenantId, name)) };
    }),
  );

  router.get(
    '/:collection_id',
    handle({ params: collectionIdParams }, async (ctx, input) => {
      const { collection_id } = input.params;
      ctx.body = { results: presentCollection(await services.collections.get(ctx.state.principal.tenantId, collection_id)) };
    }),
  );

  return router;
}
