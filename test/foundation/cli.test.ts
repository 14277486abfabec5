// The CLI as operators run it: init and the first admin, file modes, users, roles, scopes, usage errors.
import { after, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { openDatabase } from '../../src/db/open';
import { createRole } from '../../src/features/roles/roles.service';
import { ensureFirstAdmin } from '../../src/features/users/users.service';
import { verifyPassword } from '../../src/identity/password';
import { VERSION } from '../../src/version';
import { runCliAsync, tempDir } from '../helpers/appliance';
import { seedGroup } from '../helpers/seed';

const root = tempDir('confvault-cli-');
after(() => rmSync(root, { recursive: true, force: true }));

interface UserRow {
  username: string;
  password_hash: string;
  disabled: number;
  must_change_password: number;
  scope_all: number;
}

function readUsers(dataDir: string): UserRow[] {
  const db = openDatabase(path.join(dataDir, 'confvault.db'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM users ORDER BY id').all() as UserRow[];
  } finally {
    db.close();
  }
}

const mode = (p: string) => statSync(p).mode & 0o777;

test('init creates a 0700 data dir, a 0600 master key and an admin whose password is printed once', async () => {
  const fresh = path.join(root, 'init-fresh', 'data');
  const existing = path.join(root, 'init-existing');
  mkdirSync(existing);
  chmodSync(existing, 0o755);

  const [first, given] = await Promise.all([
    runCliAsync(['init', '--data-dir', fresh]),
    runCliAsync(['init', '--admin-password-stdin', '--data-dir', existing], { input: 'correct horse battery\n' }),
  ]);
  assert.equal(first.status, 0, first.stderr);
  assert.equal(given.status, 0, given.stderr);

  // Generated password: the only line on stdout; the admin must change it.
  const lines = first.stdout.split('\n').filter(Boolean);
  assert.equal(lines.length, 1);
  const password = lines[0];
  assert.match(password, /^[A-Za-z0-9]{20}$/);
  assert.match(first.stderr, /shown once/);
  let [admin] = readUsers(fresh);
  assert.equal(admin.username, 'admin');
  assert.equal(admin.must_change_password, 1);
  assert.ok(await verifyPassword(admin.password_hash, password));

  // Password from stdin: nothing on stdout, no forced change.
  assert.equal(given.stdout, '');
  const [admin2] = readUsers(existing);
  assert.ok(await verifyPassword(admin2.password_hash, 'correct horse battery'));
  assert.equal(admin2.must_change_password, 0);

  for (const dir of [fresh, existing]) {
    assert.equal(mode(dir), 0o700, dir);
    assert.equal(mode(path.join(dir, 'master.key')), 0o600);
  }
  const key = readFileSync(path.join(fresh, 'master.key'), 'utf8');
  assert.equal(Buffer.from(key.trim(), 'base64').length, 32);

  // Again, with and without a password on stdin: nothing changes, no password printed.
  chmodSync(fresh, 0o755);
  chmodSync(path.join(fresh, 'master.key'), 0o644);
  const [again, againGiven] = await Promise.all([
    runCliAsync(['init', '--data-dir', fresh]),
    runCliAsync(['init', '--admin-password-stdin', '--data-dir', fresh], { input: 'another password 1\n' }),
  ]);
  for (const r of [again, againGiven]) {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /already exists/);
  }
  const users = readUsers(fresh);
  assert.equal(users.length, 1);
  [admin] = users;
  assert.ok(await verifyPassword(admin.password_hash, password), 'the first password still works');
  assert.equal(readFileSync(path.join(fresh, 'master.key'), 'utf8'), key, 'the master key is never replaced');
  assert.equal(mode(fresh), 0o700, 'a loosened data dir is tightened again');
  assert.equal(mode(path.join(fresh, 'master.key')), 0o600, 'a loosened master key is tightened again');
});

test('several init at once on a new data dir: all succeed, one admin, its password printed exactly once', async () => {
  const dir = path.join(root, 'init-race');
  const results = await Promise.all(Array.from({ length: 5 }, () => runCliAsync(['init', '--data-dir', dir])));
  for (const r of results) assert.equal(r.status, 0, r.stderr);
  const printed = results.map((r) => r.stdout.trim()).filter(Boolean);
  assert.equal(printed.length, 1);
  const users = readUsers(dir);
  assert.equal(users.length, 1);
  assert.ok(await verifyPassword(users[0].password_hash, printed[0]));
});

test('init refuses a too-short admin password from stdin', async () => {
  const dir = path.join(root, 'init-short');
  const r = await runCliAsync(['init', '--admin-password-stdin', '--data-dir', dir], { input: 'short\n' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /at least 10 characters/);
  assert.equal(readUsers(dir).length, 0);
});

test('users, roles and scopes: add, list, disable, passwd, and clear refusals', async () => {
  const dataDir = path.join(root, 'users');
  const a = openAppliance({}, loadConfig({ dataDir }, {}));
  await ensureFirstAdmin(a.db, 'admin-password-1');
  const group = seedGroup(a.db, 'core');
  createRole(a.db, SYSTEM_ACTOR, { name: 'viewer', permissions: ['devices.view', 'backups.view'] });
  a.close();
  const cli = (args: string[], input?: string) => runCliAsync([...args, '--data-dir', dataDir], { input });

  const [roleOk, roleBad, roleDup, alice, bob, carol, dave, dup] = await Promise.all([
    cli(['role', 'add', 'operator', '--permissions', 'devices.view,devices.update']),
    cli(['role', 'add', 'wizard', '--permissions', 'devices.view,devices.fly']),
    cli(['role', 'add', 'Auditor', '--permissions', 'devices.view']),
    cli(['user', 'add', 'alice', '--role', 'viewer', '--groups', String(group), '--password-stdin'], 'alice-password-1\n'),
    cli(['user', 'add', 'bob', '--role', 'viewer']),
    cli(['user', 'add', 'carol', '--role', 'viewer', '--groups', `${group},999`], 'carol-password-1\n'),
    cli(['user', 'add', 'dave', '--role', 'no-such-role'], 'dave-password-1\n'),
    cli(['user', 'add', 'ADMIN', '--role', 'viewer', '--password-stdin'], 'another-password-1\n'),
  ]);
  assert.equal(roleOk.status, 0, roleOk.stderr);
  assert.equal(roleBad.status, 1);
  assert.match(roleBad.stderr, /unknown permission: devices\.fly/);
  assert.equal(roleDup.status, 1);
  assert.match(roleDup.stderr, /a role named "Auditor" already exists/);
  assert.equal(alice.status, 0, alice.stderr);
  assert.equal(alice.stdout, '', 'a password from stdin is not echoed');
  assert.equal(bob.status, 0, bob.stderr);
  const bobPassword = bob.stdout.trim();
  assert.match(bobPassword, /^[A-Za-z0-9]{20}$/);
  assert.equal(carol.status, 1);
  assert.match(carol.stderr, /unknown group id: 999/);
  assert.equal(dave.status, 1);
  assert.match(dave.stderr, /role "no-such-role" does not exist/);
  // Usernames are unique whatever their case; one clear line.
  assert.equal(dup.status, 1);
  assert.equal(dup.stderr.trimEnd().split('\n').length, 1);
  assert.match(dup.stderr, /a user named "ADMIN" already exists/);

  const [disable, passwd, noUser, weak] = await Promise.all([
    cli(['user', 'disable', 'bob']),
    cli(['user', 'passwd', 'alice', '--password-stdin'], 'alice-password-2\n'),
    cli(['user', 'disable', 'nobody']),
    cli(['user', 'passwd', 'bob', '--password-stdin'], 'short\n'),
  ]);
  assert.equal(disable.status, 0, disable.stderr);
  assert.equal(passwd.status, 0, passwd.stderr);
  assert.equal(noUser.status, 1);
  assert.match(noUser.stderr, /user "nobody" not found/);
  assert.equal(weak.status, 1);
  assert.match(weak.stderr, /at least 10 characters/);

  const [list, roles] = await Promise.all([cli(['user', 'list']), cli(['role', 'list'])]);
  assert.equal(list.status, 0, list.stderr);
  const rows = list.stdout
    .trim()
    .split('\n')
    .map((l) => l.split('\t'));
  assert.deepEqual(
    rows.map((r) => r.slice(1, 5)),
    [
      ['admin', 'administrator', 'all', 'active'],
      ['alice', 'viewer', String(group), 'active'],
      ['bob', 'viewer', 'all', 'disabled'],
    ],
  );
  for (const r of rows) {
    assert.match(r[0], /^\d+$/);
    assert.match(r[6], /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  }
  assert.equal(roles.status, 0, roles.stderr);
  assert.match(roles.stdout, /^viewer\tbackups\.view,devices\.view$/m);
  assert.match(roles.stdout, /^operator\tdevices\.update,devices\.view$/m);
  assert.match(roles.stdout, /^administrator\t.*\bapi_keys\.create\b/m);
  assert.doesNotMatch(roles.stdout, /wizard/);

  const users = Object.fromEntries(readUsers(dataDir).map((u) => [u.username, u]));
  assert.deepEqual(Object.keys(users).sort(), ['admin', 'alice', 'bob']);
  assert.ok(await verifyPassword(users.alice.password_hash, 'alice-password-2'));
  assert.equal(await verifyPassword(users.alice.password_hash, 'alice-password-1'), false);
  assert.ok(await verifyPassword(users.bob.password_hash, bobPassword));
  assert.equal(users.bob.must_change_password, 1, 'a generated password must be changed at first login');
  assert.equal(users.alice.must_change_password, 0);
  assert.equal(users.alice.scope_all, 0);
});

test('usage: --version, unknown commands and missing arguments', async () => {
  const [version, unknown, noSub] = await Promise.all([
    runCliAsync(['--version']),
    runCliAsync(['frobnicate']),
    runCliAsync(['user', '--data-dir', path.join(root, 'never')]),
  ]);
  assert.equal(version.status, 0);
  assert.equal(version.stdout, `confvault ${VERSION} (Node.js ${process.version})\n`, 'the version and the runtime it runs on');
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  assert.equal(noSub.status, 2);
  assert.match(noSub.stderr, /missing subcommand/);
});
