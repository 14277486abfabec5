// Replication: versions written while `serve` replicates, serve killed with SIGKILL, the replica restored onto a fresh data dir: `db check` passes and every version is readable, within the stated bound.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { openDatabase } from '../../src/db/open';
import { SnapshotStore } from '../../src/store/snapshots';
import { importBackup } from '../../src/features/backups/import.service';
import { loadConfig } from '../../src/config/config';
import { pruneBackups } from '../../src/features/maintenance/retention.service';
import {
  readReplicaManifest,
  readReplicationStatus,
  replicationHealth,
  REPLICA_DB_FILE,
  replicateOnce,
  startReplication,
} from '../../src/features/replication/replication.service';
import { runCliAsync, startTestAppliance, tempDir } from '../helpers/appliance';
import { checkRestoredAsWritten, freshDataDir, restoreAndCheck, seedVersionedDevice, startPrimary, until } from './replication-helpers';

const INTERVAL_SECONDS = 1;
const work = tempDir('confvault-replication-');
after(() => rmSync(work, { recursive: true, force: true }));
const replica = path.join(work, 'replica');

interface Written {
  id: string;
  text: string;
  ackAt: number;
}

function configFile(name: string, replicaDir: string): string {
  const file = path.join(work, name);
  writeFileSync(
    file,
    `[replication]\nenabled = true\nreplica = "${replicaDir}"\ninterval_seconds = ${INTERVAL_SECONDS}\n\n[maintenance]\ndb_backup_schedule = ""\n\n[backup]\nschedule = "0 0 1 1 *"\n`,
  );
  return file;
}

test('versions written under replication, serve killed with SIGKILL, restore from the replica: db check passes, every version readable', async (ctx) => {
  const primaryConf = configFile('primary.conf', replica);
  const { t, db, snapshots, dataDir, deviceId, served } = await startPrimary(ctx, 'edge-1', primaryConf);
  const key = await t.keyFor({ permissions: 'all' });
  const written: Written[] = [];
  let writing = true;
  // A second process on the same data dir, as `confvault backup import` is: distinct texts, so each is a new file.
  const writer = (async () => {
    for (let i = 0; writing && i < 5000; i++) {
      const text = `hostname edge-1\n! version ${i}\ninterface eth0\n description written ${Date.now()}-${i}\n`;
      const r = importBackup(db, SYSTEM_ACTOR, snapshots, deviceId, text);
      written.push({ id: String(r.id), text, ackAt: Date.now() });
      await new Promise((res) => setTimeout(res, 5));
    }
  })();
  try {
    // Several passes with versions in them, and writes still going on when the primary dies.
    await until('the replica to hold 20 versions', () => (readReplicaManifest(replica)?.snapshots ?? 0) >= 20);
    // /healthz and /metrics of the replicating server report the lag.
    const health = (await (await fetch(`${served.url}/healthz`)).json()) as { status: string; replication: { status: string; lag_seconds: number } };
    assert.equal(health.status, 'ok');
    assert.equal(health.replication.status, 'ok');
    assert.equal(typeof health.replication.lag_seconds, 'number');
    const metrics = await (await fetch(`${served.url}/metrics`, { headers: { 'X-API-Key': key } })).text();
    assert.match(metrics, /^confvault_replication_lag_seconds \d+(\.\d+)?$/m);
    assert.match(metrics, /^confvault_replication_failing 0$/m);
    const countAtCopy = readReplicaManifest(replica)!.snapshots;
    await until('more writes after that copy', () => written.length >= countAtCopy + 5);
    served.child.kill('SIGKILL');
    await new Promise((r) => served.child.once('exit', r));
  } finally {
    writing = false;
    await writer;
  }
  const killedAt = Date.now();
  const manifest = readReplicaManifest(replica)!;

  const status = await runCliAsync(['db', 'replica', 'status', '--config', primaryConf, '--data-dir', dataDir]);
  assert.equal(status.status, 0, status.stderr);
  assert.match(status.stdout, /^lag_seconds\t\d+\.\d$/m);
  assert.match(status.stdout, /^last_error\t-$/m);
  assert.match(status.stdout, /^replica_copy\t\d+ bytes, \d+ snapshot files named/m);

  const fresh = freshDataDir(work, 'restored', dataDir);
  const { rows } = await restoreAndCheck([replica], fresh);
  const lost = checkRestoredAsWritten(fresh, rows, written);
  // The bound: everything acknowledged before the replica's consistent_at is there; only what was written after it
  // (at most one interval plus one pass before the kill) may be missing.
  const restored = new Set(rows.map((r) => String(r.id)));
  for (const w of written) if (w.ackAt < manifest.consistent_at) assert.ok(restored.has(w.id), `version ${w.id} acknowledged before the copy is in it`);
  for (const w of lost) assert.ok(w.ackAt >= manifest.consistent_at, `lost version ${w.id} was written after the last copy`);
  assert.ok(rows.length >= 20, `the replica holds the versions of its passes (${rows.length})`);
  console.log(`# data-loss window: ${((killedAt - manifest.consistent_at) / 1000).toFixed(2)} s, ${lost.length} of ${written.length} versions`);
});

