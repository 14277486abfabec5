// Group endpoints: list, tree, detail, create, partial update (rename, move), delete — shapes, errors, paging, time zones.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDevice } from '../../src/features/devices/devices.service';
import { createGroup, type GroupInput } from '../../src/features/groups/groups.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { formatTimestamp } from '../../src/lib/time';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedCredential, seedTemplate } from '../helpers/seed';
import { apiCall, expectError, type CallInit, type Json } from '../helpers/api';

const GROUP_FIELDS = ['id', 'name', 'parent_id', 'description', 'schedule', 'path', 'device_count', 'created_at', 'updated_at', 'zone'].sort();
const TREE_FIELDS = ['id', 'name', 'description', 'device_count', 'children'].sort();

let t: TestAppliance;
let key: string;
let refs: { credential_id: number; template_id: number };
let deviceSeq = 0;

const call = (path: string, init: Omit<CallInit, 'key'> & { k?: string } = {}) => apiCall(t, path, { ...init, key: init.k ?? key });

const group = (name: string, parent_id: number | null = null, extra: Partial<GroupInput> = {}) =>
  createGroup(t.services.db, SYSTEM_ACTOR, { name, parent_id, description: '', schedule: null, ...extra });

function device(group_id: number | null) {
  return createDevice(t.services.db, SYSTEM_ACTOR, {
    name: `gdev-${++deviceSeq}`,
    hostname: '192.0.2.1',
    protocol: 'ssh',
    group_id,
    enabled: true,
    description: '',
    schedule: null,
    accept_host_key_change: false,
    ...refs,
  });
}

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
  const db = t.services.db;
  refs = {
    credential_id: seedCredential(db, null, { name: 'c', username: 'u' }),
    template_id: seedTemplate(db, 't', 'x'),
  };
});
after(() => t.close());

describe('groups: empty appliance', () => {
  test('empty list: total 0, total_pages 1; empty tree', async () => {
    assert.deepEqual((await call('/groups')).body, {
      items: [],
      pagination: { page: 1, limit: 50, total: 0, total_pages: 1, has_next: false, has_prev: false },
    });
    assert.deepEqual((await call('/groups/tree')).body, []);
  });
});

