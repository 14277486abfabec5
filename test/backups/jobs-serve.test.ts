// Backup jobs across processes: `backup run --no-wait` queued for a real `serve` child, `backup jobs [cancel]`, a killed CLI run shown as interrupted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeDeadJobs, getBackupJob, JOB_STALE_MS, type JobView } from '../../src/features/backups/jobs.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { cliArgv, REPO_ROOT, runCliAsync, spawnServe, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

let t: TestAppliance;
let sim: RunningSimulator;
let dataArgs: string[];
let group: number;
let stallGroup: number;
const ids: number[] = [];

before(async () => {
  t = await startTestAppliance();
  dataArgs = ['--data-dir', t.services.dataDir];
  sim = await startSimulator({
    devices: [
      { name: 'js1', transcript: frr, username: 'js1', password: 'pw-js-12345' },
      { name: 'js2', transcript: frr, username: 'js2', password: 'pw-js-12345' },
      { name: 'stall', transcript: frr, username: 'stall', password: 'pw-js-12345', failure: 'stall_mid_output' },
    ],
  });
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  group = seedGroup(db, 'queued-site');
  stallGroup = seedGroup(db, 'stall-site');
  for (const name of ['js1', 'js2']) {
    const cred = seedCredential(db, secrets, { name: `c-${name}`, username: name, password: 'pw-js-12345' });
    ids.push(seedDevice(db, { name: `dev-${name}`, port: sim.port, credential_id: cred, template_id: tpl, group_id: group }));
  }
  const stallCred = seedCredential(db, secrets, { name: 'c-stall', username: 'stall', password: 'pw-js-12345' });
  seedDevice(db, { name: 'dev-stall', port: sim.port, credential_id: stallCred, template_id: tpl, group_id: stallGroup });
});
after(async () => {
  await sim?.close();
  await t?.close();
});

async function jobs(all = true): Promise<JobView[]> {
  const r = await runCliAsync(['backup', 'jobs', ...(all ? ['--all'] : []), '--json', ...dataArgs]);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as JobView[];
}

/**
 * Wait for a job's state by reading it in this process from the same database (the CLI's listing of it is checked
 * where the test is about it): a CLI child for each poll cost more CPU than the rest of the file.
 */
async function waitFor(jobId: string, done: (j: JobView) => boolean, what: string, ms = 45_000): Promise<JobView> {
  const until = Date.now() + ms;
  for (;;) {
    const j = getBackupJob(t.services.db, SYSTEM_ACTOR.principal, jobId);
    if (done(j)) return j;
    assert.ok(Date.now() < until, `${what}: ${JSON.stringify(j)}`);
    await sleep(100);
  }
}

const jobCount = () => t.services.db.prepare('SELECT count(*) FROM backup_jobs').pluck().get() as number;

test('--no-wait with no server running says so, queues nothing and exits 1', async () => {
  const before = jobCount();
  const r = await runCliAsync(['backup', 'run', '--group', String(group), '--no-wait', ...dataArgs]);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /no confvault server is running on .*: nothing queued/);
  assert.equal(r.stdout, '');
  assert.equal(jobCount(), before);
});

