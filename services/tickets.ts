/**
 * WebSocket tickets: minted with an API key, consumed once by the WebSocket upgrade. A ticket is
 * only as good as the key that minted it: one whose key was revoked since is refused at the
 * upgrade (`key_revoked`), so revocation reaches tickets already handed out.
 */
import type { Principal } from './auth.js';
import type { Store } from '../store/index.js';
import { isWellFormedTicket, type TicketUse } from '../store/tickets.js';
import { ticketLookups } from '../core/metrics.js';

export type TicketCheck = TicketUse | { ok: false; reason: 'key_revoked' };

export function createTicketService(store: Store, ttlSeconds: number) {
  return {
    mint: (principal: Principal) => store.tickets.mint(principal.tenantId, principal.keyId, ttlSeconds),
    async use(ticket: string): Promise<TicketCheck> {
      // A ticket that cannot have been minted costs no query (the upgrade charges the failure).
      if (!isWellFormedTicket(ticket)) return { ok: false, reason: 'unknown_ticket' };
      ticketLookups.inc();
      const use = await store.tickets.use(ticket);
      if (use.ok && !(await store.tenants.isKeyActive(use.ticket.key_id))) return { ok: false, reason: 'key_revoked' };
      return use;
    },
  };
}

export type TicketService = ReturnType<typeof createTicketService>;
