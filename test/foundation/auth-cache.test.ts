// The server reuses a key's principal while nothing it depends on changes: every change still holds from the next request.
import { after, before, test } from 'node:test';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import assert from 'node:assert/strict';
import { authenticateApiKey, createApiKey } from '../../src/features/apikeys/apikeys.service';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';

let t: TestAppliance;
let adminKey: string;
let credential: number;
let template: number;

before(async () => {
  t = await startTestAppliance();
  adminKey = await t.keyFor({ permissions: 'all' });
  credential = seedCredential(t.services.db, t.services.secrets, { name: 'c', username: 'u', password: 'p' });
  template = seedBuiltinTemplate(t.services.db, 'frr');
});
after(() => t.close());

async function deviceNames(key: string): Promise<string[]> {
  const res = await t.api('/api/v1/devices?limit=100', { key });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { items: { name: string }[] };
  return body.items.map((d) => d.name).sort();
}

test("a subgroup created under a scoped user's group through the API: its devices are in scope on the next request", async () => {
  const db = t.services.db;
  const region = seedGroup(db, 'region-a');
  seedDevice(db, { name: 'a-core', port: 22, credential_id: credential, template_id: template, group_id: region });
  const key = await t.keyFor({ permissions: ['devices.view'], groups: [region] });
  assert.deepEqual(await deviceNames(key), ['a-core']);

  const res = await t.api('/api/v1/groups', { method: 'POST', key: adminKey, json: { name: 'site-1', parent_id: region } });
  assert.equal(res.status, 201);
  const site = ((await res.json()) as { id: number }).id;
  seedDevice(db, { name: 'a-site-sw', port: 22, credential_id: credential, template_id: template, group_id: site });
  assert.deepEqual(await deviceNames(key), ['a-core', 'a-site-sw'], 'the new subgroup is part of the scope at once');

  // Moved out from under the region: out of scope again on the next request.
  const other = seedGroup(db, 'region-b');
  const moved = await t.api(`/api/v1/groups/${site}`, { method: 'PUT', key: adminKey, json: { name: 'site-1', parent_id: other } });
  assert.equal(moved.status, 200, await moved.text());
  assert.deepEqual(await deviceNames(key), ['a-core']);
});

test('a role losing a permission: the key is refused that route on the next request', async () => {
  const key = await t.keyFor({ permissions: ['devices.view', 'groups.view'], username: 'rolecheck' });
  assert.equal((await t.api('/api/v1/groups', { key })).status, 200);
  rawState(
    t.services.db,
    'a change by another process (the CLI): the cache must notice it through the database',
    "DELETE FROM role_permissions WHERE role_id = (SELECT role_id FROM users WHERE username = 'rolecheck') AND permission = 'groups.view'",
  );
  const res = await t.api('/api/v1/groups', { key });
  assert.equal(res.status, 403);
  assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'PERMISSION_DENIED');
  assert.equal((await t.api('/api/v1/devices', { key })).status, 200, 'the permission it kept still works');
});

test('a key past its expiry is refused even though nothing in the database changed', async () => {
  const db = t.services.db;
  await t.keyFor({ permissions: ['devices.view'], username: 'expiring' });
  const { key, info } = createApiKey(db, SYSTEM_ACTOR, { username: 'expiring', expiresInDays: 1 });
  const now = Date.now();
  assert.ok(authenticateApiKey(db, key, now), 'valid now (and its principal cached)');
  assert.equal(authenticateApiKey(db, key, info.expires_at! - 1)?.username, 'expiring');
  assert.equal(authenticateApiKey(db, key, info.expires_at!), null, 'refused from the instant it expires');
});

test('last use is recorded at most once a minute, and recording it does not rebuild the principal', async () => {
  const db = t.services.db;
  await t.keyFor({ permissions: ['devices.view'], username: 'toucher' });
  const { key, info } = createApiKey(db, SYSTEM_ACTOR, { username: 'toucher' });
  const lastUsed = () => db.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').pluck().get(info.id) as number | null;
  const epoch = () => db.prepare('SELECT epoch FROM auth_epoch').pluck().get() as number;
  const before = epoch();
  const t0 = Date.now();
  const first = authenticateApiKey(db, key, t0);
  assert.equal(lastUsed(), t0);
  assert.equal(authenticateApiKey(db, key, t0 + 30_000), first, 'the same principal object: served from the cache');
  assert.equal(lastUsed(), t0, 'not written again within the minute');
  assert.equal(authenticateApiKey(db, key, t0 + 61_000), first);
  assert.equal(lastUsed(), t0 + 61_000);
  assert.equal(epoch(), before, 'last_used_at does not move the auth epoch');
});

test('revoking a key whose principal is cached: 401 on the next request', async () => {
  const key = await t.keyFor({ permissions: ['devices.view'], username: 'revokee' });
  assert.equal((await t.api('/api/v1/devices', { key })).status, 200);
  rawState(
    t.services.db,
    'a change by another process (the CLI): the cache must notice it through the database',
    "UPDATE api_keys SET revoked_at = ? WHERE user_id = (SELECT id FROM users WHERE username = 'revokee')",
    Date.now(),
  );
  assert.equal((await t.api('/api/v1/devices', { key })).status, 401);
});
