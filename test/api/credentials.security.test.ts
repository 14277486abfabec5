// Credential endpoints × permissions: each needs exactly its own permission; no device-group scope applies (spec 4.6 rule 4).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { PERMISSIONS, type Permission } from '../../src/identity/permissions';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';

let t: TestAppliance;
let seq = 0;
/** Per permission: a key holding only it, and a key holding every other permission (argon2 makes users slow to create). */
const keys = new Map<Permission, { only: string; allBut: string }>();

interface Endpoint {
  label: string;
  permission: Permission;
  method: string;
  /** Builds a fresh target so that a successful call (e.g. a delete) does not disturb the next. */
  request(): { path: string; json?: unknown };
  ok: number;
}

const fresh = () => createCredential(t.services.db, t.services.secrets, { name: `sec-${++seq}`, password: 'pw-secret-1' }).id;

const ENDPOINTS: Endpoint[] = [
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

async function call(key: string | undefined, method: string, path: string, json?: unknown) {
  const res = await t.api(`/api/v1${path}`, { method, key, json });
  const body = (await res.json()) as { error?: { code: string; request_id: string } };
  if (res.status >= 400) assert.equal(body.error?.request_id, res.headers.get('x-request-id'));
  return { status: res.status, body };
}

before(async () => {
  t = await startTestAppliance();
  for (const p of new Set(ENDPOINTS.map((e) => e.permission))) {
    keys.set(p, { only: await t.keyFor({ permissions: [p] }), allBut: await t.keyFor({ permissions: PERMISSIONS.filter((q) => q !== p) }) });
  }
});
after(() => t.close());

describe('credentials security', () => {
  for (const e of ENDPOINTS) {
    test(`${e.label}: allowed with ${e.permission}, 403 with every other permission`, async () => {
      const { only: withPerm, allBut: without } = keys.get(e.permission)!;
      const { path, json } = e.request();
      const denied = await call(without, e.method, path, json);
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error?.code, 'PERMISSION_DENIED');
      const allowed = await call(withPerm, e.method, path, json);
      assert.equal(allowed.status, e.ok, JSON.stringify(allowed.body));
    });

    test(`${e.label}: 401 without a key, with a bad key, or with the key in the URL`, async () => {
      const { path, json } = e.request();
      for (const [key, p] of [[undefined, path], ['cv_not-a-real-key', path]] as const) {
        const r = await call(key, e.method, p, json);
        assert.equal(r.status, 401);
        assert.equal(r.body.error?.code, 'UNAUTHORIZED');
      }
      const key = keys.get(e.permission)!.only;
      const inUrl = await call(undefined, e.method, `${path}${path.includes('?') ? '&' : '?'}api_key=${key}`, json);
      assert.equal(inUrl.status, 401);
    });
  }

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
    const now = Date.now();
    const groupA = Number(db.prepare("INSERT INTO device_groups (name, created_at, updated_at) VALUES ('sec-a', ?, ?)").run(now, now).lastInsertRowid);
    const groupB = Number(db.prepare("INSERT INTO device_groups (name, created_at, updated_at) VALUES ('sec-b', ?, ?)").run(now, now).lastInsertRowid);
    const used = fresh();
    const templateId = db.prepare('SELECT id FROM templates ORDER BY id LIMIT 1').pluck().get() as number;
    db.prepare(
      `INSERT INTO devices (name, hostname, port, protocol, group_id, credential_id, template_id, created_at, updated_at)
       VALUES ('sec-dev-b', '192.0.2.9', 22, 'ssh', ?, ?, ?, ?, ?)`,
    ).run(groupB, used, templateId, now, now);

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
