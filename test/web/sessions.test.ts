// Web sessions: login (ok, wrong, disabled, throttled), forced password change, idle and absolute expiry, logout; /api/v1 ignores the cookie.
import { after, before, describe, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import assert from 'node:assert/strict';
import { createUser, setUserDisabled } from '../../src/features/users/users.service';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState } from '../helpers/seed';
import { WebClient } from './web-client';

describe('web sessions', () => {
  let t: TestAppliance;
  before(async () => {
    t = await startTestAppliance();
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'alice', password: 'alice-password-1', role: 'administrator' });
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'dora', password: 'dora-password-1', role: 'administrator' });
    setUserDisabled(t.services.db, SYSTEM_ACTOR, 'dora', true);
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'newbie', password: 'printed-password-1', role: 'administrator', must_change_password: true });
  });
  after(() => t.close());

  const sessionRow = () => t.services.db.prepare('SELECT * FROM web_sessions ORDER BY created_at DESC LIMIT 1').get() as { id_hash: Buffer };
  const auditActions = () => t.services.db.prepare('SELECT action FROM audit_log ORDER BY id').pluck().all() as string[];

  test('pages need a login; the session cookie is HttpOnly, SameSite=Lax, stored only hashed', async () => {
    const w = new WebClient(t.url);
    const r = await w.fetch('/devices');
    assert.equal(r.status, 303);
    assert.equal(r.headers.get('location'), '/login?next=%2Fdevices');
    assert.equal((await w.fetch('/no-such-page')).status, 404, 'unknown paths are 404, not a login detour');
    const api = await w.fetch('/api/backup-jobs/x');
    assert.equal(api.status, 401);
    assert.equal((await api.json()).error.code, 'UNAUTHORIZED');

    const login = await w.login('alice', 'alice-password-1');
    assert.equal(login.status, 303);
    assert.equal(login.headers.get('location'), '/');
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith('confvault_session='))!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    const value = w.cookies.get('confvault_session')!;
    const stored = t.services.db.prepare('SELECT count(*) FROM web_sessions WHERE id_hash = ?').pluck().get(Buffer.from(value)) as number;
    assert.equal(stored, 0, 'the cookie value itself is not stored');
    const home = await w.get('/');
    assert.equal(home.res.status, 200);
    assert.match(home.html, /Dashboard/);
    assert.ok(auditActions().includes('login.success'));
  });

  test('wrong password and unknown user: 401, no session, audited', async () => {
    const w = new WebClient(t.url);
    const r = await w.login('alice', 'wrong-password-xx');
    assert.equal(r.status, 401);
    assert.equal(w.cookies.has('confvault_session'), false);
    assert.equal((await new WebClient(t.url).login('nobody', 'whatever-password')).status, 401);
    assert.ok(auditActions().includes('login.failure'));
  });

  test('a disabled user is told so (only with the right password)', async () => {
    const w = new WebClient(t.url);
    const page = await w.get('/login');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.html)![1];
    const r = await w.post('/login', { username: 'dora', password: 'dora-password-1' }, { csrf: token });
    assert.equal(r.res.status, 403);
    assert.match(r.html, /account is disabled/);
    assert.equal(w.cookies.has('confvault_session'), false);
  });

  test('login without the login form token is refused', async () => {
    const w = new WebClient(t.url);
    const r = await w.post('/login', { username: 'alice', password: 'alice-password-1' });
    assert.equal(r.res.status, 403);
    assert.equal(w.cookies.has('confvault_session'), false);
  });

  test('after 5 failures the user is locked out, even with the right password', async () => {
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'mallory-target', password: 'target-password-1', role: 'administrator' });
    for (let i = 0; i < 5; i++) assert.equal((await new WebClient(t.url).login('mallory-target', `bad-${i}-password`)).status, 401);
    const w = new WebClient(t.url);
    const page = await w.get('/login');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.html)![1];
    const r = await w.post('/login', { username: 'mallory-target', password: 'target-password-1' }, { csrf: token });
    assert.equal(r.res.status, 429);
    assert.match(r.html, /Too many failed attempts/);
    assert.ok(Number(r.res.headers.get('retry-after')) > 0);
    assert.equal(w.cookies.has('confvault_session'), false);
  });

  test('idle expiry (30 min) and absolute expiry (12 h) end the session', async () => {
    const w = new WebClient(t.url);
    await w.login('alice', 'alice-password-1');
    const row = sessionRow();
    rawState(
      t.services.db,
      'a session idle for 31 minutes: only the clock makes it',
      'UPDATE web_sessions SET last_seen_at = ? WHERE id_hash = ?',
      Date.now() - 31 * 60_000,
      row.id_hash,
    );
    const r = await w.fetch('/devices');
    assert.equal(r.status, 303);
    assert.match(r.headers.get('location')!, /^\/login/);

    const w2 = new WebClient(t.url);
    await w2.login('alice', 'alice-password-1');
    assert.equal((await w2.fetch('/devices')).status, 200);
    rawState(
      t.services.db,
      'a session past its 12 hours: only the clock makes it',
      'UPDATE web_sessions SET expires_at = ? WHERE id_hash = ?',
      Date.now() - 1,
      sessionRow().id_hash,
    );
    assert.equal((await w2.fetch('/devices')).status, 303);
  });

  test('logout ends the session on the server', async () => {
    const w = new WebClient(t.url);
    await w.login('alice', 'alice-password-1');
    const cookie = w.cookies.get('confvault_session')!;
    const out = await w.post('/logout', {}, { csrf: true });
    assert.equal(out.res.status, 303);
    const replay = await fetch(`${t.url}/devices`, { headers: { Cookie: `confvault_session=${cookie}` }, redirect: 'manual' });
    assert.equal(replay.status, 303, 'the old cookie no longer works');
  });

  test('disabling a user ends their live sessions', async () => {
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'erin', password: 'erin-password-1', role: 'administrator' });
    const w = new WebClient(t.url);
    await w.login('erin', 'erin-password-1');
    assert.equal((await w.fetch('/devices')).status, 200);
    setUserDisabled(t.services.db, SYSTEM_ACTOR, 'erin', true);
    assert.equal((await w.fetch('/devices')).status, 303);
  });

  test('the first admin must change the printed password before anything else', async () => {
    const w = new WebClient(t.url);
    const r = await w.login('newbie', 'printed-password-1');
    assert.equal(r.headers.get('location'), '/account/password');
    const blocked = await w.fetch('/devices');
    assert.equal(blocked.status, 303);
    assert.equal(blocked.headers.get('location'), '/account/password');
    const page = await w.get('/account/password');
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page.html)![1];
    const same = await w.post('/account/password', { current: 'printed-password-1', password: 'printed-password-1', confirm: 'printed-password-1' }, { csrf });
    assert.equal(same.res.status, 422);
    const short = await w.post('/account/password', { current: 'printed-password-1', password: 'short', confirm: 'short' }, { csrf });
    assert.equal(short.res.status, 422);
    assert.match(short.html, /at least 10 characters/);
    const ok = await w.post('/account/password', { current: 'printed-password-1', password: 'my-own-password-1', confirm: 'my-own-password-1' }, { csrf });
    assert.equal(ok.res.status, 303);
    assert.equal((await w.fetch('/devices')).status, 200);
    assert.equal((await new WebClient(t.url).login('newbie', 'my-own-password-1')).headers.get('location'), '/');
  });

  test('/api/v1 ignores the session cookie: 401 without an API key', async () => {
    const w = new WebClient(t.url);
    await w.login('alice', 'alice-password-1');
    const r = await w.fetch('/api/v1/devices');
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('content-security-policy'), null, 'the web layer leaves /api/v1 alone');
  });

  test('pages carry a strict CSP and static files an ETag', async () => {
    const r = await fetch(`${t.url}/login`);
    assert.match(r.headers.get('content-security-policy')!, /default-src 'self'/);
    assert.doesNotMatch(r.headers.get('content-security-policy')!, /unsafe-inline/);
    const css = await fetch(`${t.url}/static/app.css`);
    const etag = css.headers.get('etag')!;
    assert.ok(etag);
    assert.match(css.headers.get('cache-control')!, /max-age=31536000/);
    assert.equal((await fetch(`${t.url}/static/app.css`, { headers: { 'If-None-Match': etag } })).status, 304);
  });
});
