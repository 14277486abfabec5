// CSRF: every state-changing page and /api/ request needs the session's token (and a same-origin Origin); refused requests change nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { WebClient } from './web-client';

describe('web CSRF protection', () => {
  let t: TestAppliance;
  let w: WebClient;
  before(async () => {
    t = await startTestAppliance();
    w = new WebClient(t.url);
    assert.equal((await w.login('admin', 'admin-password-1')).status, 303);
  });
  after(() => t.close());

  const keys = () => t.services.db.prepare('SELECT count(*) FROM api_keys').pluck().get() as number;
  const groups = () => t.services.db.prepare('SELECT count(*) FROM device_groups').pluck().get() as number;

  test('a form POST without a token or with a wrong one is 403 and creates nothing', async () => {
    const none = await w.post('/api-keys', { name: 'x', expires_in_days: '10' });
    assert.equal(none.res.status, 403);
    const wrong = await w.post('/api-keys', { name: 'x', expires_in_days: '10' }, { csrf: 'A'.repeat(43) });
    assert.equal(wrong.res.status, 403);
    const g = await w.post('/groups', { name: 'evil' }, { csrf: 'nope' });
    assert.equal(g.res.status, 403);
    assert.equal(keys(), 0);
    assert.equal(groups(), 0);
    const logout = await w.post('/logout', {});
    assert.equal(logout.res.status, 403, 'even logout needs the token');
    assert.equal((await w.fetch('/devices')).status, 200, 'still logged in');
  });

  test('another session’s token does not work', async () => {
    const other = new WebClient(t.url);
    await other.login('admin', 'admin-password-1');
    const r = await w.post('/api-keys', { name: 'x' }, { csrf: await other.csrf() });
    assert.equal(r.res.status, 403);
    assert.equal(keys(), 0);
  });

  test('a cross-site Origin is refused even with the right token', async () => {
    const r = await w.post('/api-keys', { name: 'x' }, { csrf: true, headers: { Origin: 'http://evil.example' } });
    assert.equal(r.res.status, 403);
    assert.equal(keys(), 0);
  });

  test('internal /api/ POSTs need the X-CSRF-Token header', async () => {
    const r = await w.fetch('/api/devices/1/backups', { method: 'POST' });
    assert.equal(r.status, 403);
    assert.equal((await r.json()).error.code, 'PERMISSION_DENIED');
    const bad = await w.fetch('/api/devices/1/backups', { method: 'POST', headers: { 'X-CSRF-Token': 'wrong' } });
    assert.equal(bad.status, 403);
    const runs = t.services.db.prepare('SELECT count(*) FROM backups').pluck().get();
    assert.equal(runs, 0);
  });

  test('with the token the same request works', async () => {
    const ok = await w.post('/api-keys', { name: 'good', expires_in_days: '10' }, { csrf: true });
    assert.equal(ok.res.status, 303);
    assert.match((await w.get(ok.res.headers.get('location')!)).html, /cv_[A-Za-z0-9_-]{43}/);
    assert.equal(keys(), 1);
  });
});
