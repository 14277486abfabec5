// Fault-injection helpers: a fleet of simulated FRR devices seeded into a test appliance, and the "every stored version reads back" check.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { readBackupText } from '../../src/features/backups/backups.service';
import type { BackupRow } from '../../src/features/backups/backups.store';
import { sha256Hex, type SnapshotStore } from '../../src/store/snapshots';
import type { DB } from '../../src/db/open';
import { loadTranscript, type SimDevice } from '../sim/simulator';
import { REPO_ROOT, runCliAsync } from './appliance';
import type { SecretBox } from '../../src/identity/secrets';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from './seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

/** The running configuration of fleet device i; `round` makes each run store a new version. */
export function fleetConfig(i: number, round: number): string {
  const ballast = Array.from({ length: 300 }, (_, k) => ` description fleet${i}-round${round}-line${k}`).join('\n');
  return frr.commands['show running-config'].replace('hostname r1-lab', `hostname fleet${i}\n! round ${round}\n${ballast}`);
}

/** `count` simulated devices (one login each) for startSimulator; change `commands` between runs for new versions. */
export function fleetDevices(count: number): SimDevice[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `fleet${i}`,
    transcript: frr,
    username: `fleet${i}`,
    password: 'pw-fleet-123',
    commands: { 'show running-config': fleetConfig(i, 0) },
  }));
}

/** Seed the fleet's devices into the appliance, spread over `groups` groups; returns the group ids. */
export function seedFleet(a: { db: DB; secrets: SecretBox }, devices: SimDevice[], port: number, groups = 1): number[] {
  const { db, secrets } = a;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const groupIds = Array.from({ length: groups }, (_, g) => seedGroup(db, `fleet-group-${g}`));
  devices.forEach((d, i) => {
    const credential_id = seedCredential(db, secrets, { name: `fleet-cred-${i}`, username: d.username!, password: d.password });
    seedDevice(db, { name: d.name, port, credential_id, template_id: tpl, group_id: groupIds[i % groups] });
  });
  return groupIds;
}

/** An appliance.conf in the folder `dir` with these lines; returns its path. */
export function writeConf(dir: string, text: string): string {
  const file = path.join(dir, 'fault.conf');
  writeFileSync(file, text);
  return file;
}

/** `db check` of the data dir in a child process passes, with no snapshot missing and nothing left running. */
export async function assertDbCheckClean(dataDir: string): Promise<void> {
  const check = await runCliAsync(['db', 'check', '--data-dir', dataDir]);
  assert.equal(check.status, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /snapshots missing: 0/);
  assert.match(check.stdout, /backups still marked running: 0/);
}

/** Every successful record of `db` reads back from `store`, verified against its hash; returns how many. */
export function assertEveryVersionReadable(db: DB, store: SnapshotStore): number {
  const rows = db.prepare('SELECT * FROM backups WHERE success = 1').all() as BackupRow[];
  const lost = rows.filter((r) => {
    const text = readBackupText(store, null, r);
    return text === null || sha256Hex(text) !== r.config_snapshot_hash;
  });
  assert.deepEqual(
    lost.map((r) => r.id),
    [],
    `${lost.length} of ${rows.length} successful versions have no readable content`,
  );
  return rows.length;
}
