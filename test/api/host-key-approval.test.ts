// Accepting a changed SSH host key approves exactly the one fingerprint shown, once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { BackupRunner } from '../../src/engine/runner';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createDevice } from '../../src/features/devices/devices.service';
import { getDeviceRow } from '../../src/features/devices/devices.store';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { callApi } from '../helpers/api-security';
import { seedBuiltinTemplate } from '../helpers/seed';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { WebClient } from '../web/web-client';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

let t: TestAppliance;
let sim: RunningSimulator;
let port: number;
let admin: string;
let web: WebClient;
let deviceId: number;

/** The device is replaced (or a man in the middle appears): same address, a new host key. */
async function rekey(): Promise<string> {
  await sim.close();
  sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'r1', password: 'pw-r1-123' }], port });
  return sim.hostKeyFingerprint;
}

const backup = () =>
  new BackupRunner({ ...t.services, config: { ...t.services.config, backup: { ...t.services.config.backup, retries: 0 } } }).backupDevice(deviceId, {
    trigger: 'manual',
  });
const row = () => getDeviceRow(t.services.db, deviceId)!;

before(async () => {
  t = await startTestAppliance();
  sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'r1', password: 'pw-r1-123' }] });
  port = sim.port;
  const { db, secrets } = t.services;
  const credential = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'r1', username: 'r1', password: 'pw-r1-123' }).id;
  deviceId = createDevice(db, SYSTEM_ACTOR, {
    name: 'r1',
    hostname: '127.0.0.1',
    port,
    protocol: 'ssh',
    group_id: null,
    credential_id: credential,
    template_id: seedBuiltinTemplate(db, 'frr'),
    enabled: true,
    description: '',
    schedule: null,
    accept_host_key_change: false,
  }).id;
  admin = await t.keyFor({ permissions: 'all', username: 'hk-admin' });
  web = new WebClient(t.url);
  assert.equal((await web.login('hk-admin', 'test-password-123')).status, 303);
});
after(async () => {
  await sim.close();
  await t.close();
});

describe('host key approval', () => {
  test('an approval given while nothing changed is refused, so it cannot linger until a man in the middle shows up', async () => {
    const first = await backup();
    assert.equal(first.success, true, first.message ?? '');
    assert.equal(row().host_key, sim.hostKeyFingerprint);
    const r = await callApi(t, admin, 'PUT', `/devices/${deviceId}`, { accept_host_key_change: true });
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.equal(r.body.error?.code, 'CONFLICT');
    const same = await backup();
    assert.equal(same.success, true);
    const mitm = await rekey();
    const refused = await backup();
    assert.equal(refused.failure, 'HOST_KEY_CHANGED');
    assert.notEqual(row().host_key, mitm, 'the new key was not recorded');
  });

  test('the device page shows the offered fingerprint; accepting it lets exactly that key through, once', async () => {
    const offered = sim.hostKeyFingerprint; // offered by the failed backup of the previous test
    const recorded = row().host_key;
    for (const path of [`/devices/${deviceId}`, `/devices/${deviceId}/edit`]) {
      const page = await web.get(path);
      assert.equal(page.res.status, 200);
      assert.ok(page.html.includes(offered), `${path} shows the offered fingerprint`);
      assert.match(page.html, /Accept this key/);
    }

    const api = await callApi(t, admin, 'GET', `/devices/${deviceId}`);
    assert.deepEqual([api.body.host_key, api.body.accept_host_key_change], [recorded, false]);
    const accepted = await callApi(t, admin, 'PUT', `/devices/${deviceId}`, { accept_host_key_change: true });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal(accepted.body.accept_host_key_change, true);

    const ok = await backup();
    assert.equal(ok.success, true, ok.message ?? '');
    assert.deepEqual([row().host_key, row().accept_host_key_change], [offered, 0]);

    // The approval was used up: the next different key is refused again.
    await rekey();
    const again = await backup();
    assert.equal(again.failure, 'HOST_KEY_CHANGED');
    assert.equal(row().host_key, offered);
  });

  test('an approved key that is replaced by another before the backup is not accepted; a stale web approval is refused', async () => {
    const shown = sim.hostKeyFingerprint;
    const stale = await web.post(`/devices/${deviceId}/host-key/accept`, { fingerprint: 'SHA256:notTheKeyTheDeviceOffered' }, { csrf: true });
    assert.equal(stale.res.status, 303);
    assert.equal(row().accept_host_key_change, 0, 'a fingerprint other than the offered one approves nothing');
    const ok = await web.post(`/devices/${deviceId}/host-key/accept`, { fingerprint: shown }, { csrf: true });
    assert.equal(ok.res.status, 303);
    assert.equal(row().accept_host_key_change, 1);
    const audit = t.services.db
      .prepare("SELECT door, changes, details FROM audit_log WHERE action = 'device.host_key_accept' ORDER BY id DESC LIMIT 1")
      .get() as {
      door: string;
      details: string;
    };
    assert.equal(audit.door, 'web');
    assert.equal(JSON.parse(audit.details).accepted, shown);

    const before = row().host_key;
    const third = await rekey();
    const refused = await backup();
    assert.equal(refused.failure, 'HOST_KEY_CHANGED', 'approved one key, got another');
    assert.equal(row().host_key, before);
    assert.equal(row().accept_host_key_change, 0, 'the approval named a key that is no longer offered');
    const page = await web.get(`/devices/${deviceId}/edit`);
    assert.ok(page.html.includes(third));
  });
});
