/**
 * The two HTTP calls the live-events client needs: minting a WebSocket ticket and fetching the
 * public signing keys. Both authenticate with `Authorization: Bearer <apiKey>`.
 */
import { type JWK } from 'jose';
import { HttpError } from './errors.js';

export interface TicketInfo {
  /** Single-use; the server lets it live about 60 s. */
  ticket: string;
  /** ISO 8601. */
  expiresAt: string;
  /** The WebSocket URL with the ticket in its query string. */
  wsUrl: string;
}

export interface HttpOptions {
  /** Aborts the request (default: a 10 s timeout). */
  signal?: AbortSignal;
  /** For tests or custom agents; defaults to the global fetch. */
  fetch?: typeof fetch;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** `baseUrl` without trailing slashes, with `/v1/...` appended; a path prefix in baseUrl is kept. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{error: {code, message}}` from an error body, when the body has that shape. */
export function errorBodyFields(body: unknown): { code?: string; message?: string } {
  if (!isRecord(body) || !isRecord(body.error)) return {};
  const { code, message } = body.error;
  return { code: typeof code === 'string' ? code : undefined, message: typeof message === 'string' ? message : undefined };
}

async function requestJson(method: 'GET' | 'POST', url: string, apiKey: string, what: string, options: HttpOptions): Promise<unknown> {
  const doFetch = options.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(url, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, Accept: 'application/json' },
      signal: options.signal ?? AbortSignal.timeout(DEFAULT_TIMEOUT_MS),
    });
  } catch (error) {
    throw new HttpError(0, undefined, `${what}: ${method} ${url} failed: ${(error as Error).message}`, { cause: error });
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const { code, message } = errorBodyFields(body);
    const detail = message ?? (text.slice(0, 200) || response.statusText);
    throw new HttpError(response.status, code, `${what}: HTTP ${response.status}${code ? ` ${code}` : ''}: ${detail}`);
  }
  if (body === undefined) throw new HttpError(response.status, undefined, `${what}: HTTP ${response.status} without a JSON body`);
  return body;
}

/** The WebSocket URL for a ticket when the server does not send ws_url: http→ws, https→wss. */
export function defaultWsUrl(baseUrl: string, ticket: string): string {
  const url = new URL(endpoint(baseUrl, '/v1/ws/memory-events'));
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('ticket', ticket);
  return url.toString();
}

/** POST /v1/users/ws-ticket → a single-use ticket and the URL to connect to. */
export async function mintTicket(baseUrl: string, apiKey: string, options: HttpOptions = {}): Promise<TicketInfo> {
  const url = endpoint(baseUrl, '/v1/users/ws-ticket');
  const body = await requestJson('POST', url, apiKey, 'minting a WebSocket ticket', options);
  const results = isRecord(body) ? body.results : undefined;
  if (!isRecord(results) || typeof results.ticket !== 'string' || !results.ticket) {
    throw new HttpError(0, undefined, `minting a WebSocket ticket: ${url} answered without results.ticket`);
  }
  const { ticket } = results;
  return {
    ticket,
    expiresAt: typeof results.expires_at === 'string' ? results.expires_at : '',
    wsUrl: typeof results.ws_url === 'string' && results.ws_url ? results.ws_url : defaultWsUrl(baseUrl, ticket),
  };
}

/** One public key of the signing keyset, as GET /v1/memory-events/signing-keys serves it. */
export type SigningJwk = JWK & { kid: string; status?: string };

/**
 * GET /v1/memory-events/signing-keys → the public keys (JWKS `keys`). Entries without a string
 * `kid` or `kty` are left out (a signature names its key by kid, so such a key verifies nothing).
 * An empty list means the server does not sign events.
 */
export async function fetchSigningKeys(baseUrl: string, apiKey: string, options: HttpOptions = {}): Promise<SigningJwk[]> {
  const url = endpoint(baseUrl, '/v1/memory-events/signing-keys');
  const body = await requestJson('GET', url, apiKey, 'fetching the event signing keys', options);
  const keys = isRecord(body) ? body.keys : undefined;
  if (!Array.isArray(keys)) throw new HttpError(0, undefined, `fetching the event signing keys: ${url} answered without a \`keys\` array`);
  return keys.filter((key): key is SigningJwk => isRecord(key) && typeof key.kid === 'string' && typeof key.kty === 'string');
}
