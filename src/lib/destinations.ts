// Where the appliance may connect on a user's behalf (notification channels): [notifications] allowed_destinations, checked on resolved addresses.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/** One allowed_destinations entry: a host name (`*.` for its subdomains) or an address/CIDR range, with an optional port. */
type Entry = { port: number | null } & ({ kind: 'name'; name: string } | { kind: 'net'; net: BlockList; catchAll: boolean });

/** The destination is not allowed: the connection is never made. */
export class DestinationRefused extends Error {
  readonly code = 'EDESTINATION';
}

const NAME_RE = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*$/;

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 4 ? 'ipv4' : 'ipv6';
}

function netEntry(text: string, port: number | null): Entry | null {
  const [address, prefix, ...rest] = text.split('/');
  const fam = isIP(address);
  if (!fam || rest.length) return null;
  const bits = prefix === undefined ? (fam === 4 ? 32 : 128) : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
  if (bits < 0 || bits > (fam === 4 ? 32 : 128)) return null;
  const net = new BlockList();
  net.addSubnet(address, bits, family(address));
  return { kind: 'net', net, catchAll: bits === 0, port };
}

/** Parse one entry: `hooks.example.net`, `*.example.net:443`, `10.0.0.0/8`, `192.0.2.7:514`, `[2001:db8::/32]:443`, `::1`. Null when malformed. */
export function parseDestination(raw: string): Entry | null {
  const text = raw.trim();
  let host = text;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracket) [, host, portText] = bracket;
  else if ((text.match(/:/g) ?? []).length === 1) [host, portText] = text.split(':');
  let port: number | null = null;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) return null;
    port = Number(portText);
  }
  if (isIP(host.split('/')[0])) return netEntry(host, port);
  if (bracket || !NAME_RE.test(host)) return null;
  return { kind: 'name', name: host.toLowerCase(), port };
}

export function isDestinationEntry(raw: string): boolean {
  return parseDestination(raw) !== null;
}

/** Loopback, link-local, unspecified and multicast: never a notification receiver unless an entry names them. */
const SPECIAL = new BlockList();
for (const [a, bits] of [
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['0.0.0.0', 8],
  ['224.0.0.0', 4],
] as const)
  SPECIAL.addSubnet(a, bits, 'ipv4');
for (const [a, bits] of [
  ['::1', 128],
  ['::', 128],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  SPECIAL.addSubnet(a, bits, 'ipv6');

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is the IPv4 address it carries. */
function plain(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1] : address;
}

function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) own.add(plain(i.address.split('%')[0]).toLowerCase());
  return own;
}

export class DestinationPolicy {
  private readonly entries: Entry[];

  constructor(entries: readonly string[]) {
    this.entries = entries.map((e) => {
      const parsed = parseDestination(e);
      if (!parsed) throw new Error(`allowed_destinations: "${e}" is not a host, address or CIDR range with an optional port`);
      return parsed;
    });
  }

  /**
   * Whether a connection to `address` (resolved from `host`) on `port` is allowed. With no entries, any address but
   * the special ones (loopback, link-local, unspecified, multicast, the appliance's own); with entries, only what one
   * of them matches. A special address is allowed only by an address or range entry that is not a catch-all (/0):
   * a host-name entry never covers it, so a name whose DNS answer turns to 127.0.0.1 is still refused.
   */
  allows(host: string, address: string, port: number): boolean {
    const a = plain(address.split('%')[0]).toLowerCase();
    const fam = family(a);
    const special = SPECIAL.check(a, fam) || ownAddresses().has(a);
    if (this.entries.length === 0) return !special;
    const name = host.toLowerCase().replace(/\.$/, '');
    return this.entries.some((e) => {
      if (e.port !== null && e.port !== port) return false;
      if (e.kind === 'net') return e.net.check(a, fam) && (!special || !e.catchAll);
      if (special) return false;
      return e.name.startsWith('*.') ? name.endsWith(e.name.slice(1)) : name === e.name;
    });
  }

  /**
   * Resolve `host` and return the first address the policy allows, to connect to that very address (so a DNS answer
   * that changes later cannot bypass the check); throws DestinationRefused when none is allowed.
   */
  async resolve(host: string, port: number): Promise<string> {
    const bare = host.replace(/^\[|\]$/g, '');
    const addresses = isIP(bare) ? [bare] : (await lookup(bare, { all: true, verbatim: true })).map((r) => r.address);
    const ok = addresses.find((a) => this.allows(bare, a, port));
    if (ok === undefined) throw new DestinationRefused(`${bare.includes(':') ? `[${bare}]` : bare}:${port} is not in allowed_destinations`);
    return ok;
  }
}
