// Credential usage scope (group_ids): defaults, validation, subgroups, ungrouped devices, and changes that would strand devices.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createDevice } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi } from '../helpers/api-security';
import { rawState, seedBuiltinTemplate, seedGroup } from '../helpers/seed';

let t: TestAppliance;
let admin: string;
let scoped: string;
const g = { a: 0, a1: 0, b: 0 };
let tpl = 0;
let seq = 0;

const newDevice = (key: string, credential_id: number, group_id: number | null) =>
  callApi(t, key, 'POST', '/devices', { name: `u-dev-${++seq}`, hostname: '192.0.2.1', template_id: tpl, credential_id, group_id });

before(async () => {
  t = await startTestAppliance();
  g.a = seedGroup(t.services.db, 'u-a');
  g.a1 = seedGroup(t.services.db, 'u-a1', g.a);
  g.b = seedGroup(t.services.db, 'u-b');
  tpl = seedBuiltinTemplate(t.services.db, 'frr');
  const perms = ['devices.view', 'devices.create', 'devices.update', 'credentials.view', 'credentials.create', 'credentials.update'] as const;
  admin = await t.keyFor({ permissions: [...perms] });
  scoped = await t.keyFor({ permissions: [...perms], groups: [g.a] });
});
after(() => t.close());

describe('credential group_ids', () => {
  test('defaults: anywhere for scope "all", the caller’s own groups otherwise (subgroups by inheritance); existing credentials are unrestricted', async () => {
    const mine = await callApi(t, admin, 'POST', '/credentials', { name: 'u-admin', password: 'x' });
    assert.equal(mine.status, 201);
    assert.equal(mine.body.group_ids, null);
    const theirs = await callApi(t, scoped, 'POST', '/credentials', { name: 'u-scoped', password: 'x' });
    assert.equal(theirs.status, 201);
    // The user's own group, not a copy of its subtree: g.a1 is covered through g.a (test/api/api-edges.test.ts).
    assert.deepEqual(theirs.body.group_ids, [g.a]);
    const legacy = rawState(
      t.services.db,
      'a credential from before usage scopes: no usage rows at all',
      "INSERT INTO credentials (name, created_at, updated_at) VALUES ('u-legacy', 0, 0)",
    ).lastInsertRowid;
    assert.equal((await callApi(t, admin, 'GET', `/credentials/${legacy}`)).body.group_ids, null);
  });

  test('422 for an empty list or a group that does not exist; nothing stored', async () => {
    const empty = await callApi(t, admin, 'POST', '/credentials', { name: 'u-empty', group_ids: [] });
    assert.equal(empty.status, 422);
    const missing = await callApi(t, admin, 'POST', '/credentials', { name: 'u-missing', group_ids: [g.a, 999_999] });
    assert.equal(missing.status, 422);
    assert.match(JSON.stringify(missing.body.error), /group 999999 does not exist/);
    assert.equal(t.services.db.prepare("SELECT id FROM credentials WHERE name IN ('u-empty', 'u-missing')").get(), undefined);
  });

  test('a restricted credential serves its groups and their subgroups only; ungrouped devices need an unrestricted one', async () => {
    const onA = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: `u-on-a-${++seq}`, group_ids: [g.a] }).id;
    assert.equal((await newDevice(scoped, onA, g.a)).status, 201);
    assert.equal((await newDevice(scoped, onA, g.a1)).status, 201);
    const inB = await newDevice(admin, onA, g.b);
    assert.equal(inB.status, 422, 'not even scope "all" may put it outside its usage scope');
    assert.equal(inB.body.error!.code, 'VALIDATION_ERROR');
    assert.match(inB.body.error!.message, /outside its usage scope/);
    const ungrouped = await newDevice(admin, onA, null);
    assert.equal(ungrouped.status, 422);
    assert.match(ungrouped.body.error!.message, /ungrouped/);
    const anywhere = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: `u-any-${++seq}` }).id;
    assert.equal((await newDevice(admin, anywhere, null)).status, 201);
  });

  test('moving a device to a group its credential does not cover is refused', async () => {
    const onA = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: `u-mv-${++seq}`, group_ids: [g.a] }).id;
    const d = (await newDevice(admin, onA, g.a1)).body;
    const moved = await callApi(t, admin, 'PUT', `/devices/${d.id}`, { group_id: g.b });
    assert.equal(moved.status, 422);
    assert.equal((await callApi(t, admin, 'PUT', `/devices/${d.id}`, { group_id: g.a })).status, 200);
  });

  test('narrowing a usage scope that would strand a device is a 409 naming it; widening inside one’s scope works', async () => {
    const cred = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: `u-narrow-${++seq}`, group_ids: [g.a, g.b] }).id;
    const d = createDevice(t.services.db, SYSTEM_ACTOR, {
      name: `u-b-dev-${++seq}`,
      hostname: '192.0.2.2',
      protocol: 'ssh',
      group_id: g.b,
      credential_id: cred,
      template_id: tpl,
      enabled: true,
      description: '',
      schedule: null,
      accept_host_key_change: false,
    });
    const narrowed = await callApi(t, admin, 'PUT', `/credentials/${cred}`, { group_ids: [g.a] });
    assert.equal(narrowed.status, 409, JSON.stringify(narrowed.body));
    assert.match(narrowed.body.error!.message, new RegExp(d.name));
    assert.deepEqual(
      (await callApi(t, admin, 'GET', `/credentials/${cred}`)).body.group_ids,
      [g.a, g.b].sort((x, y) => x - y),
      'unchanged',
    );
    const own = createCredential(t.services.db, SYSTEM_ACTOR, t.services.secrets, { name: `u-own-${++seq}`, group_ids: [g.a1] }).id;
    const widened = await callApi(t, scoped, 'PUT', `/credentials/${own}`, { group_ids: [g.a] });
    assert.equal(widened.status, 200);
    assert.deepEqual(widened.body.group_ids, [g.a]);
    assert.equal((await callApi(t, admin, 'PUT', `/credentials/${own}`, { group_ids: null })).body.group_ids, null, 'scope "all" may make it usable anywhere');
  });
});
