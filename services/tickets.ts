/** WebSocket tickets: minted with an API key, consumed once by the WebSocket upgrade. */
import type { Principal } from './auth.js';
import type { Store } from '../store/index.js';
import type { TicketUse } from '../store/tickets.js';

export function createTicketService(store: Store, ttlSeconds: number) {
  return {
    mint: (principal: Principal) => store.tickets.mint(principal.tenantId, principal.keyId, ttlSeconds),
    use: (ticket: string): Promise<TicketUse> => store.tickets.use(ticket),
  };
}

export type TicketService = ReturnType<typeof createTicketService>;