test('a job queued by the CLI is picked up by the running server; first versions say "first", then no change', { timeout: 120_000 }, async () => {
  const served = await spawnServe([...dataArgs, '--listen', '127.0.0.1:0'], { CONFVAULT_LOG_LEVEL: 'info', CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *' });
  try {
    const q = await runCliAsync(['backup', 'run', '--group', String(group), '--no-wait', ...dataArgs]);
    assert.equal(q.status, 0, q.stderr);
    const jobId = q.stdout.trim();
    assert.match(jobId, /^[0-9a-f-]{36}$/);
    assert.match(q.stderr, /queued job .* \(group queued-site, 2 device\(s\)\)/);
    const done = await waitFor(jobId, (j) => j.state === 'finished', 'the server ran the queued job');
    assert.equal(done.requested_by.startsWith('cli:'), true);
    assert.equal(done.door, 'cli');
    assert.deepEqual([done.progress.done, done.progress.total, done.progress.first, done.progress.failed], [2, 2, 2, 0]);
    assert.match(served.output().stdout, /backup job picked up/);

    // The tab-separated listing: nothing open by default, the job with --all.
    const open = await runCliAsync(['backup', 'jobs', ...dataArgs]);
    assert.equal(open.status, 0, open.stderr);
    assert.equal(open.stdout, '');
    const all = await runCliAsync(['backup', 'jobs', '--all', ...dataArgs]);
    const line = all.stdout
      .split('\n')
      .find((l) => l.startsWith(jobId))!
      .split('\t');
    assert.deepEqual([line[1], line[2], line[3]], ['finished', '2/2', 'group queued-site']);
    assert.equal(line[6], 'first=2 changed=0 unchanged=0 failed=0 other=0');

    // A second run in the server: no change this time.
    const again = await runCliAsync(['backup', 'run', '--group', String(group), '--no-wait', ...dataArgs]);
    const second = await waitFor(again.stdout.trim(), (j) => j.state === 'finished', 'second job');
    assert.deepEqual([second.progress.first, second.progress.changed, second.progress.unchanged], [0, 0, 2]);

    // `backup jobs cancel` stops a running backup in the server within seconds.
    const stall = await runCliAsync(['backup', 'run', '--group', String(stallGroup), '--no-wait', ...dataArgs]);
    const stallId = stall.stdout.trim();
    await waitFor(stallId, (j) => j.progress.running === 1, 'the stalling backup runs');
    const began = Date.now();
    const cancel = await runCliAsync(['backup', 'jobs', 'cancel', stallId, ...dataArgs]);
    assert.equal(cancel.status, 0, cancel.stderr);
    assert.match(cancel.stderr, /0 queued backup\(s\) cancelled, 1 running backup\(s\) stopping/);
    const cancelled = await waitFor(stallId, (j) => j.state === 'cancelled', 'the job ends cancelled', 15_000);
    assert.ok(Date.now() - began < 10_000, 'stopped within seconds');
    assert.equal(cancelled.progress.cancelled, 1);
    assert.match(cancelled.cancelled_by ?? '', /^cli:/);
    const again2 = await runCliAsync(['backup', 'jobs', 'cancel', stallId, ...dataArgs]);
    assert.equal(again2.status, 1, 'nothing left to cancel');
  } finally {
    assert.equal(await served.stop(), 0);
  }
});

test('`backup run --wait` prints "first" in the changed column for a first version, then "no"', { timeout: 60_000 }, async () => {
  const { db, secrets } = t.services;
  const g = seedGroup(db, 'wait-site');
  const cred = seedCredential(db, secrets, { name: 'c-wait', username: 'js1', password: 'pw-js-12345' });
  const id = seedDevice(db, { name: 'dev-wait', port: sim.port, credential_id: cred, template_id: seedBuiltinTemplate(db, 'frr'), group_id: g });
  const first = await runCliAsync(['backup', 'run', '--group', String(g), ...dataArgs]);
  assert.equal(first.status, 0, first.stderr);
  assert.deepEqual(first.stdout.trim().split('\t').slice(0, 4), [String(id), 'dev-wait', 'ok', 'first']);
  assert.match(first.stderr, /^1 device\(s\): 1 ok, 0 changed, 0 not backed up; 1 first version\(s\) stored$/m);
  const second = await runCliAsync(['backup', 'run', '--device', String(id), '--wait', ...dataArgs]);
  assert.equal(second.stdout.trim().split('\t')[3], 'no');
  assert.match(second.stderr, /^1 device\(s\): 1 ok, 0 changed, 0 not backed up$/m, 'the summary line as before');
  const usage = await runCliAsync(['backup', 'run', '--device', String(id), '--wait', '--no-wait', ...dataArgs]);
  assert.equal(usage.status, 2);
});

/** A `backup run --group <stall-site>` child, once its stalling backup runs: the job id. */
async function cliStuckOnStall(): Promise<{ child: ReturnType<typeof spawn>; jobId: string }> {
  const child = spawn(process.execPath, [...cliArgv(), 'backup', 'run', '--group', String(stallGroup), ...dataArgs], {
    cwd: REPO_ROOT,
    env: { ...process.env, CONFVAULT_LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  const running = () =>
    t.services.db
      .prepare("SELECT j.id FROM backup_jobs j JOIN backup_job_items i ON i.job_id = j.id WHERE j.state = 'running' AND i.state = 'running'")
      .pluck()
      .get() as string | undefined;
  const until = Date.now() + 30_000;
  while (!running()) {
    assert.ok(Date.now() < until, 'the CLI job started');
    await sleep(100);
  }
  return { child, jobId: running()! };
}

test('Ctrl-C on `backup run` cancels its job: the running backup stops, the job says cancelled, exit 1', { timeout: 60_000 }, async () => {
  const { child, jobId } = await cliStuckOnStall();
  const began = Date.now();
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGINT');
  assert.equal(await exited, 1);
  assert.ok(Date.now() - began < 10_000, 'stopped within seconds');
  const j = (await jobs()).find((x) => x.id === jobId)!;
  assert.equal(j.state, 'cancelled');
  assert.equal(j.progress.cancelled, 1);
});

test('a CLI run killed mid-job leaves its items interrupted, never running forever', { timeout: 60_000 }, async () => {
  const { child, jobId } = await cliStuckOnStall();
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  // Right after the kill the heartbeat is fresh: still running. Once it is older than JOB_STALE_MS, the sweep closes it.
  assert.equal((await jobs()).find((j) => j.id === jobId)?.state, 'running');
  assert.equal(closeDeadJobs(t.services.db, Date.now() + JOB_STALE_MS + 1000), 1);
  const j = (await jobs()).find((x) => x.id === jobId)!;
  assert.equal(j.state, 'interrupted');
  assert.deepEqual([j.progress.interrupted, j.progress.running, j.progress.queued], [1, 0, 0]);
});
