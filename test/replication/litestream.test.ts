// engine = "litestream" with the real Litestream binary: serve supervises it, versions written meanwhile, serve and Litestream killed with SIGKILL (the host dies), `db restore --from-replica` onto a fresh data dir: db check passes, every version readable.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { importBackup } from '../../src/features/backups/import.service';
import { loadConfig } from '../../src/config/config';
import { litestreamConfig } from '../../src/features/replication/litestream-config';
import { LITESTREAM_PID_FILE, readMirrorManifest } from '../../src/features/replication/litestream.runner';
import { readReplicationStatus } from '../../src/features/replication/replication.service';
import { runCliAsync, spawnServe, startTestAppliance, tempDir } from '../helpers/appliance';
import { checkRestoredAsWritten, freshDataDir, litestreamConfFile, restoreAndCheck, startPrimary, until } from './replication-helpers';

const work = tempDir('confvault-litestream-');
after(() => rmSync(work, { recursive: true, force: true }));
const replica = path.join(work, 'replica');

const configFile = (name: string, extra = '') => litestreamConfFile(work, name, replica, extra);

function pidOf(dataDir: string): number {
  try {
    return Number(readFileSync(path.join(dataDir, LITESTREAM_PID_FILE), 'utf8'));
  } catch {
    return 0;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('Litestream replicates while versions are written; child killed: restarted; host killed: restore on a fresh data dir, db check passes, every version readable', async (ctx) => {
  const conf = configFile('primary.conf');
  const { db, snapshots, dataDir, deviceId, served } = await startPrimary(ctx, 'edge-ls', conf);
  const written: { id: string; text: string; ackAt: number }[] = [];
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing && i < 5000; i++) {
      const text = `hostname edge-ls\n! version ${i}\n description written ${Date.now()}-${i}\n`;
      const r = importBackup(db, SYSTEM_ACTOR, snapshots, deviceId, text);
      written.push({ id: String(r.id), text, ackAt: Date.now() });
      await new Promise((res) => setTimeout(res, 10));
    }
  })();
  let killedAt = 0;
  try {
    await until('Litestream to start', () => pidOf(dataDir) > 0 && alive(pidOf(dataDir)));
    await until('the mirror to hold 20 files', () => (readMirrorManifest(replica)?.snapshot_files ?? 0) >= 20);
    await until('a Litestream generation in the replica', () => existsSync(path.join(replica, 'litestream', 'generations')));
    // Supervision: Litestream dies alone; serve records it and starts a new one.
    const first = pidOf(dataDir);
    process.kill(first, 'SIGKILL');
    await until('a new Litestream', () => pidOf(dataDir) !== first && alive(pidOf(dataDir)), 20_000);
    assert.match(readReplicationStatus(dataDir)?.last_error ?? '', /litestream exited \(SIGKILL\)/);
    const atRestart = written.length;
    await until('more writes after the restart', () => written.length >= atRestart + 100);
    // The host dies: serve and its Litestream at once.
    const child = pidOf(dataDir);
    served.child.kill('SIGKILL');
    process.kill(child, 'SIGKILL');
    killedAt = Date.now();
    await new Promise((r) => served.child.once('exit', r));
  } finally {
    writing = false;
    await writer;
  }

  const status = await runCliAsync(['db', 'replica', 'status', '--config', conf, '--data-dir', dataDir]);
  assert.match(status.stdout, /^engine\tlitestream$/m);
  assert.match(status.stdout, /^snapshot_mirror\t\d+ files, every version before /m);
  const fresh = freshDataDir(work, 'restored', dataDir);
  const { restoreOutput, rows } = await restoreAndCheck(['--config', conf], fresh);
  const lost = checkRestoredAsWritten(fresh, rows, written);
  // What is lost is the tail: the versions acknowledged in the last seconds before the kill, nothing older.
  const oldestLost = lost.length ? Math.min(...lost.map((w) => w.ackAt)) : killedAt;
  assert.ok(killedAt - oldestLost < 20_000, `lost only recent versions (window ${(killedAt - oldestLost) / 1000} s)`);
  // Nothing older is missing: the lost versions are one run at the end of what was written.
  assert.ok(
    lost.every((w) => written.indexOf(w) >= written.length - lost.length),
    'only the newest versions are lost',
  );
  assert.ok(rows.length >= 20, `restored ${rows.length} of ${written.length}`);
  const state = /^the (latest state|state at \S+)/m.exec(restoreOutput)?.[1] ?? '?';
  console.log(`# data-loss window: ${((killedAt - oldestLost) / 1000).toFixed(2)} s, ${lost.length} of ${written.length} versions lost; restored ${state}`);
});

