// engine = "litestream" against remote replicas with the real Litestream binary: SFTP (OpenSSH's sshd on loopback) and S3 (moto_server on loopback), each skipped where its server is absent.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { importBackup } from '../../src/features/backups/import.service';
import { runCliAsync, tempDir } from '../helpers/appliance';
import { freshDataDir, litestreamConfFile, restoreAndCheck, startPrimary, until } from './replication-helpers';

const work = tempDir('confvault-litestream-remote-');
after(() => rmSync(work, { recursive: true, force: true }));
const configFile = (name: string, extra: string, replica: string) => litestreamConfFile(work, name, replica, extra);

async function freePort(): Promise<number> {
  return new Promise<number>((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

async function listening(port: number): Promise<boolean> {
  return new Promise<boolean>((res) => {
    const c = connect(port, '127.0.0.1', () => (c.destroy(), res(true))).on('error', () => res(false));
  });
}

/** `bin` on PATH, or null. */
function onPath(bin: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(path.join(dir, bin))) return path.join(dir, bin);
  return null;
}

/** OpenSSH's sshd on a loopback port with a key of its own, a user key and its internal SFTP server; null when absent. */
async function startSshd(): Promise<{ port: number; userKey: string; hostKey: string; stop: () => void } | null> {
  const sshd = '/usr/sbin/sshd';
  if (!existsSync(sshd) || !existsSync('/usr/bin/ssh-keygen')) return null;
  // sshd refuses to start without its privilege separation folder (made by the openssh-server package's service).
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const dir = path.join(work, 'sshd');
  mkdirSync(dir, { mode: 0o700 });
  for (const k of ['host', 'user']) {
    const r = spawn('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, k)], { stdio: 'ignore' });
    await new Promise((res) => r.once('exit', res));
  }
  copyFileSync(path.join(dir, 'user.pub'), path.join(dir, 'authorized_keys'));
  const port = await freePort();
  const lines = [`Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${dir}/host`, `PidFile ${dir}/sshd.pid`, `AuthorizedKeysFile ${dir}/authorized_keys`];
  lines.push('StrictModes no', 'UsePAM no', 'PasswordAuthentication no', 'PermitRootLogin prohibit-password', 'Subsystem sftp internal-sftp');
  writeFileSync(path.join(dir, 'sshd_config'), lines.join('\n') + '\n');
  const child = spawn(sshd, ['-D', '-e', '-f', path.join(dir, 'sshd_config')], { stdio: 'ignore' });
  for (let i = 0; i < 100 && child.exitCode === null && !(await listening(port)); i++) await new Promise((r) => setTimeout(r, 50));
  if (child.exitCode !== null) return null;
  const fingerprint = spawnSync('/usr/bin/ssh-keygen', ['-lf', path.join(dir, 'host.pub')], { encoding: 'utf8' }).stdout.split(' ')[1];
  return { port, userKey: path.join(dir, 'user'), hostKey: fingerprint, stop: () => child.kill('SIGTERM') };
}

test('an sftp:// replica (OpenSSH sshd on loopback, its host key pinned): serve replicates, a clean stop, restore on a fresh data dir holds every version; another host key is refused', async (ctx) => {
  const sshd = await startSshd();
  if (!sshd) return ctx.skip('no OpenSSH sshd on this machine');
  ctx.after(() => sshd.stop());
  const remote = path.join(work, 'sftp-remote');
  const mirror = path.join(work, 'sftp-mirror');
  const url = `sftp://${userInfo().username}@127.0.0.1:${sshd.port}${remote}`;
  const sftpConf = (name: string, pin: string) =>
    configFile(name, `snapshot_mirror = "${mirror}"\nsftp_key_file = "${sshd.userKey}"\nsftp_host_key = "${pin}"\n`, url);
  const conf = sftpConf('sftp.conf', sshd.hostKey);
  const { db, snapshots, dataDir, deviceId, served } = await startPrimary(ctx, 'edge-sftp', conf);
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) ids.push(String(importBackup(db, SYSTEM_ACTOR, snapshots, deviceId, `hostname edge-sftp\n! version ${i}\n`).id));
  await until('a Litestream generation on the SFTP server', () => existsSync(path.join(remote, 'generations')), 30_000);
  for (let i = 30; i < 40; i++) ids.push(String(importBackup(db, SYSTEM_ACTOR, snapshots, deviceId, `hostname edge-sftp\n! version ${i}\n`).id));
  // A planned switch: serve stops cleanly, its last mirror pass and Litestream's last sync make the replica current.
  assert.equal(await served.stop(), 0, served.output().stderr);
  const fresh = freshDataDir(work, 'restored-sftp', dataDir);
  // Another server key than the pinned one: refused before Litestream connects, nothing restored.
  const wrongPin = 'SHA256:' + Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '');
  const refused = await runCliAsync(['db', 'restore', '--from-replica', '--config', sftpConf('sftp-wrong.conf', wrongPin), '--data-dir', fresh]);
  assert.equal(refused.status, 1, refused.stdout);
  assert.match(refused.stderr, /the host key of 127\.0\.0\.1:\d+ is SHA256:\S+, not the pinned sftp_host_key/);
  const { restoreOutput, rows } = await restoreAndCheck(['--config', conf], fresh);
  assert.match(restoreOutput, /the latest state Litestream replicated/);
  assert.deepEqual(rows.map((r) => r.id).sort(), [...ids].sort(), 'every version written before the clean stop');
});

test('an s3:// replica (moto_server on loopback): keys only in the environment, serve replicates, a clean stop, restore on a fresh data dir holds every version', async (ctx) => {
  const moto = onPath('moto_server');
  if (!moto) return ctx.skip('no moto_server (Python moto) on this machine');
  const port = await freePort();
  const server = spawn(moto, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  ctx.after(() => server.kill('SIGTERM'));
  for (let i = 0; i < 200 && server.exitCode === null && !(await listening(port)); i++) await new Promise((r) => setTimeout(r, 100));
  if (server.exitCode !== null) return ctx.skip('moto_server did not start');
  const endpoint = `http://127.0.0.1:${port}`;
  assert.equal((await fetch(`${endpoint}/confvault-bucket`, { method: 'PUT' })).status, 200);
  const keys = { LITESTREAM_ACCESS_KEY_ID: 'AKIACONFVAULTTEST', LITESTREAM_SECRET_ACCESS_KEY: 'S3-secret-never-in-a-file-or-log' };

  const mirror = path.join(work, 's3-mirror');
  const conf = configFile('s3.conf', `snapshot_mirror = "${mirror}"\ns3_endpoint = "${endpoint}"\ns3_region = "us-east-1"\n`, 's3://confvault-bucket/primary');
  const { db, snapshots, dataDir, deviceId, served } = await startPrimary(ctx, 'edge-s3', conf, keys);
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) ids.push(String(importBackup(db, SYSTEM_ACTOR, snapshots, deviceId, `hostname edge-s3\n! version ${i}\n`).id));
  await until('Litestream to write to the bucket', () => /wal segment written.*replica=s3/.test(served.output().stdout), 30_000);
  for (let i = 30; i < 40; i++) ids.push(String(importBackup(db, SYSTEM_ACTOR, snapshots, deviceId, `hostname edge-s3\n! version ${i}\n`).id));
  assert.equal(await served.stop(), 0, served.output().stderr);
  const { stdout, stderr } = served.output();
  assert.ok(!(stdout + stderr).includes(keys.LITESTREAM_SECRET_ACCESS_KEY), 'the key never reaches the log');
  assert.ok(!readFileSync(path.join(dataDir, 'litestream.yml'), 'utf8').includes(keys.LITESTREAM_SECRET_ACCESS_KEY), 'nor the generated configuration');

  const fresh = freshDataDir(work, 'restored-s3', dataDir);
  const { restoreOutput, rows } = await restoreAndCheck(['--config', conf], fresh, keys);
  assert.match(restoreOutput, /the latest state Litestream replicated/);
  assert.deepEqual(rows.map((r) => r.id).sort(), [...ids].sort(), 'every version written before the clean stop');
});
