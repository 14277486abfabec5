// Names under hostile input: Unicode case folding and NFC for uniqueness, control characters refused (API, CLI, OpenAPI).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { nameKey } from '../../src/lib/names';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState } from '../helpers/seed';
import { apiCall, expectError as expectApiError, type ApiResult } from '../helpers/api';

let t: TestAppliance;
let key: string;
let refs: { credential_id: number; template_id: number };

const call = (p: string, method = 'GET', json?: unknown) => apiCall(t, p, { method, json, key });
const expectError = (r: ApiResult, status: number, code: string, field?: string) => expectApiError(r, status, code, field === undefined ? undefined : [field]);

const device = (name: string, extra: object = {}) => ({ name, hostname: '192.0.2.7', ...refs, ...extra });
const count = (table: string) => t.services.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
  const credential_id = (await call('/credentials', 'POST', { name: 'names-cred', username: 'u' })).body.id!;
  const template_id = (await call('/templates', 'POST', { name: 'names-tpl', vendor: 'ACME OS', commands: ['show config'] })).body.id!;
  refs = { credential_id, template_id };
});
after(() => t.close());

describe('name uniqueness folds case beyond ASCII and ignores the Unicode composition', () => {
  test('devices: "Zürich-1", "ZÜRICH-1" and a decomposed "Zu\\u0308rich-1" are one name', async () => {
    const first = await call('/devices', 'POST', device('Zürich-1'));
    assert.equal(first.status, 201, JSON.stringify(first.body));
    for (const name of ['ZÜRICH-1', 'Zu\u0308rich-1', 'zu\u0308RICH-1', '  zürich-1 ']) {
      expectError(await call('/devices', 'POST', device(name)), 400, 'DEVICE_NAME_EXISTS');
    }
    const other = await call('/devices', 'POST', device('other-1'));
    expectError(await call(`/devices/${other.body.id}`, 'PUT', { name: 'ZU\u0308RICH-1' }), 400, 'DEVICE_NAME_EXISTS');
    assert.equal(count("devices WHERE name LIKE '%rich%'"), 1);
  });

  test('a decomposed name is stored and returned in NFC', async () => {
    const r = await call('/devices', 'POST', device('Gene\u0300ve-core'));
    assert.equal(r.status, 201);
    assert.equal(r.body.name, 'Genève-core');
    assert.equal(t.services.db.prepare('SELECT name FROM devices WHERE id = ?').pluck().get(r.body.id), 'Genève-core');
  });

  test('groups among siblings, credentials: "Straße" and "STRASSE" are one name', async () => {
    const root = await call('/groups', 'POST', { name: 'Straße' });
    assert.equal(root.status, 201);
    expectError(await call('/groups', 'POST', { name: 'STRASSE' }), 400, 'GROUP_NAME_EXISTS');
    assert.equal((await call('/groups', 'POST', { name: 'STRASSE', parent_id: root.body.id })).status, 201, 'another parent: another sibling set');
    assert.equal((await call('/credentials', 'POST', { name: 'Ärger-Straße' })).status, 201);
    expectError(await call('/credentials', 'POST', { name: 'ärger-strasse' }), 400, 'CREDENTIAL_NAME_EXISTS');
  });

  test('the database holds the rule too, whatever door writes', () => {
    assert.throws(
      () =>
        rawState(
          t.services.db,
          'a write below every service: the database keeps the rule itself',
          "INSERT INTO credentials (name, created_at, updated_at) VALUES ('ÄRGER-STRASSE', 0, 0)",
        ),
      (err: unknown) => (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE',
    );
    assert.equal(nameKey('ẞ'), nameKey('ss'));
  });
});

describe('control characters are refused (422 naming the field) and nothing is written', () => {
  test('in names: C0, DEL, C1, even at the end where trimming would have hidden them', async () => {
    const before = count('devices');
    for (const name of ['a\u0000b', 'bell\u0007', 'core1\n', '\tcore1', 'esc\u001b[31m', 'del\u007f', 'nel\u0085', 'csi\u009b2J']) {
      expectError(await call('/devices', 'POST', device(name)), 422, 'VALIDATION_ERROR', 'name');
      expectError(await call('/groups', 'POST', { name }), 422, 'VALIDATION_ERROR', 'name');
      expectError(await call('/credentials', 'POST', { name }), 422, 'VALIDATION_ERROR', 'name');
    }
    const d = await call('/devices', 'POST', device('ctl-1'));
    expectError(await call(`/devices/${d.body.id}`, 'PUT', { name: 'ctl\u0000' }), 422, 'VALIDATION_ERROR', 'name');
    assert.equal(count('devices'), before + 1);
  });

  test('in descriptions: tab and line breaks are text, other control characters are not', async () => {
    const ok = await call('/devices', 'POST', device('desc-1', { description: 'line one\r\n\tline two' }));
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    expectError(await call('/devices', 'POST', device('desc-2', { description: 'red \u001b[31m' })), 422, 'VALIDATION_ERROR', 'description');
    expectError(await call('/groups', 'POST', { name: 'desc-g', description: 'nul\u0000' }), 422, 'VALIDATION_ERROR', 'description');
    expectError(await call('/credentials', 'POST', { name: 'desc-c', description: '\u0085' }), 422, 'VALIDATION_ERROR', 'description');
    expectError(
      await call('/templates', 'POST', { name: 'desc-t', vendor: 'ACME OS', commands: ['show config'], description: 'x\u0007' }),
      422,
      'VALIDATION_ERROR',
      'description',
    );
  });
});

describe('ids in paths and the published rules', () => {
  test('an id above 2^53-1 is a 422; the largest valid one is simply not found', async () => {
    expectError(await call('/devices/9007199254740992'), 422, 'VALIDATION_ERROR');
    expectError(await call('/devices/9007199254740991'), 404, 'RESOURCE_NOT_FOUND');
  });

  test('the OpenAPI document states the id bounds and the name rules', async () => {
    const doc = (await (await t.api('/api/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; schema: { minimum?: number; maximum?: number } }[] }>>;
      components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> };
    };
    const param = doc.paths['/devices/{device_id}'].get.parameters!.find((p) => p.name === 'device_id')!;
    assert.equal(param.schema.minimum, 1);
    assert.equal(param.schema.maximum, Number.MAX_SAFE_INTEGER);
    for (const schema of ['DeviceCreate', 'GroupCreate', 'CredentialCreate']) {
      const description = doc.components.schemas[schema].properties.name.description ?? '';
      assert.match(description, /NFC/, schema);
      assert.match(description, /control characters/, schema);
      assert.match(description, /case folding/, schema);
    }
  });
});

test('CLI: user add and role add refuse control characters (even where trimming would have hidden them), and create nothing', async () => {
  const dataDir = path.join(t.dir, 'cli');
  assert.equal((await runCliAsync(['init', '--data-dir', dataDir])).status, 0);
  const results = await Promise.all([
    runCliAsync(['user', 'add', 'bob\t', '--role', 'administrator', '--data-dir', dataDir]),
    runCliAsync(['user', 'add', 'carol\n', '--role', 'administrator', '--data-dir', dataDir]),
    runCliAsync(['role', 'add', 'ops\u000b', '--permissions', 'devices.view', '--data-dir', dataDir]),
    runCliAsync(['role', 'add', 'ops2', '--permissions', 'devices.view', '--description', 'bad\u0001', '--data-dir', dataDir]),
  ]);
  for (const r of results) {
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /invalid (username|role name|role description)/);
  }
  const users = await runCliAsync(['user', 'list', '--data-dir', dataDir]);
  assert.doesNotMatch(users.stdout, /bob|carol/);
  const roles = await runCliAsync(['role', 'list', '--data-dir', dataDir]);
  assert.doesNotMatch(roles.stdout, /ops/);
  const key = await runCliAsync(['apikey', 'create', 'admin', '--name', 'ci\u001bkey', '--data-dir', dataDir]);
  assert.equal(key.status, 1, key.stderr);
  assert.match(key.stderr, /control characters/);
  assert.doesNotMatch((await runCliAsync(['apikey', 'list', '--data-dir', dataDir])).stdout, /ci/);
});
