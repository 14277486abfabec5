// Settings → Notifications in the web interface: channels (secret never shown), Send test, rules, delivery log; permissions; stale devices in the list and dashboard.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importBackup } from '../../src/features/backups/import.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebhookReceiver } from '../notifications/receivers';
import { WebClient } from './web-client';

const BASE = '/settings/notifications';

describe('web Notifications page', () => {
  let t: TestAppliance;
  let hook: WebhookReceiver;
  let admin: WebClient;
  let viewer: WebClient;

  before(async () => {
    t = await startTestAppliance({ CONFVAULT_NOTIFY_ALLOWED_DESTINATIONS: '127.0.0.1' });
    hook = await new WebhookReceiver().start();
    const db = t.appliance.db;
    createRole(db, SYSTEM_ACTOR, { name: 'notifier', permissions: ['settings.view', 'settings.update', 'devices.view', 'dashboard.view', 'backups.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'notifier', password: 'notifier-password-1', role: 'notifier' });
    createRole(db, SYSTEM_ACTOR, { name: 'settings-viewer', permissions: ['settings.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'viewer', password: 'viewer-password-1', role: 'settings-viewer' });
    admin = new WebClient(t.url);
    assert.equal((await admin.login('notifier', 'notifier-password-1')).status, 303);
    viewer = new WebClient(t.url);
    assert.equal((await viewer.login('viewer', 'viewer-password-1')).status, 303);
  });

  after(async () => {
    await hook.stop();
    await t.close();
  });

  test('add a channel (secret never shown again), send a test, see it in the delivery log; add and remove a rule', async () => {
    const nav = await admin.get('/account');
    assert.match(nav.html, new RegExp(`href="${BASE}"`));
    let r = await admin.post(`${BASE}/channels`, { name: 'web-hook', type: 'webhook', url: hook.url, secret: 'web-hmac-secret' }, { csrf: true });
    assert.equal(r.res.status, 303);
    r = await admin.post(`${BASE}/channels`, { name: 'bad', type: 'webhook', url: 'not a url' }, { csrf: true });
    assert.equal(r.res.status, 422);
    assert.match(r.html, /not a valid URL/);
    let page = await admin.get(BASE);
    assert.match(page.html, /data-channel="web-hook"/);
    assert.match(page.html, /set \(not shown\)/);
    assert.ok(!page.html.includes('web-hmac-secret'));
    r = await admin.post(`${BASE}/channels/web-hook/test`, {}, { csrf: true });
    assert.equal(r.res.status, 303);
    assert.equal(JSON.parse(hook.ok().at(-1)!.body).event, 'test');
    const id = hook.ok().at(-1)!.headers['x-confvault-delivery'];
    page = await admin.get(`${BASE}?channel=web-hook`);
    assert.match(page.html, /Test message delivered to web-hook/);
    assert.match(page.html, new RegExp(`data-delivery="${id}" data-status="sent"`));
    r = await admin.post(`${BASE}/rules`, { name: 'web-rule', event_config_changed: 'on', 'channel_web-hook': 'on', include_diff: 'on' }, { csrf: true });
    assert.equal(r.res.status, 303);
    page = await admin.get(BASE);
    assert.match(page.html, /data-rule="web-rule"/);
    r = await admin.post(`${BASE}/rules`, { name: 'no-events', 'channel_web-hook': 'on' }, { csrf: true });
    assert.equal(r.res.status, 422);
    r = await admin.post(`${BASE}/rules/web-rule/remove`, {}, { csrf: true });
    assert.equal(r.res.status, 303);
    assert.ok(!(await admin.get(BASE)).html.includes('data-rule="web-rule"'));
    const audit = t.appliance.db.prepare("SELECT action FROM audit_log WHERE action LIKE 'notification_%' ORDER BY id").pluck().all();
    assert.deepEqual(audit, ['notification_channel.create', 'notification_channel.test', 'notification_rule.create', 'notification_rule.delete']);
  });

  test('settings.view sees the page without the forms; changes need settings.update', async () => {
    const page = await viewer.get(BASE);
    assert.equal(page.res.status, 200);
    assert.match(page.html, /data-channel="web-hook"/);
    assert.ok(!page.html.includes('id="add-channel"'));
    const r = await viewer.post(`${BASE}/channels/web-hook/remove`, {}, { csrf: true });
    assert.equal(r.res.status, 403);
    assert.ok((await admin.get(BASE)).html.includes('data-channel="web-hook"'));
  });

  test('a user scoped to a group can only make rules for devices in their scope', async () => {
    const db = t.appliance.db;
    const a = seedGroup(db, 'scoped-A');
    const b = seedGroup(db, 'scoped-B');
    createRole(db, SYSTEM_ACTOR, { name: 'scoped-notifier', permissions: ['settings.view', 'settings.update'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'scoped', password: 'scoped-password-1', role: 'scoped-notifier', groups: [a] });
    const web = new WebClient(t.url);
    assert.equal((await web.login('scoped', 'scoped-password-1')).status, 303);
    const rule = (name: string, extra: Record<string, string>) =>
      web.post(`${BASE}/rules`, { name, event_config_changed: 'on', 'channel_web-hook': 'on', ...extra }, { csrf: true });
    let r = await rule('everything', {});
    assert.equal(r.res.status, 422);
    assert.match(r.html, /needs device-group scope &quot;all&quot;|needs device-group scope "all"/);
    r = await rule('other-group', { [`group_${b}`]: 'on' });
    assert.match(r.html, /outside your device-group scope/);
    r = await rule('with-diff', { [`group_${a}`]: 'on', include_diff: 'on' });
    assert.match(r.html, /backups\.view/);
    r = await rule('mine', { [`group_${a}`]: 'on' });
    assert.equal(r.res.status, 303);
    const names = db.prepare('SELECT name FROM notification_rules').pluck().all();
    assert.ok(names.includes('mine') && !names.includes('everything') && !names.includes('other-group') && !names.includes('with-diff'));
  });

  test('stale devices: badge and ?stale=1 filter in the device list, count on the dashboard', async () => {
    const db = t.appliance.db;
    const tpl = seedBuiltinTemplate(db, 'cisco-ios');
    const cred = seedCredential(db, t.appliance.secrets, { name: 'c', username: 'u', password: 'p' });
    const old = seedDevice(db, { name: 'old-router', port: 22, credential_id: cred, template_id: tpl });
    const fresh = seedDevice(db, { name: 'fresh-router', port: 22, credential_id: cred, template_id: tpl });
    rawState(
      db,
      'devices created five days ago: only the clock makes it',
      'UPDATE devices SET created_at = ? WHERE id IN (?, ?)',
      Date.now() - 5 * 86_400_000,
      old,
      fresh,
    );
    importBackup(db, SYSTEM_ACTOR, t.appliance.snapshots, fresh, 'hostname fresh\n');
    const all = await admin.get('/devices');
    const row = (html: string, name: string) => new RegExp(`>${name}</a>[\\s\\S]*?</td>`).exec(html)?.[0] ?? '';
    assert.match(row(all.html, 'old-router'), /badge expired stale/);
    assert.doesNotMatch(row(all.html, 'fresh-router'), /stale/);
    const only = await admin.get('/devices?stale=1');
    assert.ok(only.html.includes('old-router'));
    assert.ok(!only.html.includes('fresh-router'));
    const dash = await admin.get('/');
    assert.match(dash.html, /id="stat-stale"[\s\S]*?>1</);
    // A device added a minute ago and never backed up is not stale yet, but the dashboard counts it apart.
    seedDevice(db, { name: 'new-router', port: 22, credential_id: cred, template_id: tpl });
    const later = await admin.get('/');
    assert.match(later.html, /id="stat-stale"[\s\S]*?>1</);
    assert.match(later.html, /id="stat-never"[\s\S]*?>2</);
    // The two counts are kept while nothing is written (issue #27): a backup recorded since counts on the next view.
    importBackup(db, SYSTEM_ACTOR, t.appliance.snapshots, old, 'hostname old\n');
    const backedUp = await admin.get('/');
    assert.match(backedUp.html, /id="stat-stale"[\s\S]*?>0</);
    assert.match(backedUp.html, /id="stat-never"[\s\S]*?>1</);
  });
});
