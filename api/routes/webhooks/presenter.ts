import type { WebhookAttempt, WebhookSubscription } from '../../../core/webhook-model.js';

const time = (value: Date | null): string | null => value?.toISOString() ?? null;

/** A subscription as its owner sees it: never a secret (those are shown once, at creation and rotation). */
export const presentWebhook = (subscription: WebhookSubscription) => ({
  id: subscription.id,
  url: subscription.url,
  event_types: subscription.event_types,
  collection_ids: subscription.collection_ids,
  description: subscription.description,
  status: subscription.status,
  disabled_reason: subscription.disabled_reason,
  disabled_at: time(subscription.disabled_at),
  cursor: subscription.cursor,
  failed_attempts: subscription.failed_attempts,
  failing_since: time(subscription.failing_since),
  next_attempt_at: time(subscription.next_attempt_at),
  last_delivered_at: time(subscription.last_delivered_at),
  /** When the previous secret stops signing (null: no rotation overlap running). */
  previous_secret_expires_at: time(
    subscription.secrets.find((entry) => entry.expires_at !== null && entry.expires_at.getTime() > Date.now())?.expires_at ?? null,
  ),
  created_at: subscription.created_at.toISOString(),
  updated_at: subscription.updated_at.toISOString(),
});

export const presentAttempt = (attempt: WebhookAttempt) => ({
  id: attempt.id,
  event_id: attempt.event_id,
  seq: attempt.seq,
  attempt: attempt.attempt,
  status_code: attempt.status_code,
  outcome: attempt.outcome,
  error: attempt.error,
  duration_ms: attempt.duration_ms,
  at: attempt.at.toISOString(),
});
