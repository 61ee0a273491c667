/** Webhook subscriptions of the caller's tenant (docs/webhooks.md). Another tenant's ids answer 404. */
import Router from '@koa/router';
import type { ApiDeps, AppState } from '../../context.js';
import { handle } from '../../middleware/validate.js';
import { listEnvelope } from '../envelope.js';
import { presentAttempt, presentWebhook } from './presenter.js';
import {
  createWebhookBody,
  listAttemptsQuery,
  listWebhooksQuery,
  replayWebhookBody,
  updateWebhookBody,
  webhookIdParams,
} from './schema.js';

export function webhooksRouter({ services }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/v1/webhooks' });

  router.post(
    '/',
    handle({ body: createWebhookBody }, async (ctx, input) => {
      const { subscription, secret } = await services.webhooks.create(ctx.state.principal.tenantId, input.body);
      ctx.status = 201;
      ctx.set('Location', `/v1/webhooks/${subscription.id}`);
      ctx.body = { results: { ...presentWebhook(subscription), secret } };
    }),
  );

  router.get(
    '/',
    handle({ query: listWebhooksQuery }, async (ctx, input) => {
      const page = await services.webhooks.list(ctx.state.principal.tenantId, input.query.offset, input.query.limit);
      ctx.body = listEnvelope(page, presentWebhook);
    }),
  );

  router.get(
    '/:webhook_id',
    handle({ params: webhookIdParams }, async (ctx, input) => {
      ctx.body = { results: presentWebhook(await services.webhooks.get(ctx.state.principal.tenantId, input.params.webhook_id)) };
    }),
  );

  router.patch(
    '/:webhook_id',
    handle({ params: webhookIdParams, body: updateWebhookBody }, async (ctx, input) => {
      const updated = await services.webhooks.update(ctx.state.principal.tenantId, input.params.webhook_id, input.body);
      ctx.body = { results: presentWebhook(updated) };
    }),
  );

  router.delete(
    '/:webhook_id',
    handle({ params: webhookIdParams }, async (ctx, input) => {
      await services.webhooks.delete(ctx.state.principal.tenantId, input.params.webhook_id);
      ctx.body = { results: { id: input.params.webhook_id, deleted: true } };
    }),
  );

  router.post(
    '/:webhook_id/rotate-secret',
    handle({ params: webhookIdParams }, async (ctx, input) => {
      const rotated = await services.webhooks.rotateSecret(ctx.state.principal.tenantId, input.params.webhook_id);
      ctx.body = {
        results: {
          id: input.params.webhook_id,
          secret: rotated.secret,
          previous_secret_expires_at: rotated.previous_expires_at.toISOString(),
        },
      };
    }),
  );

  router.post(
    '/:webhook_id/replay',
    handle({ params: webhookIdParams, body: replayWebhookBody }, async (ctx, input) => {
      const { from_seq, from_time } = input.body;
      // The schema admits exactly one of the two.
      const from = from_time !== undefined ? { from_time: new Date(from_time) } : { from_seq: from_seq ?? 1 };
      const cursor = await services.webhooks.replay(ctx.state.principal.tenantId, input.params.webhook_id, from);
      ctx.status = 202;
      ctx.body = { results: { id: input.params.webhook_id, cursor } };
    }),
  );

  router.get(
    '/:webhook_id/attempts',
    handle({ params: webhookIdParams, query: listAttemptsQuery }, async (ctx, input) => {
      const attempts = await services.webhooks.attempts(ctx.state.principal.tenantId, input.params.webhook_id, input.query.limit);
      ctx.body = { results: attempts.map(presentAttempt) };
    }),
  );

  return router;
}
