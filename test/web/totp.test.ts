// TOTP second factor through the real web sign-in ([auth] totp = "optional", the default): enrolment, the code step,
// wrong and replayed codes, single-use recovery codes, an administrator's reset, the throttle on codes, the audit trail.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createUser } from '../../src/features/users/users.service';
import { totpCode } from '../../src/features/users/totp.code';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { awayFromStepEdge, codeAt, enrol, passwordStep } from '../helpers/totp';
import { WebClient } from './web-client';

describe('TOTP second factor (web sign-in)', () => {
  let t: TestAppliance;
  let log = '';
  let alice: { secret: string; recoveryCodes: string[] };
  const actions = (actor: string) => t.services.db.prepare('SELECT action FROM audit_log WHERE actor = ? ORDER BY id').pluck().all(actor) as string[];
  const codeStep = (w: WebClient, code: string) => w.post('/login/code', { code, next: '/devices' });

  before(async () => {
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) => (log += d.toString('utf8')));
    t = await startTestAppliance({ CONFVAULT_LOG_LEVEL: 'debug' }, { log: stream });
    for (const username of ['alice', 'bob', 'carol']) {
      await createUser(t.services.db, SYSTEM_ACTOR, { username, password: `${username}-password-1`, role: 'administrator' });
    }
  });
  after(() => t?.close());

  test('codes follow RFC 6238 (its SHA-1 test vectors, 6 digits)', () => {
    const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'; // base32 of "12345678901234567890"
    const at = (seconds: number) => totpCode(secret, Math.floor(seconds / 30));
    assert.deepEqual([59, 1111111109, 1111111111, 1234567890, 2000000000].map(at), ['287082', '081804', '050471', '005924', '279037']);
  });

  test('enrolment: QR code and key shown, confirmed by a first code, ten recovery codes shown once; the key is then never shown', async () => {
    const w = new WebClient(t.url);
    assert.equal((await w.login('alice', 'alice-password-1')).status, 303);
    const csrf = await w.csrf();
    const wrong = await w.post('/account/totp/start', { _csrf: csrf });
    assert.equal(wrong.res.status, 303);
    assert.equal((await w.post('/account/totp/confirm', { _csrf: csrf, code: '000000' })).res.status, 422, 'a wrong first code does not enrol');
    alice = await enrol(w, csrf);
    assert.equal(alice.recoveryCodes.length, 10);
    assert.equal(new Set(alice.recoveryCodes).size, 10);
    const page = (await w.get('/account/totp')).html;
    assert.doesNotMatch(page, /totp-secret|recovery-codes/);
    assert.ok(!page.includes(alice.secret));
    assert.match(page, /10 of your recovery codes are left/);
    // At rest: encrypted with the master key (neither the key nor its bytes in the row), codes hashed.
    const row = t.services.db.prepare("SELECT totp_secret FROM users WHERE username = 'alice'").get() as { totp_secret: Buffer };
    assert.ok(!row.totp_secret.toString('latin1').includes(alice.secret));
    const hashes = t.services.db
      .prepare("SELECT code_hash FROM user_recovery_codes r JOIN users u ON u.id = r.user_id WHERE u.username = 'alice'")
      .pluck()
      .all() as string[];
    assert.equal(hashes.length, 10);
    assert.ok(hashes.every((h) => h.startsWith('$argon2id$')));
    assert.ok(!alice.recoveryCodes.some((c) => hashes.join().includes(c.replace('-', ''))));
  });

  test('sign-in asks for the code after the password; the pending step is not a session', async () => {
    await awayFromStepEdge();
    const w = new WebClient(t.url);
    const { res } = await passwordStep(w, 'alice', 'alice-password-1', '/devices');
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/login/code?next=%2Fdevices');
    assert.ok(!w.cookies.has('confvault_session'), 'no session before the code');
    const blocked = await w.get('/devices');
    assert.equal(blocked.res.status, 303);
    assert.match(blocked.res.headers.get('location')!, /^\/login\?next=/);
    assert.match((await w.get('/login/code')).html, /autocomplete="one-time-code"/);
    const bad = await codeStep(w, '123456' === codeAt(alice.secret, 0) ? '654321' : '123456');
    assert.equal(bad.res.status, 401);
    assert.match(bad.html, /Wrong code/);
    const ok = await codeStep(w, codeAt(alice.secret, 0));
    assert.equal(ok.res.status, 303);
    assert.equal(ok.res.headers.get('location'), '/devices');
    assert.equal((await w.get('/devices')).res.status, 200);
  });

  test('the same code is refused when replayed within its window; the next one works', async () => {
    const w = new WebClient(t.url);
    assert.equal((await passwordStep(w, 'alice', 'alice-password-1')).res.status, 303);
    const replay = await codeStep(w, codeAt(alice.secret, 0));
    assert.equal(replay.res.status, 401);
    assert.ok(!w.cookies.has('confvault_session'));
    assert.equal((await codeStep(w, codeAt(alice.secret, 1))).res.status, 303);
    assert.ok(w.cookies.has('confvault_session'));
  });

  test('a recovery code signs in once; used again, it is refused', async () => {
    const [first] = alice.recoveryCodes;
    const w = new WebClient(t.url);
    await passwordStep(w, 'alice', 'alice-password-1');
    const ok = await codeStep(w, first.toUpperCase());
    assert.equal(ok.res.status, 303);
    assert.equal(ok.res.headers.get('location'), '/account/totp');
    assert.match((await w.get('/account/totp')).html, /9 of your recovery codes are left/);
    const again = new WebClient(t.url);
    await passwordStep(again, 'alice', 'alice-password-1');
    assert.equal((await codeStep(again, first)).res.status, 401);
    assert.ok(!again.cookies.has('confvault_session'));
  });

  test('every step is audited; no code, key or recovery code reaches the trail or the log', () => {
    const a = actions('alice');
    for (const action of [
      'user.totp_enrol_start',
      'user.totp_enrol_failure',
      'user.totp_enrol',
      'login.code_required',
      'login.code_failure',
      'login.code_replayed',
    ]) {
      assert.ok(a.includes(action), `${action} in ${a.join(', ')}`);
    }
    const via = t.services.db
      .prepare("SELECT json_extract(details, '$.second_factor') FROM audit_log WHERE actor = 'alice' AND action = 'login.success' ORDER BY id")
      .pluck()
      .all();
    assert.deepEqual(via, [null, 'totp', 'totp', 'recovery_code'], 'before enrolment, then two codes and a recovery code');
    const trail = JSON.stringify(t.services.db.prepare('SELECT * FROM audit_log').all());
    for (const secret of [alice.secret, ...alice.recoveryCodes]) {
      assert.ok(!trail.includes(secret), 'secret in the audit trail');
      assert.ok(!log.includes(secret), 'secret in the log');
    }
    assert.ok(log.length > 0, 'the log was captured');
  });

  test('the login throttle counts code attempts: after five wrong codes even the right one is refused', async () => {
    const w = new WebClient(t.url);
    assert.equal((await w.login('bob', 'bob-password-1')).status, 303);
    const bob = await enrol(w, await w.csrf());
    const guesser = new WebClient(t.url);
    const statuses: number[] = [];
    // A fresh password step whenever a challenge runs out: the username's count must carry across them.
    for (let i = 0; i < 8; i++) {
      if (i % 4 === 0) assert.equal((await passwordStep(guesser, 'bob', 'bob-password-1')).res.status, 303);
      statuses.push((await codeStep(guesser, String(100000 + i))).res.status);
    }
    assert.ok(statuses.includes(429), `throttled after repeated wrong codes: ${statuses.join(',')}`);
    const right = await codeStep(guesser, codeAt(bob.secret, 0));
    assert.notEqual(right.res.status, 303, 'the right code is refused while locked');
    assert.ok(!guesser.cookies.has('confvault_session'));
  });

  test('an administrator resets a second factor: password alone again, recovery codes gone, audited', async () => {
    const admin = new WebClient(t.url);
    assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
    assert.match((await admin.get('/users/alice/edit')).html, /Reset second factor/);
    const reset = await admin.post('/users/alice/totp-reset', {}, { csrf: true });
    assert.equal(reset.res.status, 303);
    const row = t.services.db.prepare("SELECT actor, target, door FROM audit_log WHERE action = 'user.totp_reset'").get();
    assert.deepEqual({ ...(row as object) }, { actor: 'admin', target: 'user alice', door: 'web' });
    const w = new WebClient(t.url);
    const res = await w.login('alice', 'alice-password-1');
    assert.equal(res.headers.get('location'), '/');
    assert.ok(w.cookies.has('confvault_session'));
    assert.equal(
      t.services.db.prepare("SELECT count(*) FROM user_recovery_codes r JOIN users u ON u.id = r.user_id WHERE username = 'alice'").pluck().get(),
      0,
    );
  });

  test('no second factor: sign-in goes straight in (optional mode), and a stale code page leads back to the password', async () => {
    const w = new WebClient(t.url);
    assert.equal((await w.login('carol', 'carol-password-1')).headers.get('location'), '/');
    const stale = new WebClient(t.url);
    stale.cookies.set('confvault_login_code', 'A'.repeat(43));
    assert.equal((await stale.get('/login/code')).res.headers.get('location'), '/login');
    const post = await stale.post('/login/code', { code: '123456' });
    assert.equal(post.res.headers.get('location'), '/login');
  });
});
