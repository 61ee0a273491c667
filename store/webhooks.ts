/**
 * Webhook subscriptions (with their durable delivery cursor) and their recent delivery attempts.
 *
 * One delivering process at a time per subscription: it takes a lease (a conditional update on
 * `lease_until`), renews it while it works, and every cursor move is conditional on holding the
 * lease and on the cursor epoch (a replay changes the epoch, so a delivery that began before the
 * replay cannot move the cursor past it). No multi-document transactions: each step is one
 * single-document update. The stand-in answers concurrent `$inc` wrongly, so nothing here
 * increments on the server: counters are set from what the lease holder read.
 */
import type { Collection, Db, Filter } from 'mongodb';
import type { WebhookAttempt, WebhookSubscription } from '../core/webhook-model.js';
import { fromStored, toStored, type Stored } from './stored.js';

export type WebhookDoc = Stored<WebhookSubscription>;
type AttemptDoc = Stored<WebhookAttempt>;

/** Attempts kept per subscription (the newest); older ones are trimmed as new ones are written. */
export const ATTEMPTS_KEPT = 200;
const TRIM_ATTEMPTS_EVERY = 100;

export type WebhookChanges = Partial<Pick<WebhookSubscription, 'url' | 'event_types' | 'collection_ids' | 'description'>> & {
  status?: 'active' | 'disabled';
};

export class WebhookRepository {
  readonly subscriptions: Collection<WebhookDoc>;
  private readonly attempts: Collection<AttemptDoc>;
  private attemptsSinceTrim = new Map<string, number>();

  constructor(db: Db) {
    this.subscriptions = db.collection<WebhookDoc>('webhook_subscriptions');
    this.attempts = db.collection<AttemptDoc>('webhook_attempts');
  }

  async ensureIndexes(): Promise<void> {
    await this.subscriptions.createIndex({ tenant_id: 1, created_at: 1, _id: 1 });
    await this.subscriptions.createIndex({ status: 1, next_attempt_at: 1 });
    await this.attempts.createIndex({ subscription_id: 1, at: -1 });
  }

  async create(subscription: WebhookSubscription): Promise<void> {
    await this.subscriptions.insertOne(toStored(subscription));
  }

  async findById(tenantId: string, id: string): Promise<WebhookSubscription | null> {
    const doc = await this.subscriptions.findOne({ _id: id, tenant_id: tenantId });
    return doc ? fromStored<WebhookSubscription>(doc) : null;
  }

  async list(tenantId: string, offset: number, limit: number): Promise<{ items: WebhookSubscription[]; total: number }> {
    const [items, total] = await Promise.all([
      this.subscriptions.find({ tenant_id: tenantId }, { sort: { created_at: 1, _id: 1 }, skip: offset, limit }).toArray(),
      this.subscriptions.countDocuments({ tenant_id: tenantId }),
    ]);
    return { items: items.map(fromStored<WebhookSubscription>), total };
  }

  /**
   * Applies an owner's changes. Re-enabling clears the failure state, so the held-back event is
   * tried again at once; disabling by the owner records the reason `user`. Returns the updated
   * subscription, or null when it is not the tenant's.
   */
  async update(tenantId: string, id: string, changes: WebhookChanges, now: Date): Promise<WebhookSubscription | null> {
    const set: Partial<WebhookDoc> = { updated_at: now };
    for (const key of ['url', 'event_types', 'collection_ids', 'description'] as const) {
      if (changes[key] !== undefined) Object.assign(set, { [key]: changes[key] });
    }
    if (changes.status === 'active') {
      Object.assign(set, {
        status: 'active',
        disabled_reason: null,
        disabled_at: null,
        failed_attempts: 0,
        failing_since: null,
        next_attempt_at: null,
      });
    } else if (changes.status === 'disabled') {
      Object.assign(set, { status: 'disabled', disabled_reason: 'user', disabled_at: now });
    }
    const result = await this.subscriptions.updateOne({ _id: id, tenant_id: tenantId }, { $set: set });
    if (result.matchedCount === 0) return null;
    return this.findById(tenantId, id);
  }

  /** Deletes the subscription and its attempts; false when it is not the tenant's. */
  async remove(tenantId: string, id: string): Promise<boolean> {
    const result = await this.subscriptions.deleteOne({ _id: id, tenant_id: tenantId });
    if (result.deletedCount === 0) return false;
    await this.attempts.deleteMany({ subscription_id: id });
    return true;
  }

  /** Replaces the secrets (a rotation: the new one first, the previous one with its expiry). */
  async setSecrets(tenantId: string, id: string, secrets: WebhookSubscription['secrets'], now: Date): Promise<boolean> {
    const result = await this.subscriptions.updateOne({ _id: id, tenant_id: tenantId }, { $set: { secrets, updated_at: now } });
    return result.matchedCount === 1;
  }

  /** Moves the cursor (a replay) under a new epoch, and clears the failure state. */
  async replay(tenantId: string, id: string, cursor: number, epoch: string, now: Date): Promise<boolean> {
    const result = await this.subscriptions.updateOne(
      { _id: id, tenant_id: tenantId },
      { $set: { cursor, cursor_epoch: epoch, failed_attempts: 0, failing_since: null, next_attempt_at: null, updated_at: now } },
    );
    return result.matchedCount === 1;
  }

  // ---- the delivering side (services/webhook-delivery.ts) ----------------------------------------

