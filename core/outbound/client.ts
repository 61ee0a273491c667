/**
 * GET and PUT to client-supplied signed URLs, safely (docs/device-memory.md, "Outbound requests").
 *
 * The host is resolved once (A and AAAA); every answer must pass the address policy; the socket is
 * then opened to one of those checked addresses through the request's `lookup` hook, so no second
 * DNS query happens and a rebinding answer cannot switch the target. TLS still verifies the
 * certificate against the hostname (SNI and checkServerIdentity use it). Redirects are never
 * followed. Connect and total timeouts apply; downloads are capped while they stream.
 *
 * Why not a library for the connection: request-filtering-agent and @atproto-labs/fetch-node check
 * the address inside their own lookup as well, but each wraps a different HTTP client with its own
 * redirect and header behaviour; a lookup hook on node:https is the narrowest seam that pins the
 * checked address, and ipaddr.js (maintained, used by Express) does the classification.
 */
import { Resolver } from 'node:dns/promises';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { addressRefusal, checkUrl, OutboundRefusal, type OutboundPolicy } from './policy.js';

export type OutboundFailure = 'redirect' | 'status' | 'timeout' | 'too_large' | 'network';

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundClientOptions {
  policy: OutboundPolicy;
  /** DNS servers (`ip` or `ip:port`); empty: the system's. */
  dnsServers: string[];
  connectTimeoutMs: number;
  /** The whole call: DNS resolution, connect, TLS, request and response. */
  totalTimeoutMs: number;
  /** The resolver for signed-URL hosts (tests pass their own); default: node's, on `dnsServers`. */
  resolver?: HostResolver;
  /**
   * Reuse connections (webhooks post many requests to one endpoint). Every new connection is still
   * made to an address checked for that request; a reused one was checked when it was made.
   */
  keepAlive?: boolean;
}

/** The two lookups the client makes (node's Resolver has them). */
/** An HTTP answer of any status, its body read up to the cap given (the rest is discarded). */
export interface OutboundAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface HostResolver {
  resolve4(hostname: string): Promise<string[]>;
  resolve6(hostname: string): Promise<string[]>;
}

interface Target {
  url: URL;
  hostname: string;
  port: number;
  address: string;
  family: 4 | 6;
}

export class OutboundClient {
  private readonly resolver: HostResolver;
  private readonly agent: https.Agent | false;

  constructor(private readonly options: OutboundClientOptions) {
    this.agent = options.keepAlive ? new https.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo' }) : false;
    if (options.resolver) {
      this.resolver = options.resolver;
    } else {
      const resolver = new Resolver({ timeout: 3000, tries: 2 });
      if (options.dnsServers.length > 0) resolver.setServers(options.dnsServers);
      this.resolver = resolver;
    }
  }

  /** The URL checks that need no DNS: run before any work is done for a request that will use the URL. */
  precheck(rawUrl: string): void {
    checkUrl(rawUrl, this.options.policy);
  }

