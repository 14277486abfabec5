// The client of a request: its address and scheme, read from X-Forwarded-For/-Proto only when the TCP peer is a trusted proxy.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Context } from 'hono';

export interface ClientInfo {
  /** The client's IP address (the TCP peer's, or the one a trusted proxy reports), "unknown" outside Node. */
  address: string;
  /** The scheme the client used: the listener's, or the one a trusted proxy reports. */
  scheme: 'http' | 'https';
}

/** "::ffff:10.0.0.1" (an IPv4 peer on a dual-stack socket) is 10.0.0.1. */
function plainAddress(a: string): string {
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

const lists = new WeakMap<readonly string[], BlockList>();

/** The trusted_proxies entries (addresses or CIDR ranges, IPv4 or IPv6) as a matcher, built once per list. */
function trustList(trusted: readonly string[]): BlockList {
  let list = lists.get(trusted);
  if (list) return list;
  list = new BlockList();
  for (const raw of trusted) {
    const entry = raw.trim();
    const [addr, bits] = entry.split('/');
    const family = isIP(addr);
    if (family === 0) continue;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr, type);
    else if (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32)) list.addSubnet(addr, Number(bits), type);
  }
  lists.set(trusted, list);
  return list;
}

export function isTrustedProxy(address: string, trusted: readonly string[]): boolean {
  if (trusted.length === 0) return false;
  const family = isIP(address);
  if (family === 0) return false;
  return trustList(trusted).check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The client from the peer address and headers. X-Forwarded-For is read from the right: each hop that is itself a
 * trusted proxy is skipped, and the first one that is not is the client (anything left of it may be forged).
 */
export function resolveClient(
  peer: string | undefined,
  tls: boolean,
  headers: { forwardedFor?: string; forwardedProto?: string },
  trusted: readonly string[],
): ClientInfo {
  const address = peer ? plainAddress(peer) : 'unknown';
  const scheme = tls ? 'https' : 'http';
  if (!isTrustedProxy(address, trusted)) return { address, scheme };
  let client = address;
  const hops = (headers.forwardedFor ?? '')
    .split(',')
    .map((h) => plainAddress(h.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (isIP(hops[i]) === 0) break;
    client = hops[i];
    if (!isTrustedProxy(hops[i], trusted)) break;
  }
  const proto = (headers.forwardedProto ?? '').split(',')[0].trim().toLowerCase();
  return { address: client, scheme: proto === 'https' || proto === 'http' ? proto : scheme };
}

function headerValue(incoming: IncomingMessage, name: string): string | undefined {
  const v = incoming.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * The client of a request served by @hono/node-server, under the appliance's trusted_proxies. Without trusted proxies
 * (the default) it is the TCP peer, found without reading a header: the access log asks on every request.
 */
export function clientOf(c: Context, trusted: readonly string[]): ClientInfo {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) return { address: 'unknown', scheme: new URL(c.req.url).protocol === 'https:' ? 'https' : 'http' };
  const peer = incoming.socket.remoteAddress;
  const tls = (incoming.socket as TLSSocket).encrypted === true;
  if (trusted.length === 0) return { address: peer ? plainAddress(peer) : 'unknown', scheme: tls ? 'https' : 'http' };
  return resolveClient(
    peer,
    tls,
    { forwardedFor: headerValue(incoming, 'x-forwarded-for'), forwardedProto: headerValue(incoming, 'x-forwarded-proto') },
    trusted,
  );
}
