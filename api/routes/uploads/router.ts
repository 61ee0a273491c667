/**
 * Presigned uploads. POST /v1/uploads (API key) issues a URL; PUT on that URL carries no API key,
 * its signature is the credential. The PUT router is mounted ahead of the JSON body parser so
 * the body stays a stream (it goes straight into GridFS).
 */
import Router from '@koa/router';
import type { z } from 'zod';
import type { ApiDeps, AppState } from '../../context.js';
import { validate } from '../../middleware/validate.js';
import { createUploadBody, signedUrlQuery, uploadIdParams } from './schema.js';

export function uploadsRouter({ services, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/uploads' });
  router.post('/', validate({ body: createUploadBody }), async (ctx) => {
    const body = ctx.state.input.body as z.infer<typeof createUploadBody>;
    const { upload, path } = await services.uploads.issue(ctx.state.principal.tenantId, body);
    ctx.status = 201;
    ctx.body = {
      results: {
        upload_id: upload._id,
        upload_url: `${config.PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}`}${path}`,
        method: 'PUT',
        headers: { 'Content-Type': upload.media_type },
        expires_at: upload.expires_at.toISOString(),
        size: upload.size,
      },
    };
  });
  return router;
}

export function signedUploadRouter({ services }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/uploads' });
  router.put('/:upload_id', validate({ params: uploadIdParams, query: signedUrlQuery }), async (ctx) => {
    const { upload_id } = ctx.state.input.params as z.infer<typeof uploadIdParams>;
    const { expires, signature } = ctx.state.input.query as z.infer<typeof signedUrlQuery>;
    const length = ctx.get('Content-Length');
    const result = await services.uploads.receive(
      upload_id,
      expires,
      signature,
      ctx.get('Content-Type') || undefined,
      length ? Number(length) : undefined,
      ctx.req,
    );
    ctx.body = { results: { upload_id, size: result.size, sha256: result.sha256, status: 'uploaded' } };
  });
  return router;
}
