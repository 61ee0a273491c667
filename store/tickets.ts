/**
 * WebSocket tickets: short-lived and single-use. Only the ticket's sha256 is stored. Use is
 * claimed by inserting a `used` marker with a fixed `_id` (the unique `_id` index holds under
 * concurrency on the stand-in, unlike a conditional update), so two racing connects with the same
 * ticket cannot both succeed. Expiry is checked at read time; the TTL index only tidies up on
 * real MongoDB (the stand-in never expires anything).
 */
import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { sha256Hex } from '../core/hash.js';
import { isDuplicateKeyError } from './db.js';

export interface TicketDoc {
  _id: string; // sha256 of the ticket
  tenant_id: string;
  key_id: string;
  expires_at: Date;
  created_at: Date;
}

export type TicketUse = { ok: true; ticket: TicketDoc } | { ok: false; reason: 'unknown_ticket' | 'ticket_expired' | 'ticket_used' };

const hashTicket = sha256Hex;

/** `wst_` and 24 random bytes in base64url, as minted below. */
const TICKET_SHAPE = /^wst_[A-Za-z0-9_-]{32}$/;

/** False for a string `mint` cannot have produced: refused without a lookup. */
export const isWellFormedTicket = (ticket: string): boolean => TICKET_SHAPE.test(ticket);

export class TicketRepository {
  private readonly tickets: Collection<TicketDoc>;
  private readonly uses: Collection<{ _id: string; at: Date }>;

  constructor(db: Db) {
    this.tickets = db.collection<TicketDoc>('ws_tickets');
    this.uses = db.collection('ws_ticket_uses');
  }

  async ensureIndexes(): Promise<void> {
    await this.tickets.createIndex({ expires_at: 1 }, { expireAfterSeconds: 3600 });
    await this.uses.createIndex({ at: 1 }, { expireAfterSeconds: 86_400 });
  }

  async mint(tenantId: string, keyId: string, ttlSeconds: number): Promise<{ ticket: string; expiresAt: Date }> {
    const ticket = `wst_${randomBytes(24).toString('base64url')}`;
    const now = Date.now();
    const expiresAt = new Date(now + ttlSeconds * 1000);
    await this.tickets.insertOne({
      _id: hashTicket(ticket),
      tenant_id: tenantId,
      key_id: keyId,
      expires_at: expiresAt,
      created_at: new Date(now),
    });
    return { ticket, expiresAt };
  }

  /** Consumes a ticket: the first valid use wins, every later one is refused. */
  async use(ticket: string): Promise<TicketUse> {
    const id = hashTicket(ticket);
    const doc = await this.tickets.findOne({ _id: id });
    if (!doc) return { ok: false, reason: 'unknown_ticket' };
    if (doc.expires_at.getTime() <= Date.now()) return { ok: false, reason: 'ticket_expired' };
    try {
      await this.uses.insertOne({ _id: id, at: new Date() });
    } catch (error) {
      if (isDuplicateKeyError(error)) return { ok: false, reason: 'ticket_used' };
      throw error;
    }
    // The ticket record stays until it expires, so a later use reads as "used", not "unknown".
    return { ok: true, ticket: doc };
  }
}
