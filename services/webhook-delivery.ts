/**
 * Webhook delivery, in the worker role only (runtime/service.ts): never in a request handler.
 *
 * Each active subscription has a durable cursor in MongoDB (the seq it is done with). A process
 * takes a subscription's lease, reads the subscription's next events from the durable event log
 * after its cursor, and POSTs them one at a time, in seq order; the cursor moves past an event
 * only after a 2xx, and is written behind the deliveries (every CURSOR_FLUSH_EVENTS or
 * CURSOR_FLUSH_MS, and before any failure is handled). So:
 *   - a failing event holds back every later one (the same rule as the WebSocket's replay);
 *   - a crash loses nothing: the next holder (after the lease runs out) starts from the stored
 *     cursor, and at most the in-flight batch (the deliveries since the last write) is sent again
 *     (receivers dedupe by `webhook-id`, the event id);
 *   - a receiver that was down gets everything afterwards, in order, from its cursor.
 * Retries follow core/webhook-retry.ts; a 410 disables the subscription at once, and one failing
 * without a success for the disable period is disabled too; both emit `webhook_disabled`.
 *
 * Every request goes through the outbound client (core/outbound/): the SSRF policy is applied to
 * the URL and to every address it resolves to at each connection, redirects are answers (not
 * followed), the whole attempt has a deadline, and the response body is read up to a small cap.
 */
import { createPrivateKey, randomBytes, type KeyObject } from 'node:crypto';
import os from 'node:os';
import type { Logger } from '../core/logger.js';
import { webhookAttempts, webhookDisabled } from '../core/metrics.js';
import { newId } from '../core/ids.js';
import type { OutboundClient } from '../core/outbound/client.js';
import { activeKey } from '../core/signing-keyset.js';
import { signingSecrets, type WebhookAttempt, type WebhookSubscription } from '../core/webhook-model.js';
import { outcomeOf } from '../core/webhook-retry.js';
import { webhookHeaders } from '../core/webhook-signature.js';
import type { EventEntry } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { KeysetSource } from './keyset-source.js';

export interface WebhookDeliveryOptions {
  /** Delays before attempt 1, 2, 3… (ms); past the end the last one repeats. */
  schedule: readonly number[];
  /** Failing without a success this long disables the subscription. */
  disableAfterMs: number;
  leaseMs: number;
  /** Subscriptions delivered to at once by this process. */
  concurrency: number;
  /** Response bytes read at most (the rest is discarded). */
  maxResponseBytes?: number;
  /** Events read from the log per query. */
  batchSize?: number;
}

/** What a receiver gets as the body: the Standard Webhooks shape (type, timestamp, data) plus seq and ids. */
export function webhookBody(entry: EventEntry): string {
  return JSON.stringify({
    type: entry.type,
    timestamp: entry.ts.toISOString(),
    seq: entry.seq,
    event_id: entry.id,
    collection_id: entry.collection_id,
    ...(entry.collection_ids ? { collection_ids: entry.collection_ids } : {}),
    data: entry.payload,
  });
}

/** The collection a `webhook_disabled` event names: a subscription without a filter has none (the nil UUID). */
export const NO_COLLECTION = '00000000-0000-0000-0000-000000000000';

const ERROR_TEXT_MAX = 300;
/**
 * The cursor and the attempts are written after this many deliveries or this long, whichever
 * comes first (and before any failure is handled): a crash sends again at most that in-flight
 * batch, and a busy subscription costs two writes per batch instead of two per event.
 */
export const CURSOR_FLUSH_EVENTS = 16;
const CURSOR_FLUSH_MS = 250;

