// Issue #9 repro 3: a user not entitled to a credential cannot make the appliance send its secret to a host they chose.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BackupRunner } from '../../src/engine/runner';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createDevice } from '../../src/features/devices/devices.service';
import { getDeviceRow } from '../../src/features/devices/devices.store';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi, type Json } from '../helpers/api-security';
import { startPasswordTrap, type PasswordTrap } from '../helpers/password-trap';
import { seedBuiltinTemplate, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from '../web/web-client';

const SECRET_CORE = 'core-Secret-9f2k';
const SECRET_G2 = 'g2-Secret-77qz';

let t: TestAppliance;
let trap: PasswordTrap;
let attacker: string;
let attackerNoView: string;
let web: WebClient;
const id = { g1: 0, g2: 0, core: 0, g2only: 0, g1own: 0, tpl: 0, coreDevice: 0, ownDevice: 0, smuggled: 0 };
let seq = 0;

const call = (key: string, method: string, path: string, json?: unknown) => callApi(t, key, method, path, json);

function denied(r: { status: number; body: Json }, what: string, reason?: RegExp) {
  assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.error?.code, 'PERMISSION_DENIED', what);
  if (reason) assert.match(r.body.error!.message, reason, what);
}

const fastRunner = () => new BackupRunner({ ...t.services, config: { ...t.services.config, backup: { ...t.services.config.backup, retries: 0 } } });

const trapDevice = (extra: Record<string, unknown>) => ({ name: `evil-${++seq}`, hostname: '127.0.0.1', port: trap.port, template_id: id.tpl, schedule: '* * * * *', ...extra });

async function waitJob(w: WebClient, jobId: string): Promise<Json> {
  for (let i = 0; i < 200; i++) {
    const r = (await (await w.fetch(`/api/backup-jobs/${jobId}`)).json()) as Json;
    if (r.state !== 'running') return r;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('backup job did not finish');
}

before(async () => {
  t = await startTestAppliance();
  // "Back up now" uses the process's runner: one without retries keeps a refused connection quick.
  t.services.runner = fastRunner();
  trap = await startPasswordTrap();
  const { db, secrets } = t.services;
  id.g1 = seedGroup(db, 'g1');
  id.g2 = seedGroup(db, 'g2');
  id.tpl = seedBuiltinTemplate(db, 'cisco-ios');
  id.core = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'core', username: 'netops', password: SECRET_CORE, group_ids: null }).id;
  id.g2only = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'g2-only', username: 'netops', password: SECRET_G2, group_ids: [id.g2] }).id;
  id.g1own = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'g1-own', username: 'g1', password: 'g1-password', group_ids: [id.g1] }).id;
  // The administrator's device in the attacker's group, on a closed port (a backup of it sends nothing anywhere).
  id.coreDevice = createDevice(db, SYSTEM_ACTOR, {
    name: 'core-g1', hostname: '127.0.0.1', port: 1, protocol: 'ssh', group_id: id.g1, credential_id: id.core, template_id: id.tpl,
    enabled: true, description: '', schedule: null, accept_host_key_change: false,
  }).id;
  const perms = ['devices.view', 'devices.create', 'devices.update', 'backups.run', 'credentials.update', 'credentials.create'] as const;
  attacker = await t.keyFor({ permissions: [...perms, 'credentials.view'], groups: [id.g1], username: 'mallory' });
  attackerNoView = await t.keyFor({ permissions: [...perms], groups: [id.g1], username: 'mallory2' });
  web = new WebClient(t.url);
  assert.equal((await web.login('mallory', 'test-password-123')).status, 303);
});
after(async () => {
  await trap.close();
  await t.close();
});

