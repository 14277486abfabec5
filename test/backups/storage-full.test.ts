// A full disk during a snapshot write: that backup fails as STORAGE_ERROR, nothing half-written stays, the server keeps answering, later backups work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { BackupRunner } from '../../src/engine/runner';
import { SnapshotStorageError } from '../../src/store/snapshots';
import { startSimulator, loadTranscript } from '../sim/simulator';
import { REPO_ROOT, startTestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
const isRoot = process.getuid?.() === 0;

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

test(
  'disk full while storing a snapshot: STORAGE_ERROR, nothing half-written, server alive',
  { skip: isRoot ? false : 'needs root to mount a 1 MB tmpfs', timeout: 120_000 },
  async (tc) => {
    const t = await startTestAppliance();
    // Incompressible lines: about 3 MB of text, about 2.3 MB gzipped.
    const big = Array.from({ length: 40_000 }, () => ` description ${randomBytes(48).toString('base64')}`).join('\n');
    const sim = await startSimulator({
      devices: [
        { name: 'big', transcript: frr, username: 'big', password: 'pw-big-123', commands: { 'show running-config': `hostname big\n${big}\nend\n` } },
        { name: 'small', transcript: frr, username: 'small', password: 'pw-small-123' },
      ],
    });
    const snapshotsDir = path.join(t.services.dataDir, 'snapshots');
    mkdirSync(snapshotsDir, { recursive: true });
    let mounted = false;
    try {
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', snapshotsDir], { stdio: 'pipe' });
        mounted = true;
      } catch (err) {
        tc.skip(`cannot mount a tmpfs here: ${(err as Error).message}`);
        return;
      }
      const { db, secrets, snapshots, config } = t.services;
      const tpl = seedBuiltinTemplate(db, 'frr');
      const bigId = seedDevice(db, {
        name: 'big',
        port: sim.port,
        credential_id: seedCredential(db, secrets, { name: 'c-big', username: 'big', password: 'pw-big-123' }),
        template_id: tpl,
      });
      const smallId = seedDevice(db, {
        name: 'small',
        port: sim.port,
        credential_id: seedCredential(db, secrets, { name: 'c-small', username: 'small', password: 'pw-small-123' }),
        template_id: tpl,
      });
      const runner = new BackupRunner({ db, secrets, snapshots, config: { ...config, backup: { ...config.backup, retries: 0 } } });

      const [failed] = await runner.run([bigId], { trigger: 'manual' });
      assert.equal(failed.success, false);
      assert.equal(failed.failure, 'STORAGE_ERROR', String(failed.message));
      assert.match(String(failed.message), /disk is full \(ENOSPC\)/);
      const row = db.prepare('SELECT * FROM backups WHERE device_id = ?').get(bigId) as {
        failure_type: string;
        config_snapshot_hash: string | null;
        finished_at: number | null;
        error_message: string;
      };
      assert.equal(row.failure_type, 'STORAGE_ERROR');
      assert.match(row.error_message, /disk is full/);
      assert.equal(row.config_snapshot_hash, null);
      assert.ok(row.finished_at !== null, 'the record is closed, not left running');
      assert.deepEqual(files(snapshotsDir), [], 'no temporary or partial file left behind');

      // The asynchronous write fails the same way and leaves nothing either.
      await assert.rejects(snapshots.putAsync(`${big}\nasync\n`), (err: unknown) => err instanceof SnapshotStorageError && err.code === 'ENOSPC');
      assert.deepEqual(files(snapshotsDir), []);

      const health = await fetch(`${t.url}/healthz`);
      assert.equal(health.status, 200, 'the server keeps answering');

      const [ok] = await runner.run([smallId], { trigger: 'manual' });
      assert.equal(ok.success, true, String(ok.message));
      assert.equal(files(snapshotsDir).length, 1, 'a backup that fits is stored');
    } finally {
      await sim.close();
      if (mounted) execFileSync('umount', [snapshotsDir]);
      await t.close();
    }
  },
);
