// Role changes through the web and the CLI: the self-escalation reproduction, the role mutation matrix (holds the
// permission, lacks it, role holding more than the actor, own role), the last full administrator's role, audit rows.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRole, getRole } from '../../src/features/roles/roles.service';
import { createUser, setUserRole } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { PERMISSIONS } from '../../src/identity/permissions';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { postPairs } from './form-post';
import { WebClient } from './web-client';

describe('roles: no escalation', () => {
  let t: TestAppliance;
  let editor: WebClient;
  let maker: WebClient;
  let viewer: WebClient;
  const perms = (name: string) => getRole(t.services.db, name)?.permissions;
  const lastAudit = (action: string, target: string) =>
    t.services.db.prepare('SELECT * FROM audit_log WHERE action = ? AND target = ? ORDER BY id DESC LIMIT 1').get(action, target) as
      { actor: string; door: string; door_ref: string | null; changes: string } | undefined;
  const cli = (args: string[]) => runCliAsync([...args, '--data-dir', path.join(t.dir, 'data')]);

  before(async () => {
    t = await startTestAppliance();
    const db = t.services.db;
    createRole(db, SYSTEM_ACTOR, { name: 'roleeditor', permissions: ['roles.view', 'roles.update', 'devices.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'rolemaker', permissions: ['roles.view', 'roles.create', 'devices.view', 'backups.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'roleviewer', permissions: ['roles.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'target', permissions: ['backups.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'strong', permissions: ['credentials.view', 'devices.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'rolly', password: 'rolly-password-1', role: 'roleeditor' });
    await createUser(db, SYSTEM_ACTOR, { username: 'maker', password: 'maker-password-1', role: 'rolemaker' });
    await createUser(db, SYSTEM_ACTOR, { username: 'viewer', password: 'viewer-password-1', role: 'roleviewer' });
    editor = new WebClient(t.url);
    assert.equal((await editor.login('rolly', 'rolly-password-1')).status, 303);
    maker = new WebClient(t.url);
    assert.equal((await maker.login('maker', 'maker-password-1')).status, 303);
    viewer = new WebClient(t.url);
    assert.equal((await viewer.login('viewer', 'viewer-password-1')).status, 303);
  });
  after(() => t.close());

  test('reproduction: a user with roles.view/update cannot add permissions to their own role', async () => {
    const r = await postPairs(editor, '/roles/roleeditor/edit', [
      ['permissions', 'roles.view'],
      ['permissions', 'roles.update'],
      ['permissions', 'devices.view'],
      ['permissions', 'users.update'],
      ['permissions', 'credentials.view'],
      ['permissions', 'backups.run'],
    ]);
    assert.equal(r.res.status, 403);
    assert.match(r.html, /cannot change the role &quot;roleeditor&quot;: it is your own role/);
    assert.deepEqual(perms('roleeditor'), ['devices.view', 'roles.update', 'roles.view']);
    assert.equal((await editor.get('/credentials')).res.status, 403, 'still no credentials');
  });

  test('matrix: edit a role (allowed, lacks roles.update, adds what the editor lacks, own role, administrator)', async () => {
    // Allowed: adding a permission the editor holds, and removing one they lack (reducing is never an escalation).
    const ok = await postPairs(editor, '/roles/target/edit', [['permissions', 'devices.view']]);
    assert.equal(ok.res.status, 303);
    assert.deepEqual(perms('target'), ['devices.view']);
    const row = lastAudit('role.update', 'role target')!;
    assert.equal(row.actor, 'rolly');
    assert.equal(row.door, 'web');
    assert.deepEqual(JSON.parse(row.changes).permissions, { before: ['backups.view'], after: ['devices.view'] });
    // Lacks roles.update.
    assert.equal((await postPairs(viewer, '/roles/target/edit', [['permissions', 'roles.view']])).res.status, 403);
    // Adds a permission the editor does not hold (the role is then above them).
    const up = await postPairs(editor, '/roles/target/edit', [
      ['permissions', 'devices.view'],
      ['permissions', 'credentials.view'],
    ]);
    assert.equal(up.res.status, 403);
    assert.match(up.html, /cannot add permissions you do not hold \(credentials\.view\)/);
    assert.deepEqual(perms('target'), ['devices.view']);
    // A role holding more than the editor may be reduced, not raised further.
    const strong = await postPairs(editor, '/roles/strong/edit', [
      ['permissions', 'credentials.view'],
      ['permissions', 'devices.view'],
      ['permissions', 'users.update'],
    ]);
    assert.equal(strong.res.status, 403);
    assert.deepEqual(perms('strong'), ['credentials.view', 'devices.view']);
    // The administrator role stays immutable.
    const adm = await postPairs(editor, '/roles/administrator/edit', [['permissions', 'devices.view']]);
    assert.equal(adm.res.status, 422);
    assert.match(adm.html, /always holds every permission/);
  });

  test('matrix: create a role (allowed, lacks roles.create, permissions the creator lacks)', async () => {
    const ok = await postPairs(maker, '/roles', [
      ['name', 'made'],
      ['permissions', 'devices.view'],
      ['permissions', 'backups.view'],
    ]);
    assert.equal(ok.res.status, 303);
    assert.deepEqual(JSON.parse(lastAudit('role.create', 'role made')!.changes).permissions, { before: null, after: ['backups.view', 'devices.view'] });
    assert.equal(
      (
        await postPairs(editor, '/roles', [
          ['name', 'nope1'],
          ['permissions', 'devices.view'],
        ])
      ).res.status,
      403,
    );
    const above = await postPairs(maker, '/roles', [
      ['name', 'nope2'],
      ['permissions', 'devices.view'],
      ['permissions', 'users.update'],
    ]);
    assert.equal(above.res.status, 403);
    assert.match(above.html, /permissions you do not hold \(users\.update\)/);
    assert.equal(getRole(t.services.db, 'nope1'), undefined);
    assert.equal(getRole(t.services.db, 'nope2'), undefined);
  });

  test("the CLI: changes are audited with the OS user; the last full administrator's role cannot be reduced", async () => {
    const db = t.services.db;
    const add = await cli(['role', 'add', 'clirole', '--permissions', 'devices.view']);
    assert.equal(add.status, 0, add.stderr);
    const row = lastAudit('role.create', 'role clirole')!;
    assert.equal(row.door, 'cli');
    assert.ok(row.door_ref, 'the OS user is recorded');
    // admin is the only user with every permission: move them to a custom role holding all of them, then try to cut it.
    createRole(db, SYSTEM_ACTOR, { name: 'everything', permissions: [...PERMISSIONS] });
    setUserRole(db, SYSTEM_ACTOR, 'admin', 'everything');
    const cut = await cli(['role', 'set-permissions', 'everything', '--permissions', 'devices.view']);
    assert.equal(cut.status, 1);
    assert.match(cut.stderr, /would leave no enabled user holding every permission/);
    assert.equal(perms('everything')?.length, PERMISSIONS.length);
    setUserRole(db, SYSTEM_ACTOR, 'admin', 'administrator');
    const now = await cli(['role', 'set-permissions', 'everything', '--permissions', 'devices.view']);
    assert.equal(now.status, 0, 'with admin back on the built-in role, the custom one may shrink');
  });
});
