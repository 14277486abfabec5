// Directory sign-in against a real OpenLDAP (slapd): mapping to role and scope, nested groups, re-check, directory down, TLS, audit, throttle.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { startDirectoryRecheck } from '../../src/features/directory/directory-recheck';
import { insertDirectoryUser } from '../../src/features/directory/directory.store';
import { createGroup } from '../../src/features/groups/groups.service';
import { createRole } from '../../src/features/roles/roles.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createLogger } from '../../src/lib/logger';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { SUFFIX, slapdUnavailable, startSlapd, type TestSlapd } from '../helpers/slapd';
import { WebClient } from './web-client';

const PEOPLE = `ou=people,${SUFFIX}`;
const GROUPS = `ou=groups,${SUFFIX}`;
const person = (uid: string, pw: string, extra = '') =>
  `dn: uid=${uid},${PEOPLE}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\nuserPassword: ${pw}\n${extra}\n`;
const group = (cn: string, members: string[]) =>
  `dn: cn=${cn},${GROUPS}\nobjectClass: groupOfNames\ncn: ${cn}\n${members.map((m) => `member: ${m}\n`).join('')}\n`;
const uidDn = (uid: string) => `uid=${uid},${PEOPLE}`;

/** The login form posted, with the page that answers it (WebClient.login reads the body itself). */
async function loginPage(w: WebClient, username: string, password: string): Promise<{ res: Response; html: string }> {
  const token = /name="_csrf" value="([^"]+)"/.exec((await w.get('/login')).html)![1];
  return w.post('/login', { username, password, next: '/' }, { csrf: token });
}

// alice is in "east", which is inside "netops" (nested: only the walk finds netops); bob is in "admins"; carol is in
// "admins" but disabled; dave is only in "others"; a directory "admin" must never shadow the local break-glass admin.
const SEED = [
  `dn: ${PEOPLE}\nobjectClass: organizationalUnit\nou: people\n\n`,
  `dn: ${GROUPS}\nobjectClass: organizationalUnit\nou: groups\n\n`,
  `dn: cn=svc,${SUFFIX}\nobjectClass: simpleSecurityObject\nobjectClass: organizationalRole\ncn: svc\nuserPassword: svc-secret\n\n`,
  person('alice', 'alice-pass-1'),
  person('bob', 'bob-pass-1'),
  person('carol', 'carol-pass-1', 'description: disabled\n'),
  person('dave', 'dave-pass-1'),
  person('erin', 'erin-pass-1'),
  person('admin', 'directory-admin-pass'),
  group('east', [uidDn('alice'), uidDn('erin')]),
  group('netops', [`cn=east,${GROUPS}`]),
  group('admins', [uidDn('bob'), uidDn('carol')]),
  group('others', [uidDn('dave')]),
].join('');

const skip = slapdUnavailable();
// In CI (.ci/run sets CI=true, as root on Debian) the directory must be there: a skipped test would pass unseen.
if (skip && process.env.CI) throw new Error(`directory sign-in tests cannot run: ${skip}`);

