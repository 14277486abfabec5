// Template endpoints × permissions: each needs exactly its own permission; reads ignore scope (spec 4.6 rule 4), changes do not.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTemplate } from '../../src/features/templates/templates.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { callApi, permissionMatrix, type GuardedEndpoint } from '../helpers/api-security';
import { templateWithDefaults } from '../../src/templates/files';

let t: TestAppliance;
let seq = 0;

const fresh = () =>
  createTemplate(
    t.services.db,
    SYSTEM_ACTOR,
    templateWithDefaults({
      name: `sec-${++seq}`,
      vendor: 'ACME',
      commands: ['show config'],
      redact: false,
    }),
  ).id;

const ENDPOINTS: GuardedEndpoint[] = [
  { label: 'GET /templates', permission: 'templates.view', method: 'GET', request: () => ({ path: '/templates' }), ok: 200 },
  { label: 'GET /templates/{id}', permission: 'templates.view', method: 'GET', request: () => ({ path: `/templates/${fresh()}` }), ok: 200 },
  {
    label: 'POST /templates',
    permission: 'templates.create',
    method: 'POST',
    request: () => ({ path: '/templates', json: { name: `new-${++seq}`, vendor: 'ACME', commands: ['show config'] } }),
    ok: 201,
  },
  {
    label: 'PUT /templates/{id}',
    permission: 'templates.update',
    method: 'PUT',
    request: () => ({ path: `/templates/${fresh()}`, json: { description: 'x' } }),
    ok: 200,
  },
  { label: 'DELETE /templates/{id}', permission: 'templates.delete', method: 'DELETE', request: () => ({ path: `/templates/${fresh()}` }), ok: 200 },
];

const call = (key: string | undefined, method: string, path: string, json?: unknown) => callApi(t, key, method, path, json);

before(async () => {
  t = await startTestAppliance();
});
after(() => t.close());

permissionMatrix('template endpoints × permissions', () => t, '/templates', ENDPOINTS);

describe('templates security', () => {
  test('the permission check comes before validation and before the built-in rule', async () => {
    const reader = await t.keyFor({ permissions: ['templates.view'] });
    assert.equal((await call(reader, 'POST', '/templates', { nonsense: true })).status, 403);
    assert.equal((await call(reader, 'PUT', '/templates/1', { description: 'x' })).status, 403);
    assert.equal((await call(reader, 'DELETE', '/templates/not-a-number')).status, 403);
  });

  test('reads ignore scope; a template used outside the scope is read-only to a scoped user (issue #9)', async () => {
    const db = t.services.db;
    const groupA = seedGroup(db, 'tsec-a');
    const groupB = seedGroup(db, 'tsec-b');
    const used = fresh();
    const credentialId = seedCredential(db, null, { name: 'tsec-cred', username: '' });
    seedDevice(db, { name: 'tsec-dev-b', hostname: '192.0.2.9', group_id: groupB, credential_id: credentialId, template_id: used });

    const scoped = await t.keyFor({ permissions: ['templates.view', 'templates.update'], groups: [groupA] });
    const list = await t.api('/api/v1/templates?limit=100', { key: scoped });
    const body = (await list.json()) as { items: { id: number; device_count: number }[]; pagination: { total: number } };
    assert.equal(body.pagination.total, db.prepare('SELECT count(*) FROM templates').pluck().get());
    assert.equal(body.items.find((i) => i.id === used)?.device_count, 1, 'counts devices outside the scope too');
    assert.equal((await call(scoped, 'GET', `/templates/${used}`)).status, 200);
    const edit = await call(scoped, 'PUT', `/templates/${used}`, { description: 'scoped edit' });
    assert.equal(edit.status, 403);
    assert.match(edit.body.error!.message, /outside your device-group scope/);
  });
});
