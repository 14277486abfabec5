// Device endpoints: create, detail, partial update, delete — exact shapes, defaults, every error code, time zones.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { finishBackup, startBackup } from '../../src/features/backups/backup-record.service';
import { type DeviceInput } from '../../src/features/devices/devices.service';
import { getDeviceRow, setDeviceHostKey, setDeviceReachability } from '../../src/features/devices/devices.store';
import { createGroup } from '../../src/features/groups/groups.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { apiCall, expectError, type CallInit } from '../helpers/api';
import { createTestDevice, seedCredential, seedTemplate } from '../helpers/seed';

const DEVICE_FIELDS = [
  'id',
  'name',
  'hostname',
  'port',
  'protocol',
  'group_id',
  'credential_id',
  'template_id',
  'enabled',
  'description',
  'schedule',
  'accept_host_key_change',
  'host_key',
  'reachability',
  'last_backup',
  'created_at',
  'updated_at',
  'retired',
  'zone',
].sort();
const TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

let t: TestAppliance;
let key: string;
let refs: { credential_id: number; template_id: number };

const call = (path: string, init: Omit<CallInit, 'key'> & { k?: string } = {}) => apiCall(t, path, { ...init, key: init.k ?? key });

/** A credential and a template for the devices, made by their services. */
function seedRefs(): { credential_id: number; template_id: number } {
  const db = t.services.db;
  const credential_id = seedCredential(db, null, { name: 'dev-cred', username: 'u' });
  const template_id = seedTemplate(db, 'dev-tpl', 'x');
  return { credential_id, template_id };
}

const seed = (name: string, extra: Partial<DeviceInput> = {}) => createTestDevice(t.services.db, refs, name, extra);

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
  refs = seedRefs();
});
after(() => t.close());

