// Device endpoints × permissions (with and without), and the device-group scope matrix of spec 4.6.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type Device, type DeviceInput } from '../../src/features/devices/devices.service';
import { getDeviceRow, setDeviceReachability } from '../../src/features/devices/devices.store';
import { createGroup } from '../../src/features/groups/groups.service';
import { type Permission } from '../../src/identity/permissions';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi, permissionMatrix, type Json } from '../helpers/api-security';
import { createTestDevice, seedCredential, seedTemplate } from '../helpers/seed';

let t: TestAppliance;
let refs: { credential_id: number; template_id: number };
const g: Record<string, number> = {};
const dev: Record<string, Device> = {};
let seq = 0;

const call = (key: string | undefined, method: string, path: string, json?: unknown) => callApi(t, key, method, path, json);

function expectDenied(r: { status: number; body: Json }, what: string) {
  assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.error?.code, 'PERMISSION_DENIED', what);
}

const seed = (name: string, extra: Partial<DeviceInput> = {}) => createTestDevice(t.services.db, refs, name, { hostname: '192.0.2.1', ...extra });

const names = (r: { body: Json }) => r.body.items.map((d: { name: string }) => d.name).sort();

before(async () => {
  t = await startTestAppliance();
  const db = t.services.db;
  const now = Date.now();
  refs = {
    credential_id: seedCredential(db, null, { name: 'c', username: 'u' }),
    template_id: seedTemplate(db, 't', 'x'),
  };
  const group = (name: string, parent: string | null) =>
    (g[name] = createGroup(db, SYSTEM_ACTOR, { name, parent_id: parent ? g[parent] : null, description: '', schedule: null }).id);
  group('A', null);
  group('A1', 'A');
  group('B', null);
  dev.a = seed('dev-a', { group_id: g.A });
  dev.a1 = seed('dev-a1', { group_id: g.A1 });
  dev.b = seed('dev-b', { group_id: g.B });
  dev.none = seed('dev-none');
  for (const d of Object.values(dev)) setDeviceReachability(db, d.id, 'unreachable', 'timeout', now);
});
after(() => t.close());

permissionMatrix('device endpoints × permissions', () => t, '/devices', [
  { label: 'GET /devices', permission: 'devices.view', method: 'GET', request: () => ({ path: '/devices' }), ok: 200 },
  { label: 'GET /devices/unreachable', permission: 'devices.view', method: 'GET', request: () => ({ path: '/devices/unreachable' }), ok: 200 },
  { label: 'GET /devices/{id}', permission: 'devices.view', method: 'GET', request: () => ({ path: `/devices/${dev.a.id}` }), ok: 200 },
  {
    label: 'PUT /devices/{id}',
    permission: 'devices.update',
    method: 'PUT',
    request: () => ({ path: `/devices/${dev.a.id}`, json: { description: `d${++seq}` } }),
    ok: 200,
  },
  {
    label: 'DELETE /devices/{id}',
    permission: 'devices.delete',
    method: 'DELETE',
    request: () => ({ path: `/devices/${seed(`victim-${++seq}`).id}` }),
    ok: 200,
  },
]);

