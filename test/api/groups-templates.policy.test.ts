// Group and template changes by a scoped user, through the API and the web forms: refused outside the scope (403 naming why), each allowed change audited.
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { getTemplateSpec } from '../../src/features/templates/templates.service';
import type { Permission } from '../../src/identity/permissions';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi, type Json } from '../helpers/api-security';
import { seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { specValues } from '../../src/web/pages/template-form';
import { WebClient } from '../web/web-client';

let t: TestAppliance;
let seq = 0;
const ids = { A: 0, A1: 0, B: 0, devA: 0, devB: 0, tplIn: 0, tplOut: 0 };
const GROUP_PERMS: Permission[] = ['groups.view', 'groups.create', 'groups.update', 'groups.delete', 'devices.view', 'backups.view'];
const TEMPLATE_PERMS: Permission[] = ['templates.view', 'templates.create', 'templates.update', 'templates.delete'];
const keys = { scoped: '', all: '', noUpdate: '' };

interface AuditRowLite {
  actor: string;
  action: string;
  target: string;
  door: string;
  request_id: string | null;
  changes: string;
}

/** The newest audit row of an action on a target, if any. */
function lastAudit(action: string, target: string): AuditRowLite | undefined {
  return t.services.db
    .prepare('SELECT actor, action, target, door, request_id, changes FROM audit_log WHERE action = ? AND target = ? ORDER BY id DESC LIMIT 1')
    .get(action, target) as AuditRowLite | undefined;
}

const auditCount = () => t.services.db.prepare('SELECT count(*) FROM audit_log').pluck().get() as number;
const parentOf = (id: number) => t.services.db.prepare('SELECT parent_id FROM device_groups WHERE id = ?').pluck().get(id) as number | null;
const call = (key: string, method: string, path: string, json?: unknown) => callApi(t, key, method, path, json);

function templateBody(name: string): Json {
  return { name, vendor: 'ACME', commands: ['show running-config'] };
}

function assertDenied(r: { status: number; body: Json }, reason: RegExp): void {
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.equal(r.body.error?.code, 'PERMISSION_DENIED');
  assert.match(r.body.error.message, reason);
}

before(async () => {
  t = await startTestAppliance();
  const { db, secrets } = t.services;
  ids.A = seedGroup(db, 'pol-A');
  ids.A1 = seedGroup(db, 'pol-A1', ids.A);
  ids.B = seedGroup(db, 'pol-B');
  const cred = seedCredential(db, secrets, { name: 'pol-cred', username: 'u', password: 'p' });
  const admin = await t.keyFor({ permissions: 'all' });
  ids.tplIn = (await call(admin, 'POST', '/templates', templateBody('pol-inside'))).body.id;
  ids.tplOut = (await call(admin, 'POST', '/templates', templateBody('pol-outside'))).body.id;
  ids.devA = seedDevice(db, { name: 'pol-dev-a', port: 22, credential_id: cred, template_id: ids.tplIn, group_id: ids.A });
  ids.devB = seedDevice(db, { name: 'pol-dev-b', port: 22, credential_id: cred, template_id: ids.tplOut, group_id: ids.B });
  keys.scoped = await t.keyFor({ permissions: [...GROUP_PERMS, ...TEMPLATE_PERMS], groups: [ids.A], username: 'scoped-op' });
  // credentials.view: changing what a template sends hands it the enable secrets (template-enable-secret.security.test.ts).
  keys.all = await t.keyFor({ permissions: [...GROUP_PERMS, ...TEMPLATE_PERMS, 'credentials.view'], username: 'all-op' });
  keys.noUpdate = await t.keyFor({ permissions: GROUP_PERMS.filter((p) => p !== 'groups.update').concat('templates.view'), username: 'no-update' });
});
after(() => t.close());

describe('groups: holds permission × scope (issue #9 reproduction 4)', () => {
  test('reproduction: a scoped user cannot move an outside group under its own, and so never reads its devices', async () => {
    const before = auditCount();
    assertDenied(await call(keys.scoped, 'PUT', `/groups/${ids.B}`, { parent_id: ids.A }), /Group \d+ is outside your device-group scope/);
    assert.equal(parentOf(ids.B), null, 'nothing moved');
    assert.equal(auditCount(), before, 'a refusal writes no audit row');
    assert.equal((await call(keys.scoped, 'GET', `/devices/${ids.devB}`)).status, 403);
  });

  test('inside the scope: create, rename, delete are allowed and audited with actor, door, request id and changes', async () => {
    const name = `pol-new-${++seq}`;
    const res = await t.api('/api/v1/groups', { method: 'POST', key: keys.scoped, json: { name, parent_id: ids.A } });
    assert.equal(res.status, 201);
    const created = (await res.json()) as Json;
    const row = lastAudit('group.create', `group ${created.id}`)!;
    assert.equal(row.actor, 'scoped-op');
    assert.equal(row.door, 'api');
    assert.equal(row.request_id, res.headers.get('x-request-id'));
    assert.deepEqual(JSON.parse(row.changes).parent_id, { before: null, after: ids.A });

    assert.equal((await call(keys.scoped, 'PUT', `/groups/${created.id}`, { name: `${name}-x` })).status, 200);
    assert.deepEqual(JSON.parse(lastAudit('group.update', `group ${created.id}`)!.changes), { name: { before: name, after: `${name}-x` } });
    assert.equal((await call(keys.scoped, 'PUT', `/groups/${created.id}`, { parent_id: ids.A1 })).status, 200, 'a move inside the scope');
    assert.equal((await call(keys.scoped, 'DELETE', `/groups/${created.id}`)).status, 200);
    assert.ok(lastAudit('group.delete', `group ${created.id}`));
  });

  test('outside the scope: create under, move out of, move to the top, rename and delete an outside group are 403', async () => {
    const before = auditCount();
    assertDenied(
      await call(keys.scoped, 'POST', '/groups', { name: `pol-x-${++seq}`, parent_id: ids.B }),
      /parent group \d+ is outside your device-group scope/i,
    );
    assertDenied(await call(keys.scoped, 'POST', '/groups', { name: `pol-x-${++seq}`, parent_id: null }), /top level/);
    assertDenied(await call(keys.scoped, 'PUT', `/groups/${ids.A1}`, { parent_id: ids.B }), /outside your device-group scope/);
    assertDenied(await call(keys.scoped, 'PUT', `/groups/${ids.A1}`, { parent_id: null }), /top level/);
    assertDenied(await call(keys.scoped, 'PUT', `/groups/${ids.B}`, { name: 'renamed' }), /outside your device-group scope/);
    assertDenied(await call(keys.scoped, 'DELETE', `/groups/${ids.B}`), /outside your device-group scope/);
    assert.equal(parentOf(ids.A1), ids.A);
    assert.equal(t.services.db.prepare('SELECT name FROM device_groups WHERE id = ?').pluck().get(ids.B), 'pol-B');
    assert.equal(auditCount(), before);
  });

  test('without the permission: 403 naming it; with scope all the same move is allowed and audited', async () => {
    assertDenied(await call(keys.noUpdate, 'PUT', `/groups/${ids.B}`, { parent_id: ids.A }), /groups\.update/);
    assert.equal((await call(keys.all, 'PUT', `/groups/${ids.B}`, { parent_id: ids.A })).status, 200);
    assert.deepEqual(JSON.parse(lastAudit('group.update', `group ${ids.B}`)!.changes), { parent_id: { before: null, after: ids.A } });
    assert.equal((await call(keys.all, 'PUT', `/groups/${ids.B}`, { parent_id: null })).status, 200);
    assert.equal(parentOf(ids.B), null);
  });
});

describe('templates: holds permission × scope × commands (issue #9 reproduction 5)', () => {
  test('reproduction: a scoped user cannot change the commands of a template used outside its scope', async () => {
    const before = auditCount();
    assertDenied(
      await call(keys.scoped, 'PUT', `/templates/${ids.tplOut}`, { commands: ['show run', 'reload in 1'] }),
      /commands needs a device-group scope of all/,
    );
    assert.deepEqual(getTemplateSpec(t.services.db, ids.tplOut)!.commands, ['show running-config'], 'the next backup sends what it sent before');
    assertDenied(await call(keys.scoped, 'PUT', `/templates/${ids.tplOut}`, { description: 'harmless' }), /used by 1 device outside your device-group scope/);
    assertDenied(await call(keys.scoped, 'DELETE', `/templates/${ids.tplOut}`), /used by 1 device outside your device-group scope/);
    assert.equal(auditCount(), before);
  });

  test('commands, pre_commands (and the exit command) need scope all even for a template used only inside the scope', async () => {
    assertDenied(await call(keys.scoped, 'PUT', `/templates/${ids.tplIn}`, { commands: ['show run', 'reload in 1'] }), /commands/);
    assertDenied(await call(keys.scoped, 'PUT', `/templates/${ids.tplIn}`, { pre_commands: ['terminal length 0', 'reload'] }), /pre_commands/);
    assertDenied(await call(keys.scoped, 'PUT', `/templates/${ids.tplIn}`, { exit_command: 'reload' }), /exit_command/);
    assert.deepEqual(getTemplateSpec(t.services.db, ids.tplIn)!.commands, ['show running-config']);
  });

  test('allowed scoped changes (other fields, unchanged commands, create, delete an unused template) are audited', async () => {
    assert.equal((await call(keys.scoped, 'PUT', `/templates/${ids.tplIn}`, { description: 'lab routers', commands: ['show running-config'] })).status, 200);
    const row = lastAudit('template.update', `template ${ids.tplIn}`)!;
    assert.equal(row.actor, 'scoped-op');
    assert.deepEqual(JSON.parse(row.changes), { description: { before: '', after: 'lab routers' } });
    const created = await call(keys.scoped, 'POST', '/templates', templateBody(`pol-tpl-${++seq}`));
    assert.equal(created.status, 201);
    assert.ok(lastAudit('template.create', `template ${created.body.id}`));
    assert.equal((await call(keys.scoped, 'DELETE', `/templates/${created.body.id}`)).status, 200);
    assert.ok(lastAudit('template.delete', `template ${created.body.id}`));
  });

  test('without the permission: 403 naming it; with scope all the commands change and the audit row has before and after', async () => {
    assertDenied(await call(keys.noUpdate, 'PUT', `/templates/${ids.tplOut}`, { commands: ['show version'] }), /templates\.update/);
    assert.equal((await call(keys.all, 'PUT', `/templates/${ids.tplOut}`, { commands: ['show running-config', 'show version'] })).status, 200);
    assert.deepEqual(JSON.parse(lastAudit('template.update', `template ${ids.tplOut}`)!.changes), {
      commands: { before: ['show running-config'], after: ['show running-config', 'show version'] },
    });
    const inUse = await call(keys.all, 'DELETE', `/templates/${ids.tplOut}`);
    assert.equal(inUse.body.error?.code, 'TEMPLATE_IN_USE', 'with scope all the usual rule applies');
  });

  test('the OpenAPI document names the refusals on the operations that carry them', async () => {
    const doc = (await (await t.api('/api/v1/openapi.json')).json()) as Json;
    const put = doc.paths['/templates/{template_id}'].put;
    assert.match(put.description, /Scope rule/);
    assert.match(put.responses['403'].description, /commands/);
    assert.match(doc.paths['/templates/{template_id}'].delete.responses['403'].description, /outside that scope/);
    assert.match(doc.paths['/groups/{group_id}'].put.responses['403'].description, /outside it/);
    assert.doesNotMatch(doc.paths['/templates/{template_id}'].get.responses['403'].description, /Also `PERMISSION_DENIED`/, 'reads carry no scope rule');
  });
});

describe('the web forms apply the same rules', () => {
  let web: WebClient;
  before(async () => {
    createRole(t.services.db, SYSTEM_ACTOR, { name: 'pol-web-role', permissions: [...GROUP_PERMS, ...TEMPLATE_PERMS] });
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'pol-web', password: 'pol-web-password-1', role: 'pol-web-role', groups: [ids.A] });
    web = new WebClient(t.url);
    assert.equal((await web.login('pol-web', 'pol-web-password-1')).status, 303);
  });

  test('moving an outside group under one’s own from the groups page is refused', async () => {
    const r = await web.post(`/groups/${ids.B}/edit`, { name: 'pol-B', parent_id: String(ids.A), description: '', schedule: '' }, { csrf: true });
    assert.equal(r.res.status, 303);
    assert.equal(parentOf(ids.B), null);
    const page = await web.get(r.res.headers.get('location')!);
    assert.match(page.html, /outside your device-group scope/);
  });

  test('changing a template’s commands from its form is refused; another field is saved and audited through the web door', async () => {
    const spec = getTemplateSpec(t.services.db, ids.tplIn)!;
    assert.match((await web.get(`/templates/${ids.tplIn}`)).html, /Your device-group scope is limited/);
    const denied = await web.post(`/templates/${ids.tplIn}/edit`, { ...specValues(spec), commands: 'show run\nreload in 1' }, { csrf: true });
    assert.match(denied.html, /needs a device-group scope of all/);
    assert.deepEqual(getTemplateSpec(t.services.db, ids.tplIn)!.commands, ['show running-config']);
    const ok = await web.post(`/templates/${ids.tplIn}/edit`, { ...specValues(spec), description: 'from the web' }, { csrf: true });
    assert.equal(ok.res.status, 303);
    const row = lastAudit('template.update', `template ${ids.tplIn}`)!;
    assert.equal(row.door, 'web');
    assert.equal(row.actor, 'pol-web');
    assert.deepEqual(JSON.parse(row.changes), { description: { before: 'lab routers', after: 'from the web' } });
  });
});