describe('POST /groups', () => {
  test('201 with defaults, path through the ancestors, exact field set', async () => {
    const eu = await call('/groups', { method: 'POST', json: { name: ' Europe ' } });
    assert.equal(eu.status, 201);
    assert.deepEqual(Object.keys(eu.body).sort(), GROUP_FIELDS);
    const { id, created_at, updated_at, ...rest } = eu.body;
    assert.match(created_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    assert.equal(updated_at, created_at);
    assert.deepEqual(rest, { name: 'Europe', parent_id: null, description: '', schedule: null, path: 'Europe', device_count: 0, zone: null });
    const ber = await call('/groups', { method: 'POST', json: { name: 'Berlin', parent_id: id, description: 'DC', schedule: '@daily' } });
    const core = await call('/groups', { method: 'POST', json: { name: 'Core', parent_id: ber.body.id } });
    assert.deepEqual([ber.body.description, ber.body.schedule, ber.body.parent_id], ['DC', '@daily', id]);
    assert.equal(core.body.path, 'Europe / Berlin / Core');
  });

  test('400 GROUP_NAME_EXISTS among siblings only (case-insensitive, top level too)', async () => {
    const p = group('dup-parent');
    group('Same', p.id);
    expectError(await call('/groups', { method: 'POST', json: { name: 'same', parent_id: p.id } }), 400, 'GROUP_NAME_EXISTS');
    assert.equal((await call('/groups', { method: 'POST', json: { name: 'same' } })).status, 201);
    expectError(await call('/groups', { method: 'POST', json: { name: 'SAME' } }), 400, 'GROUP_NAME_EXISTS');
  });

  test('422: unknown fields, bad values, a parent that does not exist', async () => {
    const cases: [Record<string, unknown>, string[]][] = [
      [{ name: 'x', path: 'a / b' }, ['path']],
      [{ name: 'x', device_count: 1 }, ['device_count']],
      [{}, ['name']],
      [{ name: '' }, ['name']],
      [{ name: 'n'.repeat(129) }, ['name']],
      [{ name: 'x', parent_id: 'one' }, ['parent_id']],
      [{ name: 'x', parent_id: 0 }, ['parent_id']],
      [{ name: 'x', parent_id: 99999 }, ['parent_id']],
      [{ name: 'x', schedule: 'hourly' }, ['schedule']],
      [{ name: 'x', description: 5 }, ['description']],
    ];
    for (const [json, fields] of cases) expectError(await call('/groups', { method: 'POST', json }), 422, 'VALIDATION_ERROR', fields);
  });
});

describe('GET /groups, /groups/{group_id}, /groups/tree', () => {
  test('device_count includes subgroups; the tree nests and rolls counts up, siblings by name', async () => {
    const root = group('T-root');
    const b = group('b-child', root.id);
    const a = group('A-child', root.id);
    const leaf = group('leaf', b.id);
    device(root.id);
    device(b.id);
    device(leaf.id);
    device(leaf.id);
    device(null);
    const get = await call(`/groups/${root.id}`);
    assert.deepEqual(Object.keys(get.body).sort(), GROUP_FIELDS);
    assert.equal(get.body.device_count, 4);
    assert.equal((await call(`/groups/${b.id}`)).body.device_count, 3);
    assert.equal((await call(`/groups/${a.id}`)).body.device_count, 0);
    const tree = (await call('/groups/tree')).body as Json[];
    const node = tree.find((n) => n.id === root.id)!;
    assert.deepEqual(Object.keys(node).sort(), TREE_FIELDS);
    assert.deepEqual(node, {
      id: root.id,
      name: 'T-root',
      description: '',
      device_count: 4,
      children: [
        { id: a.id, name: 'A-child', description: '', device_count: 0, children: [] },
        {
          id: b.id,
          name: 'b-child',
          description: '',
          device_count: 3,
          children: [{ id: leaf.id, name: 'leaf', description: '', device_count: 2, children: [] }],
        },
      ],
    });
    const names = tree.map((n) => n.name);
    assert.deepEqual(
      names,
      [...names].sort((x, y) => x.toLowerCase().localeCompare(y.toLowerCase())),
    );
  });

  test('list: id order, pages, filters q and parent_id', async () => {
    const p = group('page-parent');
    const kids = ['k1', 'k2', 'K3', 'k4', 'k5'].map((n) => group(n, p.id).id);
    const page = async (q: string) => (await call(`/groups?parent_id=${p.id}&${q}`)).body;
    assert.deepEqual(
      (await page('limit=2')).items.map((x: { id: number }) => x.id),
      kids.slice(0, 2),
    );
    const last = await page('limit=2&page=3');
    assert.deepEqual(
      last.items.map((x: { id: number }) => x.id),
      kids.slice(4),
    );
    assert.deepEqual(last.pagination, { page: 3, limit: 2, total: 5, total_pages: 3, has_next: false, has_prev: true });
    assert.deepEqual((await page('limit=2&page=4')).items, []);
    assert.deepEqual(
      (await call('/groups?q=K3')).body.items.map((x: { name: string }) => x.name),
      ['K3'],
    );
    const top = (await call('/groups?parent_id=null&limit=100')).body.items;
    assert.ok(top.length > 0 && top.every((x: { parent_id: unknown }) => x.parent_id === null));
    assert.equal((await call('/groups?q=%25_')).body.pagination.total, 0);
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'page=0', 'parent_id=abc', 'parent_id=-1']) {
      const r = await call(`/groups?${q}`);
      expectError(r, 422, 'VALIDATION_ERROR', [q.split('=')[0]]);
    }
  });

  test('404, malformed id 422, /groups/tree not taken as an id', async () => {
    expectError(await call('/groups/99999'), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call('/groups/abc'), 422, 'VALIDATION_ERROR', ['group_id']);
    assert.equal((await call('/groups/tree')).status, 200);
  });

  test('time zones: header, user preference, unknown zone → 422', async () => {
    const gr = group('tz-group');
    const at = Date.UTC(2024, 0, 31, 23, 30);
    rawState(
      t.services.db,
      'a group made at a given past instant: only the clock makes it',
      'UPDATE device_groups SET created_at = ?, updated_at = ? WHERE id = ?',
      at,
      at,
      gr.id,
    );
    const tokyo = await t.keyFor({ permissions: ['groups.view'], timezone: 'Asia/Tokyo' });
    assert.equal((await call(`/groups/${gr.id}`)).body.created_at, '2024-01-31 23:30:00');
    assert.equal((await call(`/groups/${gr.id}`, { k: tokyo })).body.created_at, '2024-02-01 08:30:00');
    assert.equal((await call(`/groups/${gr.id}`, { k: tokyo, headers: { 'X-Timezone': 'America/Los_Angeles' } })).body.created_at, '2024-01-31 15:30:00');
    const listed = (await call(`/groups?q=tz-group`, { headers: { 'X-Timezone': 'Europe/Berlin' } })).body.items[0];
    assert.equal(listed.updated_at, formatTimestamp(Date.UTC(2024, 0, 31, 23, 30), 'Europe/Berlin'));
    expectError(await call('/groups', { headers: { 'X-Timezone': 'Not/AZone' } }), 422, 'VALIDATION_ERROR', ['X-Timezone']);
  });
});

