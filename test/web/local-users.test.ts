// [auth] local_users and [auth] totp = "required" through the real web sign-in: a local user not named is refused
// exactly as a wrong password is (audited), and a named one without a second factor reaches nothing before enrolling.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { awayFromStepEdge, codeAt, enrol, passwordStep } from '../helpers/totp';
import { WebClient } from './web-client';

/** A page's CSRF token from its meta tag (the forced enrolment page is the only page such a session reaches). */
async function csrfOf(w: WebClient, page: string): Promise<string> {
  return /<meta name="csrf-token" content="([^"]+)"/.exec((await w.get(page)).html)![1];
}

describe('local sign-in limited to named users, second factor required', () => {
  let t: TestAppliance;
  let confDir: string;
  const audit = (action: string, actor: string) =>
    t.services.db.prepare('SELECT target, door FROM audit_log WHERE action = ? AND actor = ?').all(action, actor) as { target: string; door: string }[];

  before(async () => {
    confDir = tempDir();
    const conf = path.join(confDir, 'appliance.conf');
    writeFileSync(conf, '[auth]\ntotp = "required"\nlocal_users = ["admin", "ops"]\n');
    t = await startTestAppliance({ CONFVAULT_CONFIG: conf });
    for (const username of ['ops', 'eve']) {
      await createUser(t.services.db, SYSTEM_ACTOR, { username, password: `${username}-password-1`, role: 'administrator' });
    }
  });
  after(async () => {
    await t?.close();
    rmSync(confDir, { recursive: true, force: true });
  });

  test('a local user not in local_users is refused with the wrong-password answer, and the refusal is audited', async () => {
    const right = await passwordStep(new WebClient(t.url), 'eve', 'eve-password-1');
    const wrong = await passwordStep(new WebClient(t.url), 'eve', 'not-her-password');
    assert.equal(right.res.status, 401);
    assert.equal(wrong.res.status, 401);
    const text = (html: string) => html.replace(/value="[^"]*"|content="[^"]*"/g, '');
    assert.equal(text(right.html), text(wrong.html), 'same page: nothing tells a right password apart');
    assert.ok(!right.res.headers.getSetCookie().some((c) => c.startsWith('confvault_session=')));
    assert.equal(audit('login.refused_not_listed', 'eve').length, 1);
    assert.equal(audit('login.failure', 'eve').length, 1);
    assert.equal(audit('login.success', 'eve').length, 0);
  });

  test('a named user without a second factor is sent to enrolment from every page, and the internal API refuses', async () => {
    const w = new WebClient(t.url);
    assert.equal((await w.login('ops', 'ops-password-1')).status, 303);
    for (const page of ['/', '/devices', '/users', '/account']) {
      const r = await w.get(page);
      assert.equal(r.res.status, 303, page);
      assert.equal(r.res.headers.get('location'), '/account/totp', page);
    }
    const api = await w.fetch('/api/devices');
    assert.equal(api.status, 403);
    const page = await w.get('/account/totp');
    assert.equal(page.res.status, 200);
    assert.match(page.html, /requires a second factor/);
    const { secret } = await enrol(w, await csrfOf(w, '/account/totp'));
    assert.equal((await w.get('/devices')).res.status, 200, 'enrolled: the appliance opens');
    // The next sign-in asks for the code.
    await awayFromStepEdge();
    const again = new WebClient(t.url);
    assert.equal((await passwordStep(again, 'ops', 'ops-password-1')).res.headers.get('location'), '/login/code?next=%2F');
    assert.equal((await again.post('/login/code', { code: codeAt(secret, 0) })).res.status, 303);
    assert.equal((await again.get('/devices')).res.status, 200);
  });

  test("after an administrator's reset, the user's open session is sent back to enrolment", async () => {
    const ops = new WebClient(t.url);
    assert.equal((await ops.login('ops', 'ops-password-1')).headers.get('location'), '/login/code?next=%2F');
    const admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    const { secret } = await enrol(admin, await csrfOf(admin, '/account/totp'));
    assert.ok(secret);
    assert.equal((await admin.post('/users/ops/totp-reset', {}, { csrf: true })).res.status, 303);
    assert.equal(audit('user.totp_reset', 'admin')[0]?.target, 'user ops');
    const w = new WebClient(t.url);
    assert.equal((await w.login('ops', 'ops-password-1')).status, 303, 'password alone after the reset');
    assert.equal((await w.get('/')).res.headers.get('location'), '/account/totp', 'and straight to enrolment');
  });

  test('the console resets a second factor (the break-glass administrator lost their phone), audited with the door cli', async () => {
    assert.equal(t.services.db.prepare("SELECT totp_enabled_at IS NOT NULL FROM users WHERE username = 'admin'").pluck().get(), 1);
    const r = await runCliAsync(['user', 'totp-reset', 'admin', '--data-dir', path.join(t.dir, 'data')]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /second factor of admin removed/);
    const row = t.services.db.prepare("SELECT door, target FROM audit_log WHERE action = 'user.totp_reset' ORDER BY id DESC LIMIT 1").get();
    assert.deepEqual({ ...(row as object) }, { door: 'cli', target: 'user admin' });
    const w = new WebClient(t.url);
    assert.equal((await w.login('admin', 'admin-password-1')).headers.get('location'), '/', 'password alone');
  });
});
