// A property-based client of /api/v1 driven by its published OpenAPI document: generated valid and invalid requests for every operation, each answer checked against the document.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Permission } from '../../src/identity/permissions';
import type { TestAppliance } from './appliance';
import { Rng, SchemaGen, type IdPool, type Schema } from './openapi-gen';
import { enrol } from '../collectors/harness';

export interface FuzzKeys {
  /** Holds every permission, scope "all": the key whose invalid requests must be 422. */
  admin: string;
  /** Other keys (read-only, scoped, no permission): their answers must be documented too. */
  others: string[];
}

export interface FuzzOptions {
  baseUrl: string;
  doc: Schema;
  keys: FuzzKeys;
  ids: IdPool;
  seed: number;
  requests: number;
  concurrency?: number;
}

export interface FuzzReport {
  requests: number;
  /** Answers by operation and status ("POST /groups 201"). */
  statuses: Map<string, number>;
  failures: string[];
}

interface Operation {
  method: string;
  path: string;
  op: Schema;
  pointer: string;
}

/** What was sent, for a failure message that reproduces it. */
interface Sent {
  method: string;
  url: string;
  body?: string;
  contentType?: string;
  key: string | null;
  /** The constraint a deliberately invalid part breaks (an admin key's request must then be a 422). */
  broken: string | null;
}

const POOLS: Record<string, keyof IdPool | undefined> = {
  '/groups': 'group_id',
  '/credentials': 'credential_id',
  '/templates': 'template_id',
  '/devices': 'device_id',
  '/compliance/rules': 'rule_id',
  '/inventory-sources': 'source_id',
  '/devices/{device_id}/compliance/waivers': 'waiver_id',
  '/collectors/tokens': 'token_id',
};

/** Valid requests an operation gets after the draw when none of the draw's succeeded (run). */
const TOP_UP = 40;

const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

/** Messages of a schema-level refusal: a valid request by the document must never get one. */
const SCHEMA_REFUSAL =
  /^(Too big|Too small|Invalid input|Invalid option|Unrecognized key)|at most \d+ characters|must be \d+-\d+ characters|at most 2\^53-1|unknown field|must be between \d+ and \d+/;

function operations(doc: Schema): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(item)) out.push({ method: method.toUpperCase(), path, op, pointer: `/paths/${esc(path)}/${method}` });
  }
  return out;
}

export class OpenApiFuzzer {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly ops: Operation[];
  private readonly rng: Rng;
  private readonly gen: SchemaGen;

  constructor(private readonly o: FuzzOptions) {
    addFormats.default(this.ajv);
    this.ajv.addSchema({ ...o.doc, $id: 'https://confvault.invalid/openapi.json' });
    this.ops = operations(o.doc).filter((x) => !x.path.startsWith('/openapi') && !x.path.startsWith('/docs'));
    this.rng = new Rng(o.seed);
    this.gen = new SchemaGen(o.doc, this.rng, o.ids);
    // The first id of each pool is never deleted: every valid request that names one always has a record to reach,
    // whatever the order the seed draws (so every operation reaches a 2xx for any seed, not for chosen ones).
    for (const [field, pool] of Object.entries(o.ids)) if (pool.length) this.kept.set(field, pool[0]);
  }

  private readonly kept = new Map<string, number | string>();

