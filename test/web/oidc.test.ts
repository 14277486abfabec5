// OpenID Connect sign-in against a real provider (oidc-provider on 127.0.0.1) through the real web sign-in: mapping to
// role and scope, re-check by refresh token, state and replay refused, name takeover refused, logout, audit, throttle.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { oidcProviderFor, recheckOidcUsers } from '../../src/features/directory/oidc.service';
import { createGroup } from '../../src/features/groups/groups.service';
import { createRole } from '../../src/features/roles/roles.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { signInAtProvider, startTestProvider, type TestProvider } from '../helpers/oidc-provider';
import { WebClient } from './web-client';

// The address users reach confvault at: the provider sends the browser there; this test's browser maps it to the server.
const PUBLIC_URL = 'http://confvault.test';
const CLIENT = { id: 'confvault', secret: 'client-secret-for-tests-7', publicUrl: PUBLIC_URL };

describe('OIDC sign-in (oidc-provider)', () => {
  let idp: TestProvider;
  let t: TestAppliance;
  let conf: string;
  let data: string;
  const audit = (action: string, actor?: string) =>
    t.services.db
      .prepare("SELECT door, actor, details FROM audit_log WHERE action = ? AND (? IS NULL OR actor = ?) AND door = 'oidc' ORDER BY id")
      .all(action, actor ?? null, actor ?? null) as { door: string; actor: string; details: string }[];
  const cli = (args: string[], input?: string) => runCliAsync(['auth', ...args, '--config', conf, '--data-dir', data], { input });

  /** The browser's whole way: the appliance's button, the provider's forms, back to the callback. */
  async function signIn(login: string, next = '/'): Promise<{ w: WebClient; res: Response; html: string }> {
    const w = new WebClient(t.url);
    const start = await w.fetch(`/login/oidc?next=${encodeURIComponent(next)}`);
    assert.equal(start.status, 303);
    const back = await signInAtProvider(idp.issuer, start.headers.get('Location')!, login);
    assert.ok(back.startsWith(`${PUBLIC_URL}/login/oidc/callback?`), back);
    const { res, html } = await w.get(back.slice(PUBLIC_URL.length));
    return { w, res, html };
  }

  before(async () => {
    idp = await startTestProvider(CLIENT);
    idp.accounts.set('alice-sub', { preferred_username: 'alice', name: 'Alice A', email: 'alice@example.org', groups: ['netops'] });
    idp.accounts.set('bob-sub', { preferred_username: 'bob', groups: ['Admins', 'staff'] });
    idp.accounts.set('dave-sub', { preferred_username: 'dave', groups: ['staff'] });
    idp.accounts.set('evil-sub', { preferred_username: 'admin', groups: ['admins'] });
    conf = path.join(tempDir('confvault-oidc-'), 'appliance.conf');
    writeFileSync(
      conf,
      `[auth.oidc]
issuer = "${idp.issuer}"
name = "Test IdP"
client_id = "${CLIENT.id}"
public_url = "${PUBLIC_URL}"
scopes = ["openid", "profile", "email", "groups"]
allow_http = true
timeout_seconds = 5

[[auth.oidc.map]]
group = "admins"
role = "administrator"
scope = ["all"]

[[auth.oidc.map]]
group = "netops"
role = "viewer"
scope = ["core"]
`,
    );
    t = await startTestAppliance({ CONFVAULT_CONFIG: conf });
    data = path.join(t.dir, 'data');
    createRole(t.services.db, SYSTEM_ACTOR, { name: 'viewer', permissions: ['devices.view', 'groups.view'] });
    createGroup(t.services.db, SYSTEM_ACTOR, { name: 'core', parent_id: null, description: '', schedule: null });
    const set = await cli(['set-oidc-secret'], `${CLIENT.secret}\n`);
    assert.equal(set.status, 0, set.stderr);
  });
  after(async () => {
    await t?.close();
    await idp?.close();
  });

  test('the client secret is stored encrypted, and its setting audited without it', () => {
    const stored = t.services.db.prepare("SELECT value FROM auth_secrets WHERE name = 'oidc.client_secret'").pluck().get() as Buffer;
    assert.ok(stored);
    assert.ok(!stored.toString('latin1').includes(CLIENT.secret));
    const row = t.services.db.prepare("SELECT door, details FROM audit_log WHERE action = 'auth.oidc_secret_set'").get() as { door: string; details: string };
    assert.equal(row.door, 'cli');
    assert.doesNotMatch(row.details, /client-secret/);
  });

  test('the sign-in page offers the provider; a user signs in with the role and scope of the first matching entry', async () => {
    assert.match((await new WebClient(t.url).get('/login')).html, /href="\/login\/oidc\?next=%2F"[^>]*>\s*Sign in with Test IdP/);
    const { w, res } = await signIn('alice-sub', '/groups');
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('Location'), '/groups', 'back to the page asked for');
    assert.equal((await w.get('/groups')).res.status, 200);
    const row = t.services.db
      .prepare("SELECT u.source, u.directory_dn, u.scope_all, r.name AS role FROM users u JOIN roles r ON r.id = u.role_id WHERE username = 'alice'")
      .get();
    assert.deepEqual({ ...(row as object) }, { source: 'oidc', directory_dn: 'sub alice-sub', scope_all: 0, role: 'viewer' });
    const scope = t.services.db
      .prepare("SELECT g.name FROM user_scope_groups s JOIN device_groups g ON g.id = s.group_id JOIN users u ON u.id = s.user_id WHERE u.username = 'alice'")
      .pluck()
      .all();
    assert.deepEqual(scope, ['core']);
    const ok = audit('login.success', 'alice');
    assert.equal(ok.length, 1);
    assert.match(ok[0].details, /"group":"netops"/);
    assert.match(ok[0].details, /alice@example\.org/);
    const tokens = t.services.db.prepare("SELECT refresh_token FROM oidc_tokens o JOIN users u ON u.id = o.user_id WHERE username = 'alice'").pluck().get();
    assert.ok(Buffer.isBuffer(tokens), 'the refresh token is kept (encrypted) for the re-check');
  });

  test('the first entry wins (claim values compared without case): an administrator with scope all', async () => {
    assert.equal((await signIn('bob-sub')).res.status, 303);
    const row = t.services.db.prepare("SELECT u.scope_all, r.name AS role FROM users u JOIN roles r ON r.id = u.role_id WHERE username = 'bob'").get();
    assert.deepEqual({ ...(row as object) }, { scope_all: 1, role: 'administrator' });
  });

  test('no matching entry: refused with a clear page, audited, nobody created', async () => {
    const { res, html } = await signIn('dave-sub');
    assert.equal(res.status, 403);
    assert.match(html, /not in any group that gives access/);
    assert.equal(audit('login.refused_no_mapping', 'dave').length, 1);
    assert.equal(t.services.db.prepare("SELECT count(*) FROM users WHERE username = 'dave'").pluck().get(), 0);
  });

  test('the provider cannot take over a local account of the same name; the local administrator still signs in', async () => {
    const { res } = await signIn('evil-sub');
    assert.equal(res.status, 403);
    assert.equal(audit('login.refused_name_taken', 'admin').length, 1);
    const admin = t.services.db.prepare("SELECT source FROM users WHERE username = 'admin'").pluck().get();
    assert.equal(admin, 'local');
    assert.equal((await new WebClient(t.url).login('admin', 'admin-password-1')).status, 303);
  });

  test('a callback whose state does not match, or that is replayed, is refused and audited', async () => {
    const w = new WebClient(t.url);
    const start = await w.fetch('/login/oidc');
    const back = await signInAtProvider(idp.issuer, start.headers.get('Location')!, 'alice-sub');
    const forged = new URL(back);
    forged.searchParams.set('state', 'forged-state-value');
    const before = audit('login.failure').length;
    const wrong = await w.get(forged.pathname + forged.search);
    assert.equal(wrong.res.status, 401);
    assert.match(wrong.html, /failed or expired/);
    // The pending sign-in was used up by the refused attempt: the genuine callback replayed now finds nothing.
    const replay = await w.get(back.slice(PUBLIC_URL.length));
    assert.equal(replay.res.status, 401);
    assert.equal(w.cookies.has('confvault_session'), false);
    const failures = audit('login.failure');
    assert.equal(failures.length, before + 2);
    assert.match(failures.at(-2)!.details, /state/i);
  });

  test('logout ends the appliance session and sends the browser to the provider to sign out there', async () => {
    const { w } = await signIn('alice-sub');
    const csrf = await w.csrf();
    const out = await w.post('/logout', { _csrf: csrf });
    assert.equal(out.res.status, 303);
    const to = new URL(out.res.headers.get('Location')!);
    assert.equal(to.origin, idp.issuer);
    assert.equal(to.searchParams.get('post_logout_redirect_uri'), `${PUBLIC_URL}/login`);
    assert.ok(to.searchParams.get('id_token_hint'));
    assert.equal((await w.get('/groups')).res.status, 303, 'the session is gone');
  });

  test('re-check: new claims apply the new role; claims that no longer match end the sessions and stop the API key', async () => {
    const { w } = await signIn('bob-sub');
    const key = createApiKey(t.services.db, SYSTEM_ACTOR, { username: 'bob' }).key;
    assert.equal((await t.api('/api/v1/groups', { key })).status, 200);
    const provider = oidcProviderFor(t.services.db, t.services.secrets, t.services.config.auth.oidc);
    const recheck = () => recheckOidcUsers(t.services.db, t.services.secrets, t.services.config.auth.oidc, provider);

    idp.accounts.set('bob-sub', { preferred_username: 'bob', groups: ['netops'] });
    const first = await recheck();
    assert.equal(first.unavailable, undefined);
    assert.ok(first.updated.includes('bob'), JSON.stringify(first));
    const role = t.services.db.prepare("SELECT r.name FROM users u JOIN roles r ON r.id = u.role_id WHERE username = 'bob'").pluck().get();
    assert.equal(role, 'viewer');

    idp.accounts.set('bob-sub', { preferred_username: 'bob', groups: ['staff'] });
    const second = await recheck();
    assert.ok(second.disabled.includes('bob'), JSON.stringify(second));
    assert.equal((await t.api('/api/v1/groups', { key })).status, 401);
    assert.equal((await w.get('/groups')).res.status, 303, 'back to the login page');
    const disabled = audit('user.disable', 'directory');
    assert.equal(disabled.length, 1);
    assert.match(disabled[0].details, /none of the values/);
    // Back in a mapped group: the next sign-in enables the account again.
    idp.accounts.set('bob-sub', { preferred_username: 'bob', groups: ['admins'] });
    assert.equal((await signIn('bob-sub')).res.status, 303);
    assert.equal(t.services.db.prepare("SELECT disabled FROM users WHERE username = 'bob'").pluck().get(), 0);
  });

  test('re-check: a refresh token the provider refuses (the account is gone there) disables the user', async () => {
    const provider = oidcProviderFor(t.services.db, t.services.secrets, t.services.config.auth.oidc);
    idp.accounts.delete('bob-sub');
    const r = await recheckOidcUsers(t.services.db, t.services.secrets, t.services.config.auth.oidc, provider);
    assert.ok(r.disabled.includes('bob'), JSON.stringify(r));
    assert.match(audit('user.disable', 'directory').at(-1)!.details, /refused the refresh token/);
    assert.equal(t.services.db.prepare("SELECT disabled FROM users WHERE username = 'bob'").pluck().get(), 1);
  });

  test('re-check without a refresh token: the user stays until session_max_minutes after the sign-in, then is ended', async () => {
    idp.accounts.set('carol-sub', { preferred_username: 'carol', groups: ['netops'] });
    idp.withoutRefresh.add('carol-sub');
    const { w } = await signIn('carol-sub');
    const provider = oidcProviderFor(t.services.db, t.services.secrets, t.services.config.auth.oidc);
    const cfg = t.services.config.auth.oidc;
    const soon = await recheckOidcUsers(t.services.db, t.services.secrets, cfg, provider, Date.now() + 60_000);
    assert.ok(!soon.disabled.includes('carol'), JSON.stringify(soon));
    assert.equal((await w.get('/groups')).res.status, 200);
    const late = await recheckOidcUsers(t.services.db, t.services.secrets, cfg, provider, Date.now() + (cfg.session_max_minutes + 1) * 60_000);
    assert.ok(late.disabled.includes('carol'), JSON.stringify(late));
    assert.equal((await w.get('/groups')).res.status, 303);
    assert.match(audit('user.disable', 'directory').at(-1)!.details, /no refresh token/);
  });

  test('auth test-oidc shows the endpoints and what given claims map to; exits 0 / 1 / 2', async () => {
    const [ok, none, bad] = await Promise.all([
      cli(['test-oidc', '--claims', '{"preferred_username":"carol","groups":["x","netops"]}']),
      cli(['test-oidc', '--claims', '{"preferred_username":"carol","groups":"staff"}']),
      cli(['test-oidc', '--claims', 'not json']),
    ]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`^issuer: ${idp.issuer}$`, 'm'));
    assert.match(ok.stdout, /^token_endpoint: http:\/\/127\.0\.0\.1:\d+\/token$/m);
    assert.match(ok.stdout, /^redirect_url: http:\/\/confvault\.test\/login\/oidc\/callback$/m);
    assert.match(ok.stdout, /^client_secret: stored$/m);
    assert.match(ok.stdout, /^mapping: map\[1\] group "netops"$/m);
    assert.match(ok.stdout, /^role: viewer$/m);
    assert.match(ok.stdout, /^scope: core$/m);
    assert.equal(none.status, 1);
    assert.match(none.stdout, /result: refused/);
    assert.equal(bad.status, 2);
  });

  test('provider down: a clear message, audited, and the local administrator still signs in', async () => {
    const w = new WebClient(t.url);
    // Discovery was read before: the start still redirects, and the code exchange finds nobody listening.
    const start = await w.fetch('/login/oidc');
    assert.equal(start.status, 303);
    const state = new URL(start.headers.get('Location')!).searchParams.get('state')!;
    await idp.close();
    const { res, html } = await w.get(`/login/oidc/callback?code=some-code&state=${encodeURIComponent(state)}&iss=${encodeURIComponent(idp.issuer)}`);
    assert.equal(res.status, 503);
    assert.match(html, /identity provider cannot be reached/);
    assert.match(audit('login.directory_error').at(-1)!.details, /ECONNREFUSED/);
    assert.equal((await new WebClient(t.url).login('admin', 'admin-password-1')).status, 303);
  });

  test('the login throttle applies: failed callbacks lock the door, even for a good sign-in', async () => {
    const w = new WebClient(t.url);
    // The provider-down attempt above already counted: the lock comes within five failures.
    const statuses: number[] = [];
    for (let i = 0; i < 6 && statuses.at(-1) !== 429; i++) statuses.push((await w.get(`/login/oidc/callback?code=guess${i}&state=guess`)).res.status);
    assert.equal(statuses.at(-1), 429, statuses.join(' '));
    assert.ok(statuses.slice(0, -1).every((s) => s === 401) && statuses.length >= 4, statuses.join(' '));
    const locked = await w.get('/login/oidc/callback?code=x&state=y');
    assert.equal(locked.res.status, 429);
    assert.ok(Number(locked.res.headers.get('Retry-After')) > 0);
    assert.equal((await w.fetch('/login/oidc')).status, 429, 'no new sign-in starts from a locked address');
  });
});
