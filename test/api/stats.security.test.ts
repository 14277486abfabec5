// GET /stats: dashboard.view required, no device-group filtering (spec 4.6 rule 4), authentication and request ids.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PERMISSIONS } from '../../src/identity/permissions';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { recordBackup, seedInventory, type Inventory } from './backups.seed';
import { expectErrorResponse } from '../helpers/api';

describe('GET /stats: permissions and scope', () => {
  let t: TestAppliance;
  let inv: Inventory;

  before(async () => {
    t = await startTestAppliance();
    inv = seedInventory(t.services.db);
    for (const d of Object.values(inv.devices)) recordBackup(t.services, d, { text: `hostname ${d}\n` });
  });
  after(() => t.close());

  test('dashboard.view is required: with it 200, with every other permission 403 PERMISSION_DENIED', async () => {
    const withIt = await t.keyFor({ permissions: ['dashboard.view'] });
    const without = await t.keyFor({ permissions: PERMISSIONS.filter((p) => p !== 'dashboard.view') });
    assert.equal((await t.api('/api/v1/stats', { key: withIt })).status, 200);
    await expectErrorResponse(await t.api('/api/v1/stats', { key: without }), 403, 'PERMISSION_DENIED');
  });

  test('figures are appliance-wide whatever the scope of the key’s user', async () => {
    const all = await (await t.api('/api/v1/stats', { key: await t.keyFor({ permissions: ['dashboard.view'] }) })).json();
    assert.equal(all.devices.total, 4);
    assert.equal(all.backups.total, 4);
    for (const groups of [[inv.groups.B], [inv.groups.A1], []]) {
      const key = await t.keyFor({ permissions: ['dashboard.view'], groups });
      assert.deepEqual(await (await t.api('/api/v1/stats', { key })).json(), all, `scope ${JSON.stringify(groups)}`);
    }
  });

  test('authentication: no key, a wrong key and a key in the URL are 401', async () => {
    const key = await t.keyFor({ permissions: ['dashboard.view'] });
    await expectErrorResponse(await t.api('/api/v1/stats'), 401, 'UNAUTHORIZED');
    await expectErrorResponse(await t.api('/api/v1/stats', { key: 'not-a-key' }), 401, 'UNAUTHORIZED');
    await expectErrorResponse(await t.api(`/api/v1/stats?key=${key}`, { key }), 401, 'UNAUTHORIZED');
  });
});
