// The generated OpenAPI 3.1 document: public, valid, complete (all 25 spec endpoints), every documented path reachable under its server URL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validate } from '@scalar/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ERROR_CODES } from '../../src/errors';
import { VERSION } from '../../src/version';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { SPEC_ENDPOINTS } from './openapi.endpoints';
import type { Json } from '../helpers/api';

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

function operations(doc: Json): { method: string; path: string; op: Json }[] {
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ method, path, op })),
  );
}

/** Resolve a document path against the document's server URL, as a client generator does. */
function resolve(doc: Json, path: string, base: string): string {
  const server = new URL(doc.servers[0].url, `${base}/api/v1/openapi.json`);
  return server.href.replace(/\/$/, '') + path;
}

describe('GET /api/v1/openapi.json', () => {
  let t: TestAppliance;
  let res: Response;
  let doc: Json;

  before(async () => {
    t = await startTestAppliance();
    res = await t.api('/api/v1/openapi.json');
    doc = await res.json();
  });
  after(() => t.close());

  test('is served without a key, with an ETag for revalidation', async () => {
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const etag = res.headers.get('etag')!;
    assert.match(etag, /^"[\w-]+"$/);
    const again = await t.api('/api/v1/openapi.json', { headers: { 'If-None-Match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.ok(res.headers.get('x-request-id'));
  });

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await validate(doc);
    assert.deepEqual(result.errors ?? [], []);
    assert.equal(result.valid, true);
  });

  test('info, servers, global security, security scheme and tags', () => {
    assert.equal(doc.info.title, 'confvault public API');
    assert.equal(doc.info.version, VERSION);
    assert.deepEqual(
      doc.servers.map((s: Json) => s.url),
      ['/api/v1'],
    );
    assert.deepEqual(doc.security, [{ ApiKeyAuth: [] }]);
    const scheme = doc.components.securitySchemes.ApiKeyAuth;
    assert.deepEqual([scheme.type, scheme.in, scheme.name], ['apiKey', 'header', 'X-API-Key']);
    const tags = doc.tags.map((x: Json) => x.name);
    for (const tag of ['Backups', 'Statistics']) assert.ok(tags.includes(tag), tag);
    for (const { op } of operations(doc)) for (const tag of op.tags) assert.ok(tags.includes(tag), `tag ${tag} declared`);
  });

  test('the description covers auth, every error code with its status, pagination, time zone, scope and data safety', () => {
    const d: string = doc.info.description;
    for (const [code, { status }] of Object.entries(ERROR_CODES)) assert.ok(d.includes(`| \`${code}\` | ${status} |`), `${code} ${status}`);
    for (const phrase of [
      'X-API-Key',
      'X-Request-ID',
      'error.details.errors',
      'request_id',
      'X-Timezone',
      'YYYY-MM-DD HH:MM:SS',
      '`page`',
      '`limit`',
      'total_pages',
      'scope "all"',
      'POST /devices',
      'backups.view',
      'SNMP',
      'query string',
    ]) {
      assert.ok(d.includes(phrase), phrase);
    }
  });

  test('documents all 25 endpoints of spec section 4, and only paths relative to the server URL', () => {
    const documented = new Set(operations(doc).map((o) => `${o.method.toUpperCase()} ${o.path}`));
    const missing = SPEC_ENDPOINTS.filter((e) => !documented.has(`${e.method} ${e.path}`)).map((e) => `${e.method} ${e.path}`);
    assert.deepEqual(missing, []);
    for (const path of Object.keys(doc.paths)) assert.ok(!path.startsWith('/api/'), `${path} would resolve to /api/v1/api/...`);
  });

  test('every operation: unique operationId, summary, tags, ApiKeyAuth, declared path parameters, shared error responses', () => {
    const ids = new Set<string>();
    for (const { method, path, op } of operations(doc)) {
      const where = `${method} ${path}`;
      assert.ok(op.operationId && !ids.has(op.operationId), `${where} operationId`);
      ids.add(op.operationId);
      assert.ok(op.summary, `${where} summary`);
      assert.ok(op.tags?.length, `${where} tags`);
      assert.deepEqual(op.security ?? doc.security, [{ ApiKeyAuth: [] }], where);
      for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
        assert.ok(
          op.parameters?.some((p: Json) => p.in === 'path' && p.name === name && p.required),
          `${where} declares ${name}`,
        );
      }
      for (const status of ['401', '422', '500']) {
        assert.equal(op.responses[status]?.content?.['application/json']?.schema?.$ref, '#/components/schemas/Error', `${where} ${status}`);
      }
      assert.ok(
        Object.keys(op.responses).some((s) => /^2\d\d$/.test(s)),
        `${where} success response`,
      );
    }
  });

  test('the backup and statistics operations document their own codes and schemas', () => {
    const history = doc.paths['/devices/{device_id}/backups'].get;
    assert.match(history.responses['404'].description, /BACKUP_DEVICE_NOT_FOUND/);
    assert.match(history.responses['403'].description, /BACKUP_DEVICE_FORBIDDEN/);
    assert.match(history.responses['403'].description, /PERMISSION_DENIED/);
    const limit = history.parameters.find((p: Json) => p.name === 'limit');
    assert.deepEqual([limit.schema.default, limit.schema.minimum, limit.schema.maximum], [10, 1, 200]);
    const content = doc.paths['/backups/{backup_id}/content'].get;
    assert.equal(content.summary, 'Backup content');
    assert.match(content.responses['404'].description, /BACKUP_NOT_FOUND/);
    assert.equal(content.parameters.find((p: Json) => p.name === 'backup_id').schema.format, 'uuid');
    const record = doc.components.schemas.BackupRecord;
    assert.deepEqual(Object.keys(record.properties).sort(), ['config_snapshot_hash', 'error_message', 'finished_at', 'id', 'started_at', 'success']);
    assert.deepEqual([...record.required].sort(), Object.keys(record.properties).sort());
    for (const f of ['finished_at', 'error_message', 'config_snapshot_hash']) assert.deepEqual(record.properties[f].type, ['string', 'null'], f);
    assert.deepEqual(doc.components.schemas.BackupContent.properties.config_text.type, ['string', 'null']);
    assert.ok(doc.paths['/stats'].get.responses['403']);
    assert.deepEqual(Object.keys(doc.components.schemas.Statistics.properties).sort(), [
      'backups',
      'credentials',
      'devices',
      'failed_backups_24h',
      'groups',
      'storage',
      'templates',
      'total_devices',
      'unreachable_devices',
    ]);
  });

  test('every documented operation, resolved against the server URL, reaches a real route', async () => {
    const key = await t.keyFor({ permissions: 'all' });
    const unrouted: string[] = [];
    for (const { method, path } of operations(doc)) {
      // Ids that cannot exist: nothing is created, changed or deleted.
      const concrete = path.replace(/\{backup_id\}/g, '0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10').replace(/\{\w+\}/g, '999999');
      const url = resolve(doc, concrete, t.url);
      assert.ok(url.startsWith(`${t.url}/api/v1/`), url);
      const r = await fetch(url, {
        method: method.toUpperCase(),
        headers: { 'X-API-Key': key, ...(method === 'post' || method === 'put' ? { 'Content-Type': 'application/json' } : {}) },
        body: method === 'post' || method === 'put' ? '{}' : undefined,
      });
      const body: Json = await r.json().catch(() => ({}));
      if (body?.error?.code === 'ROUTE_NOT_FOUND' || r.status === 405) unrouted.push(`${method} ${path} -> ${r.status}`);
      assert.ok(r.status < 500, `${method} ${path} -> ${r.status}`);
    }
    assert.deepEqual(unrouted, []);
  });

  test('documents 405 METHOD_NOT_ALLOWED with its Allow header, the refusals below the app and the busy database', () => {
    const d: string = doc.info.description;
    for (const phrase of ['405', '`Allow`', '408', '431', 'SERVICE_UNAVAILABLE', 'UTF-8']) assert.ok(d.includes(phrase), phrase);
    for (const { method, path, op } of operations(doc)) {
      assert.match(op.responses['503']?.description ?? '', /SERVICE_UNAVAILABLE/, `${method} ${path} 503`);
    }
  });

  test('every example in the document validates against its own schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...doc, $id: 'https://confvault.invalid/openapi.json' });
    const failures: string[] = [];
    let checked = 0;
    const check = (schemaPointer: string, value: unknown, where: string) => {
      const validateAt = ajv.compile({ $ref: `https://confvault.invalid/openapi.json#${schemaPointer}` });
      checked++;
      if (!validateAt(value)) failures.push(`${where}: ${JSON.stringify(value)} ${ajv.errorsText(validateAt.errors)}`);
    };
    const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
    const walk = (node: Json, pointer: string, inSchema: boolean) => {
      if (Array.isArray(node)) return node.forEach((v, i) => walk(v, `${pointer}/${i}`, inSchema));
      if (node === null || typeof node !== 'object') return;
      const isPropertyMap = /\/(properties|patternProperties|\$defs)$/.test(pointer);
      if (!isPropertyMap) {
        if ('schema' in node && 'example' in node) check(`${pointer}/schema`, node.example, `${pointer}/example`);
        if ('schema' in node && node.examples && typeof node.examples === 'object' && !Array.isArray(node.examples)) {
          for (const [name, ex] of Object.entries<Json>(node.examples)) check(`${pointer}/schema`, ex.value, `${pointer}/examples/${name}`);
        }
        if (inSchema && !('schema' in node) && 'example' in node) check(pointer, node.example, `${pointer}/example`);
        if (inSchema && Array.isArray(node.examples)) node.examples.forEach((ex: unknown, i: number) => check(pointer, ex, `${pointer}/examples/${i}`));
      }
      for (const [k, v] of Object.entries<Json>(node)) {
        if (k === 'example' || k === 'examples') continue;
        walk(v, `${pointer}/${esc(k)}`, inSchema || k === 'schema' || pointer === '/components/schemas');
      }
    };
    walk(doc, '', false);
    assert.ok(checked > 10, `only ${checked} examples found`);
    assert.deepEqual(failures, []);
  });

  test('the document is generated once and reflects the running routes', async () => {
    const second = await t.api('/api/v1/openapi.json');
    assert.equal(second.headers.get('etag'), res.headers.get('etag'));
    assert.equal(await second.text(), JSON.stringify(doc));
  });
});
