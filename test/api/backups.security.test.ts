// Backup history and content: permission (backups.view) and the device-group scope matrix, authentication, request ids on errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { updateDevice } from '../../src/features/devices/devices.service';
import { setUserDisabled } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { PERMISSIONS } from '../../src/identity/permissions';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { recordBackup, seedInventory, type Inventory } from './backups.seed';
import { expectErrorResponse, type Json } from '../helpers/api';

type DeviceName = keyof Inventory['devices'];

describe('backup endpoints: permissions and scope', () => {
  let t: TestAppliance;
  let inv: Inventory;
  const backupOf = {} as Record<DeviceName, string>;

  before(async () => {
    t = await startTestAppliance();
    inv = seedInventory(t.services.db);
    for (const name of Object.keys(inv.devices) as DeviceName[]) backupOf[name] = recordBackup(t.services, inv.devices[name], { text: `hostname ${name}\n` });
  });
  after(() => t.close());

  const endpoints = (name: DeviceName) => [
    { label: 'history', path: `/api/v1/devices/${inv.devices[name]}/backups` },
    { label: 'content', path: `/api/v1/backups/${backupOf[name]}/content` },
  ];

  test('backups.view is required: with it 200, with every other permission 403 PERMISSION_DENIED', async () => {
    const withIt = await t.keyFor({ permissions: ['backups.view'] });
    const without = await t.keyFor({ permissions: PERMISSIONS.filter((p) => p !== 'backups.view') });
    for (const e of endpoints('dA')) {
      assert.equal((await t.api(e.path, { key: withIt })).status, 200, e.label);
      await expectErrorResponse(await t.api(e.path, { key: without }), 403, 'PERMISSION_DENIED');
    }
    // The permission is checked before anything is looked up: no existence leak to a key without it.
    await expectErrorResponse(await t.api('/api/v1/devices/999999/backups', { key: without }), 403, 'PERMISSION_DENIED');
    await expectErrorResponse(await t.api('/api/v1/backups/0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10/content', { key: without }), 403, 'PERMISSION_DENIED');
  });

  test('scope matrix: subgroups inherit, ungrouped devices only for scope "all"', async () => {
    const { A, B } = inv.groups;
    // Which devices each scope may read (A includes its subgroup A1).
    const matrix: { scope: number[] | null; visible: DeviceName[] }[] = [
      { scope: null, visible: ['dA', 'dA1', 'dB', 'dNone'] },
      { scope: [A], visible: ['dA', 'dA1'] },
      { scope: [inv.groups.A1], visible: ['dA1'] },
      { scope: [B], visible: ['dB'] },
      { scope: [A, B], visible: ['dA', 'dA1', 'dB'] },
      { scope: [], visible: [] },
    ];
    for (const row of matrix) {
      const key = await t.keyFor({ permissions: ['backups.view'], groups: row.scope });
      for (const name of Object.keys(inv.devices) as DeviceName[]) {
        for (const e of endpoints(name)) {
          const res = await t.api(e.path, { key });
          const where = `scope ${JSON.stringify(row.scope)} ${e.label} ${name}`;
          if (row.visible.includes(name)) {
            assert.equal(res.status, 200, where);
            const body = await res.json();
            if (e.label === 'content') assert.equal(body.config_text, `hostname ${name}\n`, where);
            else
              assert.deepEqual(
                body.items.map((i: Json) => i.id),
                [backupOf[name]],
                where,
              );
          } else {
            await expectErrorResponse(res, 403, 'BACKUP_DEVICE_FORBIDDEN');
          }
        }
      }
    }
  });

  test('a device moved out of the scope becomes forbidden at once', async () => {
    const key = await t.keyFor({ permissions: ['backups.view'], groups: [inv.groups.B] });
    const path = `/api/v1/backups/${backupOf.dB}/content`;
    assert.equal((await t.api(path, { key })).status, 200);
    updateDevice(t.services.db, SYSTEM_ACTOR, inv.devices.dB, { group_id: inv.groups.A });
    try {
      await expectErrorResponse(await t.api(path, { key }), 403, 'BACKUP_DEVICE_FORBIDDEN');
    } finally {
      updateDevice(t.services.db, SYSTEM_ACTOR, inv.devices.dB, { group_id: inv.groups.B });
    }
  });

  test('missing records are 404 for a scoped key too', async () => {
    const key = await t.keyFor({ permissions: ['backups.view'], groups: [inv.groups.B] });
    await expectErrorResponse(await t.api('/api/v1/devices/999999/backups', { key }), 404, 'BACKUP_DEVICE_NOT_FOUND');
    await expectErrorResponse(await t.api('/api/v1/backups/0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10/content', { key }), 404, 'BACKUP_NOT_FOUND');
  });

  test('authentication: no key, a wrong key, a revoked user, a key in the URL are all 401', async () => {
    const key = await t.keyFor({ permissions: ['backups.view'], username: `revokable_${process.pid}` });
    for (const e of endpoints('dA')) {
      await expectErrorResponse(await t.api(e.path), 401, 'UNAUTHORIZED');
      await expectErrorResponse(await t.api(e.path, { key: 'cv_' + 'x'.repeat(43) }), 401, 'UNAUTHORIZED');
      await expectErrorResponse(await t.api(`${e.path}?api_key=${key}`), 401, 'UNAUTHORIZED');
      await expectErrorResponse(await t.api(`${e.path}?api_key=${key}`, { key }), 401, 'UNAUTHORIZED');
    }
    setUserDisabled(t.services.db, SYSTEM_ACTOR, `revokable_${process.pid}`, true);
    await expectErrorResponse(await t.api(endpoints('dA')[0].path, { key }), 401, 'UNAUTHORIZED');
  });

  test('an incoming X-Request-ID is echoed in the header and in error.request_id', async () => {
    const key = await t.keyFor({ permissions: ['backups.view'], groups: [inv.groups.B] });
    const res = await t.api(`/api/v1/backups/${backupOf.dA}/content`, { key, headers: { 'X-Request-ID': 'ticket-4711.retry-2' } });
    assert.equal(res.headers.get('x-request-id'), 'ticket-4711.retry-2');
    assert.equal((await res.json()).error.request_id, 'ticket-4711.retry-2');
  });

  test('an error body never carries configuration text', async () => {
    const key = await t.keyFor({ permissions: ['backups.view'], groups: [inv.groups.B] });
    const res = await t.api(`/api/v1/backups/${backupOf.dA}/content`, { key });
    const text = await res.text();
    assert.equal(res.status, 403);
    assert.ok(!text.includes('hostname'), text);
  });
});
