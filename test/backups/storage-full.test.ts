// A full disk during a snapshot write: that backup fails as STORAGE_ERROR, nothing half-written stays, the server keeps answering, later backups work, db check stays clean.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { BackupRunner } from '../../src/engine/runner';
import { JobExecutor } from '../../src/engine/jobs';
import { requestBackupJob } from '../../src/features/backups/jobs.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { SnapshotStorageError } from '../../src/store/snapshots';
import { startSimulator, loadTranscript } from '../sim/simulator';
import { REPO_ROOT, runCliAsync, startTestAppliance, tempDir } from '../helpers/appliance';
import { fleetConfig, fleetDevices, seedFleet, writeConf } from '../helpers/fault';
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

      // The server keeps answering, and says what went wrong until a write goes through again.
      const health = await fetch(`${t.url}/healthz`);
      assert.equal(health.status, 503);
      assert.match(await health.text(), /WRITE_FAILED.*ENOSPC/);

      const [ok] = await runner.run([smallId], { trigger: 'manual' });
      assert.equal(ok.success, true, String(ok.message));
      assert.equal(files(snapshotsDir).length, 1, 'a backup that fits is stored');
      assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
      await assertDbCheckClean(t.services.dataDir);
    } finally {
      await sim.close();
      if (mounted) execFileSync('umount', [snapshotsDir]);
      await t.close();
    }
  },
);

/** `confvault db check` (the judge of the snapshot lifecycle) passes on the data dir once space is back. */
async function assertDbCheckClean(dataDir: string): Promise<void> {
  const check = await runCliAsync(['db', 'check', '--data-dir', dataDir]);
  assert.equal(check.status, 0, `db check after the full disk:\n${check.stdout}${check.stderr}`);
}