  /**
   * Checks the URL and every address its host resolves to; throws OutboundRefusal or OutboundError.
   * The lookup counts against the total timeout: a resolver that never answers is a timeout, not a hang.
   */
  async target(rawUrl: string, deadline = Date.now() + this.options.totalTimeoutMs): Promise<Target> {
    const checked = checkUrl(rawUrl, this.options.policy);
    const lookups = Promise.all([
      this.resolver.resolve4(checked.hostname).catch((error: NodeJS.ErrnoException) => noRecords(error)),
      this.resolver.resolve6(checked.hostname).catch((error: NodeJS.ErrnoException) => noRecords(error)),
    ]);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(new OutboundError('timeout', `no answer within ${this.options.totalTimeoutMs} ms (DNS lookup of ${checked.hostname})`)),
        Math.max(0, deadline - Date.now()),
      );
    });
    lookups.catch(() => undefined); // a lookup failing after the deadline is not an unhandled rejection
    const [v4, v6] = await Promise.race([lookups, expired]).finally(() => clearTimeout(timer));
    if (v4.length + v6.length === 0) throw new OutboundError('network', `host ${checked.hostname} does not resolve`);
    if (!checked.skipAddressCheck) {
      for (const address of [...v4, ...v6]) {
        const why = addressRefusal(address);
        if (why)
          throw new OutboundRefusal(
            'private_address',
            'host',
            `host ${checked.hostname} resolves to ${address}, a ${why}; only public addresses are allowed`,
          );
      }
    }
    const address = v4[0] ?? v6[0]!;
    return { url: checked.url, hostname: checked.hostname, port: checked.port, address, family: v4.length > 0 ? 4 : 6 };
  }

  /** Downloads the body, at most `maxBytes` (Content-Length and the bytes actually received). */
  async get(rawUrl: string, headers: Record<string, string>, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
    const deadline = Date.now() + this.options.totalTimeoutMs;
    const target = await this.target(rawUrl, deadline);
    return (await this.request(target, 'GET', headers, null, maxBytes, deadline, false, signal)).body;
  }

  /**
   * POSTs `body` and returns the answer whatever its status (webhook deliveries judge it
   * themselves); a redirect is an answer too, never followed. Only the first `maxBytes` of the
   * response body are read. The URL and its addresses are checked again here, at each connection.
   */
  async post(rawUrl: string, headers: Record<string, string>, body: Buffer, maxBytes: number): Promise<OutboundAnswer> {
    const deadline = Date.now() + this.options.totalTimeoutMs;
    const target = await this.target(rawUrl, deadline);
    return this.request(target, 'POST', { ...headers, 'Content-Length': String(body.length) }, [body], maxBytes, deadline, true, undefined);
  }

  /** Uploads `pieces` as one body with a Content-Length (signed-URL stores need it), writing each piece as is. */
  async put(
    rawUrl: string,
    headers: Record<string, string>,
    pieces: Buffer[],
    contentType: string,
    signal?: AbortSignal,
  ): Promise<{ status: number }> {
    const deadline = Date.now() + this.options.totalTimeoutMs;
    const target = await this.target(rawUrl, deadline);
    const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
    await this.request(
      target,
      'PUT',
      { ...headers, 'Content-Type': contentType, 'Content-Length': String(length) },
      pieces,
      64 * 1024,
      deadline,
      false,
      signal,
    );
    return { status: 200 };
  }

  private request(
    target: Target,
    method: 'GET' | 'PUT' | 'POST',
    headers: Record<string, string>,
    body: Buffer[] | null,
    maxBytes: number,
    deadline: number,
    /** true: any status is an answer and a body past maxBytes is cut short; false: non-2xx and oversize fail. */
    anyStatus: boolean,
    signal: AbortSignal | undefined,
  ): Promise<OutboundAnswer> {
    const { connectTimeoutMs, totalTimeoutMs } = this.options;
    // The only address this request may use: the one checked above.
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    return new Promise<OutboundAnswer>((resolve, reject) => {
      let settled = false;
      const fail = (error: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        clearTimeout(connect);
        signal?.removeEventListener('abort', abandon);
        request.destroy();
        reject(error);
      };
      // The caller's request was abandoned (its deadline answered): the connection is cut at once,
      // so no upload completes after the client was told to retry.
      const abandon = (): void => fail(signal!.reason);
      const request = https.request({
        host: target.hostname,
        servername: target.hostname,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method,
        headers: { ...headers, Host: target.url.host },
        lookup,
        agent: this.agent,
      });
      const total = setTimeout(
        () => fail(new OutboundError('timeout', `no complete answer within ${totalTimeoutMs} ms`)),
        Math.max(0, deadline - Date.now()),
      );
      const connect = setTimeout(
        () => fail(new OutboundError('timeout', `could not connect (TCP and TLS handshake) within ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
      if (signal?.aborted) {
        fail(signal.reason);
        return;
      }
      signal?.addEventListener('abort', abandon, { once: true });
      request.on('socket', (socket) => {
        // A kept-alive socket is connected already: only a new one has a handshake to wait for.
        if (request.reusedSocket) clearTimeout(connect);
        else socket.once('secureConnect', () => clearTimeout(connect));
      });
      request.on('error', (error) => fail(new OutboundError('network', `request failed: ${error.message}`)));
      request.on('response', (response) => {
        clearTimeout(connect);
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let received = 0;
        const finish = (): void => {
          if (settled) return;
          settled = true;
          clearTimeout(total);
          signal?.removeEventListener('abort', abandon);
          resolve({ status, headers: response.headers, body: Buffer.concat(chunks).subarray(0, maxBytes) });
        };
        if (anyStatus) {
          response.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (received <= maxBytes + chunk.length) chunks.push(chunk);
            // Enough read: the rest of the answer is not wanted, and the socket is not reused.
            if (received >= maxBytes) {
              finish();
              request.destroy();
            }
          });
          response.on('error', () => finish());
          response.on('end', finish);
          return;
        }
        if (status >= 300 && status < 400) {
          fail(new OutboundError('redirect', `the URL answered ${status} (a redirect); redirects are not followed`, status));
          return;
        }
        if (status < 200 || status >= 300) {
          fail(new OutboundError('status', `the URL answered ${status}`, status));
          return;
        }
        const declared = Number(response.headers['content-length'] ?? Number.NaN);
        if (Number.isFinite(declared) && declared > maxBytes) {
          fail(new OutboundError('too_large', `the response declares ${declared} bytes; the cap is ${maxBytes}`));
          return;
        }
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) fail(new OutboundError('too_large', `the response exceeded the ${maxBytes}-byte cap`));
          else chunks.push(chunk);
        });
        response.on('error', (error) => fail(new OutboundError('network', `download failed: ${error.message}`)));
        response.on('end', finish);
      });
      if (body) for (const piece of body) request.write(piece);
      request.end();
    });
  }
}

function noRecords(error: NodeJS.ErrnoException): string[] {
  if (error.code === 'ENODATA' || error.code === 'ENOTFOUND' || error.code === 'NXDOMAIN') return [];
  throw new OutboundError('network', `DNS lookup failed (${error.code ?? error.message})`);
}
