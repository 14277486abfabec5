// The audit page reads as "field: before → after": lists as what was added and removed, records as "key: value", times zoned, never raw JSON.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeChanges, describeDetails } from '../../src/features/audit/audit-view';
import { importBackup } from '../../src/features/backups/import.service';
import { createRole, setRolePermissions } from '../../src/features/roles/roles.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { deleteDevice, updateDevice } from '../../src/features/devices/devices.service';
import { WebClient } from './web-client';

describe('audit page readability', () => {
  let t: TestAppliance;
  let admin: WebClient;
  let gone: number;
  before(async () => {
    t = await startTestAppliance();
    const { db, secrets, snapshots } = t.services;
    createRole(db, SYSTEM_ACTOR, { name: 'ops', permissions: ['devices.view', 'users.view'] });
    setRolePermissions(db, SYSTEM_ACTOR, 'ops', ['devices.view', 'backups.view']);
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    const dev = seedDevice(db, { name: 'r1', port: 22, credential_id: cred, template_id: seedBuiltinTemplate(db, 'frr') });
    // A device moved between two groups, and one deleted: the page names what exists and gives the id of what is gone.
    const core = seedGroup(db, 'core-sites');
    const edge = seedGroup(db, 'edge-sites');
    updateDevice(db, SYSTEM_ACTOR, dev, { group_id: core });
    updateDevice(db, SYSTEM_ACTOR, dev, { group_id: edge });
    gone = seedDevice(db, { name: 'gone-1', credential_id: cred, template_id: seedBuiltinTemplate(db, 'frr') });
    deleteDevice(db, SYSTEM_ACTOR, gone);
    importBackup(db, SYSTEM_ACTOR, snapshots, dev, 'hostname r1\n', Date.UTC(2026, 10, 24, 13, 3, 11));
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  test('a list change says what was added and removed; an epoch time reads as a zoned time', async () => {
    const { html } = await admin.get('/audit?action=role.update');
    assert.match(html, /permissions: added backups\.view; removed users\.view/);
    assert.doesNotMatch(html, /\[&quot;|\["/, 'no JSON arrays');
    const imp = await admin.get('/audit?action=backup.import');
    assert.match(imp.html, /started_at: 2026-11-24 13:03:11/);
    assert.doesNotMatch(imp.html, /started_at: 1\d{12}/);
  });

  test('targets and ids read as names while the record exists, as the id once deleted; a create is one line', async () => {
    const { html } = await admin.get('/audit?action=device.');
    assert.match(html, /<a href="\/devices\/\d+" title="device \d+">device r1<\/a>/);
    assert.match(html, /group: core-sites → edge-sites/);
    assert.match(html, /group: — → core-sites/);
    assert.match(html, new RegExp(`device ${gone} \\(deleted\\)`));
    const row = html.split('<tr>').find((r) => r.includes('>device.create</td>') && r.includes('>device r1</a>')) ?? '';
    const create = /<td class="small">(.*?)<\/td>/.exec(row.slice(row.indexOf('device r1')))?.[1] ?? '';
    assert.equal(create.match(/<div>/g)?.length, 1, `one line for the created device: ${create}`);
    assert.match(create, /created with name: r1, hostname: 127\.0\.0\.1, port: 22, protocol: ssh, credential: c, template: frr/);
    assert.doesNotMatch(html, /credential_id: — →/);
  });

  test('records and lists read as text; long values are cut', () => {
    assert.deepEqual(describeChanges(JSON.stringify({ commands: { before: null, after: [{ cmd: 'show run', timeout: 30 }] } })), [
      'commands: — → cmd: show run, timeout: 30',
    ]);
    assert.deepEqual(describeDetails(JSON.stringify({ device_ids: [1, 2, 3], empty: [] })), ['device_ids: 1, 2, 3', 'empty: (none)']);
    const long = describeDetails(JSON.stringify({ note: 'x'.repeat(500) }))[0];
    assert.equal(long.length, 'note: '.length + 200);
    assert.ok(long.endsWith('…'));
  });
});
