// The backup runner against simulated devices: records, content-addressed snapshots, dedup, change detection, failures, reachability.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { BackupRunner } from '../../src/engine/runner';
import { applyTemplate } from '../../src/engine/normalise';
import { getBuiltinTemplate } from '../../src/templates/index';
import { readBackupText, getBackupRow } from '../../src/features/backups/backups.service';
import { sha256Hex } from '../../src/store/snapshots';
import { startSimulator, loadTranscript, type RunningSimulator, type SimDevice } from '../sim/simulator';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { acceptHostKey } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
const frrExpected = readFileSync(path.join(REPO_ROOT, 'test/sim/transcripts/frr.expected.txt'), 'utf8');
/** What a backup stores: the expected text with its secrets as this appliance's tokens (redaction is on by default). */
let frrStored: string;

let t: TestAppliance;
let sim: RunningSimulator;
const simDevices: SimDevice[] = [
  { name: 'r1', transcript: frr, username: 'r1', password: 'pw-r1-123' },
  { name: 'r2', transcript: frr, username: 'r2', password: 'pw-r2-123', commands: {} },
  { name: 'locked', transcript: frr, username: 'locked', password: 'pw', failure: 'wrong_password' },
];

before(async () => {
  t = await startTestAppliance({ CONFVAULT_BACKUP_CONCURRENCY: '4' });
  frrStored = applyTemplate(frrExpected, getBuiltinTemplate('frr')!, { redact: true, key: t.services.secrets.redactionKey });
  sim = await startSimulator({ devices: simDevices });
});
after(async () => {
  await sim.close();
  await t.close();
});

function runner() {
  const { db, secrets, snapshots, config } = t.services;
  return new BackupRunner({ db, secrets, snapshots, config: { ...config, backup: { ...config.backup, retries: 0 } } });
}

test('backs up devices, stores content-addressed snapshots, dedups and detects changes', async () => {
  const { db, secrets, snapshots } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const ids = ['r1', 'r2'].map((n) =>
    seedDevice(db, {
      name: `sim-${n}`,
      port: sim.port,
      credential_id: seedCredential(db, secrets, { name: `c-${n}`, username: n, password: `pw-${n}-123` }),
      template_id: tpl,
    }),
  );

  const first = await runner().run(ids, { trigger: 'manual' });
  assert.equal(first.length, 2);
  for (const r of first) {
    assert.equal(r.success, true, `${r.deviceName}: ${r.message}`);
    assert.equal(r.changed, false, 'the first version of a device is not a change');
    const row = getBackupRow(db, r.backupId!)!;
    assert.equal(row.config_snapshot_hash, sha256Hex(frrStored));
    assert.ok(row.finished_at! >= row.started_at);
    assert.equal(readBackupText(snapshots, null, row), frrStored);
  }
  // Identical text from two devices is stored once.
  const files = readdirSync(path.join(t.services.dataDir, 'snapshots', sha256Hex(frrStored).slice(0, 2)));
  assert.deepEqual(files, [sha256Hex(frrStored) + '.gz']);
  const hostKey = db.prepare('SELECT host_key, reachability FROM devices WHERE id = ?').get(ids[0]) as { host_key: string; reachability: string };
  assert.equal(hostKey.host_key, sim.hostKeyFingerprint);
  assert.equal(hostKey.reachability, 'reachable');

  // Same config again: a new record, same hash, not changed.
  const again = await runner().backupDevice(ids[0], { trigger: 'manual' });
  assert.equal(again.success, true);
  assert.equal(again.changed, false);
  assert.equal(getBackupRow(db, again.backupId!)!.config_snapshot_hash, sha256Hex(frrStored));

  // The device's configuration changes: the next backup is flagged changed and stored under a new hash.
  simDevices[1].commands = {
    'show running-config': frr.commands['show running-config'].replace(
      'ip route 192.0.2.0/24 Null0',
      'ip route 192.0.2.0/24 Null0\nip route 198.51.100.0/24 Null0',
    ),
  };
  const changed = await runner().backupDevice(ids[1], { trigger: 'manual' });
  assert.equal(changed.success, true);
  assert.equal(changed.changed, true);
  const text = readBackupText(snapshots, null, getBackupRow(db, changed.backupId!)!)!;
  assert.match(text, /^ip route 198\.51\.100\.0\/24 Null0$/m);
  assert.notEqual(sha256Hex(text), sha256Hex(frrStored));
});

test('failures are recorded with their type and a clear message; reachability follows', async () => {
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const locked = seedDevice(db, {
    name: 'sim-locked',
    port: sim.port,
    credential_id: seedCredential(db, secrets, { name: 'c-locked', username: 'locked', password: 'wrong-one-123' }),
    template_id: tpl,
  });
  const closed = seedDevice(db, {
    name: 'closed-port',
    port: 1,
    credential_id: seedCredential(db, secrets, { name: 'c-closed', username: 'x', password: 'y' }),
    template_id: tpl,
  });

  const [auth, refused] = await Promise.all([runner().backupDevice(locked, { trigger: 'manual' }), runner().backupDevice(closed, { trigger: 'manual' })]);
  assert.equal(auth.failure, 'AUTH_FAILED');
  assert.equal(refused.failure, 'CONNECTION_REFUSED');
  const rec = getBackupRow(db, auth.backupId!)!;
  assert.equal(rec.success, 0);
  assert.equal(rec.config_snapshot_hash, null);
  assert.equal(rec.failure_type, 'AUTH_FAILED');
  assert.ok(rec.error_message && !rec.error_message.includes('wrong-one-123'), 'message must not contain the password');
  const reach = (id: number) =>
    db.prepare('SELECT reachability, reachability_error FROM devices WHERE id = ?').get(id) as { reachability: string; reachability_error: string | null };
  assert.equal(reach(locked).reachability, 'reachable', 'a refused login still proves the device answers');
  assert.equal(reach(closed).reachability, 'unreachable');
  assert.match(reach(closed).reachability_error ?? '', /refused/i);
});

test('a changed host key fails the backup unless the change is accepted', async () => {
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const id = seedDevice(db, {
    name: 'sim-rekeyed',
    port: sim.port,
    credential_id: seedCredential(db, secrets, { name: 'c-rekey', username: 'r1', password: 'pw-r1-123' }),
    template_id: tpl,
  });
  rawState(
    db,
    'the key an earlier backup recorded, before the device changed it (a backup against another simulator would make it)',
    'UPDATE devices SET host_key = ? WHERE id = ?',
    'SHA256:previousKeyOfThisDevice',
    id,
  );
  const refused = await runner().backupDevice(id, { trigger: 'manual' });
  assert.equal(refused.failure, 'HOST_KEY_CHANGED');
  // The user accepts exactly the fingerprint the failed backup saw.
  acceptHostKey(db, SYSTEM_ACTOR, id, sim.hostKeyFingerprint);
  const accepted = await runner().backupDevice(id, { trigger: 'manual' });
  assert.equal(accepted.success, true, accepted.message ?? '');
  const row = db.prepare('SELECT host_key, accept_host_key_change FROM devices WHERE id = ?').get(id) as { host_key: string; accept_host_key_change: number };
  assert.equal(row.host_key, sim.hostKeyFingerprint);
  assert.equal(row.accept_host_key_change, 0, 'acceptance is for one change, not forever');
});
