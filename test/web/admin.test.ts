// Users, roles and the group schedule field through the web pages: happy paths, field errors, permission, CSRF and audit.
import { after, before, describe, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import assert from 'node:assert/strict';
import { createRole, getRole } from '../../src/features/roles/roles.service';
import { PERMISSIONS } from '../../src/identity/permissions';
import { createUser, getUser } from '../../src/features/users/users.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedGroup } from '../helpers/seed';
import { postPairs } from './form-post';
import { WebClient } from './web-client';

describe('web users, roles and group schedule', () => {
  let t: TestAppliance;
  let admin: WebClient;
  let viewer: WebClient;
  const g = { a: 0, b: 0 };
  const audits = (action: string) =>
    t.services.db.prepare("SELECT target, details, changes FROM audit_log WHERE action = ? AND door = 'web'").all(action) as {
      target: string;
      details: string;
      changes: string;
    }[];

  before(async () => {
    t = await startTestAppliance();
    const db = t.services.db;
    g.a = seedGroup(db, 'Alpha');
    g.b = seedGroup(db, 'Bravo');
    createRole(db, SYSTEM_ACTOR, { name: 'viewer', permissions: ['devices.view', 'dashboard.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'viewer1', password: 'viewer-password-1', role: 'viewer' });
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    viewer = new WebClient(t.url);
    assert.equal((await viewer.login('viewer1', 'viewer-password-1')).status, 303);
  });
  after(() => t.close());

  test('administrators see Users and Roles in the navigation and both lists', async () => {
    const home = await admin.get('/devices');
    assert.match(home.html, /href="\/users"/);
    assert.match(home.html, /href="\/roles"/);
    const users = await admin.get('/users');
    assert.equal(users.res.status, 200);
    assert.match(users.html, /data-user="viewer1"/);
    assert.match(users.html, /all groups/);
    const roles = await admin.get('/roles');
    assert.match(roles.html, /data-role="administrator"[\s\S]*every permission/);
    assert.match(roles.html, /devices\.view, dashboard\.view|dashboard\.view, devices\.view/);
  });

  test('create a role from the permission checkboxes, then edit it', async () => {
    const form = await admin.get('/roles/new');
    assert.match(form.html, /name="permissions" value="templates\.update"/);
    const r = await postPairs(admin, '/roles', [
      ['name', 'operator'],
      ['description', 'runs backups'],
      ['permissions', 'devices.view'],
      ['permissions', 'backups.run'],
    ]);
    assert.equal(r.res.status, 303);
    assert.deepEqual(getRole(t.services.db, 'operator')?.permissions, ['backups.run', 'devices.view']);
    const e = await postPairs(admin, '/roles/operator/edit', [
      ['permissions', 'devices.view'],
      ['permissions', 'backups.view'],
    ]);
    assert.equal(e.res.status, 303);
    assert.deepEqual(getRole(t.services.db, 'operator')?.permissions, ['backups.view', 'devices.view']);
    assert.equal(audits('role.create').length, 1);
    assert.deepEqual(JSON.parse(audits('role.update')[0].changes).permissions.after, ['backups.view', 'devices.view']);
  });

  test('role form errors: duplicate name, unknown permission; administrator is read-only', async () => {
    const dup = await postPairs(admin, '/roles', [
      ['name', 'operator'],
      ['permissions', 'devices.view'],
    ]);
    assert.equal(dup.res.status, 422);
    assert.match(dup.html, /class="field-error" id="name-error"[^>]*>[^<]*already exists/);
    const bad = await postPairs(admin, '/roles', [
      ['name', 'weird'],
      ['permissions', 'root.everything'],
    ]);
    assert.equal(bad.res.status, 422);
    assert.match(bad.html, /id="permissions-error"[^>]*>unknown permission/);
    const view = await admin.get('/roles/administrator/edit');
    assert.equal(view.res.status, 200);
    assert.match(view.html, /<fieldset class="full" disabled/);
    assert.doesNotMatch(view.html, /Save role/);
    const ro = await postPairs(admin, '/roles/administrator/edit', [['permissions', 'devices.view']]);
    assert.equal(ro.res.status, 422);
    assert.equal(getRole(t.services.db, 'administrator')?.permissions.length, PERMISSIONS.length);
  });

  test('create a scoped user who must change the password at first login', async () => {
    const r = await postPairs(admin, '/users', [
      ['username', 'alice'],
      ['password', 'initial-pass-1'],
      ['role', 'operator'],
      ['scope', 'groups'],
      ['groups', String(g.a)],
      ['timezone', 'Europe/Berlin'],
    ]);
    assert.equal(r.res.status, 303);
    const u = getUser(t.services.db, 'alice');
    assert.deepEqual(u?.scope, [g.a]);
    assert.equal(u?.must_change_password, true);
    assert.equal(u?.timezone, 'Europe/Berlin');
    const list = await admin.get('/users');
    assert.match(list.html, /data-user="alice"[\s\S]*?Alpha[\s\S]*?must change password[\s\S]*?Europe\/Berlin/);
    const alice = new WebClient(t.url);
    await alice.login('alice', 'initial-pass-1');
    const next = await alice.fetch('/devices');
    assert.equal(next.status, 303);
    assert.equal(next.headers.get('location'), '/account/password');
    assert.equal(JSON.parse(audits('user.create')[0].changes).role.after, 'operator');
    assert.equal(JSON.parse(audits('user.create')[0].changes).password, 'changed');
    assert.doesNotMatch(JSON.stringify(audits('user.create')), /initial-pass-1/);
  });

  test('user form errors: duplicate name, short password, no group ticked', async () => {
    const dup = await postPairs(admin, '/users', [
      ['username', 'alice'],
      ['password', 'another-pass-1'],
      ['role', 'operator'],
      ['scope', 'all'],
    ]);
    assert.equal(dup.res.status, 422);
    assert.match(dup.html, /id="username-error"/);
    const short = await postPairs(admin, '/users', [
      ['username', 'bob'],
      ['password', 'short'],
      ['role', 'operator'],
      ['scope', 'all'],
    ]);
    assert.equal(short.res.status, 422);
    assert.match(short.html, /id="password-error"[^>]*>must be at least 10/);
    const none = await postPairs(admin, '/users', [
      ['username', 'bob'],
      ['password', 'long-enough-1'],
      ['role', 'operator'],
      ['scope', 'groups'],
    ]);
    assert.equal(none.res.status, 422);
    assert.match(none.html, /id="groups-error"/);
    assert.equal(getUser(t.services.db, 'bob'), undefined);
  });

  test('edit role and scope, disable and enable, reset password', async () => {
    const e = await postPairs(admin, '/users/alice/edit', [
      ['role', 'viewer'],
      ['scope', 'groups'],
      ['groups', String(g.a)],
      ['groups', String(g.b)],
    ]);
    assert.equal(e.res.status, 303);
    let u = getUser(t.services.db, 'alice');
    assert.equal(u?.role, 'viewer');
    assert.deepEqual([...(u.scope as number[])].sort(), [g.a, g.b].sort());
    const all = await postPairs(admin, '/users/alice/edit', [
      ['role', 'viewer'],
      ['scope', 'all'],
    ]);
    assert.equal(all.res.status, 303);
    assert.equal(getUser(t.services.db, 'alice')?.scope, 'all');
    const badRole = await postPairs(admin, '/users/alice/edit', [
      ['role', 'nope'],
      ['scope', 'all'],
    ]);
    assert.equal(badRole.res.status, 422);

    assert.equal((await postPairs(admin, '/users/viewer1/disable', [])).res.status, 303);
    assert.equal(getUser(t.services.db, 'viewer1')?.disabled, true);
    assert.equal((await viewer.fetch('/devices')).status, 303, 'the disabled user’s session ends');
    assert.equal((await postPairs(admin, '/users/viewer1/enable', [])).res.status, 303);
    assert.equal((await viewer.login('viewer1', 'viewer-password-1')).status, 303);

    const self = await postPairs(admin, '/users/admin/disable', []);
    assert.equal(self.res.status, 303);
    assert.equal(getUser(t.services.db, 'admin')?.disabled, false, 'an administrator cannot lock themselves out');

    const mismatch = await postPairs(admin, '/users/viewer1/password', [
      ['password', 'new-password-12'],
      ['confirm', 'other-password-12'],
    ]);
    assert.equal(mismatch.res.status, 422);
    const reset = await postPairs(admin, '/users/viewer1/password', [
      ['password', 'new-password-12'],
      ['confirm', 'new-password-12'],
    ]);
    assert.equal(reset.res.status, 303);
    u = getUser(t.services.db, 'viewer1');
    assert.equal(u?.must_change_password, true);
    assert.equal((await viewer.fetch('/devices')).status, 303, 'sessions opened with the old password end');
    assert.equal(audits('user.password_reset').length, 1);
    assert.doesNotMatch(JSON.stringify(audits('user.password_reset')), /new-password-12/);
    for (const a of ['user.update', 'user.disable', 'user.enable']) assert.ok(audits(a).length >= 1, a);
    assert.equal((await admin.get('/users/nobody/edit')).res.status, 404);
  });

  test('without the permissions: 403 and no navigation entries', async () => {
    const db = t.services.db;
    createRole(db, SYSTEM_ACTOR, { name: 'plain', permissions: ['devices.view', 'users.view', 'roles.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'plain1', password: 'plain-password-1', role: 'plain' });
    const nobody = new WebClient(t.url);
    await nobody.login('viewer1', 'new-password-12');
    // /account is closed until the password is changed, so the token comes from the password page itself.
    const token = /name="csrf-token" content="([^"]+)"/.exec((await nobody.get('/account/password')).html)?.[1] ?? '';
    const changed = await nobody.post(
      '/account/password',
      { current: 'new-password-12', password: 'newer-password-12', confirm: 'newer-password-12' },
      { csrf: token },
    );
    assert.equal(changed.res.status, 303);
    const home = await nobody.get('/devices');
    assert.equal(home.res.status, 200);
    assert.doesNotMatch(home.html, /href="\/users"/);
    assert.doesNotMatch(home.html, /href="\/roles"/);
    for (const p of ['/users', '/users/new', '/roles', '/roles/new', '/users/alice/edit']) assert.equal((await nobody.get(p)).res.status, 403, p);
    assert.equal(
      (
        await postPairs(nobody, '/users', [
          ['username', 'eve'],
          ['password', 'eve-password-1'],
          ['role', 'administrator'],
          ['scope', 'all'],
        ])
      ).res.status,
      403,
    );
    assert.equal(
      (
        await postPairs(nobody, '/users/viewer1/edit', [
          ['role', 'administrator'],
          ['scope', 'all'],
        ])
      ).res.status,
      403,
    );
    assert.equal(getUser(db, 'eve'), undefined);
    assert.equal(getUser(db, 'viewer1')?.role, 'viewer');

    // View-only: lists work, but no create/edit links and every change is refused.
    const ro = new WebClient(t.url);
    await ro.login('plain1', 'plain-password-1');
    const list = await ro.get('/users');
    assert.equal(list.res.status, 200);
    assert.doesNotMatch(list.html, /href="\/users\/new"|\/disable"/);
    assert.equal((await ro.get('/roles')).res.status, 200);
    assert.equal(
      (
        await postPairs(ro, '/roles', [
          ['name', 'x'],
          ['permissions', 'devices.view'],
        ])
      ).res.status,
      403,
    );
    assert.equal((await postPairs(ro, '/roles/operator/edit', [['permissions', 'audit.view']])).res.status, 403);
    assert.equal((await postPairs(ro, '/users/alice/disable', [])).res.status, 403);
    assert.equal(
      (
        await postPairs(ro, '/users/alice/password', [
          ['password', 'hijack-pass-1'],
          ['confirm', 'hijack-pass-1'],
        ])
      ).res.status,
      403,
    );
    assert.equal(getRole(db, 'x'), undefined);
  });

  test('a user manager cannot hand out more than they hold: no administrator role, no groups outside their scope', async () => {
    const db = t.services.db;
    createRole(db, SYSTEM_ACTOR, { name: 'usermgr', permissions: ['users.view', 'users.create', 'users.update', 'devices.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'mgr1', password: 'mgr-password-12', role: 'usermgr', groups: [g.a] });
    const mgr = new WebClient(t.url);
    assert.equal((await mgr.login('mgr1', 'mgr-password-12')).status, 303);
    const self = await postPairs(mgr, '/users/mgr1/edit', [
      ['role', 'administrator'],
      ['scope', 'all'],
    ]);
    assert.equal(self.res.status, 403, 'changing their own role is refused');
    assert.match(self.html, /cannot change the role of your own account/);
    assert.equal(getUser(db, 'mgr1')?.role, 'usermgr');
    const wider = await postPairs(mgr, '/users', [
      ['username', 'trudy'],
      ['password', 'trudy-pass-12'],
      ['role', 'viewer'],
      ['scope', 'groups'],
      ['groups', String(g.b)],
    ]);
    assert.equal(wider.res.status, 403, 'a group outside their own scope is refused');
    const all = await postPairs(mgr, '/users', [
      ['username', 'trudy'],
      ['password', 'trudy-pass-12'],
      ['role', 'viewer'],
      ['scope', 'all'],
    ]);
    assert.equal(all.res.status, 403, 'scope "all" is wider than theirs');
    assert.equal(getUser(db, 'trudy'), undefined);
    const tooMuch = await postPairs(mgr, '/users', [
      ['username', 'trudy'],
      ['password', 'trudy-pass-12'],
      ['role', 'viewer'],
      ['scope', 'groups'],
      ['groups', String(g.a)],
    ]);
    assert.equal(tooMuch.res.status, 403, 'viewer holds dashboard.view, which the manager does not');
    assert.match(tooMuch.html, /holds permissions you do not \(dashboard\.view\)/);
    createRole(db, SYSTEM_ACTOR, { name: 'devreader', permissions: ['devices.view'] });
    const outside = await postPairs(mgr, '/users', [
      ['username', 'trudy'],
      ['password', 'trudy-pass-12'],
      ['role', 'devreader'],
      ['scope', 'groups'],
      ['groups', String(g.b)],
    ]);
    assert.equal(outside.res.status, 403);
    assert.match(outside.html, /only grant device groups inside your own scope/);
    const ok = await postPairs(mgr, '/users', [
      ['username', 'trudy'],
      ['password', 'trudy-pass-12'],
      ['role', 'devreader'],
      ['scope', 'groups'],
      ['groups', String(g.a)],
    ]);
    assert.equal(ok.res.status, 303, 'within their permissions and scope it works');
  });

  test('every new form refuses a POST without the CSRF token and changes nothing', async () => {
    const before = { users: getUser(t.services.db, 'alice'), role: getRole(t.services.db, 'operator') };
    const posts: [string, [string, string][]][] = [
      [
        '/users',
        [
          ['username', 'mallory'],
          ['password', 'mallory-pass-1'],
          ['role', 'administrator'],
          ['scope', 'all'],
        ],
      ],
      [
        '/users/alice/edit',
        [
          ['role', 'administrator'],
          ['scope', 'all'],
        ],
      ],
      ['/users/alice/disable', []],
      [
        '/users/alice/password',
        [
          ['password', 'mallory-pass-1'],
          ['confirm', 'mallory-pass-1'],
        ],
      ],
      [
        '/roles',
        [
          ['name', 'mallory'],
          ['permissions', 'users.update'],
        ],
      ],
      ['/roles/operator/edit', [['permissions', 'users.update']]],
      [
        '/groups',
        [
          ['name', 'evil'],
          ['schedule', '0 3 * * *'],
        ],
      ],
    ];
    for (const [path, pairs] of posts) assert.equal((await postPairs(admin, path, pairs, { csrf: false })).res.status, 403, path);
    assert.equal(getUser(t.services.db, 'mallory'), undefined);
    assert.deepEqual(getUser(t.services.db, 'alice'), before.users);
    assert.deepEqual(getRole(t.services.db, 'operator'), before.role);
  });

  test('group schedule: validated like the API, stored, changed and cleared', async () => {
    const bad = await admin.post('/groups', { name: 'Nightly', schedule: '61 * * *' }, { csrf: true });
    assert.equal(bad.res.status, 422);
    assert.match(bad.html, /id="schedule-error"/);
    const ok = await admin.post('/groups', { name: 'Nightly', schedule: '0 3 * * *' }, { csrf: true });
    assert.equal(ok.res.status, 303);
    const q = t.services.db.prepare('SELECT id, schedule FROM device_groups WHERE name = ?');
    const row = q.get('Nightly') as { id: number; schedule: string | null };
    assert.equal(row.schedule, '0 3 * * *');
    const page = await admin.get('/groups');
    assert.match(page.html, /name="schedule"[^>]*value="0 3 \* \* \*"/);
    const edit = await admin.post(`/groups/${row.id}/edit`, { name: 'Nightly', parent_id: '', schedule: '30 2 * * 1' }, { csrf: true });
    assert.equal(edit.res.status, 303);
    assert.equal((q.get('Nightly') as { schedule: string }).schedule, '30 2 * * 1');
    const badEdit = await admin.post(`/groups/${row.id}/edit`, { name: 'Nightly', parent_id: '', schedule: 'whenever' }, { csrf: true });
    assert.equal(badEdit.res.status, 303);
    assert.equal((q.get('Nightly') as { schedule: string }).schedule, '30 2 * * 1', 'a bad schedule changes nothing');
    await admin.post(`/groups/${row.id}/edit`, { name: 'Nightly', parent_id: '', schedule: '' }, { csrf: true });
    assert.equal((q.get('Nightly') as { schedule: string | null }).schedule, null, 'empty means inherit');
    const changes = t.services.db.prepare("SELECT changes FROM audit_log WHERE action = 'group.update' ORDER BY id").pluck().all() as string[];
    assert.deepEqual(JSON.parse(changes[0]).schedule, { before: '0 3 * * *', after: '30 2 * * 1' }, 'the service audits before and after');
  });
});
