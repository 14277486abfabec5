// A source of truth on 127.0.0.1 for the inventory tests: NetBox's documented /api/dcim/devices/ and /api/dcim/sites/
// responses (count/next/previous/results, nested objects as NetBox 4.x answers them), a Nautobot 2.x device page and an
// Oxidized http-source JSON list. NetBox cannot run on the test machines; this replays its API shape.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface NbDevice {
  id: number;
  name: string;
  ip: string | null;
  platform: string | null;
  site: string;
  status?: string;
}

export interface SourceServer {
  url: string;
  /** What NetBox lists; replace to change the source of truth between syncs. */
  netbox: NbDevice[];
  /** What the Oxidized-style list answers (objects as given). */
  oxidized: unknown[];
  /** Every request seen: path with query, and its Authorization header. */
  requests: { path: string; auth: string | undefined }[];
  /** Answer every request with this HTTP status instead (null: answer normally). */
  failWith: number | null;
  close(): Promise<void>;
}

const SITES = [
  { id: 1, name: 'AMS1', slug: 'ams1', region: 'Europe' },
  { id: 2, name: 'NYC1', slug: 'nyc1', region: 'Americas' },
];

const nested = (base: string, kind: string, id: number, name: string, slug: string) => ({
  id,
  url: `${base}/api/dcim/${kind}/${id}/`,
  display: name,
  name,
  slug,
});

/** One device as NetBox 4.x's /api/dcim/devices/ lists it (the fields the sync reads, and some it does not). */
function netboxDevice(base: string, d: NbDevice): object {
  const site = SITES.find((s) => s.slug === d.site) ?? SITES[0];
  const ip = d.ip
    ? { id: d.id, url: `${base}/api/ipam/ip-addresses/${d.id}/`, display: `${d.ip}/24`, family: { value: 4, label: 'IPv4' }, address: `${d.ip}/24` }
    : null;
  return {
    id: d.id,
    url: `${base}/api/dcim/devices/${d.id}/`,
    display: d.name,
    name: d.name,
    device_type: {
      ...nested(base, 'device-types', 1, 'C9300-48P', 'c9300-48p'),
      model: 'C9300-48P',
      manufacturer: nested(base, 'manufacturers', 1, 'Cisco', 'cisco'),
    },
    role: nested(base, 'device-roles', 1, 'Access', 'access'),
    tenant: { id: 1, url: `${base}/api/tenancy/tenants/1/`, display: 'NOC', name: 'NOC', slug: 'noc' },
    platform: d.platform ? nested(base, 'platforms', 1, d.platform.toUpperCase(), d.platform) : null,
    serial: '',
    site: { id: site.id, url: `${base}/api/dcim/sites/${site.id}/`, display: site.name, name: site.name, slug: site.slug, description: '' },
    location: null,
    rack: null,
    status: { value: d.status ?? 'active', label: 'Active' },
    primary_ip: ip,
    primary_ip4: ip,
    primary_ip6: null,
    tags: [],
    custom_fields: {},
    created: '2024-01-01T00:00:00.000000Z',
    last_updated: '2024-01-01T00:00:00.000000Z',
  };
}

/** A NetBox list page: limit/offset as NetBox reads them, `next` an absolute URL as NetBox writes it (null on the last). */
function page(base: string, path: string, q: URLSearchParams, all: object[]): object {
  const limit = Math.min(Number(q.get('limit') ?? 50), 1000);
  const offset = Number(q.get('offset') ?? 0);
  const link = (o: number) => {
    const n = new URLSearchParams(q);
    n.set('offset', String(o));
    return `${base}${path}?${n.toString()}`;
  };
  return {
    count: all.length,
    next: offset + limit < all.length ? link(offset + limit) : null,
    previous: offset > 0 ? link(Math.max(0, offset - limit)) : null,
    results: all.slice(offset, offset + limit),
  };
}

/** A Nautobot 2.x device at depth 1: location, role, status and platform as nested objects with names (no slugs). */
function nautobotDevice(base: string, d: NbDevice): object {
  const ref = (kind: string, name: string) => ({
    id: `00000000-0000-4000-8000-${String(d.id).padStart(12, '0')}`,
    object_type: kind,
    url: `${base}/api/${kind}/`,
    name,
    display: name,
  });
  return {
    id: `6f1c0c5e-0000-4000-8000-${String(d.id).padStart(12, '0')}`,
    object_type: 'dcim.device',
    display: d.name,
    name: d.name,
    role: ref('extras.role', 'Core'),
    status: ref('extras.status', 'Active'),
    location: ref('dcim.location', d.site === 'nyc1' ? 'NYC1' : 'AMS1'),
    platform: d.platform ? { ...ref('dcim.platform', d.platform), network_driver: d.platform } : null,
    tenant: null,
    primary_ip4: d.ip ? { ...ref('ipam.ipaddress', `${d.ip}/32`), address: `${d.ip}/32` } : null,
    primary_ip6: null,
  };
}

function send(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startSourceServer(): Promise<SourceServer> {
  const state: Omit<SourceServer, 'url' | 'close'> = { netbox: [], oxidized: [], requests: [], failWith: null };
  let base = '';
  const server: Server = createServer((req: IncomingMessage, res) => {
    const u = new URL(req.url ?? '/', base);
    state.requests.push({ path: `${u.pathname}${u.search}`, auth: req.headers.authorization });
    if (state.failWith !== null) return send(res, state.failWith, { detail: 'failing on purpose' });
    if (req.headers.authorization !== 'Token nb-0123456789abcdef-secret' && !u.pathname.startsWith('/oxidized'))
      return send(res, 403, { detail: 'Invalid token' });
    const q = u.searchParams;
    const list = (items: object[]) => send(res, 200, page(base, u.pathname, q, items));
    if (u.pathname === '/api/dcim/devices/') {
      const statuses = q.getAll('status');
      return list(state.netbox.filter((d) => statuses.length === 0 || statuses.includes(d.status ?? 'active')).map((d) => netboxDevice(base, d)));
    }
    if (u.pathname === '/api/dcim/sites/')
      return list(
        SITES.map((s) => ({ ...nested(base, 'sites', s.id, s.name, s.slug), region: nested(base, 'regions', s.id, s.region, s.region.toLowerCase()) })),
      );
    if (u.pathname === '/nautobot/api/dcim/devices/') {
      if (q.get('depth') !== '1') return send(res, 400, { detail: 'the test server answers depth=1 only' });
      return list(state.netbox.map((d) => nautobotDevice(base, d)));
    }
    if (u.pathname === '/oxidized/nodes.json') return send(res, 200, state.oxidized);
    return send(res, 404, { detail: 'Not found.' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const result: SourceServer = Object.assign(state, {
    url: base,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
  return result;
}
