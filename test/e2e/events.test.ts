/**
 * Live-event groundwork: WebSocket tickets (minted over HTTP, single use, expiring) and the plain
 * GET answer of the WebSocket path. The streaming itself is not built yet (see the README).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectDatabase, type Database } from '../../store/db.js';
import { TicketRepository } from '../../store/tickets.js';
import { Api, newTenant, stack, type TenantFixture } from '../support/client.js';

describe('WebSocket tickets', () => {
  let tenant: TenantFixture;
  let database: Database;
  let tickets: TicketRepository;

  before(async () => {
    tenant = await newTenant('tickets');
    const env = stack().serviceEnv;
    database = await connectDatabase(env.MONGODB_URI!, env.MONGODB_DB!);
    tickets = new TicketRepository(database.db);
  });
  after(() => database.close());

  it('mints a short-lived ticket for the caller and a ws URL that carries it', async () => {
    const response = await tenant.api.post('/v1/users/ws-ticket');
    assert.equal(response.status, 201);
    const { ticket, expires_at, ws_url } = response.body.results;
    assert.match(ticket, /^wst_[\w-]{32}$/);
    const lifetime = Date.parse(expires_at) - Date.now();
    assert.ok(lifetime > 50_000 && lifetime <= 60_000, `lifetime ${lifetime} ms`);
    assert.equal(ws_url, `ws://${new URL(stack().apiUrl).host}/v1/ws/memory-events?ticket=${ticket}`);
    const stored = await database.db.collection('ws_tickets').findOne({ tenant_id: tenant.tenantId });
    assert.ok(stored, 'stored');
    assert.ok(!JSON.stringify(stored).includes(ticket), 'only its hash is stored');
  });

  it('needs an API key to mint', async () => {
    const response = await new Api(stack().apiUrl, null).post('/v1/users/ws-ticket');
    assert.equal(response.status, 401);
  });

  it('lets exactly one of two racing uses of a ticket through, and refuses expired and unknown ones', async () => {
    const { ticket } = (await tenant.api.post('/v1/users/ws-ticket')).body.results as { ticket: string };
    const [first, second] = await Promise.all([tickets.use(ticket), tickets.use(ticket)]);
    const outcomes = [first, second].map((use) => (use.ok ? 'ok' : use.reason)).sort();
    assert.ok(outcomes[0] === 'ok' && outcomes[1] !== 'ok', `outcomes: ${outcomes.join(', ')}`);
    const winner = first.ok ? first : second;
    assert.ok(winner.ok && winner.ticket.tenant_id === tenant.tenantId);
    assert.equal((await tickets.use(ticket)).ok, false);

    const expired = await tickets.mint(tenant.tenantId, tenant.keyId, -1);
    assert.deepEqual(await tickets.use(expired.ticket), { ok: false, reason: 'ticket_expired' });
    assert.deepEqual(await tickets.use('wst_not-a-ticket'), { ok: false, reason: 'unknown_ticket' });
  });

  it('answers a plain GET on the WebSocket path with 426 and a JSON error, without a key', async () => {
    const response = await new Api(stack().apiUrl, null).get('/v1/ws/memory-events?ticket=anything');
    assert.equal(response.status, 426);
    assert.equal(response.body.error.code, 'websocket_upgrade_required');
  });
});