/** Fill the file system holding `dir` with one file until it refuses more; returns the file. */
function fillDisk(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'w');
  try {
    for (let chunk = 1 << 20; chunk >= 512;) {
      try {
        writeSync(fd, Buffer.alloc(chunk, 1));
      } catch {
        chunk >>= 1;
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

/**
 * A test appliance whose data dir is a 20 MB tmpfs (free-space floor 1 MB, no retries); null when no tmpfs can be
 * mounted here (the test is skipped).
 */
async function fullDiskAppliance(tc: { skip(message: string): void }) {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', dataDir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    tc.skip(`cannot mount a tmpfs here: ${(err as Error).message}`);
    return null;
  }
  const conf = writeConf(dir, '[storage]\nmin_free_mb = 1\n[backup]\nretries = 0\n');
  return { dir, dataDir, t: await startTestAppliance({ CONFVAULT_CONFIG: conf }, { dataDir }) };
}

test(
  'data dir on a full 20 MB tmpfs: reads answer 200, /healthz says 503 and why; once space is freed no record stays running and every device backs up',
  { skip: isRoot ? false : 'needs root to mount a tmpfs', timeout: 120_000 },
  async (tc) => {
    const full = await fullDiskAppliance(tc);
    if (!full) return;
    const { dir, dataDir, t } = full;
    const devices = fleetDevices(4);
    const sim = await startSimulator({ devices });
    try {
      const { db, secrets, snapshots, config } = t.services;
      seedFleet(t.services, devices, sim.port);
      const ids = db.prepare('SELECT id FROM devices ORDER BY id').pluck().all() as number[];
      const runner = new BackupRunner({ db, secrets, snapshots, config });
      const first = await runner.run(ids, { trigger: 'manual' });
      assert.ok(
        first.every((r) => r.success),
        JSON.stringify(first),
      );
      const key = await t.keyFor({ permissions: 'all' });
      assert.equal((await fetch(`${t.url}/healthz`)).status, 200);

      // The disk fills while the backups are in flight: their records are open and cannot be closed.
      devices.forEach((d, i) => {
        d.commands!['show running-config'] = fleetConfig(i, 1);
        d.latency_ms = 40;
      });
      const running = () => db.prepare('SELECT count(*) FROM backups WHERE finished_at IS NULL').pluck().get() as number;
      const inFlight = runner.run(ids, { trigger: 'manual' });
      for (let i = 0; i < 200 && running() < ids.length; i++) await sleep(10);
      const filler = fillDisk(dataDir);
      const full = await inFlight;
      assert.ok(
        full.every((r) => !r.success && r.failure === 'STORAGE_ERROR'),
        JSON.stringify(full),
      );
      assert.ok(running() > 0, 'the full disk left records open');
      assert.ok((await runner.run([ids[0]], { trigger: 'manual' }))[0].message?.includes('already running'), 'while they stay open, the device is skipped');

      // Reads do not depend on a write: the key's first use (a last-used write) included.
      assert.equal((await t.api('/api/v1/devices', { key })).status, 200);
      const content = await t.api(`/api/v1/backups/${first[0].backupId}/content`, { key });
      assert.equal(content.status, 200);
      assert.match(((await content.json()) as { config_text: string }).config_text, /hostname fleet\d/);
      const health = await fetch(`${t.url}/healthz`);
      assert.equal(health.status, 503);
      const body = (await health.json()) as { status: string; storage: { problems: { code: string }[] } };
      assert.notEqual(body.status, 'ok');
      assert.ok(
        body.storage.problems.some((p) => p.code === 'LOW_DISK_SPACE'),
        JSON.stringify(body),
      );

      // Space comes back: records the full disk left open are closed without a restart, and every device backs up.
      rmSync(filler);
      for (let i = 0; i < 100 && running() > 0; i++) await sleep(100);
      assert.equal(running(), 0, 'no backup left "running"');
      const after = await runner.run(ids, { trigger: 'manual' });
      assert.ok(
        after.every((r) => r.success),
        JSON.stringify(after),
      );
      assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
      await assertDbCheckClean(t.services.dataDir);
    } finally {
      await sim.close();
      await t.close();
      execFileSync('umount', [dataDir]);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "a job whose item records the full disk refused: they are written once space is freed, with each device's outcome, and the job finishes",
  { skip: isRoot ? false : 'needs root to mount a tmpfs', timeout: 120_000 },
  async (tc) => {
    const full = await fullDiskAppliance(tc);
    if (!full) return;
    const { dir, dataDir, t } = full;
    const devices = fleetDevices(3);
    devices.forEach((d) => (d.latency_ms = 40));
    const sim = await startSimulator({ devices });
    try {
      const { db, secrets, snapshots, config } = t.services;
      seedFleet(t.services, devices, sim.port);
      const ids = db.prepare('SELECT id FROM devices ORDER BY id').pluck().all() as number[];
      const executor = new JobExecutor(db, new BackupRunner({ db, secrets, snapshots, config }));
      const job = requestBackupJob(db, SYSTEM_ACTOR, { deviceIds: ids }, executor.owner);
      const items = () => db.prepare('SELECT state, failure_type, backup_id FROM backup_job_items WHERE job_id = ? ORDER BY device_id').all(job.id);
      const jobState = () => db.prepare('SELECT state FROM backup_jobs WHERE id = ?').pluck().get(job.id) as string;

      // The disk fills while the devices are being backed up: neither their backup records nor their job items can be closed.
      const running = () => db.prepare("SELECT count(*) FROM backup_job_items WHERE job_id = ? AND state = 'running'").pluck().get(job.id) as number;
      const results = executor.execute(job.id);
      for (let i = 0; i < 200 && running() < ids.length; i++) await sleep(10);
      const filler = fillDisk(dataDir);
      const full = await results;
      assert.equal(full.length, ids.length, 'every device of the job ran to its end');
      assert.ok(
        full.every((r) => !r.success && r.failure === 'STORAGE_ERROR'),
        JSON.stringify(full),
      );
      assert.equal(jobState(), 'running', 'the job cannot be closed either');

      // Space comes back: the items say what happened to each device, and the job is finished (not interrupted).
      rmSync(filler);
      for (let i = 0; i < 100 && jobState() === 'running'; i++) await sleep(100);
      assert.equal(jobState(), 'finished');
      assert.deepEqual(
        items(),
        [...full].sort((a, b) => a.deviceId - b.deviceId).map((r) => ({ state: 'failed', failure_type: 'STORAGE_ERROR', backup_id: r.backupId })),
      );
    } finally {
      await sim.close();
      await t.close();
      execFileSync('umount', [dataDir]);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