test('a Litestream that keeps failing: restarted with back-off, its output logged with the S3 keys of its environment redacted, never on its command line', async (ctx) => {
  const t = await startTestAppliance();
  ctx.after(() => t.close());
  const fake = path.join(work, 'fake-litestream');
  // Prints its arguments and the key it was given, then fails: what a misconfigured Litestream does.
  writeFileSync(fake, '#!/bin/sh\necho "args: $*"\necho "error: key $LITESTREAM_SECRET_ACCESS_KEY refused" >&2\nexit 3\n');
  chmodSync(fake, 0o755);
  const secret = 'S3cr3t-Value-Never-Logged';
  const conf = configFile('fake.conf', `litestream_path = "${fake}"\n`);
  const served = await spawnServe(['--config', conf, '--data-dir', t.services.dataDir, '--listen', '127.0.0.1:0'], {
    LITESTREAM_SECRET_ACCESS_KEY: secret,
  });
  ctx.after(() => served.child.kill('SIGKILL'));
  await until('two failed starts', () => (served.output().stdout.match(/litestream exited \(code 3\)/g) ?? []).length >= 2, 20_000);
  await served.stop();
  const { stdout, stderr } = served.output();
  assert.ok(!(stdout + stderr).includes(secret), 'the key never reaches the log');
  assert.match(stdout, /error: key \[redacted\] refused/);
  assert.match(stdout, /args: replicate -no-expand-env -config \S+litestream\.yml/);
  assert.match(readReplicationStatus(t.services.dataDir)?.last_error ?? '', /litestream exited \(code 3\)/);
});

test('[replication] engine = "litestream": configuration for sftp:// and s3:// replicas, no secret in it, remote replicas need a snapshot mirror', () => {
  const dataDir = path.join(work, 'cfg-data');
  const load = (extra: string) => loadConfig({ dataDir, config: configFile('cfg.conf', extra) }, {});
  const sftp = load(`snapshot_mirror = "${path.join(work, 'mirror')}"\nsftp_key_file = "/etc/confvault/id_ed25519"\n`).replication;
  const y = litestreamConfig(dataDir, 'confvault.db', { ...sftp, replica: 'sftp://backup@standby.example:2222/srv/confvault' });
  assert.match(y, /type: sftp\n\s+host: standby.example:2222\n\s+user: backup\n\s+path: \/srv\/confvault\n\s+key-path: \/etc\/confvault\/id_ed25519/);
  const s3 = litestreamConfig(dataDir, 'confvault.db', {
    ...sftp,
    replica: 's3://bucket/confvault',
    s3_endpoint: 'http://127.0.0.1:9000',
    s3_region: 'us-east-1',
  });
  assert.match(s3, /type: s3\n\s+bucket: bucket\n\s+path: confvault\n\s+region: us-east-1\n\s+endpoint: http:\/\/127.0.0.1:9000/);
  assert.doesNotMatch(s3, /access-key|secret/);
  assert.throws(() => litestreamConfig(dataDir, 'confvault.db', { ...sftp, replica: 's3://AK:SK@bucket/x' }), /no keys in the s3:\/\/ URL/);
  writeFileSync(path.join(work, 'remote.conf'), '[replication]\nenabled = true\nengine = "litestream"\nreplica = "s3://bucket/x"\n');
  assert.throws(() => loadConfig({ dataDir, config: path.join(work, 'remote.conf') }, {}), /snapshot_mirror: a directory is required/);
  writeFileSync(path.join(work, 'builtin.conf'), '[replication]\nenabled = true\nreplica = "s3://bucket/x"\n');
  assert.throws(() => loadConfig({ dataDir, config: path.join(work, 'builtin.conf') }, {}), /need engine = "litestream"/);
});
