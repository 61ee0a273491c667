/**
 * Presigned uploads. POST /v1/uploads (API key) issues a URL; PUT on that URL carries no API key,
 * its signature is the credential. The PUT router is mounted ahead of the JSON body parser so
 * the body stays a stream (it goes straight into GridFS).
 */
import Router from '@koa/router';
import type { ApiDeps, AppState } from '../../context.js';
import type { AuthFailures } from '../../../core/auth-failures.js';
import { chargeCredentialFailures } from '../../middleware/auth.js';
import { handle } from '../../middleware/validate.js';
import { createUploadBody, signedUrlQuery, uploadIdParams } from './schema.js';

export function uploadsRouter({ services, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/uploads' });
  router.post(
    '/',
    handle({ body: createUploadBody }, async (ctx, input) => {
      const body = input.body;
      const { upload, path } = await services.uploads.issue(ctx.state.principal.tenantId, body);
      ctx.status = 201;
      ctx.body = {
        results: {
          upload_id: upload.id,
          upload_url: `${config.PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}`}${path}`,
          method: 'PUT',
          headers: { 'Content-Type': upload.media_type },
          expires_at: upload.expires_at.toISOString(),
          size: upload.size,
        },
      };
    }),
  );
  return router;
}

/** A bad signature is a failed credential: charged like a bad API key (429 past the burst). */
const SIGNATURE_FAILURES: ReadonlySet<string> = new Set(['invalid_upload_signature']);

export function signedUploadRouter({ services }: ApiDeps, failures: AuthFailures): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/uploads' });
  router.put(
    '/:upload_id',
    chargeCredentialFailures(failures, SIGNATURE_FAILURES),
    handle({ params: uploadIdParams, query: signedUrlQuery }, async (ctx, input) => {
      const { upload_id } = input.params;
      const { expires, signature } = input.query;
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
    }),
  );
  return router;
}
