// Collectors on the web and in /metrics: the policy's collectors.view / collectors.manage at every door, the page
// (list, one-time token, token list and revoke, revoke), the device form's zone, "collector offline" on the devices of a zone
// with no collector online, the series.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { createEnrolToken, listCollectors, revokeCollector, setZone } from '../../src/features/collectors/collectors.service';
import { SYSTEM_ACTOR, type Actor } from '../../src/identity/actor';
import type { Permission } from '../../src/identity/permissions';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from '../web/web-client';
import { enrol } from './harness';

describe('collectors: web page, policy, offline devices, metrics', () => {
  let t: TestAppliance;
  let admin: WebClient;
  let narrow: WebClient;
  let reader: WebClient;
  const audit = (action: string) =>
    t.services.db.prepare('SELECT actor, door, target, details FROM audit_log WHERE action = ? ORDER BY id').all(action) as {
      actor: string;
      door: string;
      target: string;
      details: string;
    }[];

  /** A device of `zone` through its group. */
  function zonedDevice(name: string, zone: string): number {
    const { db, secrets } = t.services;
    const group = seedGroup(db, `g-${name}`);
    setZone(db, SYSTEM_ACTOR, { group }, zone);
    return seedDevice(db, {
      name,
      group_id: group,
      credential_id: seedCredential(db, secrets, { name: `c-${name}`, username: 'backup', password: 'pw-web-1' }),
      template_id: seedBuiltinTemplate(db, 'frr'),
    });
  }

  before(async () => {
    t = await startTestAppliance();
    const db = t.services.db;
    createRole(db, SYSTEM_ACTOR, { name: 'narrow', permissions: ['devices.view', 'dashboard.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'nora', password: 'nora-password-12', role: 'narrow' });
    await createUser(db, SYSTEM_ACTOR, { username: 'rita', password: 'rita-password-12', role: 'read-only' });
    admin = new WebClient(t.url);
    narrow = new WebClient(t.url);
    reader = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    assert.equal((await narrow.login('nora', 'nora-password-12')).status, 303);
    assert.equal((await reader.login('rita', 'rita-password-12')).status, 303);
  });
  after(() => t.close());

  test('a role without collectors.* can neither see nor manage collectors; read-only sees them but manages nothing', async () => {
    await enrol(t, 'site-a', 'col-a');
    const page = await narrow.get('/collectors');
    assert.equal(page.res.status, 403);
    assert.match(page.html, /needs the permission collectors\.view/);
    assert.doesNotMatch((await narrow.get('/devices')).html, /href="\/collectors"/, 'no nav entry');
    assert.equal((await narrow.post('/collectors/tokens', { zone: 'site-x' }, { csrf: true })).res.status, 403);
    assert.equal((await narrow.post('/collectors/col-a/revoke', {}, { csrf: true })).res.status, 403);
    assert.ok(!audit('collector.token_create').some((r) => r.actor === 'nora'), 'nothing created');

    const seen = await reader.get('/collectors');
    assert.equal(seen.res.status, 200);
    assert.match(seen.html, /data-collector="col-a"/);
    assert.doesNotMatch(seen.html, /action="\/collectors\/tokens"|\/revoke"/, 'read-only: no token form, no revoke button');
    assert.equal((await reader.post('/collectors/tokens', { zone: 'site-x' }, { csrf: true })).res.status, 403);
    assert.equal((await reader.post('/collectors/col-a/revoke', {}, { csrf: true })).res.status, 403);
    assert.equal(listCollectors(t.services.db, SYSTEM_ACTOR, 60_000).find((c) => c.name === 'col-a')?.state, 'online');
  });

  test('the service refuses on its own: a missing permission, or managing with a group-scoped user', () => {
    const db = t.services.db;
    const as = (permissions: Permission[], all = true): Actor => ({
      principal: { ...SYSTEM_ACTOR.principal, userId: -1, username: 'svc', permissions: new Set(permissions), scope: { all, groupIds: new Set<number>() } },
      door: { kind: 'system' },
      requestId: null,
    });
    const refused = (e: { code?: string; message?: string }, what: RegExp) => e.code === 'PERMISSION_DENIED' && what.test(e.message ?? '');
    assert.throws(
      () => listCollectors(db, as(['devices.view']), 60_000),
      (e: { code?: string; message?: string }) => refused(e, /collectors\.view/),
    );
    assert.throws(
      () => createEnrolToken(db, as(['collectors.view']), 'site-z'),
      (e: { code?: string; message?: string }) => refused(e, /collectors\.manage/),
    );
    const scoped = as(['collectors.view', 'collectors.manage'], false);
    assert.throws(
      () => revokeCollector(db, scoped, 'col-a'),
      (e: { code?: string; message?: string }) => refused(e, /scope all/),
    );
    assert.throws(
      () => setZone(db, scoped, { device: 'none' }, 'site-z'),
      (e: { code?: string; message?: string }) => refused(e, /scope all/),
    );
    assert.equal(createEnrolToken(db, as(['collectors.view', 'collectors.manage']), 'site-z').token.startsWith('cvc_'), true);
  });

  test('the page lists an enrolled collector with its zone; a token is shown once and audited; revoke works', async () => {
    await enrol(t, 'site-b', 'col-b');
    const list = await admin.get('/collectors');
    assert.equal(list.res.status, 200);
    const row = /<tr data-collector="col-b">([\s\S]*?)<\/tr>/.exec(list.html)?.[1] ?? '';
    assert.match(row, /<td>site-b<\/td>/);
    assert.match(row, /badge ok">online</);
    assert.match(list.html, /href="\/collectors"/, 'nav entry');

    const posted = await admin.post('/collectors/tokens', { zone: 'site-c', hours: '2' }, { csrf: true });
    assert.equal(posted.res.status, 303);
    const location = posted.res.headers.get('location')!;
    const shown = await admin.get(location);
    const token = /id="new-token" class="mono" readonly="" value="(cvc_[^"]+)"/.exec(shown.html)?.[1];
    assert.ok(token, 'the token is shown');
    const again = await admin.get(location);
    assert.ok(!again.html.includes(token), 'a reload shows it no more');
    const row1 = audit('collector.token_create').at(-1)!;
    assert.equal(row1.actor, 'admin');
    assert.equal(row1.door, 'web');
    assert.ok(!JSON.stringify(row1).includes(token.slice(4)), 'no token in the audit row');
    // The token list shows its id, never the token; an unused one can be revoked from the page.
    const tokenId = JSON.parse(row1.details).token_id as string;
    const tokenRow = new RegExp(`<tr data-token="${tokenId}">[\\s\\S]*?</tr>`).exec(again.html)?.[0] ?? '';
    assert.match(tokenRow, /<td>site-c<\/td>[\s\S]*badge ok">valid</);
    assert.ok(!again.html.includes(token.slice(4)), 'the token list never shows a token');
    assert.doesNotMatch((await reader.get('/collectors')).html, /data-token=/, 'read-only: no token list');
    assert.equal((await admin.post(`/collectors/tokens/${tokenId}/revoke`, {}, { csrf: true })).res.status, 303);
    assert.equal(audit('collector.token_revoke').at(-1)?.door, 'web');
    assert.doesNotMatch((await admin.get('/collectors')).html, new RegExp(`data-token="${tokenId}"`));
    assert.equal((await reader.post(`/collectors/tokens/${tokenId}/revoke`, {}, { csrf: true })).res.status, 403);
    assert.equal((await admin.post('/collectors/tokens', { zone: 'bad zone!' }, { csrf: true })).res.status, 422);
    assert.equal((await admin.post('/collectors/tokens', { zone: 'site-c' }, { csrf: false })).res.status, 403, 'CSRF');

    assert.equal((await admin.post('/collectors/col-b/revoke', {}, { csrf: true })).res.status, 303);
    assert.equal(audit('collector.revoke').at(-1)?.door, 'web');
    assert.match((await admin.get('/collectors')).html, /data-collector="col-b">[\s\S]*?badge revoked">revoked</);
    assert.equal((await admin.post('/collectors/no-such/revoke', {}, { csrf: true })).res.status, 404);
  });

  test('a device of a zone with no collector online shows "collector offline"; one with its collector online does not', async () => {
    await enrol(t, 'site-on', 'col-on');
    const on = zonedDevice('dev-on', 'site-on');
    const off = zonedDevice('dev-off', 'site-off');
    await enrol(t, 'site-off', 'col-off');
    assert.equal((await admin.post('/collectors/col-off/revoke', {}, { csrf: true })).res.status, 303);
    const list = (await admin.get('/devices')).html;
    const rowOf = (id: number) => new RegExp(`href="/devices/${id}"[\\s\\S]*?</tr>`).exec(list)?.[0] ?? '';
    assert.match(rowOf(off), /collector offline/);
    assert.doesNotMatch(rowOf(on), /collector offline/);
    assert.match((await admin.get(`/devices/${off}`)).html, /collector offline/);
    assert.doesNotMatch((await admin.get(`/devices/${on}`)).html, /collector offline/);
  });

  test('the device form shows and keeps the zone; changing it needs collectors.manage and is audited', async () => {
    const db = t.services.db;
    const id = zonedDevice('dev-form', 'site-f');
    setZone(db, SYSTEM_ACTOR, { device: id }, 'site-own');
    createRole(db, SYSTEM_ACTOR, { name: 'editor', permissions: ['devices.view', 'devices.update'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'eddy', password: 'eddy-password-12', role: 'editor' });
    const editor = new WebClient(t.url);
    assert.equal((await editor.login('eddy', 'eddy-password-12')).status, 303);
    const form = (await admin.get(`/devices/${id}/edit`)).html;
    assert.match(form, /name="zone"[^>]*value="site-own"/);
    const row = db.prepare('SELECT * FROM devices WHERE id = ?').get(id) as Record<string, string | number>;
    const fields = (zone: string | undefined, description: string) => ({
      name: String(row.name),
      hostname: String(row.hostname),
      protocol: String(row.protocol),
      port: String(row.port),
      group_id: String(row.group_id),
      credential_id: String(row.credential_id),
      template_id: String(row.template_id),
      enabled: 'on',
      description,
      schedule: '',
      ...(zone === undefined ? {} : { zone }),
    });
    const zoneOf = () => db.prepare('SELECT zone FROM devices WHERE id = ?').pluck().get(id);
    assert.equal((await editor.post(`/devices/${id}/edit`, fields('site-own', 'kept'), { csrf: true })).res.status, 303, 'same zone: saved');
    assert.equal((await editor.post(`/devices/${id}/edit`, fields(undefined, 'no field'), { csrf: true })).res.status, 303, 'no zone field: saved');
    assert.equal(zoneOf(), 'site-own', 'saving the form keeps the zone');
    const refused = await editor.post(`/devices/${id}/edit`, fields('site-x', 'moved'), { csrf: true });
    assert.equal(refused.res.status, 422, 'the form again, with the refusal');
    assert.match(refused.html, /needs the permission collectors\./);
    assert.equal(zoneOf(), 'site-own');
    assert.equal((await admin.post(`/devices/${id}/edit`, fields('', 'back to central'), { csrf: true })).res.status, 303);
    assert.equal(zoneOf(), null);
    const last = audit('device.zone').at(-1)!;
    assert.equal(last.door, 'web');
    assert.equal(last.target, `device ${id}`);
  });

  test('GET /api/v1/collectors lists them for collectors.view, 403 without', async () => {
    await enrol(t, 'site-api', 'col-api');
    const res = await t.api('/api/v1/collectors', { key: await t.keyFor({ permissions: ['collectors.view'] }) });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { items: { name: string; zone: string; state: string; last_seen_at: string | null }[] };
    const c = body.items.find((i) => i.name === 'col-api');
    assert.equal(c?.zone, 'site-api');
    assert.equal(c?.state, 'online');
    assert.equal(typeof c?.last_seen_at, 'string');
    const refused = await t.api('/api/v1/collectors', { key: await t.keyFor({ permissions: ['devices.view'] }) });
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'PERMISSION_DENIED');
  });

  test('/metrics has the collector series', async () => {
    await enrol(t, 'site-m', 'col-m');
    zonedDevice('dev-m', 'site-m');
    const key = await t.keyFor({ permissions: ['dashboard.view'] });
    const text = await (await t.api('/metrics', { key })).text();
    assert.match(text, /^confvault_collector_last_seen_seconds\{collector="col-m",zone="site-m"\} \d{10}$/m);
    assert.match(text, /^confvault_collector_results_total\{collector="col-m"\} 0$/m);
    assert.match(text, /^confvault_collector_queue\{zone="site-m"\} \d+$/m);
    assert.doesNotMatch(text, /collector="col-b"/, 'a revoked collector is left out');
  });
});
