import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { WebhooksConfig } from '../../platform/config';

/**
 * Where a webhook may be sent: never to this machine, the private network, link-local addresses (cloud metadata
 * services live at 169.254.169.254) or other special ranges, unless WEBHOOK_ALLOWED_NETWORKS names them. Checked at
 * creation, to refuse a URL at once, and at every connection through the socket's own DNS lookup, so that a name
 * that later resolves elsewhere (DNS rebinding) is refused without a packet sent.
 */

/** ipaddr.js's name for the addresses of the public Internet; every other range is refused. */
const PUBLIC = 'unicast';

/** IPv4-compatible IPv6 (RFC 4291, deprecated): ipaddr.js calls it unicast, whatever IPv4 address it carries. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * What a refused target is told, whatever the reason: one text for a name that resolves to a refused address, a name
 * that does not resolve and a refused IP literal, so that an organization learns neither what the network's names
 * resolve to nor which of them exist. The reason goes to the log (`detail`).
 */
const REFUSED = 'must reach a public address';

export class TargetRefused extends Error {
  constructor(
    /** For the log only: the host, and the addresses it resolved to or why it did not resolve. */
    readonly detail: { host: string; addresses?: string[]; dnsError?: string },
  ) {
    super(REFUSED);
  }
}

/**
 * An IPv6 address ending in dotted IPv4 with its last 32 bits as two hex groups instead: ipaddr.js reads `::a.b.c.d`
 * as `::ffff:a.b.c.d` (IPv4-mapped), and the resolver writes an IPv4-compatible address in just that form.
 */
const hexTail = (address: string) => (!address.includes(':') ? address
  : address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) + Number(b)).toString(16)}:${((Number(c) << 8) + Number(d)).toString(16)}`));

function addressAllowed(address: string, config: Pick<WebhooksConfig, 'allowedNetworks'>): boolean {
  const text = hexTail(address);
  if (!ipaddr.isValid(text)) return false;
  // IPv4 written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is.
  const ip = ipaddr.process(text);
  if (config.allowedNetworks.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return true;
  // ::/96 holds :: and ::1 too, refused as such; ::1 passes only when WEBHOOK_ALLOWED_NETWORKS names it (above).
  if (ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE)) return false;
  return ip.range() === PUBLIC;
}

/** The URL's own problems, before any resolution: a message for the `url` field, or null. */
export function urlProblem(raw: string, config: Pick<WebhooksConfig, 'httpsOnly'>): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (config.httpsOnly ? url.protocol !== 'https:' : !['http:', 'https:'].includes(url.protocol)) {
    return config.httpsOnly ? 'must be an https:// URL' : 'must be an http:// or https:// URL';
  }
  if (url.username || url.password) return 'must not hold credentials';
  return null;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * For a URL whose host is an IP address (Node's connections skip the DNS lookup for those): its refusal, or null. A
 * name is judged by `guardedLookup` as the connection resolves it.
 */
export function literalRefusal(raw: string, config: Pick<WebhooksConfig, 'allowedNetworks'>): TargetRefused | null {
  const host = hostOf(new URL(raw));
  if (!ipaddr.isValid(host) || addressAllowed(host, config)) return null;
  return new TargetRefused({ host, addresses: [host] });
}

/**
 * Resolves the URL's host as a connection would; throws TargetRefused when it does not resolve or any address it
 * gives is not allowed (the same message either way: TargetRefused).
 */
export async function checkTarget(raw: string, config: Pick<WebhooksConfig, 'allowedNetworks'>): Promise<void> {
  const host = hostOf(new URL(raw));
  const addresses = ipaddr.isValid(host) ? [host] : await resolveAll(host);
  if (addresses.some((a) => !addressAllowed(a, config))) throw new TargetRefused({ host, addresses });
}

function resolveAll(host: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true }, (err, addresses) => {
      if (err) reject(new TargetRefused({ host, dnsError: err.code ?? err.message }));
      else resolve(addresses.map((a) => a.address));
    });
  });
}

/**
 * A DNS lookup for http.request that refuses a name resolving to any address not allowed, or not resolving. Node skips the lookup
 * for an IP literal: `checkTarget` covers those before the request.
 */
export function guardedLookup(config: Pick<WebhooksConfig, 'allowedNetworks'>): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      // A name that does not resolve is refused like one that resolves to a refused address: an outcome of its own
      // would tell the endpoint's organization which internal names exist (the resolver's error goes to the log).
      if (err) return callback(new TargetRefused({ host: hostname, dnsError: err.code ?? err.message }), '', 0);
      if (addresses.some((a) => !addressAllowed(a.address, config))) {
        return callback(new TargetRefused({ host: hostname, addresses: addresses.map((a) => a.address) }), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
