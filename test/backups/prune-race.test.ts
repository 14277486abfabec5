// Fault injection: `backup run` writers in two processes, `db prune` run exactly between a snapshot file's write and its record, then in a loop, with no grace period: no stored version loses its file.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { watch, mkdirSync, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { DB_FILE_NAME } from '../../src/app/bootstrap';
import { openDatabase } from '../../src/db/open';
import { startSimulator } from '../sim/simulator';
import { cliArgv, REPO_ROOT, runCliAsync, startTestAppliance, type CliResult } from '../helpers/appliance';
import { assertDbCheckClean, assertEveryVersionReadable, fleetConfig, fleetDevices, seedFleet, writeConf } from '../helpers/fault';

/** A CLI child whose process the test can stop and continue (SIGSTOP/SIGCONT), with its result. */
function startCli(args: string[]): { pid: number; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [...cliArgv(), ...args], { cwd: REPO_ROOT, env: { ...process.env, CONFVAULT_LOG_LEVEL: 'silent' } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<CliResult>((resolve) => child.once('close', (status, signal) => resolve({ status, signal, stdout, stderr })));
  return { pid: child.pid!, done };
}

test(
  '`backup run` in two processes, `db prune` between a file and its record and in a loop (orphan_grace_hours = 0): db check clean, every version readable',
  { timeout: 120_000 },
  async () => {
    const t = await startTestAppliance();
    const devices = fleetDevices(16).map((d) => ({ ...d, latency_ms: 10 }));
    const sim = await startSimulator({ devices });
    const watchers: FSWatcher[] = [];
    try {
      const groups = seedFleet(t.services, devices, sim.port, 2);
      const { db, dataDir } = t.services;
      // No grace period: only the lock protocol keeps a file a backup is writing from the sweep.
      const conf = writeConf(t.dir, '[retention]\norphan_grace_hours = 0\n[backup]\nretries = 0\nconcurrency = 12\n');
      const args = ['--config', conf, '--data-dir', dataDir];
      const prune = async () => {
        const p = await runCliAsync(['db', 'prune', ...args]);
        assert.equal(p.status, 0, p.stderr);
      };
      const checkWriters = async (writers: { done: Promise<CliResult> }[]) => {
        // A busy machine may time a device out now and then; what must never happen is a backup failing to be stored.
        for (const r of await Promise.all(writers.map((w) => w.done)))
          assert.doesNotMatch(r.stdout + r.stderr, /INTERNAL|STORAGE_ERROR|Error:/, r.stdout + r.stderr);
      };

      // Round 1: the moment a snapshot file appears and no successful record names it yet, the writers are frozen
      // (kill -STOP) and a prune runs; then they go on.
      devices.forEach((d, i) => (d.commands!['show running-config'] = fleetConfig(i, 1)));
      const blocker = openDatabase(path.join(dataDir, DB_FILE_NAME));
      const stored = blocker.prepare('SELECT 1 FROM backups WHERE config_snapshot_hash = ? AND success = 1');
      const writers = groups.map((g) => startCli(['backup', 'run', '--group', String(g), '--wait', ...args]));
      let caught = 0;
      let busy = false;
      const pruneErrors: unknown[] = [];
      const onFile = async (name: string | null) => {
        const hash = /^([0-9a-f]{64})(\.gz)?$/.exec(name ?? '')?.[1];
        if (!hash || busy || caught >= 2) return;
        busy = true;
        // Holding the write lock keeps the record from committing while we look.
        blocker.exec('BEGIN IMMEDIATE');
        const between = !stored.get(hash);
        if (between) for (const w of writers) process.kill(w.pid, 'SIGSTOP');
        blocker.exec('ROLLBACK');
        if (between) {
          caught++;
          try {
            await prune();
          } catch (err) {
            pruneErrors.push(err);
          } finally {
            for (const w of writers) process.kill(w.pid, 'SIGCONT');
          }
        }
        busy = false;
      };
      for (let i = 0; i < 256; i++) {
        const sub = path.join(dataDir, 'snapshots', i.toString(16).padStart(2, '0'));
        mkdirSync(sub, { recursive: true });
        watchers.push(watch(sub, (_event, name) => void onFile(name)));
      }
      await checkWriters(writers);
      for (const w of watchers) w.close();
      blocker.close();
      assert.ok(caught >= 1, 'a prune ran between a file and its record');

      // Round 2: prunes in a loop while both writers run.
      devices.forEach((d, i) => (d.commands!['show running-config'] = fleetConfig(i, 2)));
      const round2 = groups.map((g) => startCli(['backup', 'run', '--group', String(g), '--wait', ...args]));
      let writing = true;
      const finished = checkWriters(round2).finally(() => (writing = false));
      for (let i = 0; writing && i < 40; i++) await prune();
      await finished;

      const versions = assertEveryVersionReadable(db, t.services.snapshots);
      assert.ok(versions >= devices.length * 1.5, `most backups stored a version (${versions})`);
      await assertDbCheckClean(dataDir);
    } finally {
      for (const w of watchers) w.close();
      await sim.close();
      await t.close();
    }
  },
);
