// Group endpoints × permissions (with and without); scoped users see every group (spec 4.6 rule 4) but count only their devices.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDevice } from '../../src/features/devices/devices.service';
import { createGroup } from '../../src/features/groups/groups.service';
import { PERMISSIONS, type Permission } from '../../src/identity/permissions';
import { SCOPE_ALL } from '../../src/identity/principal';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';

let t: TestAppliance;
const g: Record<string, number> = {};
let seq = 0;

type Json = Record<string, any> & { error?: { code: string; message: string; request_id: string } };

async function call(k: string | undefined, method: string, path: string, json?: unknown) {
  const res = await t.api(`/api/v1${path}`, { method, key: k, json });
  const body = (await res.json()) as Json;
  if (res.status >= 400) assert.equal(body.error?.request_id, res.headers.get('x-request-id'), `request_id on ${method} ${path}`);
  return { status: res.status, body };
}

const group = (name: string, parent: number | null = null) =>
  createGroup(t.services.db, SCOPE_ALL, { name, parent_id: parent, description: '', schedule: null }).id;

before(async () => {
  t = await startTestAppliance();
  const db = t.services.db;
  const now = Date.now();
  const credential_id = Number(db.prepare(`INSERT INTO credentials (name, username, created_at, updated_at) VALUES ('c', 'u', ?, ?)`).run(now, now).lastInsertRowid);
  const template_id = Number(db.prepare(`INSERT INTO templates (name, vendor, spec, created_at, updated_at) VALUES ('t', 'x', '{}', ?, ?)`).run(now, now).lastInsertRowid);
  g.A = group('A');
  g.A1 = group('A1', g.A);
  g.B = group('B');
  const devices: [number | null, number][] = [[g.A, 1], [g.A1, 2], [g.B, 3], [null, 1]];
  for (const [group_id, n] of devices) {
    for (let i = 0; i < n; i++) {
      createDevice(db, {
        name: `sec-${++seq}`, hostname: 'h', protocol: 'ssh', group_id, enabled: true, description: '', schedule: null,
        accept_host_key_change: false, credential_id, template_id,
      });
    }
  }
});
after(() => t.close());

describe('permissions', () => {
  const endpoints: { perm: Permission; method: string; label: string; path: () => string; json?: () => unknown; ok: number }[] = [
    { perm: 'groups.view', method: 'GET', label: '/groups', path: () => '/groups', ok: 200 },
    { perm: 'groups.view', method: 'GET', label: '/groups/tree', path: () => '/groups/tree', ok: 200 },
    { perm: 'groups.view', method: 'GET', label: '/groups/{id}', path: () => `/groups/${g.A}`, ok: 200 },
    { perm: 'groups.create', method: 'POST', label: '/groups', path: () => '/groups', json: () => ({ name: `p-${++seq}` }), ok: 201 },
    { perm: 'groups.update', method: 'PUT', label: '/groups/{id}', path: () => `/groups/${g.B}`, json: () => ({ description: `d${++seq}` }), ok: 200 },
    { perm: 'groups.delete', method: 'DELETE', label: '/groups/{id}', path: () => `/groups/${group(`victim-${++seq}`)}`, ok: 200 },
  ];
  for (const e of endpoints) {
    test(`${e.method} ${e.label}: needs ${e.perm}`, async () => {
      const holder = await t.keyFor({ permissions: [e.perm] });
      const others = await t.keyFor({ permissions: PERMISSIONS.filter((p) => p !== e.perm) });
      const ok = await call(holder, e.method, e.path(), e.json?.());
      assert.equal(ok.status, e.ok, JSON.stringify(ok.body));
      const denied = await call(others, e.method, e.path(), e.json?.());
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error?.code, 'PERMISSION_DENIED');
      if (e.method !== 'GET') {
        const bad = await call(others, e.method, e.method === 'POST' ? '/groups' : '/groups/abc', { bogus: true });
        assert.equal(bad.status, 403, 'the guard runs before validation');
      }
      const anonymous = await call(undefined, e.method, e.path(), e.json?.());
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.error?.code, 'UNAUTHORIZED');
    });
  }
});

describe('device-group scope', () => {
  const perms: Permission[] = ['groups.view', 'groups.create', 'groups.update', 'groups.delete'];

  test('a scoped user sees every group, but device_count covers only its devices', async () => {
    const cases: [number[] | null, Record<string, number>][] = [
      [null, { A: 3, A1: 2, B: 3 }],
      [[g.A], { A: 3, A1: 2, B: 0 }],
      [[g.A1], { A: 2, A1: 2, B: 0 }],
      [[], { A: 0, A1: 0, B: 0 }],
    ];
    for (const [groups, counts] of cases) {
      const k = await t.keyFor({ permissions: perms, groups });
      const list = (await call(k, 'GET', '/groups?limit=100')).body;
      const byName = Object.fromEntries(list.items.filter((x: { name: string }) => x.name in counts).map((x: any) => [x.name, x.device_count]));
      assert.deepEqual(byName, counts, `list for ${JSON.stringify(groups)}`);
      for (const [name, n] of Object.entries(counts)) assert.equal((await call(k, 'GET', `/groups/${g[name]}`)).body.device_count, n);
      const tree = (await call(k, 'GET', '/groups/tree')).body as any[];
      const a = tree.find((n) => n.id === g.A);
      assert.deepEqual([a.device_count, a.children[0].device_count, tree.find((n) => n.id === g.B).device_count], [counts.A, counts.A1, counts.B]);
    }
  });

  test('a scoped user manages groups outside its scope (permission only, rule 4)', async () => {
    const k = await t.keyFor({ permissions: perms, groups: [g.A] });
    const created = await call(k, 'POST', '/groups', { name: `outside-${++seq}`, parent_id: g.B });
    assert.equal(created.status, 201);
    assert.equal((await call(k, 'PUT', `/groups/${created.body.id}`, { description: 'x' })).status, 200);
    assert.equal((await call(k, 'DELETE', `/groups/${created.body.id}`)).status, 200);
    const full = await call(k, 'DELETE', `/groups/${g.B}`);
    assert.equal(full.status, 409);
    assert.equal(full.body.error?.code, 'GROUP_HAS_DEVICES');
  });
});
