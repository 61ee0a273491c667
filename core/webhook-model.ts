/** Webhook subscriptions and their delivery attempts (docs/webhooks.md). */

/** Event types a subscription may name (empty: all of them, and any added later). */
export const WEBHOOK_EVENT_TYPES = [
  'ingestion_progress',
  'memory_unconfident',
  'webhook_disabled',
  'fact_superseded',
  'fact_restored',
] as const;

export interface WebhookSecret {
  /** `whsec_` + base64 of 32 random bytes. */
  secret: string;
  created_at: Date;
  /** Set on the previous secret by a rotation: it still signs until then. null: the current one. */
  expires_at: Date | null;
}

export type WebhookStatus = 'active' | 'disabled';

/** Why a subscription stopped: the receiver answered 410, it failed for the disable period, or its owner turned it off. */
export type DisabledReason = 'gone' | 'failing' | 'user';

export interface WebhookSubscription {
  id: string;
  tenant_id: string;
  url: string;
  /** Empty: every event type. */
  event_types: string[];
  /** Empty: every collection of the tenant. */
  collection_ids: string[];
  description: string | null;
  status: WebhookStatus;
  disabled_reason: DisabledReason | null;
  disabled_at: Date | null;
  /** Newest first; the ones whose expires_at has passed no longer sign. */
  secrets: WebhookSecret[];
  /** The seq of the last event this subscription is done with (delivered, or not matching its filter). */
  cursor: number;
  /** Changes on every replay, so a delivery that started before it cannot move the cursor afterwards. */
  cursor_epoch: string;
  /** Failed attempts at the event after the cursor (0: none failed). */
  failed_attempts: number;
  /** When the current run of failures began (null: the last attempt succeeded). */
  failing_since: Date | null;
  /** Not before this time is the next attempt made (null: as soon as there is something to send). */
  next_attempt_at: Date | null;
  last_delivered_at: Date | null;
  /** The delivering process holding the subscription, and until when (store/webhooks.ts). */
  lease_owner: string | null;
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type AttemptOutcome = 'delivered' | 'retry' | 'gone';

export interface WebhookAttempt {
  id: string;
  subscription_id: string;
  tenant_id: string;
  event_id: string;
  seq: number;
  /** 1 for the first attempt at this event, 2 for the first retry… */
  attempt: number;
  /** null: no HTTP answer (refused by the outbound policy, DNS, connection, timeout). */
  status_code: number | null;
  error: string | null;
  outcome: AttemptOutcome;
  duration_ms: number;
  at: Date;
}

/** Secrets that still sign at `now`: the current one, and the previous one during a rotation's overlap. */
export const signingSecrets = (subscription: Pick<WebhookSubscription, 'secrets'>, now: number): string[] =>
  subscription.secrets.filter((entry) => entry.expires_at === null || entry.expires_at.getTime() > now).map((entry) => entry.secret);
