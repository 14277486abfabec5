// Group endpoints × permissions (with and without); scoped users see every group (spec 4.6 rule 4), count only their devices, change only their own.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDevice } from '../../src/features/devices/devices.service';
import { createGroup } from '../../src/features/groups/groups.service';
import { type Permission } from '../../src/identity/permissions';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedCredential, seedTemplate } from '../helpers/seed';
import { callApi, permissionMatrix, type Json } from '../helpers/api-security';

let t: TestAppliance;
const g: Record<string, number> = {};
let seq = 0;

const call = (key: string | undefined, method: string, path: string, json?: unknown) => callApi(t, key, method, path, json);

const group = (name: string, parent: number | null = null) =>
  createGroup(t.services.db, SYSTEM_ACTOR, { name, parent_id: parent, description: '', schedule: null }).id;

before(async () => {
  t = await startTestAppliance();
  const db = t.services.db;
  const credential_id = seedCredential(db, null, { name: 'c', username: 'u' });
  const template_id = seedTemplate(db, 't', 'x');
  g.A = group('A');
  g.A1 = group('A1', g.A);
  g.B = group('B');
  const devices: [number | null, number][] = [
    [g.A, 1],
    [g.A1, 2],
    [g.B, 3],
    [null, 1],
  ];
  for (const [group_id, n] of devices) {
    for (let i = 0; i < n; i++) {
      createDevice(db, SYSTEM_ACTOR, {
        name: `sec-${++seq}`,
        hostname: 'h',
        protocol: 'ssh',
        group_id,
        enabled: true,
        description: '',
        schedule: null,
        accept_host_key_change: false,
        credential_id,
        template_id,
      });
    }
  }
});
after(() => t.close());

permissionMatrix('group endpoints × permissions', () => t, '/groups', [
  { label: 'GET /groups', permission: 'groups.view', method: 'GET', request: () => ({ path: '/groups' }), ok: 200 },
  { label: 'GET /groups/tree', permission: 'groups.view', method: 'GET', request: () => ({ path: '/groups/tree' }), ok: 200 },
  { label: 'GET /groups/{id}', permission: 'groups.view', method: 'GET', request: () => ({ path: `/groups/${g.A}` }), ok: 200 },
  { label: 'POST /groups', permission: 'groups.create', method: 'POST', request: () => ({ path: '/groups', json: { name: `p-${++seq}` } }), ok: 201 },
  {
    label: 'PUT /groups/{id}',
    permission: 'groups.update',
    method: 'PUT',
    request: () => ({ path: `/groups/${g.B}`, json: { description: `d${++seq}` } }),
    ok: 200,
  },
  { label: 'DELETE /groups/{id}', permission: 'groups.delete', method: 'DELETE', request: () => ({ path: `/groups/${group(`victim-${++seq}`)}` }), ok: 200 },
]);

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
      const byName = Object.fromEntries(list.items.filter((x: { name: string }) => x.name in counts).map((x: Json) => [x.name, x.device_count]));
      assert.deepEqual(byName, counts, `list for ${JSON.stringify(groups)}`);
      for (const [name, n] of Object.entries(counts)) assert.equal((await call(k, 'GET', `/groups/${g[name]}`)).body.device_count, n);
      const tree = (await call(k, 'GET', '/groups/tree')).body as Json[];
      const a = tree.find((n) => n.id === g.A)!;
      assert.deepEqual([a.device_count, a.children[0].device_count, tree.find((n) => n.id === g.B)!.device_count], [counts.A, counts.A1, counts.B]);
    }
  });

  test('a scoped user manages groups only inside its scope (issue #9): reads stay permission-only', async () => {
    const k = await t.keyFor({ permissions: perms, groups: [g.A] });
    const outside = await call(k, 'POST', '/groups', { name: `outside-${++seq}`, parent_id: g.B });
    assert.equal(outside.status, 403);
    assert.match(outside.body.error!.message, /outside your device-group scope/);
    const inside = await call(k, 'POST', '/groups', { name: `inside-${++seq}`, parent_id: g.A });
    assert.equal(inside.status, 201);
    assert.equal((await call(k, 'PUT', `/groups/${inside.body.id}`, { description: 'x' })).status, 200);
    assert.equal((await call(k, 'DELETE', `/groups/${inside.body.id}`)).status, 200);
    const full = await call(k, 'DELETE', `/groups/${g.B}`);
    assert.equal(full.status, 403, 'the scope is checked before the emptiness rule');
    assert.equal((await call(k, 'GET', `/groups/${g.B}`)).status, 200);
  });
});