test('a replica restores onto a fresh data dir only (or with --force), and one lacking a file its database names is refused untouched', async () => {
  const taken = path.join(work, 'taken');
  cpSync(replica, taken, { recursive: true });
  const refused = await runCliAsync(['db', 'restore', '--from-replica', replica, '--data-dir', path.join(work, 'restored')]);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /already holds a database or snapshot files.*--force/);
  const forced = await runCliAsync(['db', 'restore', '--from-replica', replica, '--force', '--data-dir', path.join(work, 'restored')]);
  assert.equal(forced.status, 0, forced.stderr);
  assert.match(forced.stdout, /kept as .*confvault\.db\.replaced-/);

  // A damaged replica: one file its database names is gone.
  const snaps = path.join(taken, 'snapshots');
  const sub = readdirSync(snaps)[0];
  rmSync(path.join(snaps, sub, readdirSync(path.join(snaps, sub))[0]));
  const fresh = freshDataDir(work, 'from-damaged', path.join(work, 'restored'));
  const damaged = await runCliAsync(['db', 'restore', '--from-replica', taken, '--data-dir', fresh]);
  assert.equal(damaged.status, 1);
  assert.match(damaged.stderr, /the replica lacks 1 .*the database was not restored/);
  assert.deepEqual(
    readdirSync(fresh).filter((n) => n.startsWith('confvault.db')),
    [],
    'no database put in place',
  );
});

test('retention removing versions between a pass’s copy and its files: the pass copies again and the replica holds what the database names, no false failure', async (ctx) => {
  const t = await startTestAppliance();
  ctx.after(() => t.close());
  const { db, secrets, snapshots, dataDir } = t.services;
  const deviceId = seedVersionedDevice(db, secrets, 'edge-prune');
  for (let i = 0; i < 5; i++) importBackup(db, SYSTEM_ACTOR, snapshots, deviceId, `hostname edge-prune\n! version ${i}\n`);
  const dir = path.join(work, 'replica-prune');
  let pruned = 0;
  const pass = await replicateOnce(db, snapshots, dir, new Set(), () => {
    // The first copy names five versions; retention (a year on, keep one) then removes four and sweeps their files.
    if (pruned++ === 0)
      pruneBackups(db, SYSTEM_ACTOR, snapshots, dataDir, { keepDays: 1, keepMin: 1, graceHours: 0, sweepFiles: true }, Date.now() + 366 * 86_400_000);
  });
  assert.equal(pruned, 2, 'one copy before the prune, one after it');
  assert.equal(pass.snapshots, 1);
  const copy = openDatabase(path.join(dir, REPLICA_DB_FILE), { readonly: true });
  try {
    const hashes = copy.prepare('SELECT config_snapshot_hash FROM backups WHERE success = 1').pluck().all() as string[];
    assert.equal(hashes.length, 1);
    const replicaStore = new SnapshotStore(dir);
    for (const h of hashes) assert.ok(replicaStore.locate(h), `the replica holds ${h}`);
  } finally {
    copy.close();
  }
});

test('[replication] refuses a replica inside the data dir, and enabled without a replica', () => {
  const dataDir = path.join(work, 'cfg-data');
  assert.throws(
    () => loadConfig({ dataDir, config: configFile('inside.conf', path.join(dataDir, 'replica')) }, {}),
    /replication\.replica: must not be the data dir or inside it/,
  );
  const bare = path.join(work, 'bare.conf');
  writeFileSync(bare, '[replication]\nenabled = true\n');
  assert.throws(() => loadConfig({ dataDir, config: bare }, {}), /replication\.replica: a directory is required/);
  assert.equal(REPLICA_DB_FILE, 'confvault.db');
});

test('a replica that cannot be written: the pass fails, the status file, replicationHealth (what /healthz and /metrics report) and `db replica status` say so', async () => {
  const t = await startTestAppliance();
  try {
    const notADir = path.join(work, 'a-file');
    writeFileSync(notADir, 'not a directory');
    const conf = configFile('broken.conf', path.join(notADir, 'replica'));
    const config = loadConfig({ dataDir: t.services.dataDir, config: conf }, {});
    const replication = startReplication(t.services.db, t.services.snapshots, t.services.dataDir, config, null);
    await until('the first pass to fail', () => (readReplicationStatus(t.services.dataDir)?.passes_failed ?? 0) >= 1);
    await replication.stop();
    assert.equal(replicationHealth(t.services.dataDir, true)?.status, 'failing');
    assert.match(replicationHealth(t.services.dataDir, true)?.last_error ?? '', /ENOTDIR|EEXIST/);
    const status = await runCliAsync(['db', 'replica', 'status', '--config', conf, '--data-dir', t.services.dataDir]);
    assert.equal(status.status, 1);
    assert.match(status.stdout, /^last_error\t.*ENOTDIR/m);
    assert.match(status.stderr, /the last replication pass failed/);
  } finally {
    await t.close();
  }
});
