/** Device memory: snapshot export and import, and the keys that verify snapshot signatures. */
import Router from '@koa/router';
import type { ApiDeps, AppState } from '../../context.js';
import { handle } from '../../middleware/validate.js';
import { assertSnapshotBodySize, inlineSnapshot, respondWithSnapshot } from './presenter.js';
import { exportBody, importBody } from './schema.js';

export function deviceMemoryRouter({ services, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/device-memory' });

  router.post(
    '/snapshot/export',
    handle({ body: exportBody }, async (ctx, { body }) => {
      const outcome = await services.deviceMemory.exportSnapshot(
        ctx.state.principal.tenantId,
        body.collection_id,
        body.destination,
        ctx.state.signal,
      );
      respondWithSnapshot(ctx, outcome, false);
    }),
  );

  router.post(
    '/snapshot/import',
    handle({ body: importBody }, async (ctx, { body }) => {
      if (body.snapshot !== undefined) assertSnapshotBodySize(ctx, config.SNAPSHOT_MAX_BYTES);
      const source = body.snapshot_ref ? { snapshotRef: body.snapshot_ref } : inlineSnapshot(ctx, body.snapshot!);
      const imported = await services.deviceMemory.importSnapshot(ctx.state.principal.tenantId, source, ctx.state.signal);
      ctx.status = 201;
      ctx.set('Location', `/v1/collections/${imported.ephemeralCollectionId}`);
      ctx.body = { results: { ephemeral_collection_id: imported.ephemeralCollectionId, expires_at: imported.expiresAt.toISOString() } };
    }),
  );

  router.get('/signing-keys', async (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = await services.deviceMemory.publicKeys();
  });

  return router;
}
