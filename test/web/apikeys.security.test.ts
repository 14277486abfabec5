// API keys through the web page and the CLI: created and revoked with one audit row each (never the key), only one's own on the web.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createApiKey } from '../../src/features/apikeys/apikeys.service';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { WebClient } from './web-client';

describe('API keys: audited, own keys only on the web', () => {
  let t: TestAppliance;
  let w: WebClient;
  const rows = (action: string) =>
    t.services.db.prepare('SELECT * FROM audit_log WHERE action = ? ORDER BY id').all(action) as {
      actor: string;
      door: string;
      target: string;
      changes: string;
      details: string;
    }[];

  before(async () => {
    t = await startTestAppliance();
    createRole(t.services.db, SYSTEM_ACTOR, { name: 'keyholder', permissions: ['api_keys.view', 'api_keys.create', 'api_keys.delete', 'devices.view'] });
    await createUser(t.services.db, SYSTEM_ACTOR, { username: 'kim', password: 'kim-password-12', role: 'keyholder' });
    w = new WebClient(t.url);
    assert.equal((await w.login('kim', 'kim-password-12')).status, 303);
  });
  after(() => t.close());

  test('create and revoke on the web: one audit row each, without the key', async () => {
    const posted = await w.post('/api-keys', { name: 'monitoring', expires_in_days: '' }, { csrf: true });
    assert.equal(posted.res.status, 303, 'POST/redirect/GET: the key is shown by the page the creation redirects to');
    const location = posted.res.headers.get('location')!;
    const created = await w.get(location);
    const key = /id="new-key" class="mono" readonly="" value="(cv_[^"]+)"/.exec(created.html)?.[1];
    assert.ok(key, 'the key is shown once');
    const reloaded = await w.get(location);
    assert.ok(!reloaded.html.includes('id="new-key"') && !reloaded.html.includes(key), 'a reload shows the key no more');
    assert.match(reloaded.html, /shown only once/);
    assert.equal(rows('apikey.create').length, 1, 'and creates no second key');
    const [row] = rows('apikey.create');
    assert.equal(row.actor, 'kim');
    assert.equal(row.door, 'web');
    assert.equal(JSON.parse(row.changes).owner.after, 'kim');
    assert.ok(!JSON.stringify(row).includes(key.slice(3)), 'no key in the audit row');
    const id = Number(row.target.replace('key ', ''));
    assert.equal((await w.post(`/api-keys/${id}/revoke`, {}, { csrf: true })).res.status, 303);
    const [rev] = rows('apikey.revoke');
    assert.equal(rev.target, `key ${id}`);
    assert.equal(rev.actor, 'kim');
  });

  test("another user's key cannot be revoked from the web page", async () => {
    const other = createApiKey(t.services.db, SYSTEM_ACTOR, { username: 'admin' });
    assert.equal((await w.post(`/api-keys/${other.info.id}/revoke`, {}, { csrf: true })).res.status, 404);
    assert.equal((await t.api('/api/v1/devices', { key: other.key })).status, 200, 'the key still works');
  });

  test('the CLI: create and revoke are audited as the CLI door', async () => {
    const dataDir = path.join(t.dir, 'data');
    const made = await runCliAsync(['apikey', 'create', 'kim', '--name', 'cli-key', '--data-dir', dataDir]);
    assert.equal(made.status, 0, made.stderr);
    const key = made.stdout.trimEnd().split('\n').at(-1)!;
    const row = rows('apikey.create').at(-1)!;
    assert.equal(row.door, 'cli');
    assert.ok(!JSON.stringify(row).includes(key.slice(3)));
    const id = row.target.replace('key ', '');
    const gone = await runCliAsync(['apikey', 'revoke', id, '--data-dir', dataDir]);
    assert.equal(gone.status, 0, gone.stderr);
    assert.equal(rows('apikey.revoke').at(-1)!.door, 'cli');
    assert.match(gone.stderr, /revoked$/m);
    const again = await runCliAsync(['apikey', 'revoke', id, '--data-dir', dataDir]);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, /was already revoked at .*; nothing changed/);
    assert.equal(rows('apikey.revoke').filter((r) => r.target === `key ${id}`).length, 1, 'no second audit row');
  });
});
