// Fault injection: restore an older database copy, start `serve`, restore the replaced database back: every version it recorded is still readable.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { SWEEP_HOLD_FILE } from '../../src/features/maintenance/sweep-hold';
import { startSimulator } from '../sim/simulator';
import { runCliAsync, spawnServe, tempDir } from '../helpers/appliance';
import { assertDbCheckClean, assertEveryVersionReadable, fleetConfig, fleetDevices, seedFleet, writeConf } from '../helpers/fault';

test(
  'db restore of an older copy, serve, db prune, restore back: db check clean and every version of the replaced database readable',
  { timeout: 120_000 },
  async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const devices = fleetDevices(6);
    const sim = await startSimulator({ devices });
    try {
      const seeded = openAppliance({}, loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' }));
      seedFleet(seeded, devices, sim.port);
      seeded.close();
      // Even with no grace period at all, the restore's hold keeps the files.
      const conf = writeConf(dir, '[retention]\nkeep_days = 0\norphan_grace_hours = 0\n[backup]\nretries = 0\n');
      const args = ['--config', conf, '--data-dir', dataDir];
      const backupAll = async () => {
        const r = await runCliAsync(['backup', 'run', '--all', '--wait', ...args]);
        assert.equal(r.status, 0, r.stdout + r.stderr);
      };
      await backupAll();
      const copy = path.join(dir, 'older.db');
      assert.equal((await runCliAsync(['db', 'backup', copy, ...args])).status, 0);
      for (const round of [1, 2]) {
        devices.forEach((d, i) => (d.commands!['show running-config'] = fleetConfig(i, round)));
        await backupAll();
      }

      const restored = await runCliAsync(['db', 'restore', copy, ...args]);
      assert.equal(restored.status, 0, restored.stderr);
      const replaced = /kept as (\S+)/.exec(restored.stdout)?.[1];
      assert.ok(replaced && existsSync(replaced), restored.stdout);
      assert.ok(existsSync(path.join(dataDir, SWEEP_HOLD_FILE)), 'the restore holds the snapshot files');

      const served = await spawnServe(args, { CONFVAULT_LOG_LEVEL: 'info', CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *' });
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(await served.stop(), 0);
      const pruned = await runCliAsync(['db', 'prune', ...args]);
      assert.equal(pruned.status, 0, pruned.stderr);
      assert.match(pruned.stdout, /^snapshots\t0$/m);
      assert.match(pruned.stderr, /no snapshot file deleted/);

      // Back to the database that was replaced: nothing it recorded is missing.
      const back = await runCliAsync(['db', 'restore', replaced, ...args]);
      assert.equal(back.status, 0, back.stderr);
      await assertDbCheckClean(dataDir);
      const a = openAppliance({}, loadConfig({ dataDir }, { CONFVAULT_LOG_LEVEL: 'silent' }));
      try {
        assert.equal(assertEveryVersionReadable(a.db, a.snapshots), devices.length * 3);
      } finally {
        a.close();
      }
      // The operator keeps this database: the hold is lifted, and the sweep takes nothing this database names.
      const lifted = await runCliAsync(['db', 'prune', '--orphans', ...args]);
      assert.equal(lifted.status, 0, lifted.stderr);
      assert.ok(!existsSync(path.join(dataDir, SWEEP_HOLD_FILE)));
      await assertDbCheckClean(dataDir);
    } finally {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
