// A user not entitled to a credential may create or re-point a device (spec 4.6), but its secret is held until an entitled user approves.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JobExecutor } from '../../src/engine/jobs';
import { BackupRunner } from '../../src/engine/runner';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createDevice } from '../../src/features/devices/devices.service';
import { getDeviceRow } from '../../src/features/devices/devices.store';
import { putHostKeyOffer } from '../../src/features/devices/host-keys.store';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi, type Json } from '../helpers/api-security';
import { startPasswordTrap, type PasswordTrap } from '../helpers/password-trap';
import { rawState, seedBuiltinTemplate, seedGroup } from '../helpers/seed';
import { WebClient } from '../web/web-client';

const SECRET_CORE = 'core-Secret-9f2k';
const SECRET_G2 = 'g2-Secret-77qz';
const HELD = /^held: address or credential changed by (mallory2?), not yet approved by a user entitled to credential (core|g2-only|g1-own)/;

let t: TestAppliance;
let trap: PasswordTrap;
let attacker: string;
let attackerNoView: string;
let web: WebClient;
let admin: WebClient;
const id = { g1: 0, g2: 0, core: 0, g2only: 0, g1own: 0, tpl: 0, coreDevice: 0, ownDevice: 0, smuggled: 0, evil: 0, evilNoView: 0, webEvil: 0 };
let seq = 0;

const call = (key: string, method: string, path: string, json?: unknown) => callApi(t, key, method, path, json);
const isHeld = (deviceId: number) =>
  t.services.db.prepare('SELECT held_by FROM device_credential_holds WHERE device_id = ?').get(deviceId) as { held_by: string } | undefined;
const fastRunner = () => new BackupRunner({ ...t.services, config: { ...t.services.config, backup: { ...t.services.config.backup, retries: 0 } } });
const trapDevice = (extra: Record<string, unknown>) => ({
  name: `evil-${++seq}`,
  hostname: '127.0.0.1',
  port: trap.port,
  template_id: id.tpl,
  schedule: '* * * * *',
  ...extra,
});
const lastAudit = (target: string) =>
  t.services.db.prepare('SELECT action, changes, details FROM audit_log WHERE target = ? ORDER BY id DESC LIMIT 1').get(target) as {
    action: string;
    changes: string;
    details: string;
  };

function created(r: { status: number; body: Json }, what: string): number {
  assert.equal(r.status, 201, `${what}: ${JSON.stringify(r.body)}`);
  return r.body.id;
}

async function waitJob(w: WebClient, jobId: string): Promise<Json> {
  for (let i = 0; i < 200; i++) {
    const r = (await (await w.fetch(`/api/backup-jobs/${jobId}`)).json()) as Json;
    if (r.state !== 'running') return r;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('backup job did not finish');
}

/** The approve form of the device page, as the browser would post it (the address the page shows). */
async function approveForm(w: WebClient, deviceId: number): Promise<Record<string, string> | null> {
  const page = await w.get(`/devices/${deviceId}`);
  assert.equal(page.res.status, 200);
  const form = /<form[^>]*action="\/devices\/\d+\/hold\/approve"[^>]*>([\s\S]*?)<\/form>/.exec(page.html)?.[1];
  if (!form) return null;
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)"/g)) if (m[1] !== '_csrf') fields[m[1]] = m[2];
  return fields;
}

before(async () => {
  t = await startTestAppliance();
  // "Back up now" uses the process's runner: one without retries keeps a refused connection quick.
  t.services.jobs = new JobExecutor(t.services.db, fastRunner());
  trap = await startPasswordTrap();
  const { db, secrets } = t.services;
  id.g1 = seedGroup(db, 'g1');
  id.g2 = seedGroup(db, 'g2');
  id.tpl = seedBuiltinTemplate(db, 'cisco-ios');
  id.core = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'core', username: 'netops', password: SECRET_CORE, group_ids: null }).id;
  id.g2only = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'g2-only', username: 'netops', password: SECRET_G2, group_ids: [id.g2] }).id;
  id.g1own = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'g1-own', username: 'g1', password: 'g1-password', group_ids: [id.g1] }).id;
  // The administrator's device in the attackers' group, on a closed port (a backup of it sends nothing anywhere).
  id.coreDevice = createDevice(db, SYSTEM_ACTOR, {
    name: 'core-g1',
    hostname: '127.0.0.1',
    port: 1,
    protocol: 'ssh',
    group_id: id.g1,
    credential_id: id.core,
    template_id: id.tpl,
    enabled: true,
    description: '',
    schedule: null,
    accept_host_key_change: false,
  }).id;
  const perms = ['devices.view', 'devices.create', 'devices.update', 'backups.run', 'credentials.update', 'credentials.create'] as const;
  attacker = await t.keyFor({ permissions: [...perms, 'credentials.view'], groups: [id.g1], username: 'mallory' });
  attackerNoView = await t.keyFor({ permissions: [...perms], groups: [id.g1], username: 'mallory2' });
  web = new WebClient(t.url);
  assert.equal((await web.login('mallory', 'test-password-123')).status, 303);
  admin = new WebClient(t.url);
  assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
});
after(async () => {
  await trap.close();
  await t.close();
});

