/**
 * What an outbound (signed-URL) request may reach, following the OWASP SSRF prevention guidance.
 * Pure checks, no I/O; core/outbound/client.ts applies them to the address it actually connects to.
 *
 *   - https only, no userinfo, port 443 unless the deployment lists more (OUTBOUND_ALLOWED_PORTS);
 *   - a host's trailing dot (`storage.test.`) is dropped before every check and the lookup;
 *   - no literal IP in any spelling (the WHATWG URL parser already turns 2130706433, 0x7f000001,
 *     0177.0.0.1 and 127.1 into 127.0.0.1, so one check covers them all), no bracketed IPv6;
 *   - when OUTBOUND_ALLOWED_HOSTS is set, the host must match one of its patterns;
 *   - every resolved address must be public unicast: ipaddr.js classifies it, and only its
 *     `unicast` range passes (IPv6 also only inside global unicast 2000::/3, which excludes
 *     IPv4-compatible ::a.b.c.d). IPv4-mapped IPv6 is refused outright, whatever it maps to.
 *   - request headers a client supplies cannot set Host, Content-Length or hop-by-hop headers.
 */
import ipaddr from 'ipaddr.js';

export type RefusalReason = 'malformed' | 'scheme' | 'userinfo' | 'port' | 'literal_ip' | 'host_not_allowed' | 'private_address' | 'header';

export class OutboundRefusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    /** The URL part or header at fault, for the error message. */
    readonly part: string,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundRefusal';
  }
}

export interface OutboundPolicy {
  /** Ports besides 443 that may be used. */
  allowedPorts: ReadonlySet<number>;
  /** Host patterns (`*.s3.amazonaws.com`, `storage.example.com`); empty means any public host. */
  allowedHosts: readonly string[];
  /**
   * Test-only: one `host:port` admitted whatever it resolves to (a loopback HTTPS server in the
   * test suite). Config refuses it unless ALLOW_UNSAFE_OUTBOUND_TEST_ORIGIN=true.
   */
  unsafeTestOrigin: string | null;
}

export interface CheckedUrl {
  url: URL;
  hostname: string;
  port: number;
  /** True only for the test origin: its addresses are not checked. */
  skipAddressCheck: boolean;
}

const hostMatches = (hostname: string, pattern: string): boolean => {
  const wanted = pattern.toLowerCase();
  if (wanted.startsWith('*.')) return hostname.endsWith(wanted.slice(1)) && hostname.length > wanted.length - 1;
  return hostname === wanted;
};

export function checkUrl(raw: string, policy: OutboundPolicy): CheckedUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefusal('malformed', 'url', 'is not a valid absolute URL');
  }
  if (url.protocol !== 'https:')
    throw new OutboundRefusal('scheme', 'scheme', `scheme ${url.protocol.replace(/:$/, '')} is refused: https only`);
  if (url.username || url.password)
    throw new OutboundRefusal('userinfo', 'userinfo', 'URLs with user information (user:password@) are refused');
  // A fully qualified name's trailing dot is dropped: `storage.test.` is `storage.test` to DNS, the
  // allow-list and TLS alike (so a trailing dot cannot step around a host pattern or the checks).
  const hostname = url.hostname.toLowerCase().replace(/\.$/, '');
  const port = url.port ? Number(url.port) : 443;
  const origin = `${hostname}:${port}`;
  if (policy.unsafeTestOrigin !== null && origin === policy.unsafeTestOrigin.toLowerCase()) {
    return { url, hostname, port, skipAddressCheck: true };
  }
  if (hostname.startsWith('[') || ipaddr.isValid(hostname) || ipaddr.IPv4.isValidFourPartDecimal(hostname)) {
    throw new OutboundRefusal('literal_ip', 'host', `host ${hostname} is an IP address; a DNS name is required`);
  }
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)+$/.test(hostname)) {
    throw new OutboundRefusal('malformed', 'host', `host ${hostname} is not a public DNS name`);
  }
  if (port !== 443 && !policy.allowedPorts.has(port)) {
    throw new OutboundRefusal(
      'port',
      'port',
      `port ${port} is refused (allowed: 443${[...policy.allowedPorts].map((p) => `, ${p}`).join('')})`,
    );
  }
  if (policy.allowedHosts.length > 0 && !policy.allowedHosts.some((pattern) => hostMatches(hostname, pattern))) {
    throw new OutboundRefusal('host_not_allowed', 'host', `host ${hostname} is not in this deployment's list of storage hosts`);
  }
  return { url, hostname, port, skipAddressCheck: false };
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** null when the address may be connected to; otherwise why not. */
export function addressRefusal(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return `IPv4-mapped address (${v6.toIPv4Address().toString()})`;
    if (range !== 'unicast' || !v6.match(GLOBAL_UNICAST_V6)) return `${range === 'unicast' ? 'non-global' : range} IPv6 address`;
    return null;
  }
  return range === 'unicast' ? null : `${range} address`;
}

/** Hop-by-hop and framing headers (RFC 9110 §7.6.1) and Host: the service sets these itself. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Client-supplied headers for the GET or PUT, checked; throws naming the header. */
export function checkHeaders(headers: Record<string, unknown> | undefined, field: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  const entries = Object.entries(headers);
  if (entries.length > 32) throw new OutboundRefusal('header', field, `${field} may have at most 32 headers`);
  for (const [name, value] of entries) {
    if (!TOKEN.test(name)) throw new OutboundRefusal('header', `${field}.${name}`, `${field}: "${name}" is not a valid header name`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      throw new OutboundRefusal(
        'header',
        `${field}.${name}`,
        `${field}: ${name} cannot be set (the service sets framing and hop-by-hop headers)`,
      );
    }
    if (typeof value !== 'string' || value.length > 8192 || /[\r\n\0]/.test(value)) {
      throw new OutboundRefusal(
        'header',
        `${field}.${name}`,
        `${field}.${name} must be a string of at most 8192 characters without line breaks`,
      );
    }
    out[name] = value;
  }
  return out;
}
