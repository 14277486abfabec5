// A credential usable by no group (created so, or whose groups were deleted) is not free for any scoped user to claim and send out.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BackupRunner } from '../../src/engine/runner';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { deleteGroup } from '../../src/features/groups/groups.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi } from '../helpers/api-security';
import { startPasswordTrap, type PasswordTrap } from '../helpers/password-trap';
import { seedBuiltinTemplate, seedGroup } from '../helpers/seed';

const SECRET_SPARE = 'spare-Secret-4hq8';
const SECRET_ORPHAN = 'orphan-Secret-0pz3';

describe('credential usable nowhere: claims by a scoped user', () => {
  let t: TestAppliance;
  let trap: PasswordTrap;
  let mallory: string;
  let admin: string;
  const id = { g1: 0, gone: 0, tpl: 0, spare: 0, orphan: 0 };

  before(async () => {
    t = await startTestAppliance();
    trap = await startPasswordTrap();
    const { db, secrets } = t.services;
    id.g1 = seedGroup(db, 'g1');
    id.gone = seedGroup(db, 'lab-decommissioned');
    id.tpl = seedBuiltinTemplate(db, 'cisco-ios');
    // Kept for later, on purpose usable by no device yet.
    id.spare = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'spare-core', username: 'netops', password: SECRET_SPARE, group_ids: [] }).id;
    // Restricted to a group that was then deleted: "usable nowhere, never everywhere".
    id.orphan = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'old-lab', username: 'netops', password: SECRET_ORPHAN, group_ids: [id.gone] }).id;
    deleteGroup(db, SYSTEM_ACTOR, id.gone);
    mallory = await t.keyFor({
      permissions: ['credentials.view', 'credentials.update', 'devices.view', 'devices.create', 'devices.update', 'backups.run'],
      groups: [id.g1],
      username: 'mallory',
    });
    admin = await t.keyFor({ permissions: 'all', username: 'boss' });
  });
  after(async () => {
    await trap.close();
    await t.close();
  });

  test('a scoped user cannot widen the usage of a credential usable nowhere to their own groups', async () => {
    for (const cred of [id.spare, id.orphan]) {
      const r = await callApi(t, mallory, 'PUT', `/credentials/${cred}`, { group_ids: [id.g1] });
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, 'PERMISSION_DENIED');
      assert.deepEqual((await callApi(t, admin, 'GET', `/credentials/${cred}`)).body.group_ids, []);
    }
  });

  test('so no device of theirs can carry it to a host they chose, and the trap sees no password', async () => {
    for (const cred of [id.spare, id.orphan]) {
      const r = await callApi(t, mallory, 'POST', '/devices', {
        name: `evil-${cred}`,
        hostname: '127.0.0.1',
        port: trap.port,
        template_id: id.tpl,
        group_id: id.g1,
        credential_id: cred,
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
    }
    const devices = t.services.db.prepare('SELECT id FROM devices').pluck().all() as number[];
    const runner = new BackupRunner({ ...t.services, config: { ...t.services.config, backup: { ...t.services.config.backup, retries: 0 } } });
    await runner.run(devices, { trigger: 'manual' });
    assert.deepEqual(trap.passwords, []);
    assert.equal(trap.connections, 0);
  });

  test('a user whose scope is all may still give it groups', async () => {
    const r = await callApi(t, admin, 'PUT', `/credentials/${id.spare}`, { group_ids: [id.g1] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.group_ids, [id.g1]);
  });
});
