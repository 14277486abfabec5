// Crash safety: SIGKILL in the middle of a run of many backups loses nothing committed and leaves nothing half-done after restart.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { readBackupText } from '../../src/features/backups/backups.service';
import type { BackupRow } from '../../src/features/backups/backups.store';
import { startSimulator, loadTranscript, type SimDevice } from '../sim/simulator';
import { cliArgv, REPO_ROOT, runCliAsync, spawnServe, startTestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

test('SIGKILL during `backup run --all`, then restart: no record left running, every snapshot intact, db check clean', async () => {
  const t = await startTestAppliance();
  // Slow devices with distinct configurations, so the kill lands while many backups are in flight.
  const devices: SimDevice[] = Array.from({ length: 60 }, (_, i) => ({
    name: `dev${i}`,
    transcript: frr,
    username: `dev${i}`,
    password: 'pw-crash-123',
    latency_ms: 40,
    chunk_bytes: 256,
    commands: { 'show running-config': frr.commands['show running-config'].replace('hostname r1-lab', `hostname dev${i}`) },
  }));
  const sim = await startSimulator({ devices });
  try {
    const { db, secrets, snapshots } = t.services;
    const tpl = seedBuiltinTemplate(db, 'frr');
    for (let i = 0; i < devices.length; i++) {
      seedDevice(db, {
        name: `crash-${i}`,
        port: sim.port,
        credential_id: seedCredential(db, secrets, { name: `cc${i}`, username: `dev${i}`, password: 'pw-crash-123' }),
        template_id: tpl,
      });
    }
    const child = spawn(process.execPath, [...cliArgv(), 'backup', 'run', '--all', '--data-dir', t.services.dataDir], {
      cwd: REPO_ROOT,
      env: { ...process.env, CONFVAULT_BACKUP_CONCURRENCY: '8' },
      stdio: 'ignore',
    });
    const counts = () =>
      db.prepare('SELECT sum(finished_at IS NOT NULL) AS done, sum(finished_at IS NULL) AS running FROM backups').get() as {
        done: number | null;
        running: number | null;
      };
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const c = counts();
      if ((c.done ?? 0) >= 5 && (c.running ?? 0) >= 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const before = counts();
    assert.ok((before.running ?? 0) >= 1, 'the kill must land while backups are running');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    assert.ok((counts().running ?? 0) >= 1, 'the killed process left records running');

    // Restart: the appliance closes what the crash left open.
    const served = await spawnServe(['--data-dir', t.services.dataDir, '--listen', '127.0.0.1:0'], {
      CONFVAULT_LOG_LEVEL: 'info',
      CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *',
    });
    assert.equal(await served.stop(), 0);
    assert.equal(counts().running ?? 0, 0, 'no record left running');
    const interrupted = db.prepare("SELECT count(*) FROM backups WHERE failure_type = 'INTERRUPTED' AND success = 0").pluck().get() as number;
    assert.ok(interrupted >= 1);

    // Everything committed before the kill is intact.
    const ok = db.prepare('SELECT * FROM backups WHERE success = 1').all() as BackupRow[];
    assert.ok(ok.length >= (before.done ?? 0) - 1);
    for (const row of ok) assert.ok(readBackupText(snapshots, null, row)?.includes('hostname dev'), `backup ${row.id} readable and verified`);

    const check = await runCliAsync(['db', 'check', '--data-dir', t.services.dataDir]);
    assert.equal(check.status, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /snapshots missing: 0/);
    assert.match(check.stdout, /backups still marked running: 0/);
  } finally {
    await sim.close();
    await t.close();
  }
});
