// The master key: a wrong, replaced or missing master.key stops every command at start with one line; an unreadable secret fails one backup as data.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { BackupRunner } from '../../src/engine/runner';
import { createCredential } from '../../src/features/credentials/credentials.service';
import { createDevice } from '../../src/features/devices/devices.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { runCli, runCliAsync, startTestAppliance, tempDir, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate } from '../helpers/seed';
import { WebClient } from '../web/web-client';

describe('master key check at start-up', () => {
  let dir: string;
  let dataDir: string;
  let keyFile: string;
  let saved: string;

  before(() => {
    dir = tempDir();
    dataDir = path.join(dir, 'data');
    keyFile = path.join(dataDir, 'master.key');
    saved = path.join(dir, 'master.key.backup');
    const a = openAppliance({}, loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' }));
    createCredential(a.db, SYSTEM_ACTOR, a.secrets, { name: 'core', username: 'u', password: 'core-password-1' });
    a.close();
    copyFileSync(keyFile, saved);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const listUsers = () => runCli(['user', 'list', '--data-dir', dataDir]);

  function assertStopped(r: { status: number | null; stderr: string }, what: RegExp) {
    assert.equal(r.status, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `one line: ${r.stderr}`);
    assert.match(lines[0], what);
    assert.match(lines[0], /restore the master\.key/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }

  test('the right key opens; a replaced key stops every command, serve included', async () => {
    assert.equal(listUsers().status, 0);
    writeFileSync(keyFile, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    assertStopped(listUsers(), /is not the master key of this database/);
    const serve = await runCliAsync(['serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0']);
    assertStopped(serve, /master key/);
  });

  test('a missing key is not silently replaced by a new one', () => {
    rmSync(keyFile);
    assertStopped(listUsers(), /is missing/);
    assert.equal(existsSync(keyFile), false, 'no new key was created');
  });

  test('a damaged key file stops start-up too; the restored key works again', () => {
    writeFileSync(keyFile, 'not a key\n', { mode: 0o600 });
    assertStopped(listUsers(), /not a valid master key/);
    copyFileSync(saved, keyFile);
    assert.equal(listUsers().status, 0);
  });

  test('a database from before the check value is checked against a stored secret', () => {
    const a = openAppliance({}, loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' }));
    rawState(a.db, 'a database from before the check value existed', "DELETE FROM settings WHERE key = 'master_key_check'");
    a.close();
    writeFileSync(keyFile, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
    assertStopped(listUsers(), /does not decrypt the credentials/);
    copyFileSync(saved, keyFile);
    assert.equal(listUsers().status, 0);
  });
});

describe('a secret that cannot be decrypted', () => {
  let t: TestAppliance;
  let deviceId: number;
  before(async () => {
    t = await startTestAppliance();
    const { db, secrets } = t.services;
    const credential = createCredential(db, SYSTEM_ACTOR, secrets, { name: 'damaged', username: 'u', password: 'pw-damaged-1' }).id;
    deviceId = createDevice(db, SYSTEM_ACTOR, {
      name: 'dev',
      hostname: '127.0.0.1',
      port: 1,
      protocol: 'ssh',
      group_id: null,
      credential_id: credential,
      template_id: seedBuiltinTemplate(db, 'frr'),
      enabled: true,
      description: '',
      schedule: null,
      accept_host_key_change: false,
    }).id;
    // As if written under another master key: the authentication tag no longer matches.
    const blob = db.prepare('SELECT password_enc FROM credentials WHERE id = ?').get(credential) as { password_enc: Buffer };
    blob.password_enc[blob.password_enc.length - 1] ^= 0xff;
    rawState(db, 'a secret sealed under another master key', 'UPDATE credentials SET password_enc = ? WHERE id = ?', blob.password_enc, credential);
  });
  after(() => t.close());

  test('fails that device’s backup as CREDENTIAL_UNREADABLE, recorded, and the process goes on', async () => {
    const r = await new BackupRunner(t.services).backupDevice(deviceId, { trigger: 'manual' });
    assert.equal(r.failure, 'CREDENTIAL_UNREADABLE');
    assert.ok(r.backupId);
    assert.match(r.message ?? '', /master key/);
    const row = t.services.db.prepare('SELECT success, failure_type FROM backups WHERE id = ?').get(r.backupId) as { success: number; failure_type: string };
    assert.deepEqual(row, { success: 0, failure_type: 'CREDENTIAL_UNREADABLE' });
  });

  test('"Back up now" reports it as a failed job; the server keeps answering', async () => {
    const web = new WebClient(t.url);
    assert.equal((await web.login('admin', 'admin-password-1')).status, 303);
    const res = await web.fetch(`/api/devices/${deviceId}/backups`, { method: 'POST', headers: { 'X-CSRF-Token': await web.csrf() } });
    assert.equal(res.status, 202);
    const { id } = (await res.json()) as { id: string };
    let job: { state: string; failure: string | null } = { state: 'running', failure: null };
    for (let i = 0; i < 200 && job.state === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      job = (await (await web.fetch(`/api/backup-jobs/${id}`)).json()) as typeof job;
    }
    assert.deepEqual([job.state, job.failure], ['failed', 'CREDENTIAL_UNREADABLE']);
    assert.equal((await web.get('/devices')).res.status, 200);
  });
});
