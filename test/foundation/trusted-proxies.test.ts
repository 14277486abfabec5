// [server] trusted_proxies: X-Forwarded-For/-Proto are believed only from a trusted peer; the login's throttle, session,
// audit and Secure cookie follow the real client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveClient } from '../../src/http/client';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { WebClient } from '../web/web-client';

test('resolveClient: the forwarded headers count only from a trusted peer, read from the right', () => {
  const trusted = ['10.0.0.0/8', '192.168.1.5', 'fd00::/8'];
  const h = (forwardedFor?: string, forwardedProto?: string) => ({ forwardedFor, forwardedProto });
  assert.deepEqual(
    resolveClient('203.0.113.9', false, h('1.2.3.4', 'https'), trusted),
    { address: '203.0.113.9', scheme: 'http' },
    'untrusted peer: headers ignored',
  );
  assert.deepEqual(resolveClient('192.168.1.5', false, h('1.2.3.4', 'https'), trusted), { address: '1.2.3.4', scheme: 'https' });
  assert.deepEqual(
    resolveClient('::ffff:10.1.2.3', false, h('6.6.6.6, 1.2.3.4, 10.9.9.9'), trusted),
    { address: '1.2.3.4', scheme: 'http' },
    'a forged left part is skipped',
  );
  assert.deepEqual(resolveClient('fd00::1', true, h('2001:db8::7'), trusted), { address: '2001:db8::7', scheme: 'https' });
  assert.deepEqual(resolveClient('10.0.0.1', false, h('garbage, 1.2.3.4'), trusted), { address: '1.2.3.4', scheme: 'http' });
  assert.deepEqual(
    resolveClient('10.0.0.1', false, h('1.2.3.4, garbage'), trusted),
    { address: '10.0.0.1', scheme: 'http' },
    'an unreadable hop stops the walk',
  );
  assert.deepEqual(resolveClient('10.0.0.1', false, h(undefined, 'gopher'), trusted), { address: '10.0.0.1', scheme: 'http' });
  assert.deepEqual(resolveClient('127.0.0.1', false, h('1.2.3.4', 'https'), []), { address: '127.0.0.1', scheme: 'http' }, 'empty list trusts none');
});

/** Log in through a "proxy": the forwarded headers on every request of the flow. */
async function loginVia(t: TestAppliance, username: string, password: string, headers: Record<string, string>) {
  const w = new WebClient(t.url);
  const page = await w.fetch('/login', { headers });
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1];
  const { res } = await w.post('/login', { username, password, next: '/' }, { csrf: token, headers });
  return { w, res, loginCookie: page.headers.getSetCookie().find((c) => c.startsWith('confvault_login='))! };
}

describe('behind a trusted proxy (127.0.0.1)', () => {
  let t: TestAppliance;
  before(async () => {
    t = await startTestAppliance({ CONFVAULT_TRUSTED_PROXIES: '127.0.0.1' });
  });
  after(() => t.close());

  test('the session, the audit row and the cookies follow the forwarded client and scheme', async () => {
    const { res, loginCookie } = await loginVia(t, 'admin', 'admin-password-1', { 'X-Forwarded-For': '203.0.113.7', 'X-Forwarded-Proto': 'https' });
    assert.equal(res.status, 303);
    assert.match(loginCookie, /;\s*Secure/i, 'the login form cookie is Secure behind a TLS proxy');
    const session = res.headers.getSetCookie().find((c) => c.startsWith('confvault_session='))!;
    assert.match(session, /;\s*Secure/i, 'the session cookie is Secure behind a TLS proxy');
    const row = t.services.db.prepare('SELECT address FROM web_sessions ORDER BY created_at DESC LIMIT 1').get() as { address: string };
    assert.equal(row.address, '203.0.113.7');
    const audit = t.services.db.prepare("SELECT target FROM audit_log WHERE action = 'login.success' ORDER BY id DESC LIMIT 1").pluck().get();
    assert.equal(audit, 'address 203.0.113.7');
  });

  test('a form posted from the https origin passes the same-origin check behind the TLS proxy', async () => {
    const headers = { 'X-Forwarded-For': '203.0.113.8', 'X-Forwarded-Proto': 'https' };
    const { w } = await loginVia(t, 'admin', 'admin-password-1', headers);
    const host = new URL(t.url).host;
    const ok = await w.post('/account', { timezone: 'UTC' }, { csrf: true, headers: { ...headers, Origin: `https://${host}` } });
    assert.equal(ok.res.status, 303);
    const other = await w.post('/account', { timezone: 'UTC' }, { csrf: true, headers: { ...headers, Origin: 'https://evil.example' } });
    assert.equal(other.res.status, 403);
  });

  test('each client behind the proxy has its own throttle bucket', async () => {
    // 20 failures (different usernames, so only the address bucket fills) from one client lock that client only.
    for (let i = 0; i < 20; i++) {
      const { res } = await loginVia(t, `nobody${i}`, 'wrong-password-1', { 'X-Forwarded-For': '198.51.100.1' });
      assert.equal(res.status, 401);
    }
    assert.equal((await loginVia(t, 'someone', 'wrong-password-1', { 'X-Forwarded-For': '198.51.100.1' })).res.status, 429);
    assert.equal((await loginVia(t, 'admin', 'admin-password-1', { 'X-Forwarded-For': '198.51.100.2' })).res.status, 303, 'another client is not locked');
  });
});

describe('without trusted proxies', () => {
  let t: TestAppliance;
  before(async () => {
    t = await startTestAppliance();
  });
  after(() => t.close());

  test('forwarded headers are ignored: the peer address, no Secure flag over plain HTTP', async () => {
    const { res, loginCookie } = await loginVia(t, 'admin', 'admin-password-1', { 'X-Forwarded-For': '203.0.113.7', 'X-Forwarded-Proto': 'https' });
    assert.equal(res.status, 303);
    assert.doesNotMatch(loginCookie, /Secure/i);
    const row = t.services.db.prepare('SELECT address FROM web_sessions ORDER BY created_at DESC LIMIT 1').get() as { address: string };
    assert.equal(row.address, '127.0.0.1');
  });
});