  /** Active subscriptions whose next attempt is due, with what a dispatcher needs to decide. */
  async due(now: Date, limit: number): Promise<Pick<WebhookSubscription, 'id' | 'tenant_id' | 'cursor' | 'lease_owner' | 'lease_until'>[]> {
    const docs = await this.subscriptions
      .find(
        { status: 'active', $or: [{ next_attempt_at: null }, { next_attempt_at: { $lte: now } }] },
        { projection: { _id: 1, tenant_id: 1, cursor: 1, lease_owner: 1, lease_until: 1 }, limit },
      )
      .toArray();
    return docs.map((doc) => ({
      id: doc._id,
      tenant_id: doc.tenant_id,
      cursor: doc.cursor,
      lease_owner: doc.lease_owner,
      lease_until: doc.lease_until,
    }));
  }

  /**
   * Takes (or renews) the lease of an active subscription until `until`; returns the subscription
   * as the holder now sees it, or null when another process holds an unexpired lease. The result
   * is read back and checked, so a conditional update that the server applied twice (two takers
   * at once) still leaves exactly one holder.
   */
  async acquire(id: string, owner: string, now: Date, until: Date): Promise<WebhookSubscription | null> {
    const filter: Filter<WebhookDoc> = {
      _id: id,
      status: 'active',
      $or: [{ lease_owner: owner }, { lease_owner: null }, { lease_until: null }, { lease_until: { $lt: now } }],
    };
    const result = await this.subscriptions.updateOne(filter, { $set: { lease_owner: owner, lease_until: until } });
    if (result.matchedCount === 0) return null;
    const doc = await this.subscriptions.findOne({ _id: id });
    if (!doc || doc.lease_owner !== owner || doc.status !== 'active') return null;
    return fromStored<WebhookSubscription>(doc);
  }

  /** Gives the lease up (a clean stop, or nothing left to send). */
  async release(id: string, owner: string): Promise<void> {
    await this.subscriptions.updateOne({ _id: id, lease_owner: owner }, { $set: { lease_owner: null, lease_until: null } });
  }

  private holder(id: string, owner: string, epoch: string): Filter<WebhookDoc> {
    return { _id: id, lease_owner: owner, cursor_epoch: epoch, status: 'active' };
  }

  /**
   * Moves the cursor forward to `seq` (delivered, or skipped as not matching) and clears the
   * failure state; renews the lease. False when the lease or the epoch was lost meanwhile.
   */
  async advance(id: string, owner: string, epoch: string, seq: number, delivered: boolean, leaseUntil: Date): Promise<boolean> {
    const set: Partial<WebhookDoc> = {
      cursor: seq,
      failed_attempts: 0,
      failing_since: null,
      next_attempt_at: null,
      lease_until: leaseUntil,
    };
    if (delivered) set.last_delivered_at = new Date();
    const result = await this.subscriptions.updateOne({ ...this.holder(id, owner, epoch), cursor: { $lt: seq } }, { $set: set });
    return result.matchedCount === 1;
  }

  /** Records a failed attempt at the event after the cursor: when to try again. */
  async scheduleRetry(
    id: string,
    owner: string,
    epoch: string,
    failure: { failed_attempts: number; failing_since: Date; next_attempt_at: Date },
  ): Promise<boolean> {
    const result = await this.subscriptions.updateOne(this.holder(id, owner, epoch), {
      $set: { ...failure, lease_owner: null, lease_until: null },
    });
    return result.matchedCount === 1;
  }

  /** Stops delivery (410, or failing for the disable period); true when this call disabled it. */
  async disable(id: string, owner: string, reason: 'gone' | 'failing', now: Date): Promise<boolean> {
    const result = await this.subscriptions.updateOne(
      { _id: id, lease_owner: owner, status: 'active' },
      { $set: { status: 'disabled', disabled_reason: reason, disabled_at: now, lease_owner: null, lease_until: null, updated_at: now } },
    );
    return result.matchedCount === 1;
  }

  // ---- attempts ---------------------------------------------------------------------------------

  /** Attempts of one subscription, in the order made. */
  async recordAttempts(attempts: WebhookAttempt[]): Promise<void> {
    const first = attempts[0];
    if (!first) return;
    await this.attempts.insertMany(attempts.map((attempt) => toStored(attempt)));
    const count = (this.attemptsSinceTrim.get(first.subscription_id) ?? 0) + attempts.length;
    this.attemptsSinceTrim.set(first.subscription_id, count >= TRIM_ATTEMPTS_EVERY ? 0 : count);
    if (count >= TRIM_ATTEMPTS_EVERY) await this.trimAttempts(first.subscription_id);
  }

  /** Keeps the newest ATTEMPTS_KEPT attempts of a subscription. */
  async trimAttempts(subscriptionId: string): Promise<void> {
    const boundary = await this.attempts
      .find({ subscription_id: subscriptionId }, { sort: { at: -1 }, skip: ATTEMPTS_KEPT, limit: 1, projection: { at: 1 } })
      .next();
    if (boundary) await this.attempts.deleteMany({ subscription_id: subscriptionId, at: { $lte: boundary.at } });
  }

  /** The newest attempts first. */
  async listAttempts(tenantId: string, subscriptionId: string, limit: number): Promise<WebhookAttempt[]> {
    const docs = await this.attempts
      .find({ subscription_id: subscriptionId, tenant_id: tenantId }, { sort: { at: -1, seq: -1 }, limit })
      .toArray();
    return docs.map(fromStored<WebhookAttempt>);
  }
}