describe('directory sign-in (OpenLDAP)', { skip: skip ?? false }, () => {
  let ldap: TestSlapd;
  let t: TestAppliance;
  let conf: string;
  let recheck: { stop(): Promise<void> };
  const audit = (action: string, actor: string) =>
    t.services.db.prepare('SELECT door, details FROM audit_log WHERE action = ? AND actor = ? ORDER BY id').all(action, actor) as {
      door: string;
      details: string;
    }[];

  const writeConf = (file: string, over: { url?: string; ca?: string; recheck?: number; groupSearch?: string } = {}) => {
    const pw = path.join(ldap.dir, 'svc.pw');
    writeFileSync(pw, 'svc-secret\n', { mode: 0o600 });
    writeFileSync(
      file,
      `[auth.ldap]
url = "${over.url ?? ldap.ldapsUrl}"
ca_file = "${over.ca ?? ldap.caFile}"
bind_dn = "cn=svc,${SUFFIX}"
bind_password_file = "${pw}"
user_base = "${PEOPLE}"
user_filter = "(uid={username})"
disabled_filter = "(description=disabled)"
group_search = "${over.groupSearch ?? 'member'}"
group_base = "${GROUPS}"
timeout_seconds = 3
recheck_minutes = ${over.recheck ?? 0.01}

[[auth.ldap.map]]
group = "cn=admins,${GROUPS}"
role = "administrator"
scope = ["all"]

[[auth.ldap.map]]
group = "netops"
role = "viewer"
scope = ["core"]
`,
    );
    return file;
  };

  before(async () => {
    ldap = await startSlapd(SEED);
    conf = writeConf(path.join(ldap.dir, 'appliance.conf'));
    t = await startTestAppliance({ CONFVAULT_CONFIG: conf });
    createRole(t.services.db, SYSTEM_ACTOR, { name: 'viewer', permissions: ['devices.view', 'groups.view'] });
    createGroup(t.services.db, SYSTEM_ACTOR, { name: 'core', parent_id: null, description: '', schedule: null });
    createGroup(t.services.db, SYSTEM_ACTOR, { name: 'edge', parent_id: null, description: '', schedule: null });
  });
  after(async () => {
    await recheck?.stop();
    await t?.close();
    await ldap?.stop();
  });

  test('a user in a nested group signs in with the role and scope of the first matching entry; a directory user is created', async () => {
    const w = new WebClient(t.url);
    const res = await w.login('alice', 'alice-pass-1');
    assert.equal(res.status, 303);
    const row = t.services.db
      .prepare("SELECT u.source, u.directory_dn, u.scope_all, r.name AS role FROM users u JOIN roles r ON r.id = u.role_id WHERE username = 'alice'")
      .get() as Record<string, unknown>;
    assert.deepEqual(row, { source: 'ldap', directory_dn: uidDn('alice'), scope_all: 0, role: 'viewer' });
    const scope = t.services.db
      .prepare("SELECT g.name FROM user_scope_groups s JOIN device_groups g ON g.id = s.group_id JOIN users u ON u.id = s.user_id WHERE u.username = 'alice'")
      .pluck()
      .all();
    assert.deepEqual(scope, ['core']);
    const ok = audit('login.success', 'alice');
    assert.equal(ok.length, 1);
    assert.equal(ok[0].door, 'ldap');
    assert.doesNotMatch(ok[0].details, /alice-pass-1/);
    assert.match(ok[0].details, /cn=netops/, 'the nested group that matched is recorded');
  });

  test('a directory user is shown read-only in the users page, and its role cannot be changed there', async () => {
    const w = new WebClient(t.url);
    assert.equal((await w.login('admin', 'admin-password-1')).status, 303);
    assert.match((await w.get('/users')).html, /data-user="alice"[\s\S]*?badge muted">directory</);
    const edit = await w.get('/users/alice/edit');
    assert.match(edit.html, /signs in through the directory/);
    assert.doesNotMatch(edit.html, /name="role"/);
    const post = await w.post('/users/alice/edit', { role: 'administrator', scope: 'all' }, { csrf: true });
    assert.equal(post.res.status, 409);
    const role = t.services.db.prepare("SELECT r.name FROM users u JOIN roles r ON r.id = u.role_id WHERE username = 'alice'").pluck().get();
    assert.equal(role, 'viewer');
  });

  test('the first entry wins: an administrator with scope all', async () => {
    assert.equal((await new WebClient(t.url).login('bob', 'bob-pass-1')).status, 303);
    const row = t.services.db.prepare("SELECT u.scope_all, r.name AS role FROM users u JOIN roles r ON r.id = u.role_id WHERE username = 'bob'").get();
    assert.deepEqual({ ...(row as object) }, { scope_all: 1, role: 'administrator' });
  });

  test('refused: wrong password, disabled in the directory, no mapping; each audited with the door ldap, no password kept', async () => {
    const w = new WebClient(t.url);
    const bad = await w.login('alice', 'wrong-password-9');
    assert.equal(bad.status, 401);
    const disabled = await w.login('carol', 'carol-pass-1');
    assert.equal(disabled.status, 403);
    const none = await loginPage(w, 'dave', 'dave-pass-1');
    assert.equal(none.res.status, 403);
    assert.match(none.html, /not in any group that gives access/);
    assert.equal(audit('login.failure', 'alice')[0].door, 'ldap');
    assert.equal(audit('login.refused_disabled', 'carol')[0].door, 'ldap');
    const refused = audit('login.refused_no_mapping', 'dave');
    assert.equal(refused[0].door, 'ldap');
    const all = t.services.db.prepare("SELECT details FROM audit_log WHERE door = 'ldap'").pluck().all().join('\n');
    assert.doesNotMatch(all, /pass-1|wrong-password/);
    assert.equal(t.services.db.prepare("SELECT count(*) FROM users WHERE username IN ('carol', 'dave')").pluck().get(), 0, 'nobody refused is created');
  });

  test('a filter metacharacter in the username cannot widen the search', async () => {
    const res = await new WebClient(t.url).login('*', 'alice-pass-1');
    assert.equal(res.status, 401);
    assert.equal(t.services.db.prepare("SELECT count(*) FROM users WHERE username = '*'").pluck().get(), 0);
  });

  test('a local user of the same name signs in locally, never through the directory', async () => {
    assert.equal((await new WebClient(t.url).login('admin', 'directory-admin-pass')).status, 401);
    assert.equal((await new WebClient(t.url).login('admin', 'admin-password-1')).status, 303);
  });

  test('a name that belongs to an OIDC user is not taken over through the directory', async () => {
    const viewer = t.services.db.prepare("SELECT id FROM roles WHERE name = 'viewer'").pluck().get() as number;
    insertDirectoryUser(t.services.db, { username: 'erin', dn: 'sub erin-at-the-provider', role_id: viewer, scope_all: false, source: 'oidc' });
    const { res } = await loginPage(new WebClient(t.url), 'erin', 'erin-pass-1');
    assert.equal(res.status, 403);
    assert.equal(audit('login.refused_name_taken', 'erin')[0].door, 'ldap');
    assert.equal(t.services.db.prepare("SELECT source FROM users WHERE username = 'erin'").pluck().get(), 'oidc');
  });

  test('the login throttle applies to directory sign-in', async () => {
    const w = new WebClient(t.url);
    for (let i = 0; i < 5; i++) assert.equal((await w.login('erin', `wrong-${i}-password`)).status, 401);
    assert.equal((await w.login('erin', 'erin-pass-1')).status, 429, 'locked even with the right password');
  });

  test('removed from the group: the re-check ends the sessions and the API key stops, audited', async () => {
    const w = new WebClient(t.url);
    assert.equal((await w.login('bob', 'bob-pass-1')).status, 303);
    const key = createApiKey(t.services.db, SYSTEM_ACTOR, { username: 'bob' }).key;
    assert.equal((await t.api('/api/v1/groups', { key })).status, 200);
    assert.equal((await w.get('/groups')).res.status, 200);
    ldap.modify(`dn: cn=admins,${GROUPS}\nchangetype: modify\ndelete: member\nmember: ${uidDn('bob')}\n`);
    recheck = startDirectoryRecheck(t.services.db, t.services.config.auth.ldap, createLogger('silent'));
    // The re-check runs every 0.6 s here; wait for its audit row (bounded).
    for (let i = 0; i < 100 && audit('user.disable', 'directory').length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const rows = audit('user.disable', 'directory');
    assert.equal(rows.length, 1, 'bob disabled by the re-check');
    assert.equal(rows[0].door, 'ldap');
    assert.equal((await t.api('/api/v1/groups', { key })).status, 401);
    assert.equal((await w.get('/groups')).res.status, 303, 'the session is gone: back to the login page');
    // Back in the group: the next sign-in enables the account again.
    ldap.modify(`dn: cn=admins,${GROUPS}\nchangetype: modify\nadd: member\nmember: ${uidDn('bob')}\n`);
    assert.equal((await new WebClient(t.url).login('bob', 'bob-pass-1')).status, 303);
  });

  test('auth test-ldap shows DN, groups and the matching entry, and exits 0 / 1 / 2', async () => {
    const cli = (user: string[], input?: string) =>
      runCliAsync(['auth', 'test-ldap', ...user, '--config', conf, '--data-dir', path.join(t.dir, 'data')], { input });
    const [ok, none, star, usage] = await Promise.all([
      cli(['alice'], 'alice-pass-1\n'),
      cli(['dave'], 'dave-pass-1\n'),
      // Escaped per RFC 4515: "alic*" is no wildcard (unescaped it would find alice).
      cli(['alic*', '--no-password']),
      cli([], ''),
    ]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`dn: ${uidDn('alice')}`));
    assert.match(ok.stdout, /cn=netops,ou=groups/);
    assert.equal(ok.stdout.match(/^mapping: map\[1\] group "netops"/gm)?.length, 1);
    assert.match(ok.stdout, /role: viewer/);
    assert.equal(none.status, 1);
    assert.match(none.stdout, /result: refused/);
    assert.equal(star.status, 1);
    assert.match(star.stdout, /result: refused \(not found/);
    assert.equal(usage.status, 2);
  });

  test('the re-check applies a changed mapping result: a new group gives the new role and scope, audited', async () => {
    // alice signed in in the first test (her session lives on); the re-check timer started above runs every 0.6 s.
    ldap.modify(`dn: cn=admins,${GROUPS}\nchangetype: modify\nadd: member\nmember: ${uidDn('alice')}\n`);
    const updated = () =>
      t.services.db.prepare("SELECT changes FROM audit_log WHERE action = 'user.update' AND target = 'user alice' AND door = 'ldap'").pluck().all() as string[];
    for (let i = 0; i < 100 && updated().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(updated().length, 1);
    assert.match(updated()[0], /"role":\{"before":"viewer","after":"administrator"\}/);
    const row = t.services.db
      .prepare("SELECT u.scope_all, u.disabled, r.name AS role FROM users u JOIN roles r ON r.id = u.role_id WHERE username = 'alice'")
      .get();
    assert.deepEqual({ ...(row as object) }, { scope_all: 1, disabled: 0, role: 'administrator' });
  });

  test('a certificate from another CA is refused at the web sign-in, with the reason audited', async () => {
    const wrong = await startTestAppliance({ CONFVAULT_CONFIG: writeConf(path.join(ldap.dir, 'wrong-ca.conf'), { ca: ldap.otherCaFile }) });
    try {
      const { res, html } = await loginPage(new WebClient(wrong.url), 'bob', 'bob-pass-1');
      assert.equal(res.status, 503);
      assert.match(html, /The directory cannot be reached/);
      const row = wrong.services.db.prepare("SELECT door, details FROM audit_log WHERE action = 'login.directory_error'").get() as {
        door: string;
        details: string;
      };
      assert.equal(row.door, 'ldap');
      assert.match(row.details, /certificate|self.signed|issuer/i);
      assert.equal(wrong.services.db.prepare("SELECT count(*) FROM users WHERE username = 'bob'").pluck().get(), 0);
    } finally {
      await wrong.close();
    }
  });

  test('StartTLS with the right CA, and group_search = "memberof" walking the memberOf of groups (nested)', async () => {
    const starttls = writeConf(path.join(ldap.dir, 'starttls.conf'), { url: ldap.ldapUrl });
    writeFileSync(starttls, readFileSync(starttls, 'utf8').replace('[auth.ldap]\n', '[auth.ldap]\nstarttls = true\n'));
    const memberof = writeConf(path.join(ldap.dir, 'memberof.conf'), { groupSearch: 'memberof' });
    const data = path.join(t.dir, 'data');
    const [s, m] = await Promise.all([
      runCliAsync(['auth', 'test-ldap', 'bob', '--config', starttls, '--data-dir', data], { input: 'bob-pass-1\n' }),
      runCliAsync(['auth', 'test-ldap', 'alice', '--no-password', '--config', memberof, '--data-dir', data]),
    ]);
    assert.equal(s.status, 0, s.stderr);
    assert.equal(m.status, 0, m.stderr + m.stdout);
    assert.match(m.stdout, /cn=east,ou=groups/);
    assert.match(m.stdout, /cn=netops,ou=groups/);
  });

  test('directory down: a clear message on the login page, audited, and the local administrator still signs in', async () => {
    await ldap.stop();
    try {
      const { res, html } = await loginPage(new WebClient(t.url), 'alice', 'alice-pass-1');
      assert.equal(res.status, 503);
      assert.match(html, /The directory cannot be reached/);
      assert.equal(audit('login.directory_error', 'alice')[0].door, 'ldap');
      assert.equal((await new WebClient(t.url).login('admin', 'admin-password-1')).status, 303);
    } finally {
      await ldap.start();
    }
  });
});
