/**
 * Webhook subscriptions, the owner's side (docs/webhooks.md): create, read, change, delete,
 * rotate the secret, replay, and read recent attempts. Nothing here sends a request: delivery
 * runs in the worker role (services/webhook-delivery.ts), from the cursor this service sets.
 */
import { AppError, conflict, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import type { OutboundClient } from '../core/outbound/client.js';
import { OutboundError } from '../core/outbound/client.js';
import { OutboundRefusal } from '../core/outbound/policy.js';
import type { WebhookAttempt, WebhookSecret, WebhookSubscription } from '../core/webhook-model.js';
import { newWebhookSecret } from '../core/webhook-signature.js';
import type { Store } from '../store/index.js';
import type { CollectionService } from './collections.js';

export interface WebhookServiceOptions {
  /** How long the previous secret still signs after a rotation. */
  secretOverlapSeconds: number;
  maxPerTenant: number;
}

export interface CreateWebhookInput {
  url: string;
  event_types?: string[] | undefined;
  collection_ids?: string[] | undefined;
  description?: string | null | undefined;
}

export interface UpdateWebhookInput {
  url?: string | undefined;
  event_types?: string[] | undefined;
  collection_ids?: string[] | undefined;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
}

export type ReplayFrom = { from_seq: number } | { from_time: Date };

export function createWebhookService(deps: {
  store: Store;
  collections: CollectionService;
  outbound: OutboundClient;
  options: WebhookServiceOptions;
}) {
  const { store, collections, outbound, options } = deps;

  /** The same SSRF policy as signed URLs, with DNS: refused URLs are a 400 naming `url`. */
  async function checkUrl(url: string): Promise<void> {
    try {
      await outbound.target(url);
    } catch (error) {
      if (error instanceof OutboundRefusal || error instanceof OutboundError) {
        throw new AppError(400, 'webhook_url_refused', `url: ${error.message}`, [
          { field: 'url', issue: error instanceof OutboundRefusal ? `${error.reason}: ${error.message}` : error.message },
        ]);
      }
      throw error;
    }
  }

  async function get(tenantId: string, id: string): Promise<WebhookSubscription> {
    const subscription = await store.webhooks.findById(tenantId, id);
    if (!subscription) throw notFound('webhook', id);
    return subscription;
  }

  return {
    /** Returns the subscription and its secret: the only time the secret is shown. */
    async create(tenantId: string, input: CreateWebhookInput): Promise<{ subscription: WebhookSubscription; secret: string }> {
      await checkUrl(input.url);
      const collectionIds = [...new Set(input.collection_ids ?? [])];
      if (collectionIds.length > 0) await collections.assertReadable(tenantId, collectionIds, 'collection_ids');
      // Counted before the insert: concurrent creates can pass together, by at most their number.
      const { total } = await store.webhooks.list(tenantId, 0, 1);
      if (total >= options.maxPerTenant) {
        throw conflict(
          'webhook_limit_reached',
          `This tenant already has the most webhook subscriptions allowed (${options.maxPerTenant}, WEBHOOK_MAX_PER_TENANT)`,
        );
      }
      const now = new Date();
      const secret = newWebhookSecret();
      const subscription: WebhookSubscription = {
        id: newId(),
        tenant_id: tenantId,
        url: input.url,
        event_types: [...new Set(input.event_types ?? [])],
        collection_ids: collectionIds,
        description: input.description ?? null,
        status: 'active',
        disabled_reason: null,
        disabled_at: null,
        secrets: [{ secret, created_at: now, expires_at: null }],
        // Events appended from now on: history is only sent on a replay.
        cursor: await store.events.log.latestSeq(),
        cursor_epoch: newId(),
        failed_attempts: 0,
        failing_since: null,
        next_attempt_at: null,
        last_delivered_at: null,
        lease_owner: null,
        lease_until: null,
        created_at: now,
        updated_at: now,
      };
      await store.webhooks.create(subscription);
      return { subscription, secret };
    },

    get,

    list(tenantId: string, offset: number, limit: number) {
      return store.webhooks.list(tenantId, offset, limit);
    },

    async update(tenantId: string, id: string, input: UpdateWebhookInput): Promise<WebhookSubscription> {
      await get(tenantId, id);
      if (input.url !== undefined) await checkUrl(input.url);
      const collectionIds = input.collection_ids === undefined ? undefined : [...new Set(input.collection_ids)];
      if (collectionIds && collectionIds.length > 0) await collections.assertReadable(tenantId, collectionIds, 'collection_ids');
      const updated = await store.webhooks.update(
        tenantId,
        id,
        {
          url: input.url,
          event_types: input.event_types === undefined ? undefined : [...new Set(input.event_types)],
          collection_ids: collectionIds,
          description: input.description,
          status: input.enabled === undefined ? undefined : input.enabled ? 'active' : 'disabled',
        },
        new Date(),
      );
      if (!updated) throw notFound('webhook', id);
      return updated;
    },

    async delete(tenantId: string, id: string): Promise<void> {
      if (!(await store.webhooks.remove(tenantId, id))) throw notFound('webhook', id);
    },

    /**
     * A new current secret; the previous current one keeps signing (a second v1 signature) for
     * the overlap, and any older one stops now. Returns the new secret: shown this once.
     */
    async rotateSecret(tenantId: string, id: string): Promise<{ secret: string; previous_expires_at: Date }> {
      const subscription = await get(tenantId, id);
      const now = new Date();
      const previousExpiresAt = new Date(now.getTime() + options.secretOverlapSeconds * 1000);
      const current = subscription.secrets.find((entry) => entry.expires_at === null);
      const secret = newWebhookSecret();
      const secrets: WebhookSecret[] = [{ secret, created_at: now, expires_at: null }];
      if (current) secrets.push({ ...current, expires_at: previousExpiresAt });
      if (!(await store.webhooks.setSecrets(tenantId, id, secrets, now))) throw notFound('webhook', id);
      return { secret, previous_expires_at: previousExpiresAt };
    },

    /**
     * Sends again, in order, every event of the subscription after `from_seq - 1` (or from the
     * first one at or after `from_time`) that the log still holds. Returns the new cursor.
     */
    async replay(tenantId: string, id: string, from: ReplayFrom): Promise<number> {
      await get(tenantId, id);
      const cursor = 'from_seq' in from ? from.from_seq - 1 : await store.events.cursorBefore(tenantId, from.from_time);
      if (!(await store.webhooks.replay(tenantId, id, Math.max(0, cursor), newId(), new Date()))) throw notFound('webhook', id);
      return Math.max(0, cursor);
    },

    async attempts(tenantId: string, id: string, limit: number): Promise<WebhookAttempt[]> {
      await get(tenantId, id);
      return store.webhooks.listAttempts(tenantId, id, limit);
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