describe('PUT /groups/{group_id}', () => {
  test('partial update; a move re-paths the subtree', async () => {
    const a = group('mv-a', null, { description: 'keep', schedule: '0 1 * * *' });
    const b = group('mv-b');
    const child = group('mv-child', a.id);
    const r = await call(`/groups/${a.id}`, { method: 'PUT', json: { name: 'mv-A2' } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), GROUP_FIELDS);
    assert.deepEqual([r.body.name, r.body.description, r.body.schedule], ['mv-A2', 'keep', '0 1 * * *']);
    assert.equal((await call(`/groups/${a.id}`, { method: 'PUT', json: { parent_id: b.id, schedule: null } })).body.schedule, null);
    assert.equal((await call(`/groups/${child.id}`)).body.path, 'mv-b / mv-A2 / mv-child');
    assert.equal((await call(`/groups/${a.id}`, { method: 'PUT', json: { parent_id: null } })).body.path, 'mv-A2');
    assert.equal((await call(`/groups/${a.id}`, { method: 'PUT', json: {} })).status, 200);
  });

  test('409 GROUP_PARENT_INVALID under itself or a descendant', async () => {
    const top = group('cyc-top');
    const mid = group('cyc-mid', top.id);
    const low = group('cyc-low', mid.id);
    for (const parent_id of [top.id, mid.id, low.id]) {
      expectError(await call(`/groups/${top.id}`, { method: 'PUT', json: { parent_id } }), 409, 'GROUP_PARENT_INVALID');
    }
    expectError(await call(`/groups/${mid.id}`, { method: 'PUT', json: { parent_id: mid.id } }), 409, 'GROUP_PARENT_INVALID');
    assert.equal((await call(`/groups/${low.id}`, { method: 'PUT', json: { parent_id: top.id } })).status, 200);
  });

  test('400 on a rename or move into a sibling name; 404; 422', async () => {
    const p = group('ren-parent');
    const x = group('ren-x', p.id);
    group('ren-y', p.id);
    group('ren-x');
    expectError(await call(`/groups/${x.id}`, { method: 'PUT', json: { name: 'REN-Y' } }), 400, 'GROUP_NAME_EXISTS');
    expectError(await call(`/groups/${x.id}`, { method: 'PUT', json: { parent_id: null } }), 400, 'GROUP_NAME_EXISTS');
    expectError(await call('/groups/99999', { method: 'PUT', json: { name: 'z' } }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call(`/groups/${x.id}`, { method: 'PUT', json: { parent_id: 99999 } }), 422, 'VALIDATION_ERROR', ['parent_id']);
    expectError(await call(`/groups/${x.id}`, { method: 'PUT', json: { id: 5 } }), 422, 'VALIDATION_ERROR', ['id']);
    expectError(await call(`/groups/${x.id}`, { method: 'PUT', json: { name: null } }), 422, 'VALIDATION_ERROR', ['name']);
  });
});

describe('DELETE /groups/{group_id}', () => {
  test('409 with children, 409 with devices, 200 when empty, then 404', async () => {
    const p = group('del-parent');
    const c = group('del-child', p.id);
    expectError(await call(`/groups/${p.id}`, { method: 'DELETE' }), 409, 'GROUP_HAS_CHILDREN');
    const d = device(c.id);
    expectError(await call(`/groups/${c.id}`, { method: 'DELETE' }), 409, 'GROUP_HAS_DEVICES');
    await call(`/devices/${d.id}`, { method: 'PUT', json: { group_id: null } });
    assert.deepEqual((await call(`/groups/${c.id}`, { method: 'DELETE' })).body, { status: 'success' });
    assert.deepEqual((await call(`/groups/${p.id}`, { method: 'DELETE' })).body, { status: 'success' });
    expectError(await call(`/groups/${p.id}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call(`/groups/${p.id}`, { method: 'DELETE' }), 404, 'RESOURCE_NOT_FOUND');
  });
});
