// Acting on users through the web and the CLI: the admin takeover reproduction, every user mutation × (holds the
// permission, lacks it, target outside scope, target above the actor), the last full administrator, audit rows without secrets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser, getUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedGroup } from '../helpers/seed';
import { postPairs } from './form-post';
import { WebClient } from './web-client';

interface AuditRow {
  actor: string;
  action: string;
  target: string;
  door: string;
  door_ref: string | null;
  details: string;
  changes: string;
}

describe('users: who may act on whom', () => {
  let t: TestAppliance;
  let mgr: WebClient;
  let lacker: WebClient;
  let admin: WebClient;
  const g = { a: 0, b: 0 };
  const PASSWORDS = ['mgr-password-12', 'lacker-password-1', 'peer-password-1', 'reset-password-99', 'takeover-pass-1', 'user-password-1'];
  const lastAudit = (action: string, target: string) =>
    t.services.db.prepare('SELECT * FROM audit_log WHERE action = ? AND target = ? ORDER BY id DESC LIMIT 1').get(action, target) as AuditRow | undefined;
  const auditCount = () => t.services.db.prepare('SELECT count(*) FROM audit_log').pluck().get() as number;
  const noSecrets = (row: AuditRow | undefined) => {
    assert.ok(row, 'an audit row exists');
    for (const p of PASSWORDS) assert.ok(!JSON.stringify(row).includes(p), `the audit row holds a password: ${JSON.stringify(row)}`);
    assert.doesNotMatch(JSON.stringify(row), /\$argon2/);
  };
  const cli = (args: string[], input = '') => runCliAsync([...args, '--data-dir', path.join(t.dir, 'data')], { input });

  before(async () => {
    t = await startTestAppliance();
    const db = t.services.db;
    g.a = seedGroup(db, 'Alpha');
    g.b = seedGroup(db, 'Bravo');
    createRole(db, SYSTEM_ACTOR, { name: 'usermgr', permissions: ['users.view', 'users.create', 'users.update', 'devices.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'userviewer', permissions: ['users.view', 'devices.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'devreader', permissions: ['devices.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'devreader2', permissions: ['devices.view'] });
    createRole(db, SYSTEM_ACTOR, { name: 'bigger', permissions: ['devices.view', 'credentials.view'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'mgr', password: 'mgr-password-12', role: 'usermgr', groups: [g.a] });
    await createUser(db, SYSTEM_ACTOR, { username: 'lacker', password: 'lacker-password-1', role: 'userviewer', groups: [g.a] });
    await createUser(db, SYSTEM_ACTOR, { username: 'peer', password: 'peer-password-1', role: 'devreader', groups: [g.a] });
    await createUser(db, SYSTEM_ACTOR, { username: 'outsider', password: 'user-password-1', role: 'devreader', groups: [g.b] });
    await createUser(db, SYSTEM_ACTOR, { username: 'boss', password: 'user-password-1', role: 'bigger', groups: [g.a] });
    mgr = new WebClient(t.url);
    assert.equal((await mgr.login('mgr', 'mgr-password-12')).status, 303);
    lacker = new WebClient(t.url);
    assert.equal((await lacker.login('lacker', 'lacker-password-1')).status, 303);
    admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  test("reproduction: a scoped user manager can neither reset the administrator's password nor demote them", async () => {
    const before = auditCount();
    const reset = await postPairs(mgr, '/users/admin/password', [
      ['password', 'takeover-pass-1'],
      ['confirm', 'takeover-pass-1'],
    ]);
    assert.equal(reset.res.status, 403);
    assert.match(reset.html, /cannot reset the password of user &quot;admin&quot;: they hold permissions you do not/);
    assert.equal((await new WebClient(t.url).login('admin', 'takeover-pass-1')).status, 401, 'the new password does not open admin');
    assert.equal((await new WebClient(t.url).login('admin', 'admin-password-1')).status, 303, 'the old one still does');
    const demote = await postPairs(mgr, '/users/admin/edit', [
      ['role', 'devreader'],
      ['scope', 'groups'],
      ['groups', String(g.a)],
    ]);
    assert.equal(demote.res.status, 403);
    assert.equal(getUser(t.services.db, 'admin')?.role, 'administrator');
    assert.equal(getUser(t.services.db, 'admin')?.scope, 'all');
    const disable = await postPairs(mgr, '/users/admin/disable', []);
    assert.equal(disable.res.status, 303);
    assert.equal(getUser(t.services.db, 'admin')?.disabled, false);
    // Refusals change nothing, so they leave no change row (the logins above add theirs).
    const rows = t.services.db.prepare("SELECT action FROM audit_log WHERE id > ? AND action NOT LIKE 'login.%'").pluck().all(before) as string[];
    assert.deepEqual(rows, []);
  });

  test('the only administrator cannot demote or disable themselves (web), nor be demoted or disabled from the CLI', async () => {
    const self = await postPairs(admin, '/users/admin/edit', [
      ['role', 'devreader'],
      ['scope', 'all'],
    ]);
    assert.equal(self.res.status, 403);
    assert.match(self.html, /cannot change the role of your own account/);
    assert.doesNotMatch(self.html, /saved/);
    const off = await postPairs(admin, '/users/admin/disable', []);
    assert.equal(off.res.status, 303);
    const flash = await admin.get('/users');
    assert.match(flash.html, /cannot disable your own account/);
    for (const args of [
      ['user', 'set-role', 'admin', 'devreader'],
      ['user', 'disable', 'admin'],
      ['user', 'set-scope', 'admin', String(g.a)],
    ]) {
      const r = await cli(args);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /would leave no enabled user holding every permission/);
    }
    const u = getUser(t.services.db, 'admin')!;
    assert.deepEqual([u.role, u.scope, u.disabled], ['administrator', 'all', false]);
    assert.equal((await admin.get('/users')).res.status, 200, 'the administrator still has their session');
  });

  // Each user mutation of the web, by: the manager over a target below them (allowed), a user lacking the permission,
  // the manager over a target outside their scope, the manager over a target holding more permissions.
  const mutations: { name: string; action: string; path: (u: string) => string; fields: [string, string][] }[] = [
    {
      name: 'reset password',
      action: 'user.password_reset',
      path: (u) => `/users/${u}/password`,
      fields: [
        ['password', 'reset-password-99'],
        ['confirm', 'reset-password-99'],
      ],
    },
    {
      name: 'edit role and scope',
      action: 'user.update',
      path: (u) => `/users/${u}/edit`,
      fields: [
        ['role', 'devreader2'],
        ['scope', 'groups'],
        ['groups', '1'],
      ],
    },
    { name: 'disable', action: 'user.disable', path: (u) => `/users/${u}/disable`, fields: [] },
    { name: 'enable', action: 'user.enable', path: (u) => `/users/${u}/enable`, fields: [] },
  ];
  for (const m of mutations) {
    test(`matrix: ${m.name}`, async () => {
      const db = t.services.db;
      const snapshot = (u: string) => JSON.stringify(getUser(db, u));
      // Allowed: the target is below the manager and inside their scope.
      const ok = await postPairs(mgr, m.path('peer'), m.fields);
      assert.equal(ok.res.status, 303, `${m.name} of a user below: ${ok.html.slice(0, 200)}`);
      const row = lastAudit(m.action, 'user peer');
      noSecrets(row);
      assert.equal(row!.actor, 'mgr');
      assert.equal(row!.door, 'web');
      if (m.action === 'user.password_reset') assert.equal(JSON.parse(row!.changes).password, 'changed');
      // Lacks users.update.
      const before = snapshot('peer');
      const lacks = await postPairs(lacker, m.path('peer'), m.fields);
      assert.equal(lacks.res.status, 403);
      assert.equal(snapshot('peer'), before);
      // Outside the manager's scope.
      const outBefore = snapshot('outsider');
      const outside = await postPairs(mgr, m.path('outsider'), m.fields);
      if (m.path('x').endsWith('able')) {
        assert.equal(outside.res.status, 303);
        assert.match((await mgr.get('/users')).html, /device-group scope is wider than yours/);
      } else {
        assert.equal(outside.res.status, 403);
        assert.match(outside.html, /device-group scope is wider than yours/);
      }
      assert.equal(snapshot('outsider'), outBefore);
      // Above the manager: holds credentials.view.
      const bossBefore = snapshot('boss');
      const above = await postPairs(mgr, m.path('boss'), m.fields);
      if (m.path('x').endsWith('able')) assert.match((await mgr.get('/users')).html, /they hold permissions you do not \(credentials\.view\)/);
      else {
        assert.equal(above.res.status, 403);
        assert.match(above.html, /they hold permissions you do not \(credentials\.view\)/);
      }
      assert.equal(snapshot('boss'), bossBefore);
    });
  }

  test('matrix: create user (allowed, lacks users.create, group outside scope, role above the actor)', async () => {
    const db = t.services.db;
    const ok = await postPairs(mgr, '/users', [
      ['username', 'newpeer'],
      ['password', 'user-password-1'],
      ['role', 'devreader'],
      ['scope', 'groups'],
      ['groups', String(g.a)],
    ]);
    assert.equal(ok.res.status, 303);
    const row = lastAudit('user.create', 'user newpeer');
    noSecrets(row);
    assert.equal(JSON.parse(row!.changes).password, 'changed');
    assert.deepEqual(JSON.parse(row!.changes).scope, { before: null, after: [g.a] });
    const lacks = await postPairs(lacker, '/users', [
      ['username', 'x1'],
      ['password', 'user-password-1'],
      ['role', 'devreader'],
      ['scope', 'groups'],
      ['groups', String(g.a)],
    ]);
    assert.equal(lacks.res.status, 403);
    const outside = await postPairs(mgr, '/users', [
      ['username', 'x2'],
      ['password', 'user-password-1'],
      ['role', 'devreader'],
      ['scope', 'groups'],
      ['groups', String(g.b)],
    ]);
    assert.equal(outside.res.status, 403);
    const above = await postPairs(mgr, '/users', [
      ['username', 'x3'],
      ['password', 'user-password-1'],
      ['role', 'bigger'],
      ['scope', 'groups'],
      ['groups', String(g.a)],
    ]);
    assert.equal(above.res.status, 403);
    assert.match(above.html, /You cannot grant the role &quot;bigger&quot;/);
    for (const u of ['x1', 'x2', 'x3']) assert.equal(getUser(db, u), undefined);
  });

  test('profile and own password changes are audited without the password', async () => {
    const w = new WebClient(t.url);
    assert.equal((await w.login('newpeer', 'user-password-1')).status, 303);
    // Created on the web, newpeer must change the password first: the token comes from that page.
    const token = /<meta name="csrf-token" content="([^"]+)"/.exec((await w.get('/account/password')).html)![1];
    const pw = await w.post('/account/password', { current: 'user-password-1', password: 'takeover-pass-1', confirm: 'takeover-pass-1' }, { csrf: token });
    assert.equal(pw.res.status, 303);
    noSecrets(lastAudit('user.password_change', 'user newpeer'));
    const tz = await w.post('/account', { timezone: 'Europe/Berlin' }, { csrf: true });
    assert.equal(tz.res.status, 303);
    const row = lastAudit('user.profile_update', 'user newpeer')!;
    assert.deepEqual(JSON.parse(row.changes).timezone, { before: null, after: 'Europe/Berlin' });
    await w.post('/logout', {}, { csrf: true });
    assert.equal(lastAudit('logout', 'user newpeer')?.door, 'web');
  });
});