describe('device-group scope', () => {
  const all: Permission[] = ['devices.view', 'devices.create', 'devices.update', 'devices.delete'];

  test('lists and counts show only devices in scope (subgroups included, ungrouped only for "all")', async () => {
    const cases: [number[] | null, string[]][] = [
      [null, ['dev-a', 'dev-a1', 'dev-b', 'dev-none']],
      [[g.A], ['dev-a', 'dev-a1']],
      [[g.A1], ['dev-a1']],
      [[g.B], ['dev-b']],
      [[], []],
    ];
    for (const [groups, expected] of cases) {
      const k = await t.keyFor({ permissions: all, groups });
      for (const path of ['/devices?q=dev-', '/devices/unreachable']) {
        const r = await call(k, 'GET', path);
        assert.deepEqual(names(r), expected, `${path} for scope ${JSON.stringify(groups)}`);
        assert.equal(r.body.pagination.total, expected.length);
        assert.equal(r.body.pagination.total_pages, 1);
      }
      // A filter pointing outside the scope cannot widen it.
      const outside = await call(k, 'GET', `/devices?group_id=${g.B}`);
      assert.equal(outside.body.pagination.total, expected.filter((n) => n === 'dev-b').length);
    }
  });

  test('detail, update and delete outside the scope: 403 that says nothing about the device', async () => {
    const k = await t.keyFor({ permissions: all, groups: [g.A] });
    for (const d of [dev.b, dev.none]) {
      const get = await call(k, 'GET', `/devices/${d.id}`);
      expectDenied(get, 'get');
      assert.ok(!JSON.stringify(get.body).includes(d.name));
      // A rename that would collide is still a 403: the scope is checked before anything else.
      expectDenied(await call(k, 'PUT', `/devices/${d.id}`, { name: 'dev-a' }), 'put');
      expectDenied(await call(k, 'PUT', `/devices/${d.id}`, { description: 'hijacked', group_id: g.A }), 'put into own scope');
      expectDenied(await call(k, 'DELETE', `/devices/${d.id}`), 'delete');
      const row = getDeviceRow(t.services.db, d.id);
      assert.ok(row, 'still there');
      assert.deepEqual([row.description, row.group_id, row.name], ['', d.group_id, d.name]);
    }
    assert.equal((await call(k, 'GET', `/devices/${dev.a1.id}`)).status, 200);
    expectDenied(await call(await t.keyFor({ permissions: all, groups: [] }), 'GET', `/devices/${dev.a.id}`), 'empty scope');
  });

  test('a scoped user cannot move a device out of its scope or make it ungrouped', async () => {
    const k = await t.keyFor({ permissions: all, groups: [g.A] });
    const d = seed(`mover-${++seq}`, { group_id: g.A });
    expectDenied(await call(k, 'PUT', `/devices/${d.id}`, { group_id: g.B }), 'to B');
    expectDenied(await call(k, 'PUT', `/devices/${d.id}`, { group_id: null }), 'to ungrouped');
    assert.equal(getDeviceRow(t.services.db, d.id)?.group_id, g.A);
    const moved = await call(k, 'PUT', `/devices/${d.id}`, { group_id: g.A1 });
    assert.equal(moved.status, 200);
    assert.equal(moved.body.group_id, g.A1);
    const unchanged = await call(k, 'PUT', `/devices/${d.id}`, { group_id: g.A1, description: 'same group' });
    assert.equal(unchanged.status, 200);
    const admin = await t.keyFor({ permissions: all });
    assert.equal((await call(admin, 'PUT', `/devices/${d.id}`, { group_id: null })).status, 200);
  });

  test('POST checks devices.create and no scope on the group (rule 3); a credential beyond the caller’s reach holds the device', async () => {
    const k = await t.keyFor({ permissions: [...all, 'credentials.view'], groups: [g.A] });
    const admin = await t.keyFor({ permissions: [...all, 'credentials.view'] });
    const held = (id: number) => t.services.db.prepare('SELECT held_by FROM device_credential_holds WHERE device_id = ?').get(id) !== undefined;
    for (const group_id of [g.B, null]) {
      // The scoped user may create it anywhere, but may not choose where an unrestricted credential goes: held.
      const scoped = await call(k, 'POST', '/devices', { name: `created-${++seq}`, hostname: 'h', group_id, ...refs });
      assert.equal(scoped.status, 201, JSON.stringify(scoped.body));
      assert.equal(scoped.body.group_id, group_id);
      assert.ok(held(scoped.body.id), 'held');
      expectDenied(await call(k, 'GET', `/devices/${scoped.body.id}`), 'created outside scope is then invisible');
      // The scope-all user is entitled: not held.
      const r = await call(admin, 'POST', '/devices', { name: `created-${++seq}`, hostname: 'h', group_id, ...refs });
      assert.equal(r.status, 201);
      assert.equal(r.body.group_id, group_id);
      assert.ok(!held(r.body.id), 'not held');
      expectDenied(await call(k, 'GET', `/devices/${r.body.id}`), 'created outside scope is then invisible');
    }
  });

  test('a scoped delete inside the scope works', async () => {
    const k = await t.keyFor({ permissions: all, groups: [g.A] });
    const d = seed(`del-${++seq}`, { group_id: g.A1 });
    assert.deepEqual((await call(k, 'DELETE', `/devices/${d.id}`)).body, { status: 'success' });
    assert.equal(getDeviceRow(t.services.db, d.id), undefined);
  });
});