export function startWebhookDelivery(deps: {
  store: Store;
  outbound: OutboundClient;
  /** The event signing keys: an Ed25519 active key adds a v1a signature. null: v1 only. */
  keys: KeysetSource | null;
  logger: Logger;
  options: WebhookDeliveryOptions;
  random?: () => number;
}) {
  const { store, outbound, logger, options } = deps;
  const random = deps.random ?? Math.random;
  const batchSize = options.batchSize ?? 100;
  const maxResponseBytes = options.maxResponseBytes ?? 4096;
  const owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const running = new Map<string, Promise<void>>();
  const retryTimers = new Set<NodeJS.Timeout>();
  let stopped = false;

  // ---- v1a: the event signing key, when it is Ed25519 ------------------------------------------
  let cachedKey: { kid: string; key: KeyObject } | null = null;
  let warnedAlgorithm = false;
  async function ed25519Key(): Promise<KeyObject | null> {
    if (!deps.keys) return null;
    const active = activeKey(await deps.keys.current());
    if (active.alg !== 'Ed25519') {
      if (!warnedAlgorithm)
        logger.warn({ kid: active.kid, alg: active.alg }, 'the event signing key is not Ed25519: webhooks carry no v1a signature');
      warnedAlgorithm = true;
      return null;
    }
    if (cachedKey?.kid !== active.kid) {
      const jwk = active.private_jwk;
      cachedKey = { kid: active.kid, key: createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d }, format: 'jwk' }) };
    }
    return cachedKey.key;
  }

  // ---- one attempt ---------------------------------------------------------------------------
  async function attempt(subscription: WebhookSubscription, entry: EventEntry) {
    const body = webhookBody(entry);
    const started = Date.now();
    const headers = webhookHeaders(entry.id, Math.floor(started / 1000), body, signingSecrets(subscription, started), await ed25519Key());
    let status: number | null = null;
    let retryAfter: string | undefined;
    let error: string | null = null;
    try {
      const answer = await outbound.post(
        subscription.url,
        { ...headers, 'Content-Type': 'application/json', 'User-Agent': 'engram-webhooks/1' },
        Buffer.from(body, 'utf8'),
        maxResponseBytes,
      );
      status = answer.status;
      const header = answer.headers['retry-after'];
      retryAfter = Array.isArray(header) ? header[0] : header;
      if (status < 200 || status >= 300) error = answer.body.toString('utf8').slice(0, ERROR_TEXT_MAX) || null;
    } catch (caught) {
      // Refused by the policy (at this connection), DNS, connect, TLS, timeout: no HTTP answer.
      error = (caught instanceof Error ? caught.message : String(caught)).slice(0, ERROR_TEXT_MAX);
    }
    const now = Date.now();
    const failedBefore = subscription.failed_attempts;
    const outcome = outcomeOf(status, retryAfter, failedBefore + 1, options.schedule, now, random());
    webhookAttempts.inc({ outcome: outcome.kind });
    const record: WebhookAttempt = {
      id: newId(),
      subscription_id: subscription.id,
      tenant_id: subscription.tenant_id,
      event_id: entry.id,
      seq: entry.seq,
      attempt: failedBefore + 1,
      status_code: status,
      error,
      outcome: outcome.kind,
      duration_ms: now - started,
      at: new Date(now),
    };
    return { outcome, status, now, record };
  }

  async function disable(subscription: WebhookSubscription, reason: 'gone' | 'failing', status: number | null): Promise<void> {
    const now = new Date();
    if (!(await store.webhooks.disable(subscription.id, owner, reason, now))) return;
    webhookDisabled.inc({ reason });
    logger.warn({ webhook: subscription.id, reason, status }, 'webhook subscription disabled');
    const ids = subscription.collection_ids.length > 0 ? subscription.collection_ids : [NO_COLLECTION];
    await store.events.append('webhook_disabled', subscription.tenant_id, ids, {
      webhook_id: subscription.id,
      url: subscription.url,
      reason,
      last_status_code: status,
      failing_since: subscription.failing_since?.toISOString() ?? now.toISOString(),
      disabled_at: now.toISOString(),
    });
  }

  function retryAt(when: number): void {
    const timer = setTimeout(
      () => {
        retryTimers.delete(timer);
        wake();
      },
      Math.max(0, when - Date.now()),
    );
    timer.unref();
    retryTimers.add(timer);
  }

  // ---- one subscription: deliver from its cursor until caught up or held back ----------------
  async function pump(id: string): Promise<void> {
    let leaseUntil = Date.now() + options.leaseMs;
    const acquired = await store.webhooks.acquire(id, owner, new Date(), new Date(leaseUntil));
    if (!acquired) return;
    let subscription: WebhookSubscription = acquired;
    /** The cursor as stored; `subscription.cursor` runs ahead of it by the deliveries not yet flushed. */
    let persisted = subscription.cursor;
    let unflushed: WebhookAttempt[] = [];
    let delivered = false;
    let lastFlush = Date.now();

    /**
     * Writes the attempts made since the last flush and moves the stored cursor to the last event
     * delivered (or skipped); renews the lease. False when the lease or the epoch was lost.
     */
    const flush = async (): Promise<boolean> => {
      lastFlush = Date.now();
      if (unflushed.length > 0) {
        const attempts = unflushed;
        unflushed = [];
        await store.webhooks.recordAttempts(attempts);
      }
      if (subscription.cursor <= persisted) return true;
      leaseUntil = Date.now() + options.leaseMs;
      const moved = await store.webhooks.advance(
        id,
        owner,
        subscription.cursor_epoch,
        subscription.cursor,
        delivered,
        new Date(leaseUntil),
      );
      delivered = false;
      if (!moved) return false;
      persisted = subscription.cursor;
      return true;
    };
    const renewIfNeeded = async (): Promise<boolean> => {
      if (leaseUntil - Date.now() > options.leaseMs / 2) return true;
      if (!(await flush())) return false;
      leaseUntil = Date.now() + options.leaseMs;
      const renewed = await store.webhooks.acquire(id, owner, new Date(), new Date(leaseUntil));
      return renewed !== null && renewed.cursor_epoch === subscription.cursor_epoch;
    };
    const skipTo = (seq: number): void => {
      if (seq > subscription.cursor) subscription = { ...subscription, cursor: seq };
    };

    let release = true;
    try {
      for (;;) {
        if (stopped) return;
        const headBefore = await store.events.log.latestSeq();
        // Events trimmed by retention before they were sent cannot be sent: say so, and go on.
        const trimmed = await store.events.trimmedThrough(subscription.tenant_id);
        if (subscription.cursor < trimmed) {
          logger.warn({ webhook: id, cursor: subscription.cursor, trimmedThrough: trimmed }, 'webhook cursor fell behind event retention');
          skipTo(trimmed);
        }
        const filter = {
          tenantId: subscription.tenant_id,
          collectionIds: subscription.collection_ids,
          eventTypes: subscription.event_types,
        };
        const entries = await store.events.readFor(filter, subscription.cursor, batchSize);
        if (entries.length === 0) {
          // Nothing of ours up to the head seen before the read: skip the others' events.
          skipTo(headBefore);
          return;
        }
        // Read again after the events (the lease renewed, progress flushed): a rotation, filter
        // change or replay made before any of these events was appended is seen by this batch.
        if (!(await flush())) return;
        const before = subscription;
        leaseUntil = Date.now() + options.leaseMs;
        const fresh = await store.webhooks.acquire(id, owner, new Date(), new Date(leaseUntil));
        if (!fresh) return;
        subscription = fresh;
        persisted = fresh.cursor;
        if (
          fresh.cursor_epoch !== before.cursor_epoch ||
          fresh.cursor !== before.cursor ||
          fresh.event_types.join() !== before.event_types.join() ||
          fresh.collection_ids.join() !== before.collection_ids.join()
        )
          continue;
        for (const entry of entries) {
          if (stopped || !(await renewIfNeeded())) return;
          const { outcome, status, now, record } = await attempt(subscription, entry);
          unflushed.push(record);
          if (outcome.kind === 'delivered') {
            subscription = { ...subscription, cursor: entry.seq, failed_attempts: 0, failing_since: null, next_attempt_at: null };
            delivered = true;
            // Write-behind: a crash sends again at most the deliveries since the last flush.
            if (unflushed.length >= CURSOR_FLUSH_EVENTS || now - lastFlush >= CURSOR_FLUSH_MS) {
              if (!(await flush())) return;
            }
            continue;
          }
          if (!(await flush())) return;
          if (outcome.kind === 'gone') {
            release = false;
            await disable(subscription, 'gone', status);
            return;
          }
          const failingSince = subscription.failing_since ?? new Date(now);
          if (now - failingSince.getTime() >= options.disableAfterMs) {
            release = false;
            await disable({ ...subscription, failing_since: failingSince }, 'failing', status);
            return;
          }
          const next = now + outcome.delayMs;
          release = false; // scheduleRetry gives the lease up with the new state
          await store.webhooks.scheduleRetry(id, owner, subscription.cursor_epoch, {
            failed_attempts: subscription.failed_attempts + 1,
            failing_since: failingSince,
            next_attempt_at: new Date(next),
          });
          retryAt(next);
          return;
        }
        if (entries.length < batchSize) skipTo(headBefore);
      }
    } finally {
      if (release) {
        await flush().catch((error: unknown) => logger.warn({ err: error, webhook: id }, 'webhook progress not flushed; it is sent again'));
        await store.webhooks.release(id, owner).catch(() => undefined);
      }
    }
  }

  // ---- dispatch: which subscriptions have something to send -----------------------------------
  let scanning = false;
  let scanAgain = false;
  function wake(): void {
    if (stopped) return;
    if (scanning) {
      scanAgain = true;
      return;
    }
    scanning = true;
    void scan()
      .catch((error: unknown) => logger.warn({ err: error }, 'webhook dispatch failed; retrying at the next wake'))
      .finally(() => {
        scanning = false;
        if (scanAgain) {
          scanAgain = false;
          wake();
        }
      });
  }

  async function scan(): Promise<void> {
    const now = Date.now();
    const head = await store.events.log.latestSeq();
    const due = await store.webhooks.due(new Date(now), 10_000);
    for (const candidate of due) {
      if (stopped) return;
      if (running.has(candidate.id) || candidate.cursor >= head) continue;
      if (candidate.lease_owner && candidate.lease_owner !== owner && (candidate.lease_until?.getTime() ?? 0) > now) continue;
      if (running.size >= options.concurrency) {
        scanAgain = true; // picked up when a slot frees
        return;
      }
      const run = pump(candidate.id)
        .catch((error: unknown) => logger.warn({ err: error, webhook: candidate.id }, 'webhook delivery failed; retrying at the next wake'))
        .finally(() => {
          running.delete(candidate.id);
          wake();
        });
      running.set(candidate.id, run);
    }
  }

  const stopFollowing = store.events.follow(wake, (error) => logger.warn({ err: error }, 'event change stream unavailable: polling'));
  // Retries that fall due, and leases of crashed processes running out, without any new event.
  const ticker = setInterval(wake, Math.min(1000, Math.max(100, Math.floor(options.leaseMs / 4))));
  ticker.unref();
  wake();
  logger.info({ owner }, 'webhook delivery started');

  return {
    wake,
    owner,
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(ticker);
      for (const timer of retryTimers) clearTimeout(timer);
      await stopFollowing();
      await Promise.allSettled([...running.values()]);
    },
  };
}

export type WebhookDelivery = ReturnType<typeof startWebhookDelivery>;