describe('a credential is only sent where someone entitled to it put it', () => {
  test('API: creating a device with a credential the caller is not entitled to gives 201 and a held device', async () => {
    id.evil = created(await call(attacker, 'POST', '/devices', trapDevice({ group_id: id.g1, credential_id: id.core })), 'unrestricted credential');
    assert.equal(isHeld(id.evil)?.held_by, 'mallory');
    id.evilNoView = created(await call(attackerNoView, 'POST', '/devices', trapDevice({ group_id: id.g1, credential_id: id.g1own })), 'no credentials.view');
    assert.equal(isHeld(id.evilNoView)?.held_by, 'mallory2');
    const g2 = created(await call(attacker, 'POST', '/devices', trapDevice({ group_id: id.g2, credential_id: id.g2only })), 'g2-only credential in g2');
    assert.ok(isHeld(g2));
    const audit = lastAudit(`device ${id.evil}`);
    assert.equal(audit.action, 'device.create');
    assert.match(JSON.parse(audit.details).hold, /^placed: .*mallory/);
    assert.deepEqual(JSON.parse(audit.changes).held, { before: false, after: true });
    // What the attacker is entitled to is not held: its own group's credential on a device in its group.
    id.ownDevice = created(
      await call(attacker, 'POST', '/devices', {
        name: 'own-g1',
        hostname: '127.0.0.1',
        port: 1,
        template_id: id.tpl,
        group_id: id.g1,
        credential_id: id.g1own,
      }),
      'own',
    );
    assert.equal(isHeld(id.ownDevice), undefined);
    // A credential whose usage scope does not cover the group is a data error for everyone: 422 on credential_id.
    for (const [key, group_id, credential_id] of [
      [attacker, id.g1, id.g2only],
      [attacker, null, id.g1own],
      [attackerNoView, id.g2, id.g1own],
    ] as const) {
      const r = await call(key, 'POST', '/devices', trapDevice({ group_id, credential_id }));
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.error?.code, 'VALIDATION_ERROR');
      assert.equal(r.body.error?.details.errors?.[0].field, 'credential_id');
      assert.match(r.body.error.message, /usage scope|ungrouped/);
    }
  });

  test('API: re-pointing a device that carries someone else’s credential, or swapping one in, gives 200 and holds it', async () => {
    const r = await call(attackerNoView, 'PUT', `/devices/${id.coreDevice}`, { port: trap.port });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.port, trap.port);
    assert.equal(isHeld(id.coreDevice)?.held_by, 'mallory2');
    const audit = lastAudit(`device ${id.coreDevice}`);
    assert.match(JSON.parse(audit.details).hold, /^placed: .*credentials\.view/);
    // A description change moves nothing: no hold on a device the attacker is entitled to.
    assert.equal((await call(attacker, 'PUT', `/devices/${id.ownDevice}`, { description: 'x' })).status, 200);
    assert.equal(isHeld(id.ownDevice), undefined);
    const swapped = await call(attacker, 'PUT', `/devices/${id.ownDevice}`, { credential_id: id.core, port: trap.port });
    assert.equal(swapped.status, 200, JSON.stringify(swapped.body));
    assert.equal(isHeld(id.ownDevice)?.held_by, 'mallory');
    // Nor can the credential be re-scoped into the attacker's reach, or made usable anywhere.
    for (const [method, path, json, reason] of [
      ['PUT', `/credentials/${id.g2only}`, { group_ids: [id.g1] }, /beyond your device-group scope/],
      ['PUT', `/credentials/${id.core}`, { group_ids: [id.g1] }, /beyond your device-group scope/],
      ['POST', '/credentials', { name: 'anywhere', password: 'x', group_ids: null }, /scope "all"/],
      ['PUT', `/credentials/${id.g1own}`, { group_ids: [id.g1, id.g2] }, /outside your device-group scope/],
    ] as const) {
      const d = await call(attacker, method, path, json);
      assert.equal(d.status, 403, JSON.stringify(d.body));
      assert.match(d.body.error!.message, reason);
    }
  });

  test('web form: the same holds, and the page says so', async () => {
    const fields = {
      name: `web-evil-${++seq}`,
      hostname: '127.0.0.1',
      port: String(trap.port),
      protocol: 'ssh',
      template_id: String(id.tpl),
      schedule: '* * * * *',
      description: '',
      enabled: 'on',
      group_id: String(id.g1),
      credential_id: String(id.core),
    };
    const r = await web.post('/devices', fields, { csrf: true });
    assert.equal(r.res.status, 303, r.html);
    id.webEvil = (t.services.db.prepare('SELECT id FROM devices WHERE name = ?').get(fields.name) as { id: number }).id;
    assert.equal(isHeld(id.webEvil)?.held_by, 'mallory');
    const page = await web.get(`/devices/${id.webEvil}`);
    assert.match(page.html, /held until a user entitled to credential core/);
    assert.match(page.html, /Backups held/);
    assert.equal(await approveForm(web, id.webEvil), null, 'the attacker gets no Approve button');
    assert.match((await web.get('/devices')).html, /badge failed"[^>]*>held</);
  });

  test('backup time: held devices fail as CREDENTIAL_NOT_PERMITTED, by the runner, "Back up now" and the CLI', { timeout: 120_000 }, async () => {
    const { db } = t.services;
    // Written past the services, as an older version or a group move could have left it: refused as before.
    const now = Date.now();
    id.smuggled = Number(
      rawState(
        db,
        'a device whose credential does not cover its group: every service refuses it',
        `INSERT INTO devices (name, hostname, port, protocol, group_id, credential_id, template_id, enabled, created_at, updated_at)
         VALUES ('smuggled', '127.0.0.1', ?, 'ssh', ?, ?, ?, 1, ?, ?)`,
        trap.port,
        id.g1,
        id.g2only,
        id.tpl,
        now,
        now,
      ).lastInsertRowid,
    );
    const held = [id.evil, id.evilNoView, id.ownDevice, id.coreDevice, id.webEvil];
    const results = await fastRunner().run([id.smuggled, ...held], { trigger: 'schedule' });
    for (const r of results) {
      assert.equal(r.failure, 'CREDENTIAL_NOT_PERMITTED', `${r.deviceName}: ${r.message}`);
      assert.ok(r.backupId, 'recorded as a failed backup');
      const row = db.prepare('SELECT failure_type, error_message FROM backups WHERE id = ?').get(r.backupId) as { failure_type: string; error_message: string };
      assert.equal(row.failure_type, 'CREDENTIAL_NOT_PERMITTED');
      if (r.deviceId !== id.smuggled) assert.match(row.error_message, HELD);
      assert.doesNotMatch(r.message ?? '', new RegExp(`${SECRET_G2}|${SECRET_CORE}`));
    }
    assert.match(results.find((r) => r.deviceId === id.coreDevice)!.message!, /changed by mallory2, not yet approved by a user entitled to credential core/);

    // "Back up now" through the internal route and the device page, by the attacker who can see the devices.
    for (const deviceId of [id.evil, id.coreDevice]) {
      const res = await web.fetch(`/api/devices/${deviceId}/backups`, { method: 'POST', headers: { 'X-CSRF-Token': await web.csrf() } });
      assert.equal(res.status, 202);
      const job = await waitJob(web, ((await res.json()) as Json).id);
      assert.equal(job.failure, 'CREDENTIAL_NOT_PERMITTED');
      assert.match(job.message, HELD);
    }
    const page = await web.post(`/devices/${id.evil}/backup`, {}, { csrf: true });
    assert.equal(page.res.status, 303);
    const jobId = /job=([0-9a-f-]+)/.exec(page.res.headers.get('location') ?? '')?.[1];
    assert.ok(jobId);
    assert.equal((await waitJob(web, jobId)).failure, 'CREDENTIAL_NOT_PERMITTED');

    // "Try on device" of the template editor goes through the same job loading: refused before connecting.
    const tried = await admin.post(`/templates/${id.tpl}/try`, { device_id: String(id.evil) }, { csrf: true });
    assert.match(tried.html, /CREDENTIAL_NOT_PERMITTED/);
    assert.match(tried.html, /held: address or credential changed by mallory/);

    // The CLI's `backup run`, a separate process on the same data directory.
    const cli = await runCliAsync(['backup', 'run', '--group', String(id.g1), '--data-dir', t.services.dataDir]);
    assert.equal(cli.status, 1, cli.stderr);
    for (const deviceId of [id.evil, id.coreDevice]) {
      const line = cli.stdout.split('\n').find((l) => l.startsWith(`${deviceId}\t`));
      assert.ok(line, cli.stdout);
      assert.equal(line.split('\t')[5], 'CREDENTIAL_NOT_PERMITTED', line);
      assert.match(line.split('\t')[6], HELD);
    }
  });

  test('until approved, the trap never saw a connection, let alone a password', async () => {
    const all = t.services.db.prepare('SELECT id FROM devices ORDER BY id').all() as { id: number }[];
    await fastRunner().run(
      all.map((d) => d.id),
      { trigger: 'schedule' },
    );
    assert.deepEqual(trap.passwords, []);
    assert.deepEqual(trap.attempts, []);
    assert.equal(trap.connections, 0);
  });

  test('approval: only an entitled user, only the address shown; then the next backup does reach the host (the hold was the gate)', async () => {
    // The attacker cannot approve its own change, even by posting the form.
    const shown = await approveForm(admin, id.evil);
    assert.ok(shown, 'the administrator gets an Approve button');
    assert.deepEqual(shown, { hostname: '127.0.0.1', port: String(trap.port), protocol: 'ssh', credential_id: String(id.core) });
    const self = await web.post(`/devices/${id.evil}/hold/approve`, shown, { csrf: true });
    assert.equal(self.res.status, 303);
    assert.ok(isHeld(id.evil), 'still held after the attacker’s own approval');
    // A stale approval (the device changed since the page was shown) is refused.
    const stale = await admin.post(`/devices/${id.evil}/hold/approve`, { ...shown, port: '2222' }, { csrf: true });
    assert.equal(stale.res.status, 303);
    assert.ok(isHeld(id.evil), 'still held after a stale approval');
    assert.equal(trap.connections, 0);

    const ok = await admin.post(`/devices/${id.evil}/hold/approve`, shown, { csrf: true });
    assert.equal(ok.res.status, 303);
    assert.equal(isHeld(id.evil), undefined);
    const audit = lastAudit(`device ${id.evil}`);
    assert.equal(audit.action, 'device.hold_approve');
    assert.equal(JSON.parse(audit.details).held_by, 'mallory');
    const [r] = await fastRunner().run([id.evil], { trigger: 'schedule' });
    assert.notEqual(r.failure, 'CREDENTIAL_NOT_PERMITTED', r.message ?? '');
    assert.ok(trap.passwords.includes(SECRET_CORE), 'the approved address got the secret');
    assert.ok(getDeviceRow(t.services.db, id.evil)?.host_key, 'trust on first use of the approved address');
  });

  test('the same for an address change: held until approved, then backed up at the new address', async () => {
    const before = trap.connections;
    const [held] = await fastRunner().run([id.coreDevice], { trigger: 'schedule' });
    assert.equal(held.failure, 'CREDENTIAL_NOT_PERMITTED');
    assert.equal(trap.connections, before);
    const shown = await approveForm(admin, id.coreDevice);
    assert.ok(shown);
    assert.equal((await admin.post(`/devices/${id.coreDevice}/hold/approve`, shown, { csrf: true })).res.status, 303);
    assert.equal(isHeld(id.coreDevice), undefined);
    const [r] = await fastRunner().run([id.coreDevice], { trigger: 'schedule' });
    assert.notEqual(r.failure, 'CREDENTIAL_NOT_PERMITTED', r.message ?? '');
    assert.ok(trap.connections > before, 'the approved address was contacted');
  });

  test('an entitled user’s own address change is the approval; a description change is not; a host key accepted by a user not entitled holds', async () => {
    const adminKey = await t.keyFor({ permissions: 'all' });
    assert.ok(isHeld(id.webEvil));
    assert.equal((await call(adminKey, 'PUT', `/devices/${id.webEvil}`, { description: 'looked at it' })).status, 200);
    assert.ok(isHeld(id.webEvil), 'a description change approves nothing');
    assert.equal((await call(adminKey, 'PUT', `/devices/${id.webEvil}`, { port: 1 })).status, 200);
    assert.equal(isHeld(id.webEvil), undefined, 'the administrator chose the address');
    assert.match(JSON.parse(lastAudit(`device ${id.webEvil}`).details).hold, /^cleared/);

    // The device offers another host key; a user not entitled to its credential accepts it: accepted, and held.
    putHostKeyOffer(t.services.db, id.coreDevice, 'SHA256:someOtherKey', null, Date.now());
    const r = await call(attackerNoView, 'PUT', `/devices/${id.coreDevice}`, { accept_host_key_change: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.accept_host_key_change, true);
    const hold = t.services.db.prepare('SELECT changed FROM device_credential_holds WHERE device_id = ?').get(id.coreDevice) as { changed: string };
    assert.deepEqual(JSON.parse(hold.changed), ['host_key']);
    const [b] = await fastRunner().run([id.coreDevice], { trigger: 'schedule' });
    assert.equal(b.failure, 'CREDENTIAL_NOT_PERMITTED');
  });
});
