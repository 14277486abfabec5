// `serve` on an address it cannot bind: one clear line, a non-zero exit at once, no first-admin password shown or made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../src/db/open';
import { runCliAsync, spawnServe, tempDir } from '../helpers/appliance';

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
