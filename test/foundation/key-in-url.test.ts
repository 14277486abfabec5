// Keys in URLs: a key on record in the query string is refused and, if valid, revoked as exposed (API Keys page, audit);
// values that merely look like keys (a device named cv_lab1) are served.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKey, listApiKeys, revokeApiKey } from '../../src/features/apikeys/apikeys.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { WebClient } from '../web/web-client';

describe('keys in URLs', () => {
  let t: TestAppliance;
  let key: string;
  before(async () => {
    t = await startTestAppliance();
    const db = t.services.db;
    const cred = seedCredential(db, t.services.secrets, { name: 'c', username: 'u', password: 'p' });
    seedDevice(db, { name: 'cv_lab1', port: 22, credential_id: cred, template_id: seedBuiltinTemplate(db, 'cisco-ios') });
    key = createApiKey(db, SYSTEM_ACTOR, { username: 'admin', name: 'main' }).key;
  });
  after(() => t.close());

  test('a device named cv_lab1 can be searched for; token=x and made-up keys are ordinary values', async () => {
    const res = await t.api('/api/v1/devices?q=cv_lab1', { key });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { items: { name: string }[] };
    assert.deepEqual(
      body.items.map((d) => d.name),
      ['cv_lab1'],
    );
    for (const q of ['?token=x', '?apikey=x', `?q=cv_${'Z'.repeat(43)}`]) assert.equal((await t.api(`/api/v1/devices${q}`, { key })).status, 200, q);
  });

  test('a valid key in the query string: 401, revoked, marked exposed on the API Keys page and in the audit log', async () => {
    const db = t.services.db;
    const { key: leaked, info } = createApiKey(db, SYSTEM_ACTOR, { username: 'admin', name: 'leaky' });
    const res = await t.api(`/api/v1/devices?q=${leaked}`, { key });
    assert.equal(res.status, 401);
    const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
    assert.equal(body.error.code, 'UNAUTHORIZED');
    assert.doesNotMatch(JSON.stringify(body), new RegExp(leaked.slice(3)));
    assert.equal((await t.api('/api/v1/devices', { key: leaked })).status, 401, 'the leaked key no longer works');
    assert.equal((await t.api('/api/v1/devices', { key })).status, 200, 'the header key is untouched');
    const k = listApiKeys(db, 'admin').find((x) => x.id === info.id)!;
    assert.equal(k.state, 'exposed');
    assert.ok(k.revoked_at !== null && k.exposed_at !== null);
    const audit = db.prepare("SELECT * FROM audit_log WHERE action = 'apikey.exposed' AND target = ?").all(`key ${info.id}`) as {
      request_id: string;
      details: string;
      changes: string;
    }[];
    assert.equal(audit.length, 1);
    assert.equal(audit[0].request_id, body.error.request_id);
    assert.doesNotMatch(JSON.stringify(audit[0]), new RegExp(leaked.slice(3)));
    // Seen again: still refused, no second row.
    assert.equal((await t.api(`/api/v1/devices?x=${encodeURIComponent(leaked)}`)).status, 401);
    assert.equal(db.prepare("SELECT count(*) FROM audit_log WHERE action = 'apikey.exposed'").pluck().get(), 1);
    const w = new WebClient(t.url);
    assert.equal((await w.login('admin', 'admin-password-1')).status, 303);
    const page = await w.get('/api-keys');
    assert.match(page.html, /badge exposed[^>]*>exposed</);
  });

  test('a revoked or expired key in the query string is refused too, and stays as it was', async () => {
    const db = t.services.db;
    const revoked = createApiKey(db, SYSTEM_ACTOR, { username: 'admin', name: 'old' });
    revokeApiKey(db, SYSTEM_ACTOR, revoked.info.id);
    assert.equal((await t.api(`/api/v1/devices?q=${revoked.key}`, { key })).status, 401);
    const expired = createApiKey(db, SYSTEM_ACTOR, { username: 'admin', name: 'expired', expiresInDays: 1 });
    rawState(db, 'a key past its expiry: only the clock makes it', 'UPDATE api_keys SET expires_at = 1 WHERE id = ?', expired.info.id);
    assert.equal((await t.api(`/api/v1/devices?q=${expired.key}`, { key })).status, 401);
    const states = listApiKeys(db, 'admin')
      .filter((x) => x.id === revoked.info.id || x.id === expired.info.id)
      .map((x) => x.state);
    assert.deepEqual(states, ['revoked', 'expired']);
  });
});
