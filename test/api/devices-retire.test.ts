// Retire instead of delete (issue #25 item 2): a retired device keeps its versions (API, web), leaves the schedules, event
// backups, probes and problem lists, is counted apart, can be reactivated; deleting history needs its name typed (web, CLI).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { enabledDeviceSchedules, probeTargetRows, selectDeviceIdRows } from '../../src/features/backups/backup-engine.store';
import { requestBackupJob } from '../../src/features/backups/jobs.service';
import { listAudit } from '../../src/features/audit/audit.service';
import { eventDeviceRows } from '../../src/features/devices/event-devices.store';
import { staleDeviceIds } from '../../src/features/notifications/notifications.store';
import { recordReachability } from '../../src/features/backups/backup-engine.service';
import { getDashboard } from '../../src/features/stats/stats.service';
import { SCOPE_ALL } from '../../src/identity/principal';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, runCliAsync, type TestAppliance } from '../helpers/appliance';
import { apiCall, expectError, type CallInit } from '../helpers/api';
import { seedCredential, seedDevice, seedGroup, seedTemplate } from '../helpers/seed';
import { recordBackup } from './backups.seed';
import { WebClient } from '../web/web-client';

let t: TestAppliance;
let key: string;
let w: WebClient;
const d: Record<string, number> = {};
let groupB: number;
let versions: string[] = [];

const call = (path: string, init: Omit<CallInit, 'key'> & { k?: string } = {}) => apiCall(t, path, { ...init, key: init.k ?? key });

before(async () => {
  t = await startTestAppliance();
  key = await t.keyFor({ permissions: 'all' });
  const db = t.services.db;
  const credential_id = seedCredential(db, null, { name: 'retire-cred' });
  const template_id = seedTemplate(db, 'retire-tpl');
  const groupA = seedGroup(db, 'retire-A');
  groupB = seedGroup(db, 'retire-B');
  for (const name of ['old-core', 'keep-core', 'gone-core', 'cli-core']) d[name] = seedDevice(db, { name, credential_id, template_id, group_id: groupA });
  d.other = seedDevice(db, { name: 'other-b', credential_id, template_id, group_id: groupB });
  const long = Date.now() - 30 * 24 * 3600_000;
  versions = [
    recordBackup(t.services, d['old-core'], { text: 'hostname old-core\nntp server 192.0.2.1\n' }, long),
    recordBackup(t.services, d['old-core'], { text: 'hostname old-core\nntp server 192.0.2.2\n' }, long + 60_000),
  ];
  recordBackup(t.services, d['old-core'], { error: 'timed out' }, Date.now() - 3600_000);
  recordReachability(db, d['old-core'], 'unreachable', 'connection refused');
  w = new WebClient(t.url);
  assert.equal((await w.login('admin', 'admin-password-1')).status, 303);
});
after(() => t?.close());