describe('a credential is only sent where someone entitled to it put it', () => {
  test('API: creating a device with a credential beyond the caller’s scope is refused, whatever its group', async () => {
    for (const group_id of [id.g2, id.g1, null]) {
      denied(await call(attacker, 'POST', '/devices', trapDevice({ group_id, credential_id: id.core })), `unrestricted credential, group ${group_id}`, /credential/);
      denied(await call(attacker, 'POST', '/devices', trapDevice({ group_id, credential_id: id.g2only })), `g2-only credential, group ${group_id}`, /credential/);
    }
    denied(await call(attackerNoView, 'POST', '/devices', trapDevice({ group_id: id.g1, credential_id: id.g1own })), 'no credentials.view', /credentials\.view/);
    // What the attacker is entitled to still works: its own group's credential on a device in its group.
    const own = await call(attacker, 'POST', '/devices', { name: 'own-g1', hostname: '127.0.0.1', port: 1, template_id: id.tpl, group_id: id.g1, credential_id: id.g1own });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    id.ownDevice = own.body.id;
    // ... but not in a group the credential does not cover.
    denied(await call(attacker, 'POST', '/devices', trapDevice({ group_id: id.g2, credential_id: id.g1own })), 'outside the usage scope', /usage scope/);
    assert.equal((t.services.db.prepare('SELECT count(*) AS n FROM devices WHERE port = ?').get(trap.port) as { n: number }).n, 0);
  });

  test('API: re-pointing a device that carries someone else’s credential, or swapping one in, is refused', async () => {
    const before = getDeviceRow(t.services.db, id.coreDevice);
    for (const patch of [{ hostname: 'attacker.example.net' }, { port: trap.port }, { protocol: 'telnet' }, { hostname: '127.0.0.1', port: trap.port }]) {
      denied(await call(attacker, 'PUT', `/devices/${id.coreDevice}`, patch), `PUT ${JSON.stringify(patch)}`, /address/);
    }
    for (const credential_id of [id.core, id.g2only]) {
      denied(await call(attacker, 'PUT', `/devices/${id.ownDevice}`, { credential_id, port: trap.port }), `swap in ${credential_id}`, /credential/);
      denied(await call(attacker, 'PUT', `/devices/${id.ownDevice}`, { credential_id }), `swap in ${credential_id} alone`, /credential/);
    }
    assert.deepEqual(getDeviceRow(t.services.db, id.coreDevice), before);
    assert.equal(getDeviceRow(t.services.db, id.ownDevice)?.credential_id, id.g1own);
    // Nor can the credential be re-scoped into the attacker's reach, or made usable anywhere.
    denied(await call(attacker, 'PUT', `/credentials/${id.g2only}`, { group_ids: [id.g1] }), 're-scope g2-only', /beyond your device-group scope/);
    denied(await call(attacker, 'PUT', `/credentials/${id.core}`, { group_ids: [id.g1] }), 're-scope core', /beyond your device-group scope/);
    denied(await call(attacker, 'POST', '/credentials', { name: 'anywhere', password: 'x', group_ids: null }), 'unrestricted create', /scope "all"/);
    denied(await call(attacker, 'PUT', `/credentials/${id.g1own}`, { group_ids: [id.g1, id.g2] }), 'widen to g2', /outside your device-group scope/);
  });

  test('web form: the same refusals, nothing created or changed', async () => {
    const form = (extra: Record<string, string>) => ({
      name: `web-evil-${++seq}`, hostname: '127.0.0.1', port: String(trap.port), protocol: 'ssh', template_id: String(id.tpl),
      schedule: '* * * * *', description: '', enabled: 'on', ...extra,
    });
    for (const credential_id of [id.core, id.g2only]) {
      const fields = form({ group_id: String(id.g1), credential_id: String(credential_id) });
      const r = await web.post('/devices', fields, { csrf: true });
      assert.notEqual(r.res.status, 303, 'no device created');
      assert.match(r.html, /credential/i);
      assert.equal(t.services.db.prepare('SELECT id FROM devices WHERE name = ?').get(fields.name), undefined);
    }
    const before = getDeviceRow(t.services.db, id.coreDevice);
    const edit = await web.post(`/devices/${id.coreDevice}/edit`, form({ name: 'core-g1', group_id: String(id.g1), credential_id: String(id.core) }), { csrf: true });
    assert.notEqual(edit.res.status, 303);
    assert.deepEqual(getDeviceRow(t.services.db, id.coreDevice), before);
  });

  test('backup time: a device whose credential does not cover its group fails as data and connects nowhere', async () => {
    const { db } = t.services;
    // Written past the services, as an older version or a group move could have left it.
    id.smuggled = seedDevice(db, { name: 'smuggled', hostname: '127.0.0.1', port: trap.port, credential_id: id.g2only, template_id: id.tpl, group_id: id.g1 });
    const runner = fastRunner();
    const [r] = await runner.run([id.smuggled], { trigger: 'schedule' });
    assert.equal(r.failure, 'CREDENTIAL_NOT_PERMITTED');
    assert.equal(r.success, false);
    assert.ok(r.backupId, 'recorded as a failed backup');
    assert.equal((db.prepare('SELECT failure_type FROM backups WHERE id = ?').get(r.backupId) as { failure_type: string }).failure_type, 'CREDENTIAL_NOT_PERMITTED');
    assert.doesNotMatch(r.message ?? '', new RegExp(SECRET_G2));

    // "Back up now" through the internal route and the device page, by the attacker who can see the device.
    const res = await web.fetch(`/api/devices/${id.smuggled}/backups`, { method: 'POST', headers: { 'X-CSRF-Token': await web.csrf() } });
    assert.equal(res.status, 202);
    const job = await waitJob(web, ((await res.json()) as Json).id);
    assert.equal(job.failure, 'CREDENTIAL_NOT_PERMITTED');
    const page = await web.post(`/devices/${id.smuggled}/backup`, {}, { csrf: true });
    assert.equal(page.res.status, 303);
    const jobId = /job=([0-9a-f-]+)/.exec(page.res.headers.get('location') ?? '')?.[1];
    assert.ok(jobId);
    assert.equal((await waitJob(web, jobId)).failure, 'CREDENTIAL_NOT_PERMITTED');
    // The administrator's device the attacker failed to re-point: backed up where the administrator put it.
    const core = await web.fetch(`/api/devices/${id.coreDevice}/backups`, { method: 'POST', headers: { 'X-CSRF-Token': await web.csrf() } });
    assert.equal((await waitJob(web, ((await core.json()) as Json).id)).failure, 'CONNECTION_REFUSED');
  });

  test('the trap never saw a connection, let alone a password', async () => {
    const all = t.services.db.prepare('SELECT id FROM devices ORDER BY id').all() as { id: number }[];
    await fastRunner().run(all.map((d) => d.id), { trigger: 'schedule' });
    assert.deepEqual(trap.passwords, []);
    assert.deepEqual(trap.attempts, []);
    assert.equal(trap.connections, 0);
  });
});
