// Reads a source's device list: NetBox/Nautobot REST pages (following `next`) or an HTTP JSON list in Oxidized's layout; outbound policy-checked and bounded.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { DestinationPolicy } from '../../lib/destinations';
import type { Filters, Mapping, SourceKind } from './inventory.schemas';

/** One device as a source lists it, normalised over the three kinds. */
export interface SourceDevice {
  external_id: string;
  name: string | null;
  ip: string | null;
  platform: string[];
  place: Record<'region' | 'site' | 'location' | 'tenant' | 'role' | 'group', string>;
}

export interface SourceSpec {
  kind: SourceKind;
  url: string;
  token: string | null;
  filters: Filters;
  mapping: Mapping;
}

/** Bounds of one sync's reading: a source that answers slowly, endlessly or hugely fails the sync instead of holding it. */
export const FETCH_LIMITS = { timeoutMs: 30_000, maxPages: 1000, maxBodyBytes: 32 * 1024 * 1024, pageSize: 200 } as const;

export class SourceFetchError extends Error {}

/** GET one URL at an allowed address only (the Host and TLS name stay the URL's); a redirect is never followed. */
async function getJson(policy: DestinationPolicy, url: string, token: string | null): Promise<unknown> {
  const u = new URL(url);
  const tls = u.protocol === 'https:';
  const port = Number(u.port || (tls ? 443 : 80));
  const name = u.hostname.replace(/^\[|\]$/g, '');
  const address = await policy.resolve(name, port);
  const headers: Record<string, string> = { Host: u.host, Accept: 'application/json', 'User-Agent': 'confvault' };
  if (token) headers.Authorization = `Token ${token}`;
  const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = (tls ? httpsRequest : httpRequest)({
      host: address,
      port,
      method: 'GET',
      path: `${u.pathname}${u.search}`,
      servername: tls && !isIP(name) ? name : undefined,
      headers,
      timeout: FETCH_LIMITS.timeoutMs,
    });
    req.once('timeout', () => req.destroy(new SourceFetchError(`no answer within ${FETCH_LIMITS.timeoutMs / 1000} s`)));
    req.once('error', reject);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > FETCH_LIMITS.maxBodyBytes) req.destroy(new SourceFetchError(`the answer is larger than ${FETCH_LIMITS.maxBodyBytes} bytes`));
        else chunks.push(c);
      });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.once('error', reject);
    });
    req.end();
  });
  // The URL is said without its query (it may carry filters only), never the token.
  const where = `${u.origin}${u.pathname}`;
  if (status !== 200) throw new SourceFetchError(`${where} answered HTTP ${status}${status >= 300 && status < 400 ? ' (a redirect, not followed)' : ''}`);
  try {
    return JSON.parse(body);
  } catch {
    throw new SourceFetchError(`${where} did not answer JSON`);
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
/** The name of a nested NetBox/Nautobot object ({id, name, slug, …}). */
const nestedName = (v: unknown): string => (isObj(v) ? (str(v.name) ?? str(v.display) ?? '') : '');
/** "192.0.2.1/24" -> "192.0.2.1". */
const address = (v: unknown): string | null => (isObj(v) ? (str(v.address)?.split('/')[0] ?? null) : null);

/** A value at a dotted path ("node.mgmt_ip"), as Oxidized's http source reads its `map`. */
function at(o: Obj, path: string): unknown {
  let v: unknown = o;
  for (const k of path.split('.')) v = isObj(v) ? v[k] : undefined;
  return v;
}

/** The query of a NetBox or Nautobot device list: the filters under each product's names. */
function deviceQuery(kind: 'netbox' | 'nautobot', filters: Filters): URLSearchParams {
  const q = new URLSearchParams({ limit: String(FETCH_LIMITS.pageSize), offset: '0' });
  // Nautobot 2 answers nested objects by id only unless asked for depth 1.
  if (kind === 'nautobot') q.set('depth', '1');
  const names =
    kind === 'netbox' ? { site: 'site', role: 'role', tag: 'tag', status: 'status' } : { site: 'location', role: 'role', tag: 'tags', status: 'status' };
  for (const key of ['site', 'role', 'tag', 'status'] as const) for (const v of filters[key] ?? []) q.append(names[key], v);
  return q;
}

/** Every page of a NetBox-style list (count/next/results); `next` is followed at the source's own origin only. */
async function readPages(policy: DestinationPolicy, base: URL, first: string, token: string | null): Promise<Obj[]> {
  const out: Obj[] = [];
  let next: string | null = first;
  for (let page = 0; next !== null; page++) {
    if (page >= FETCH_LIMITS.maxPages) throw new SourceFetchError(`more than ${FETCH_LIMITS.maxPages} pages; narrow the source with filters`);
    const n: URL = new URL(next, base);
    const body = await getJson(policy, `${base.origin}${n.pathname}${n.search}`, token);
    if (!isObj(body) || !Array.isArray(body.results)) throw new SourceFetchError('the answer is not a NetBox/Nautobot list (count, next, results)');
    out.push(...body.results.filter(isObj));
    next = typeof body.next === 'string' && body.next !== '' ? body.next : null;
  }
  return out;
}

function apiBase(url: string): URL {
  return new URL(url.endsWith('/') ? url : `${url}/`);
}

/** NetBox's nested site carries no region: read the sites once when the group path asks for {region}. */
async function siteRegions(policy: DestinationPolicy, spec: SourceSpec): Promise<Map<string, string>> {
  const base = apiBase(spec.url);
  const sites = await readPages(policy, base, `api/dcim/sites/?limit=${FETCH_LIMITS.pageSize}&offset=0`, spec.token);
  return new Map(sites.map((s) => [String(s.id), nestedName(s.region)]));
}

function fromNetbox(d: Obj, regions: Map<string, string>): SourceDevice {
  const site = isObj(d.site) ? d.site : {};
  const platform = isObj(d.platform) ? [str(d.platform.slug), str(d.platform.name)] : [];
  return {
    external_id: String(d.id),
    name: str(d.name),
    ip: address(d.primary_ip) ?? address(d.primary_ip4) ?? address(d.primary_ip6),
    platform: platform.filter((p): p is string => p !== null),
    place: {
      region: nestedName(site.region) || (regions.get(String(site.id)) ?? ''),
      site: nestedName(d.site),
      location: nestedName(d.location),
      tenant: nestedName(d.tenant),
      role: nestedName(d.role ?? d.device_role),
      group: '',
    },
  };
}

function fromOxidized(o: Obj, fields: NonNullable<Mapping['fields']>): SourceDevice {
  const name = str(at(o, fields.name));
  const model = str(at(o, fields.model));
  return {
    // Oxidized's layout has no id: the name is the identity (a rename there is a retirement and a creation here).
    external_id: name ?? '',
    name,
    ip: str(at(o, fields.ip)),
    platform: model ? [model] : [],
    place: { region: '', site: '', location: '', tenant: '', role: '', group: str(at(o, fields.group)) ?? '' },
  };
}

/** Every device the source lists, normalised. Throws SourceFetchError (or DestinationRefused) when it cannot be read whole. */
export async function fetchSourceDevices(policy: DestinationPolicy, spec: SourceSpec): Promise<SourceDevice[]> {
  if (spec.kind === 'http') {
    const body = await getJson(policy, spec.url, spec.token);
    if (!Array.isArray(body)) throw new SourceFetchError('the answer is not a JSON array of devices (Oxidized’s http source layout)');
    const fields = spec.mapping.fields ?? { name: 'name', ip: 'ip', model: 'model', group: 'group' };
    return body.filter(isObj).map((o) => fromOxidized(o, fields));
  }
  const base = apiBase(spec.url);
  const regions = spec.kind === 'netbox' && spec.mapping.group_path.includes('{region}') ? await siteRegions(policy, spec) : new Map<string, string>();
  const rows = await readPages(policy, base, `api/dcim/devices/?${deviceQuery(spec.kind, spec.filters).toString()}`, spec.token);
  return rows.map((d) => fromNetbox(d, regions));
}
