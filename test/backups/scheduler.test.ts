// The backup schedule against simulated devices: the appliance's schedule picks up devices added while it runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BackupRunner } from '../../src/engine/runner';
import { startScheduler } from '../../src/engine/scheduler';
import { startSimulator, loadTranscript } from '../sim/simulator';
import { REPO_ROOT, startTestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

test('the first device added to a running appliance is backed up at the next firing of its schedule, not a minute later', async () => {
  const t = await startTestAppliance();
  const sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'r1', password: 'pw-r1-123' }] });
  const { db, secrets, snapshots, config } = t.services;
  const deps = {
    db,
    secrets,
    snapshots,
    config: { ...config, backup: { ...config.backup, schedule: '* * * * * *', jitter: 0, retries: 0, reachability_interval: 0 } },
  };
  const scheduler = startScheduler(deps, new BackupRunner(deps));
  try {
    // the scheduler started with no device at all
    const id = seedDevice(db, {
      name: 'added-later',
      port: sim.port,
      credential_id: seedCredential(db, secrets, { name: 'c', username: 'r1', password: 'pw-r1-123' }),
      template_id: seedBuiltinTemplate(db, 'frr'),
    });
    const scheduled = db.prepare("SELECT success FROM backups WHERE device_id = ? AND trigger = 'schedule' AND finished_at IS NOT NULL");
    let row: { success: number } | undefined;
    for (const deadline = Date.now() + 10_000; !row && Date.now() < deadline; await sleep(100)) row = scheduled.get(id) as typeof row;
    assert.ok(row, 'a scheduled backup within 10 s (the schedules are re-read only once a minute)');
    assert.equal(row.success, 1);
  } finally {
    await scheduler.stop();
    await sim.close();
    await t.close();
  }
});