  private validator(pointer: string): ValidateFunction {
    let v = this.validators.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `https://confvault.invalid/openapi.json#${pointer}` });
      this.validators.set(pointer, v);
    }
    return v;
  }

  /** One generated request for an operation: every part valid, or (half the time) one part broken on purpose. */
  private request(o: Operation, validOnly = false): Sent {
    const breakOne = !validOnly && this.rng.chance(0.5);
    const params = (o.op.parameters as Schema[] | undefined) ?? [];
    const parts: ('path' | 'query' | 'body' | 'framing')[] = [];
    if (params.some((p) => p.in === 'path')) parts.push('path');
    if (params.some((p) => p.in === 'query')) parts.push('query');
    const bodySchema = o.op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
    if (bodySchema) parts.push('body', 'body', 'framing');
    const target = breakOne && parts.length ? this.rng.pick(parts) : null;
    let broken: string | null = null;

    let path = o.path;
    const query = new URLSearchParams();
    for (const p of params) {
      const schema = p.schema as Schema;
      let value: unknown;
      if (target === p.in && broken === null && (p.in === 'path' || this.rng.chance(0.5))) {
        const b = this.brokenParam(schema, p.in === 'path');
        if (b) {
          value = b.value;
          broken = `${p.in} ${p.name as string}: ${b.why}`;
        }
      }
      if (value === undefined) {
        if (p.in === 'query' && !p.required && this.rng.chance(0.6)) continue;
        value = this.gen.valid(schema, p.name as string);
        // A DELETE aimed at a kept record goes to one that does not exist instead (a documented 404).
        if (o.method === 'DELETE' && p.in === 'path' && value === this.kept.get(p.name as string)) value = MISSING_ID;
      }
      if (p.in === 'path') path = path.replace(`{${p.name as string}}`, encodeURIComponent(String(value)));
      else query.set(p.name as string, String(value));
    }

    let body: string | undefined;
    let contentType: string | undefined;
    if (bodySchema) {
      contentType = 'application/json';
      let value = this.gen.valid(bodySchema);
      if (target === 'body' && broken === null) {
        const b = this.gen.invalid(bodySchema);
        if (b) {
          value = b.value;
          broken = `body ${b.why}`;
        }
      }
      body = JSON.stringify(value);
      if (target === 'framing' && broken === null) {
        if (this.rng.chance(0.5)) {
          body = body.slice(0, Math.max(1, body.length - 1 - this.rng.int(0, 3)));
          broken = 'body: malformed JSON';
        } else {
          contentType = 'text/plain';
          broken = 'body: not JSON (Content-Type)';
        }
      }
    }
    const qs = query.toString();
    const keyRoll = this.rng.next();
    const key =
      validOnly || keyRoll < 0.7 ? this.o.keys.admin : keyRoll < 0.95 ? this.rng.pick(this.o.keys.others) : this.rng.chance(0.5) ? null : 'cv_notakey';
    return { method: o.method, url: `${this.o.baseUrl}/api/v1${path}${qs ? `?${qs}` : ''}`, body, contentType, key, broken };
  }

  /** A query or path value the parameter's schema refuses, as text. */
  private brokenParam(schema: Schema, inPath: boolean): { value: string; why: string } | null {
    const s = this.gen.resolve(schema);
    const options: { value: string; why: string }[] = [];
    if (s.type === 'integer') {
      options.push({ value: 'abc', why: 'not an integer' }, { value: '1.5', why: 'not an integer' });
      // An empty path segment is another path (a 404), not a value of the parameter.
      if (!inPath) options.push({ value: '', why: 'empty' });
      if (typeof s.minimum === 'number') options.push({ value: String(s.minimum - 1), why: 'under minimum' });
      if (typeof s.maximum === 'number') options.push({ value: BigInt(s.maximum) + 1n + '', why: 'over maximum' });
    } else if (s.type === 'boolean') options.push({ value: 'maybe', why: 'not a boolean' }, { value: '', why: 'empty' });
    else if (s.format === 'uuid') options.push({ value: 'not-a-uuid', why: 'not a UUID' });
    else if (Array.isArray(s.enum)) options.push({ value: 'zz-none', why: 'not one of the enum' });
    else if (s.type === 'string') {
      if (typeof s.maxLength === 'number') options.push({ value: 'x'.repeat(s.maxLength + 1), why: 'over maxLength' });
      const b = this.gen.invalid(s);
      // An empty path segment is another path (a 404), not a value of the parameter.
      if (b && typeof b.value === 'string' && (b.value !== '' || !inPath)) options.push({ value: b.value, why: b.why });
    }
    return options.length ? this.rng.pick(options) : null;
  }

  private check(o: Operation, sent: Sent, status: number, headers: Headers, text: string, failures: string[]): void {
    const where = () =>
      `${sent.method} ${sent.url.replace(this.o.baseUrl, '')} key=${sent.key === this.o.keys.admin ? 'admin' : sent.key ? 'other' : 'none'}${sent.broken ? ` broken=[${sent.broken}]` : ''}${sent.body !== undefined ? ` body=${sent.body.slice(0, 300)}` : ''} -> ${status} ${text.slice(0, 300)}`;
    const fail = (why: string): void => {
      failures.push(`${why}: ${where()}`);
    };
    const requestId = headers.get('x-request-id');
    if (!requestId) fail('no X-Request-ID');
    if (status >= 500) return fail('a 5xx');
    const documented = (o.op.responses as Record<string, Schema>)[String(status)];
    if (!documented) return fail(`status ${status} not documented for ${o.method} ${o.path}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return fail('a body that is not JSON');
    }
    const pointer = `${o.pointer}/responses/${status}/content/application~1json/schema`;
    const validate = this.validator(pointer);
    if (!validate(body)) return fail(`body not valid against the document (${this.ajv.errorsText(validate.errors)})`);
    if (status >= 400) {
      const error = (body as { error: { request_id: string; details: { errors?: { message: string }[] } } }).error;
      if (error.request_id !== requestId) fail('error.request_id differs from X-Request-ID');
      const refusal = error.details.errors?.find((e) => SCHEMA_REFUSAL.test(e.message));
      if (status === 422 && sent.broken === null && sent.key === this.o.keys.admin && refusal)
        fail(`a valid request refused by a rule the document does not state ("${refusal.message}")`);
    }
    if (sent.broken !== null && sent.key === this.o.keys.admin) {
      const expected = sent.broken.includes('Content-Type') ? 415 : 422;
      if (status !== expected) fail(`a request the document calls invalid got ${status}, not ${expected}`);
    }
  }

  /** Sends the requests, `concurrency` at a time; records new ids from 201 answers so later requests use them. */
  async run(): Promise<FuzzReport> {
    const report: FuzzReport = { requests: 0, statuses: new Map(), failures: [] };
    const send = async (o: Operation, validOnly: boolean) => {
      const sent = this.request(o, validOnly);
      const headers: Record<string, string> = {};
      if (sent.key) headers['X-API-Key'] = sent.key;
      if (sent.contentType) headers['Content-Type'] = sent.contentType;
      const res = await fetch(sent.url, { method: sent.method, headers, body: sent.body });
      const text = await res.text();
      const label = `${o.method} ${o.path} ${res.status}`;
      report.statuses.set(label, (report.statuses.get(label) ?? 0) + 1);
      this.check(o, sent, res.status, res.headers, text, report.failures);
      if (res.status === 201) this.remember(o.path, text);
      if (res.status === 200 && o.method === 'DELETE') this.forget(sent.url);
      return res.status;
    };
    const worker = async () => {
      while (report.requests < this.o.requests) {
        report.requests++;
        await send(this.rng.pick(this.ops), false);
      }
    };
    await Promise.all(Array.from({ length: this.o.concurrency ?? 4 }, worker));
    // Then each operation that no request of the draw brought to a 2xx gets up to TOP_UP more, every part valid and
    // the administrator's key (still drawn from the seed, still checked): whether the generator can make an operation
    // succeed no longer depends on how often the seed happened to pick it.
    for (const o of this.ops) {
      const succeeded = () => [...report.statuses.keys()].some((k) => k.startsWith(`${o.method} ${o.path} 2`));
      for (let i = 0; i < TOP_UP && !succeeded(); i++) {
        report.requests++;
        await send(o, true);
      }
    }
    return report;
  }

  private remember(path: string, text: string): void {
    const field = POOLS[path];
    const id = (JSON.parse(text) as { id?: number | string }).id;
    if (field && id !== undefined) (this.o.ids[field] as (number | string)[]).push(id);
  }

  /** A deleted record leaves the pool: later requests should mostly name records that exist. */
  private forget(url: string): void {
    const m = /\/api\/v1(\/\w+)\/(\d+)$/.exec(url);
    const field = m ? POOLS[m[1]] : undefined;
    if (m && field && field !== 'rule_id' && field !== 'token_id') this.o.ids[field] = this.o.ids[field].filter((id) => id !== Number(m[2]));
  }
}

/** Every operation of the document, as "METHOD /path" (to check that a run reached them all). */
export function operationNames(doc: Schema): string[] {
  return operations(doc)
    .filter((x) => !x.path.startsWith('/openapi') && !x.path.startsWith('/docs'))
    .map((x) => `${x.method} ${x.path}`);
}

/** An appliance ready for a run: a few records of each kind made through the API, and keys of several kinds of user. */
/** An id no record has: the fuzzer's records are few and numbered from 1. */
const MISSING_ID = 999_999_999;

export async function prepareFuzz(t: TestAppliance): Promise<{ doc: Schema; keys: FuzzKeys; ids: IdPool }> {
  const admin = await t.keyFor({ permissions: 'all' });
  const post = async (path: string, json: unknown): Promise<number> => {
    const res = await t.api(`/api/v1${path}`, { method: 'POST', key: admin, json });
    const body = (await res.json()) as { id: number };
    if (res.status !== 201) throw new Error(`seeding ${path}: ${res.status} ${JSON.stringify(body)}`);
    return body.id;
  };
  const ids: IdPool = {
    group_id: [],
    credential_id: [],
    template_id: [],
    device_id: [],
    waiver_id: [],
    rule_id: [],
    source_id: [],
    collector_id: [],
    token_id: [],
  };
  const top = await post('/groups', { name: 'fuzz-top' });
  ids.group_id.push(top, await post('/groups', { name: 'fuzz-child', parent_id: top }), await post('/groups', { name: 'fuzz-other' }));
  ids.credential_id.push(await post('/credentials', { name: 'fuzz-anywhere', username: 'u', password: 'p' }));
  ids.credential_id.push(await post('/credentials', { name: 'fuzz-top-only', group_ids: [top], password: 'p' }));
  const templates = (await (await t.api('/api/v1/templates?limit=5', { key: admin })).json()) as { items: { id: number }[] };
  ids.template_id.push(...templates.items.map((x) => x.id));
  for (const [i, group] of [null, top, ids.group_id[1]].entries()) {
    ids.device_id.push(
      await post('/devices', {
        name: `fuzz-dev-${i}`,
        hostname: `192.0.2.${i + 1}`,
        group_id: group,
        credential_id: ids.credential_id[0],
        template_id: ids.template_id[0],
      }),
    );
  }
  // Compliance: database rules (the first is kept), and a waiver on each device naming the kept one.
  for (const id of ['fuzz-rule', 'fuzz-rule-2']) {
    const res = await t.api('/api/v1/compliance/rules', {
      method: 'POST',
      key: admin,
      json: { id, title: id, severity: 'low', check: { kind: 'must_exist', line: '^hostname ' } },
    });
    if (res.status !== 201) throw new Error(`seeding rule ${id}: ${res.status} ${await res.text()}`);
    ids.rule_id.push(id);
  }
  // Inventory sources (the first is kept: read, changed; its sync reaches no server, so its success is tested in test/inventory).
  for (const name of ['fuzz-source', 'fuzz-source-2'])
    ids.source_id.push(await post('/inventory-sources', { name, kind: 'netbox', url: 'https://netbox.invalid', credential_id: ids.credential_id[0] }));
  // Collectors: one enrolled (revoked and moved at will: both answer 200 again), two unused tokens (the first is kept).
  ids.collector_id.push((await enrol(t, 'fuzz-zone', 'fuzz-collector')).id);
  for (let i = 0; i < 2; i++) {
    const res = await t.api('/api/v1/collectors/tokens', { method: 'POST', key: admin, json: { zone: 'fuzz-zone' } });
    ids.token_id.push(((await res.json()) as { id: string }).id);
  }
  const waiver = { rule_id: 'fuzz-rule', reason: 'fuzz', owner: 'fuzz', expires_at: '2099-01-01 00:00:00' };
  for (const device of ids.device_id) ids.waiver_id.push(await post(`/devices/${device}/compliance/waivers`, waiver));
  const views: Permission[] = ['devices.view', 'groups.view', 'credentials.view', 'templates.view', 'backups.view', 'dashboard.view'];
  const others = [await t.keyFor({ permissions: views }), await t.keyFor({ permissions: 'all', groups: [top] }), await t.keyFor({ permissions: [] })];
  const doc = (await (await t.api('/api/v1/openapi.json')).json()) as Schema;
  return { doc, keys: { admin, others }, ids };
}
