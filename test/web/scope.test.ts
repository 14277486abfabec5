// Device-group scope on every page and internal route: a scoped user never sees another group's device (list, search, page, version, diff, dashboard).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importBackup } from '../../src/features/backups/import.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createRole, setRolePermissions } from '../../src/features/roles/roles.service';
import { createUser, setUserScope } from '../../src/features/users/users.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

describe('web scope', () => {
  let t: TestAppliance;
  let scoped: WebClient;
  let admin: WebClient;
  const ids = { a1: 0, b1: 0, a1v1: '', a1v2: '', b1v1: '', b1v2: '' };
  before(async () => {
    t = await startTestAppliance();
    const { db, secrets, snapshots } = t.services;
    const A = seedGroup(db, 'Alpha');
    const B = seedGroup(db, 'Bravo');
    const cred = seedCredential(db, secrets, { name: 'c', username: 'u', password: 'p' });
    const tpl = seedBuiltinTemplate(db, 'frr');
    ids.a1 = seedDevice(db, { name: 'alpha-rtr', port: 22, credential_id: cred, template_id: tpl, group_id: A });
    ids.b1 = seedDevice(db, { name: 'bravo-rtr', port: 22, credential_id: cred, template_id: tpl, group_id: B });
    const now = Date.now();
    ids.a1v1 = importBackup(db, SYSTEM_ACTOR, snapshots, ids.a1, 'hostname alpha\nsnmp community alpha-secret\n', now - 7200_000).id;
    ids.a1v2 = importBackup(db, SYSTEM_ACTOR, snapshots, ids.a1, 'hostname alpha\nsnmp community alpha-secret\nip route 10.0.0.0/8 Null0\n', now - 3600_000).id;
    ids.b1v1 = importBackup(db, SYSTEM_ACTOR, snapshots, ids.b1, 'hostname bravo\nsnmp community bravo-secret\n', now - 7200_000).id;
    ids.b1v2 = importBackup(db, SYSTEM_ACTOR, snapshots, ids.b1, 'hostname bravo\nsnmp community bravo-secret2\n', now - 3600_000).id;
    createRole(db, SYSTEM_ACTOR, {
      name: 'operator',
      permissions: ['devices.view', 'devices.update', 'devices.delete', 'backups.view', 'backups.run', 'dashboard.view'],
    });
    await createUser(db, SYSTEM_ACTOR, { username: 'scoped', password: 'scoped-password-1', role: 'operator', groups: [A] });
    scoped = new WebClient(t.url);
    assert.equal((await scoped.login('scoped', 'scoped-password-1')).status, 303);
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  test('device list and its filters show only devices in scope', async () => {
    const list = await scoped.get('/devices');
    assert.match(list.html, /alpha-rtr/);
    assert.doesNotMatch(list.html, /bravo-rtr/);
    assert.match(list.html, /1 in all/);
    assert.doesNotMatch((await scoped.get('/devices?q=bravo')).html, /bravo-rtr/);
    assert.match((await admin.get('/devices')).html, /2 in all/);
  });

  test('device page, version, download and edit of an out-of-scope device are 403', async () => {
    for (const path of [
      `/devices/${ids.b1}`,
      `/devices/${ids.b1}/backups/${ids.b1v1}`,
      `/devices/${ids.b1}/backups/${ids.b1v1}/download`,
      `/devices/${ids.b1}/edit`,
    ]) {
      const r = await scoped.get(path);
      assert.equal(r.res.status, 403, path);
      assert.doesNotMatch(r.html, /bravo-secret/, path);
    }
    assert.equal((await scoped.get(`/devices/${ids.a1}`)).res.status, 200);
    assert.equal((await scoped.get('/devices/99999')).res.status, 404);
  });

  test('diff: another group’s versions are unreachable, also smuggled in under an in-scope device', async () => {
    const own = await scoped.get(`/devices/${ids.a1}/diff?a=${ids.a1v1}&b=${ids.a1v2}`);
    assert.equal(own.res.status, 200);
    assert.match(own.html, /ip route 10\.0\.0\.0\/8 Null0/);
    assert.equal((await scoped.get(`/devices/${ids.b1}/diff?a=${ids.b1v1}&b=${ids.b1v2}`)).res.status, 403);
    const smuggled = await scoped.get(`/devices/${ids.a1}/diff?a=${ids.a1v1}&b=${ids.b1v2}`);
    assert.equal(smuggled.res.status, 404);
    assert.doesNotMatch(smuggled.html, /bravo/);
    const api = await scoped.fetch(`/api/devices/${ids.b1}/diff?a=${ids.b1v1}&b=${ids.b1v2}`);
    assert.equal(api.status, 403);
    const apiOwn = await scoped.fetch(`/api/devices/${ids.a1}/diff?a=${ids.a1v1}&b=${ids.a1v2}`);
    assert.equal(apiOwn.status, 200);
    assert.match((await apiOwn.json()).unified, /\+ip route 10\.0\.0\.0\/8 Null0/);
  });

  test('search finds only in-scope configurations', async () => {
    const r = await scoped.get('/search?q=snmp+community&mode=text');
    assert.match(r.html, /alpha-secret/);
    assert.doesNotMatch(r.html, /bravo/);
    const all = await admin.get('/search?q=community%20%5Cw%2B-secret&mode=regex');
    assert.match(all.html.replace(/<\/?mark>/g, ''), /bravo-secret2/, 'found (the match itself is marked)');
    const bad = await admin.get('/search?q=(a)%5C1&mode=regex');
    assert.equal(bad.res.status, 422, 'a backreference is not RE2 syntax and is refused');
  });

  test('dashboard counts only in-scope devices', async () => {
    const d = await scoped.get('/');
    const count = /id="stat-devices"><span class="value">(\d+)</.exec(d.html)?.[1];
    assert.equal(count, '1');
    assert.doesNotMatch(d.html, /Backup records/, 'appliance-wide figures are for scope "all" only');
    const a = await admin.get('/');
    assert.equal(/id="stat-devices"><span class="value">(\d+)</.exec(a.html)?.[1], '2');
  });

  test('back up now, update and delete of an out-of-scope device are refused', async () => {
    const csrf = await scoped.csrf();
    const run = await scoped.fetch(`/api/devices/${ids.b1}/backups`, { method: 'POST', headers: { 'X-CSRF-Token': csrf } });
    assert.equal(run.status, 403);
    assert.equal((await scoped.post(`/devices/${ids.b1}/backup`, {}, { csrf })).res.status, 403);
    assert.equal((await scoped.post(`/devices/${ids.b1}/delete`, {}, { csrf })).res.status, 403);
    assert.equal(t.services.db.prepare('SELECT count(*) FROM devices WHERE id = ?').pluck().get(ids.b1), 1);
  });

  test('navigation shows only what the user may use; admin pages are 403', async () => {
    const home = await scoped.get('/devices');
    assert.doesNotMatch(home.html, /href="\/audit"/);
    assert.doesNotMatch(home.html, /href="\/credentials"/);
    assert.equal((await scoped.get('/audit')).res.status, 403);
    assert.equal((await scoped.get('/api-keys')).res.status, 403);
  });

  test('a scope change made elsewhere ends the live session; a role edit reaches it on its next page', async () => {
    const { db } = t.services;
    const B = db.prepare("SELECT id FROM device_groups WHERE name = 'Bravo'").pluck().get() as number;
    const A = db.prepare("SELECT id FROM device_groups WHERE name = 'Alpha'").pluck().get() as number;
    assert.equal((await scoped.get(`/devices/${ids.b1}`)).res.status, 403);
    setUserScope(db, SYSTEM_ACTOR, 'scoped', [A, B]);
    assert.equal((await scoped.get(`/devices/${ids.b1}`)).res.status, 303, "a changed scope ends the user's sessions");
    assert.equal((await scoped.login('scoped', 'scoped-password-1')).status, 303);
    assert.equal((await scoped.get(`/devices/${ids.b1}`)).res.status, 200, 'the wider scope holds after logging in again');
    setRolePermissions(db, SYSTEM_ACTOR, 'operator', ['dashboard.view']);
    assert.equal((await scoped.get(`/devices/${ids.a1}`)).res.status, 403, 'the narrower role holds on the next page');
    setRolePermissions(db, SYSTEM_ACTOR, 'operator', ['devices.view', 'devices.update', 'devices.delete', 'backups.view', 'backups.run', 'dashboard.view']);
    setUserScope(db, SYSTEM_ACTOR, 'scoped', [A]);
    assert.equal((await scoped.login('scoped', 'scoped-password-1')).status, 303);
    assert.equal((await scoped.get(`/devices/${ids.a1}`)).res.status, 200);
    assert.equal((await scoped.get(`/devices/${ids.b1}`)).res.status, 403);
  });
});
