// `serve` starting up: on an address it cannot bind, one clear line, a non-zero exit at once, no first-admin password
// shown or made; a SIGHUP while it starts does not end it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../../src/db/open';
import { SERVE_LOCK_FILE } from '../../src/features/maintenance/db-restore';
import { cliArgv, runCliAsync, spawnServe, tempDir } from '../helpers/appliance';

test('a port already taken: serve exits 1 within seconds with one line naming the address, cause and remedy', async () => {
  const root = tempDir('confvault-listen-');
  const dataDir = path.join(root, 'data');
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as net.AddressInfo;
  try {
    const began = Date.now();
    const r = await runCliAsync(['serve', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`], { env: { CONFVAULT_LOG_LEVEL: 'info' } });
    const ms = Date.now() - began;
    assert.equal(r.status, 1, r.stderr);
    // tsx start-up included; before, the process stayed up (minutes) holding the database.
    assert.ok(ms < 15_000, `exited after ${ms} ms`);
    assert.equal(r.stdout, '', 'nothing on stdout (no log line before the failure)');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: address already in use`));
    assert.match(lines[0], /--listen or server\.listen/);
    assert.doesNotMatch(r.stderr, /password/i);
    // No admin was made on this fresh data dir: the next successful start still shows its password.
    const db = openDatabase(path.join(dataDir, 'confvault.db'));
    try {
      assert.equal(db.prepare('SELECT count(*) FROM users').pluck().get(), 0);
    } finally {
      db.close();
    }
  } finally {
    holder.close();
  }
  const s = await spawnServe(['--data-dir', dataDir, '--listen', '127.0.0.1:0'], { CONFVAULT_LOG_LEVEL: 'info' });
  try {
    assert.match(s.output().stderr, /first start\. Log in as "admin"/);
  } finally {
    assert.equal(await s.stop(), 0);
    rmSync(root, { recursive: true, force: true });
  }
});

test('an address that is not on this machine: the same one line and exit 1', async () => {
  const root = tempDir('confvault-listen-');
  try {
    const r = await runCliAsync(['serve', '--data-dir', path.join(root, 'data'), '--listen', '192.0.2.1:8080']);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /cannot listen on 192\.0\.2\.1:8080: address not available/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('SIGHUP while serve starts (`systemctl reload` during a migration, say) does not end it: it starts, then stops cleanly', async () => {
  const root = tempDir('confvault-hup-');
  const dataDir = path.join(root, 'data');
  const child = spawn(process.execPath, [...cliArgv(), 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], {
    env: { ...process.env, CONFVAULT_LOG_LEVEL: 'info', CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const ended = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? String(code))));
  const running = () => child.exitCode === null && child.signalCode === null;
  try {
    // From the serve lock (taken right after the configuration is read, before the database is opened and migrated)
    // until the listening line: a SIGHUP every few milliseconds.
    const deadline = Date.now() + 30_000;
    while (!existsSync(path.join(dataDir, SERVE_LOCK_FILE)) && running() && Date.now() < deadline) await sleep(1);
    let sent = 0;
    while (!stdout.includes('confvault listening') && running() && Date.now() < deadline) {
      child.kill('SIGHUP');
      sent++;
      await sleep(3);
    }
    assert.ok(running(), `serve ended after ${sent} SIGHUP(s) during start-up:\n${stderr}\n${stdout}`);
    assert.ok(sent > 0, 'at least one SIGHUP arrived during start-up');
    assert.match(stdout, /"url":"http:\/\/127\.0\.0\.1:\d+"/);
    // Once started, a SIGHUP re-reads the template files as before.
    child.kill('SIGHUP');
    for (const until = Date.now() + 10_000; !stdout.includes('"trigger":"SIGHUP"') && Date.now() < until;) await sleep(20);
    assert.match(stdout, /"trigger":"SIGHUP"/);
    child.kill('SIGTERM');
    assert.equal(await ended, '0', stderr);
  } finally {
    if (running()) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  }
});
