// Fault injection: `backup run` writers in two processes, `db prune` in others, no grace period, the database held busy while files are written: no stored version loses its file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DB_FILE_NAME } from '../../src/app/bootstrap';
import { openDatabase } from '../../src/db/open';
import { startSimulator } from '../sim/simulator';
import { runCliAsync, startTestAppliance } from '../helpers/appliance';
import { assertDbCheckClean, assertEveryVersionReadable, fleetConfig, fleetDevices, seedFleet, writeConf } from '../helpers/fault';

test(
  'two `backup run` processes, `db prune` while a writer is stalled and in a loop (orphan_grace_hours = 0): db check clean, every version readable',
  { timeout: 120_000 },
  async () => {
    const t = await startTestAppliance();
    const devices = fleetDevices(24).map((d) => ({ ...d, latency_ms: 20 }));
    const sim = await startSimulator({ devices });
    try {
      const groups = seedFleet(t.services, devices, sim.port, 2);
      const { db, dataDir } = t.services;
      // No grace period: only the lock protocol keeps a file a backup is writing from the sweep.
      const conf = writeConf(t.dir, '[retention]\norphan_grace_hours = 0\n[backup]\nretries = 0\nconcurrency = 12\n');
      const args = ['--config', conf, '--data-dir', dataDir];
      const running = () => db.prepare('SELECT count(*) FROM backups WHERE finished_at IS NULL').pluck().get() as number;
      let prunes = 0;
      const prune = async () => {
        const p = await runCliAsync(['db', 'prune', ...args]);
        assert.equal(p.status, 0, p.stderr);
        prunes++;
      };
      for (let round = 1; round <= 2; round++) {
        // New text for every device: every backup writes a new file.
        devices.forEach((d, i) => (d.commands!['show running-config'] = fleetConfig(i, round)));
        let writing = true;
        const writers = Promise.all(groups.map((g) => runCliAsync(['backup', 'run', '--group', String(g), '--wait', ...args]))).finally(
          () => (writing = false),
        );
        if (round === 1) {
          // A writer stalled between its file and its record (the database busy with a long transaction elsewhere):
          // the sweep runs exactly then.
          for (let i = 0; i < 400 && running() < 8; i++) await sleep(10);
          const blocker = openDatabase(path.join(dataDir, DB_FILE_NAME));
          blocker.exec('BEGIN IMMEDIATE');
          await sleep(1500);
          const stalled = prune();
          await sleep(1500);
          blocker.exec('ROLLBACK');
          blocker.close();
          await stalled;
        } else {
          for (let i = 0; writing && i < 40; i++) await prune();
        }
        // A busy machine may time a device out now and then; what must never happen is a backup failing to be stored.
        for (const r of await writers) assert.doesNotMatch(r.stdout + r.stderr, /INTERNAL|STORAGE_ERROR|Error:/, r.stdout + r.stderr);
      }
      assert.ok(prunes >= 2, `prunes ran while the writers wrote (${prunes})`);
      const stored = assertEveryVersionReadable(db, t.services.snapshots);
      assert.ok(stored >= devices.length * 1.5, `most backups stored a version (${stored})`);
      await assertDbCheckClean(dataDir);
    } finally {
      await sim.close();
      await t.close();
    }
  },
);