describe('retire', () => {
  test('the device keeps its versions, readable through the API, and says when and by whom it was retired', async () => {
    const r = await call(`/devices/${d['old-core']}/retire`, { method: 'POST', json: {} });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.enabled, false);
    assert.equal(typeof r.body.retired.by, 'string');
    assert.match(r.body.retired.at, /^\d{4}-\d{2}-\d{2} /);
    assert.equal(r.body.reachability.status, 'unknown', 'out of the unreachable list');
    const history = await call(`/devices/${d['old-core']}/backups`);
    assert.equal(history.status, 200);
    assert.equal(history.body.pagination.total, 3);
    const content = await t.api(`/api/v1/backups/${versions[1]}/content`, { key });
    assert.equal(content.status, 200);
    assert.match(await content.text(), /ntp server 192\.0\.2\.2/);
    // Again: nothing changes, nothing more in the trail.
    assert.equal((await call(`/devices/${d['old-core']}/retire`, { method: 'POST', json: {} })).status, 200);
    const rows = listAudit(t.services.db, SCOPE_ALL, { action: 'device.retire' }, 1, 10).items.filter((a) => a.target === `device ${d['old-core']}`);
    assert.equal(rows.length, 1);
  });

  test('the web keeps its history page and compare view, and the list counts it apart', async () => {
    const page = await w.get(`/devices/${d['old-core']}`);
    assert.equal(page.res.status, 200);
    assert.match(page.html, /id="retired-note"/);
    assert.match(page.html, /Reactivate/);
    assert.doesNotMatch(page.html, /Back up now/);
    const diff = await w.get(`/devices/${d['old-core']}/diff?a=${versions[0]}&b=${versions[1]}`);
    assert.equal(diff.res.status, 200);
    assert.match(diff.html, /removed: <\/span>ntp server 192\.0\.2\.<mark>1/);
    const version = await w.get(`/devices/${d['old-core']}/backups/${versions[1]}`);
    assert.equal(version.res.status, 200);
    assert.match(version.html, /ntp server 192\.0\.2\.2/);
    const list = await w.get('/devices');
    assert.doesNotMatch(list.html, />old-core</, 'not among the devices in service');
    assert.match(list.html, /In service \(4\)/);
    assert.match(list.html, /Retired \(1\)/);
    const retired = await w.get('/devices?retired=1');
    assert.match(retired.html, />old-core</);
    assert.doesNotMatch(retired.html, />keep-core</);
  });

  test('it leaves the schedules, "backup run --all", event backups, probes, the stale list and the dashboard problem lists', () => {
    const db = t.services.db;
    const id = d['old-core'];
    assert.ok(!enabledDeviceSchedules(db).ids.includes(id));
    assert.ok(!selectDeviceIdRows(db, {}).includes(id));
    assert.ok(!eventDeviceRows(db).some((r) => r.id === id));
    assert.ok(!probeTargetRows(db).some((r) => r.id === id));
    assert.ok(!staleDeviceIds(db, Date.now()).includes(id));
    const dash = getDashboard(db, SCOPE_ALL, 'UTC');
    assert.ok(!dash.failures.some((f) => f.device_id === id), 'not among recent failures');
    assert.equal(dash.devices.retired, 1);
    assert.equal(dash.devices.total, 5 - 1);
    assert.equal(dash.devices.unreachable, 0);
  });

  test('a retired device is not backed up on request nor enabled by an edit', async () => {
    assert.throws(() => requestBackupJob(t.services.db, SYSTEM_ACTOR, { deviceIds: [d['old-core']] }, null), /retired/);
    expectError(await call(`/devices/${d['old-core']}`, { method: 'PUT', json: { enabled: true } }), 409, 'CONFLICT');
    // Other edits are fine: a retired device can still be moved.
    assert.equal((await call(`/devices/${d['old-core']}`, { method: 'PUT', json: { description: 'decommissioned 2026' } })).status, 200);
    const list = await call('/devices?retired=true');
    assert.deepEqual(
      list.body.items.map((x: { name: string }) => x.name),
      ['old-core'],
    );
  });

  test('reactivating puts it back on the schedules, enabled', async () => {
    const r = await call(`/devices/${d['old-core']}/reactivate`, { method: 'POST', json: {} });
    assert.equal(r.status, 200);
    assert.equal(r.body.retired, null);
    assert.equal(r.body.enabled, true);
    assert.ok(enabledDeviceSchedules(t.services.db).ids.includes(d['old-core']));
    assert.equal(listAudit(t.services.db, SCOPE_ALL, { action: 'device.reactivate' }, 1, 10).total, 1);
  });

  test('a key scoped to another group cannot retire the device (403), a key without devices.update neither', async () => {
    const scoped = await t.keyFor({ permissions: ['devices.view', 'devices.update'], groups: [groupB] });
    expectError(await call(`/devices/${d['keep-core']}/retire`, { method: 'POST', json: {}, k: scoped }), 403, 'PERMISSION_DENIED');
    const viewer = await t.keyFor({ permissions: ['devices.view'] });
    expectError(await call(`/devices/${d['keep-core']}/retire`, { method: 'POST', json: {}, k: viewer }), 403, 'PERMISSION_DENIED');
    assert.equal((await call(`/devices/${d['other']}/retire`, { method: 'POST', json: {}, k: scoped })).status, 200);
  });
});

describe('delete with history', () => {
  test('the web deletes only when the device name is typed, and audits it', async () => {
    const id = d['gone-core'];
    const page = await w.get(`/devices/${id}/delete`);
    assert.equal(page.res.status, 200);
    assert.match(page.html, /Retire instead/);
    const wrong = await w.post(`/devices/${id}/delete`, { confirm_name: 'gone-cor' }, { csrf: true });
    assert.equal(wrong.res.status, 422);
    assert.match(wrong.html, /type the device/);
    assert.equal((await call(`/devices/${id}`)).status, 200, 'still there');
    const right = await w.post(`/devices/${id}/delete`, { confirm_name: 'gone-core' }, { csrf: true });
    assert.equal(right.res.status, 303);
    expectError(await call(`/devices/${id}`), 404, 'RESOURCE_NOT_FOUND');
    assert.equal(listAudit(t.services.db, SCOPE_ALL, { action: 'device.delete', target: `device ${id}` }, 1, 10).total, 1);
  });

  test('the OpenAPI document says what DELETE removes and points to retire', async () => {
    const doc = (await (await t.api('/api/v1/openapi.json')).json()) as { paths: Record<string, Record<string, { description: string }>> };
    assert.match(doc.paths['/devices/{device_id}'].delete.description, /every one of its backup records/);
    assert.match(doc.paths['/devices/{device_id}'].delete.description, /retire/);
    assert.ok(doc.paths['/devices/{device_id}/retire'].post);
    assert.ok(doc.paths['/devices/{device_id}/reactivate'].post);
  });

  test('the CLI retires, reactivates, and deletes only with --confirm NAME', { timeout: 60_000 }, async () => {
    const data = ['--data-dir', t.services.dataDir];
    const retire = await runCliAsync(['device', 'retire', 'cli-core', ...data]);
    assert.equal(retire.status, 0, retire.stderr);
    const show = await runCliAsync(['device', 'show', 'cli-core', ...data]);
    assert.match(show.stdout, /retired: +yes/);
    assert.equal((await runCliAsync(['device', 'reactivate', String(d['cli-core']), ...data])).status, 0);
    const wrong = await runCliAsync(['device', 'delete', 'cli-core', '--confirm', 'keep-core', ...data]);
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /type the device/);
    assert.equal((await call(`/devices/${d['cli-core']}`)).body.retired, null, 'reactivated, still there');
    const ok = await runCliAsync(['device', 'delete', 'cli-core', '--confirm', 'cli-core', ...data]);
    assert.equal(ok.status, 0, ok.stderr);
    expectError(await call(`/devices/${d['cli-core']}`), 404, 'RESOURCE_NOT_FOUND');
  });
});
