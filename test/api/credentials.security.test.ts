// Credential endpoints × permissions: each needs exactly its own permission; no device-group scope applies (spec 4.6 rule 4).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedDevice, seedGroup } from '../helpers/seed';
import { callApi, permissionMatrix, type GuardedEndpoint } from '../helpers/api-security';
import { SYSTEM_ACTOR } from '../../src/identity/actor';

let t: TestAppliance;
let seq = 0;

const fresh = () => createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: `sec-${++seq}`, password: 'pw-secret-1' }).id;

const ENDPOINTS: GuardedEndpoint[] = [
  { label: 'GET /credentials', permission: 'credentials.view', method: 'GET', request: () => ({ path: '/credentials' }), ok: 200 },
  { label: 'GET /credentials/{id}', permission: 'credentials.view', method: 'GET', request: () => ({ path: `/credentials/${fresh()}` }), ok: 200 },
  {
    label: 'POST /credentials',
    permission: 'credentials.create',
    method: 'POST',
    request: () => ({ path: '/credentials', json: { name: `new-${++seq}` } }),
    ok: 201,
  },
  {
    label: 'PUT /credentials/{id}',
    permission: 'credentials.update',
    method: 'PUT',
    request: () => ({ path: `/credentials/${fresh()}`, json: { username: 'x' } }),
    ok: 200,
  },
  { label: 'DELETE /credentials/{id}', permission: 'credentials.delete', method: 'DELETE', request: () => ({ path: `/credentials/${fresh()}` }), ok: 200 },
];

const call = (key: string | undefined, method: string, path: string, json?: unknown) => callApi(t, key, method, path, json);

before(async () => {
  t = await startTestAppliance();
});
after(() => t.close());

permissionMatrix('credential endpoints × permissions', () => t, '/credentials', ENDPOINTS);

describe('credentials security', () => {
  test('the permission check comes before validation: a denied caller learns nothing about the body or id', async () => {
    const reader = await t.keyFor({ permissions: ['credentials.view'] });
    const bad = await call(reader, 'POST', '/credentials', { nonsense: true });
    assert.equal(bad.status, 403);
    const badId = await call(reader, 'DELETE', '/credentials/not-a-number');
    assert.equal(badId.status, 403);
    const missing = await call(reader, 'PUT', '/credentials/999999', { username: 'x' });
    assert.equal(missing.status, 403);
  });

  test('scope does not apply: a user limited to one device group sees, reads and changes every credential', async () => {
    const db = t.services.db;
    const groupA = seedGroup(db, 'sec-a');
    const groupB = seedGroup(db, 'sec-b');
    const used = fresh();
    const templateId = db.prepare('SELECT id FROM templates ORDER BY id LIMIT 1').pluck().get() as number;
    seedDevice(db, { name: 'sec-dev-b', hostname: '192.0.2.9', group_id: groupB, credential_id: used, template_id: templateId });

    const scoped = await t.keyFor({ permissions: ['credentials.view', 'credentials.update'], groups: [groupA] });
    const list = await t.api('/api/v1/credentials?limit=100', { key: scoped });
    const body = (await list.json()) as { items: { id: number; device_count: number }[]; pagination: { total: number } };
    const total = db.prepare('SELECT count(*) FROM credentials').pluck().get() as number;
    assert.equal(body.pagination.total, total);
    assert.equal(body.items.find((i) => i.id === used)?.device_count, 1, 'counts devices outside the scope too');
    assert.equal((await call(scoped, 'GET', `/credentials/${used}`)).status, 200);
    assert.equal((await call(scoped, 'PUT', `/credentials/${used}`, { description: 'scoped edit' })).status, 200);
  });
});
