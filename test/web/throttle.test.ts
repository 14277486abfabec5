// The login throttle under parallel attempts: each attempt is reserved before its password is checked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { LoginThrottle } from '../../src/web/session/throttle';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { WebClient } from './web-client';

describe('login throttle', () => {
  let t: TestAppliance;
  before(async () => {
    t = await startTestAppliance();
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'target', password: 'target-password-1', role: 'administrator' });
  });
  after(() => t.close());

  test('reproduction: 100 parallel wrong logins get exactly 5 password checks, the rest 429', async () => {
    const w = new WebClient(t.url);
    const page = await w.get('/login');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.html)![1];
    const cookie = `confvault_login=${w.cookies.get('confvault_login')}`;
    const attempt = (i: number) =>
      fetch(`${t.url}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
        body: new URLSearchParams({ _csrf: token, username: 'target', password: `wrong-password-${i}` }),
      }).then(async (r) => (await r.arrayBuffer(), r.status));
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => attempt(i)));
    const count = (s: number) => statuses.filter((x) => x === s).length;
    assert.equal(count(401), 5, `checked: ${count(401)}`);
    assert.equal(count(429), 95);
    const failures = t.services.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'login.failure' AND actor = 'target'").pluck().get();
    assert.equal(failures, 5, 'one audit row per password actually checked');
    assert.equal((await new WebClient(t.url).login('target', 'target-password-1')).status, 429, 'the account is locked, even for the right password');
  });

  test('a right password refunds its reserved attempt', () => {
    const th = new LoginThrottle();
    const now = 1_000_000;
    for (let i = 0; i < 4; i++) th.recordFailure('bob', '10.0.0.1', now);
    const slot = th.reserve('bob', '10.0.0.1', now);
    assert.ok('reservation' in slot, 'the fifth attempt may run');
    assert.ok(th.retryAfter('bob', '10.0.0.1', now) > 0, 'while it runs, a sixth waits');
    th.succeeded(slot.reservation);
    assert.equal(th.retryAfter('bob', '10.0.0.1', now), 0, 'a right password leaves no lock behind');
    for (let i = 0; i < 5; i++) assert.ok('reservation' in th.reserve('bob', '10.0.0.1', now), `attempt ${i} after success`);
    assert.ok(!('reservation' in th.reserve('bob', '10.0.0.1', now)));
  });
});