describe('POST /devices', () => {
  test('201 with defaults and the exact field set', async () => {
    const r = await call('/devices', { method: 'POST', json: { name: ' core1-ber ', hostname: 'core1.ber.example.net', ...refs } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body).sort(), DEVICE_FIELDS);
    const { id, created_at, updated_at, ...rest } = r.body;
    assert.ok(Number.isInteger(id));
    assert.match(created_at, TS);
    assert.equal(updated_at, created_at);
    assert.deepEqual(rest, {
      name: 'core1-ber',
      hostname: 'core1.ber.example.net',
      port: 22,
      protocol: 'ssh',
      group_id: null,
      ...refs,
      enabled: true,
      description: '',
      schedule: null,
      accept_host_key_change: false,
      host_key: null,
      reachability: { status: 'unknown', checked_at: null, error: null },
      last_backup: null,
      retired: null,
      zone: null,
    });
  });

  test('telnet defaults to port 23; explicit values are kept', async () => {
    const group = createGroup(t.services.db, SYSTEM_ACTOR, { name: 'post-grp', parent_id: null, description: '', schedule: null });
    const r = await call('/devices', { method: 'POST', json: { name: 'tel1', hostname: '2001:db8::1', protocol: 'telnet', ...refs } });
    assert.equal(r.status, 201);
    assert.deepEqual([r.body.port, r.body.protocol], [23, 'telnet']);
    const json = {
      name: 'full1',
      hostname: '198.51.100.7',
      port: 2222,
      protocol: 'ssh',
      group_id: group.id,
      ...refs,
      enabled: false,
      description: 'lab box',
      schedule: '30 4 * * 1-5',
      accept_host_key_change: true,
    };
    const full = await call('/devices', { method: 'POST', json });
    assert.equal(full.status, 201);
    // No host key has been seen yet, so there is nothing to accept: the first key seen is recorded.
    for (const [k, v] of Object.entries({ ...json, accept_host_key_change: false })) assert.deepEqual(full.body[k], v, k);
  });

  test('422 for unknown fields, bad values and missing required fields, each named', async () => {
    const base = { name: 'v1', hostname: 'h1', ...refs };
    const cases: [Record<string, unknown>, string[]][] = [
      [{ ...base, host_key: 'x' }, ['host_key']],
      [{ ...base, colour: 'red' }, ['colour']],
      [{ hostname: 'h1', ...refs }, ['name']],
      [{ ...base, name: '   ' }, ['name']],
      [{ ...base, name: 'x'.repeat(129) }, ['name']],
      [{ ...base, name: 'a\nb' }, ['name']],
      [{ name: 'v1', ...refs }, ['hostname']],
      [{ ...base, credential_id: undefined, template_id: 'one' }, ['credential_id', 'template_id']],
      [{ ...base, port: 0 }, ['port']],
      [{ ...base, port: 65536 }, ['port']],
      [{ ...base, port: '22' }, ['port']],
      [{ ...base, protocol: 'http' }, ['protocol']],
      [{ ...base, enabled: 'yes' }, ['enabled']],
      [{ ...base, group_id: 0 }, ['group_id']],
    ];
    for (const host of ['-bad.example', 'bad-.example', 'a..b', 'has space', '300.1.1.1', '1.2.3', 'x'.repeat(64) + '.net', '[2001:db8::1]', 'host_name']) {
      cases.push([{ ...base, hostname: host }, ['hostname']]);
    }
    for (const schedule of ['nonsense', '2030-01-01T00:00:00', '61 * * * *', '0 0 31 2 *', '']) cases.push([{ ...base, schedule }, ['schedule']]);
    for (const [json, fields] of cases) expectError(await call('/devices', { method: 'POST', json }), 422, 'VALIDATION_ERROR', fields);
  });

  test('422 naming each referenced record that does not exist', async () => {
    const r = await call('/devices', { method: 'POST', json: { name: 'ref1', hostname: 'h', group_id: 9999, credential_id: 9998, template_id: 9997 } });
    expectError(r, 422, 'VALIDATION_ERROR', ['group_id', 'credential_id', 'template_id']);
  });

  test('400 DEVICE_NAME_EXISTS, case-insensitively', async () => {
    seed('Dup-Name');
    expectError(await call('/devices', { method: 'POST', json: { name: 'dup-name', hostname: 'h', ...refs } }), 400, 'DEVICE_NAME_EXISTS');
  });

  test('malformed JSON → 422, wrong content type → 415', async () => {
    expectError(await call('/devices', { method: 'POST', body: '{"name":', headers: { 'Content-Type': 'application/json' } }), 422, 'VALIDATION_ERROR');
    expectError(
      await call('/devices', { method: 'POST', body: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });
});

describe('GET /devices/{device_id}', () => {
  test('200 with reachability, host key and last backup', async () => {
    const d = seed('detail1');
    const at = Date.UTC(2024, 0, 15, 12, 0, 0);
    setDeviceReachability(t.services.db, d.id, 'unreachable', 'connect ECONNREFUSED', at);
    setDeviceHostKey(t.services.db, d.id, 'SHA256:abc');
    const started = startBackup(t.services.db, d.id, refs.template_id, 'manual', at - 60_000);
    const done = await finishBackup(t.services.db, t.services.snapshots, started, { ok: false, failure: 'CONNECTION_REFUSED', message: 'refused' }, at);
    const r = await call(`/devices/${d.id}`, { headers: { 'X-Timezone': 'Europe/Berlin' } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), DEVICE_FIELDS);
    assert.equal(r.body.host_key, 'SHA256:abc');
    assert.deepEqual(r.body.reachability, { status: 'unreachable', checked_at: '2024-01-15 13:00:00', error: 'connect ECONNREFUSED' });
    assert.deepEqual(r.body.last_backup, { id: done.id, started_at: '2024-01-15 12:59:00', success: false });
  });

  test('404 RESOURCE_NOT_FOUND; malformed id → 422; /devices/unreachable is not taken as an id', async () => {
    expectError(await call('/devices/987654'), 404, 'RESOURCE_NOT_FOUND');
    for (const bad of ['abc', '-1', '1.5', '1e3']) expectError(await call(`/devices/${bad}`), 422, 'VALIDATION_ERROR', ['device_id']);
    const u = await call('/devices/unreachable');
    assert.equal(u.status, 200);
    assert.ok(Array.isArray(u.body.items));
  });

  test('time zones: X-Timezone header, then the user preference, then the appliance; unknown zone → 422', async () => {
    const d = seed('tz1');
    setDeviceReachability(t.services.db, d.id, 'reachable', null, Date.UTC(2024, 6, 1, 22, 30, 0));
    const tokyo = await t.keyFor({ permissions: ['devices.view'], timezone: 'Asia/Tokyo' });
    const checked = async (k: string, headers: Record<string, string> = {}) => (await call(`/devices/${d.id}`, { k, headers })).body.reachability.checked_at;
    assert.equal(await checked(key), '2024-07-01 22:30:00');
    assert.equal(await checked(tokyo), '2024-07-02 07:30:00');
    assert.equal(await checked(tokyo, { 'X-Timezone': 'America/New_York' }), '2024-07-01 18:30:00');
    expectError(await call(`/devices/${d.id}`, { headers: { 'X-Timezone': 'Mars/Olympus' } }), 422, 'VALIDATION_ERROR', ['X-Timezone']);
  });
});

describe('PUT /devices/{device_id}', () => {
  test('partial update changes only the given fields', async () => {
    const d = seed('put1', { description: 'before', schedule: '0 1 * * *' });
    const r = await call(`/devices/${d.id}`, { method: 'PUT', json: { description: 'after', enabled: false } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), DEVICE_FIELDS);
    assert.deepEqual([r.body.description, r.body.enabled, r.body.schedule, r.body.name, r.body.port], ['after', false, '0 1 * * *', 'put1', 22]);
    const cleared = await call(`/devices/${d.id}`, { method: 'PUT', json: { schedule: null } });
    assert.equal(cleared.body.schedule, null);
    const same = await call(`/devices/${d.id}`, { method: 'PUT', json: {} });
    assert.equal(same.status, 200);
    assert.equal(same.body.description, 'after');
  });

  test('moves between groups and to no group', async () => {
    const g = createGroup(t.services.db, SYSTEM_ACTOR, { name: 'put-grp', parent_id: null, description: '', schedule: null });
    const d = seed('put-move');
    assert.equal((await call(`/devices/${d.id}`, { method: 'PUT', json: { group_id: g.id } })).body.group_id, g.id);
    assert.equal((await call(`/devices/${d.id}`, { method: 'PUT', json: { group_id: null } })).body.group_id, null);
  });

  test('a protocol change moves a default port, keeps a custom one', async () => {
    const d = seed('put-proto');
    const r = await call(`/devices/${d.id}`, { method: 'PUT', json: { protocol: 'telnet' } });
    assert.deepEqual([r.body.protocol, r.body.port], ['telnet', 23]);
    const custom = seed('put-proto2', { port: 8022 });
    const r2 = await call(`/devices/${custom.id}`, { method: 'PUT', json: { protocol: 'telnet' } });
    assert.deepEqual([r2.body.protocol, r2.body.port], ['telnet', 8022]);
  });

  test('an address change resets reachability and keeps the host key', async () => {
    const d = seed('put-addr');
    setDeviceReachability(t.services.db, d.id, 'unreachable', 'timeout', Date.now());
    setDeviceHostKey(t.services.db, d.id, 'SHA256:old');
    const desc = await call(`/devices/${d.id}`, { method: 'PUT', json: { description: 'x' } });
    assert.equal(desc.body.reachability.status, 'unreachable');
    const r = await call(`/devices/${d.id}`, { method: 'PUT', json: { hostname: '192.0.2.99' } });
    assert.deepEqual(r.body.reachability, { status: 'unknown', checked_at: null, error: null });
    assert.deepEqual([r.body.host_key, r.body.accept_host_key_change], ['SHA256:old', false]);
    // Nothing was offered at the new address yet: an approval has no key to name.
    expectError(await call(`/devices/${d.id}`, { method: 'PUT', json: { accept_host_key_change: true } }), 409, 'CONFLICT');
    assert.equal(getDeviceRow(t.services.db, d.id)?.accept_host_key_change, 0);
  });

  test('errors: 400 rename to an existing name, 404, 422 field errors and unknown references', async () => {
    seed('put-taken');
    const d = seed('put-err');
    expectError(await call(`/devices/${d.id}`, { method: 'PUT', json: { name: 'PUT-TAKEN' } }), 400, 'DEVICE_NAME_EXISTS');
    const renamed = await call(`/devices/${d.id}`, { method: 'PUT', json: { name: 'PUT-ERR' } });
    assert.equal(renamed.body.name, 'PUT-ERR');
    expectError(await call('/devices/987654', { method: 'PUT', json: { description: 'x' } }), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call(`/devices/${d.id}`, { method: 'PUT', json: { reachability: 'reachable' } }), 422, 'VALIDATION_ERROR', ['reachability']);
    expectError(await call(`/devices/${d.id}`, { method: 'PUT', json: { description: null } }), 422, 'VALIDATION_ERROR', ['description']);
    expectError(await call(`/devices/${d.id}`, { method: 'PUT', json: { schedule: 'every day' } }), 422, 'VALIDATION_ERROR', ['schedule']);
    expectError(await call(`/devices/${d.id}`, { method: 'PUT', json: { group_id: 9999, template_id: 9999 } }), 422, 'VALIDATION_ERROR', [
      'group_id',
      'template_id',
    ]);
    expectError(await call('/devices/x1', { method: 'PUT', json: {} }), 422, 'VALIDATION_ERROR', ['device_id']);
  });
});

describe('DELETE /devices/{device_id}', () => {
  test('200 {status: success}, removes backup records, then 404', async () => {
    const d = seed('del1');
    const started = startBackup(t.services.db, d.id, refs.template_id, 'manual');
    await finishBackup(t.services.db, t.services.snapshots, started, { ok: true, text: 'hostname del1\n', ignorePatterns: [] });
    const r = await call(`/devices/${d.id}`, { method: 'DELETE' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'success' });
    assert.deepEqual(t.services.db.prepare('SELECT count(*) AS n FROM backups WHERE device_id = ?').get(d.id), { n: 0 });
    expectError(await call(`/devices/${d.id}`), 404, 'RESOURCE_NOT_FOUND');
    expectError(await call(`/devices/${d.id}`, { method: 'DELETE' }), 404, 'RESOURCE_NOT_FOUND');
  });
});
