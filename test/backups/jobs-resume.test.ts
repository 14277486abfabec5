// Resuming a job a stopped process left interrupted: the service (requeue, conflicts, audit), the CLI
// (`backup jobs resume ID`, in this process or for a running server), the Jobs page's Resume button, and `serve`,
// which names interrupted jobs at start and resumes nothing on its own.
// Heavy scenario: runs in npm run test:lab (test/run.sh), beside the device lab; CI runs it after npm test.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../../src/errors';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { closeDeadJobs, getBackupJob, listBackupJobs, requestBackupJob, resumeBackupJob, JOB_STALE_MS } from '../../src/features/backups/jobs.service';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { REPO_ROOT, runCliAsync, spawnServe, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from '../web/web-client';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
let t: TestAppliance;
let sim: RunningSimulator;
const ids: number[] = [];

before(async () => {
  t = await startTestAppliance();
  sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, username: 'r1', password: 'pw-resume-1' }] });
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  const cred = seedCredential(db, secrets, { name: 'c-resume', username: 'r1', password: 'pw-resume-1' });
  for (const name of ['rs1', 'rs2', 'rs3']) ids.push(seedDevice(db, { name, port: sim.port, credential_id: cred, template_id: tpl }));
});
after(async () => {
  await sim.close();
  await t.close();
});

/** A job a process started and then died in: no heartbeat for longer than JOB_STALE_MS, closed as interrupted by the sweep. */
function interruptedJob(deviceIds: number[] = ids): string {
  const { db } = t.services;
  const job = requestBackupJob(db, SYSTEM_ACTOR, { deviceIds }, 'a-process-that-died', Date.now() - JOB_STALE_MS - 5_000);
  closeDeadJobs(db);
  const view = getBackupJob(db, SYSTEM_ACTOR.principal, job.id);
  assert.equal(view.state, 'interrupted');
  assert.equal(view.progress.interrupted, deviceIds.length);
  return job.id;
}

test('reading a dead job writes nothing: it reads as interrupted, as the sweep then stores it', () => {
  const { db } = t.services;
  const job = requestBackupJob(db, SYSTEM_ACTOR, { deviceIds: ids }, 'a-process-that-died', Date.now() - JOB_STALE_MS - 5_000);
  const stored = () => db.prepare('SELECT state FROM backup_jobs WHERE id = ?').pluck().get(job.id);
  const read = () => {
    const listed = listBackupJobs(db, SYSTEM_ACTOR.principal).find((j) => j.id === job.id);
    const one = getBackupJob(db, SYSTEM_ACTOR.principal, job.id);
    return { listed: [listed?.state, listed?.progress.interrupted], one: [one.state, one.can_resume, one.items.map((i) => i.state)] };
  };
  const before = read();
  assert.equal(stored(), 'running', 'the reads left the job as stored');
  assert.equal(
    listBackupJobs(db, SYSTEM_ACTOR.principal, { openOnly: true }).find((j) => j.id === job.id),
    undefined,
    'not listed as open',
  );
  assert.equal(closeDeadJobs(db), 1);
  assert.equal(stored(), 'interrupted');
  assert.deepEqual(before, read(), 'the sweep stored what the readers were shown');
  assert.deepEqual(before.listed, ['interrupted', ids.length]);
});

const jobOf = (id: string) => getBackupJob(t.services.db, SYSTEM_ACTOR.principal, id);
async function waitFinished(id: string): Promise<ReturnType<typeof jobOf>> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const j = jobOf(id);
    if (j.state !== 'queued' && j.state !== 'running') return j;
  }
  assert.fail(`job ${id} did not end`);
}

test('the service queues an interrupted job again, audited; anything else is a conflict', () => {
  const { db } = t.services;
  const id = interruptedJob();
  assert.equal(jobOf(id).can_resume, true);
  const r = resumeBackupJob(db, SYSTEM_ACTOR, id, null);
  assert.equal(r.resumed, ids.length);
  const j = jobOf(id);
  assert.deepEqual([j.state, j.progress.queued, j.progress.interrupted, j.can_resume], ['queued', ids.length, 0, false]);
  const audit = db.prepare("SELECT details FROM audit_log WHERE action = 'backup.resume' AND target = ?").pluck().all(`job ${id}`) as string[];
  assert.equal(audit.length, 1);
  assert.equal(JSON.parse(audit[0]).resumed, ids.length);
  assert.throws(
    () => resumeBackupJob(db, SYSTEM_ACTOR, id, null),
    (e) => e instanceof ApiError && e.status === 409,
  );
  assert.throws(
    () => resumeBackupJob(db, SYSTEM_ACTOR, 'no-such-job', null),
    (e) => e instanceof ApiError && e.status === 404,
  );
});

test('confvault backup jobs resume ID without a server runs the job here; --help names it', async () => {
  const help = await runCliAsync(['backup', '--help']);
  assert.match(help.stdout, /confvault backup jobs resume JOB_ID/);
  const id = interruptedJob();
  const r = await runCliAsync(['backup', 'jobs', 'resume', id, '--data-dir', t.services.dataDir]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n').length, ids.length, 'one summary line per resumed device');
  const j = jobOf(id);
  assert.deepEqual([j.state, j.progress.succeeded, j.progress.total], ['finished', ids.length, ids.length]);
  const again = await runCliAsync(['backup', 'jobs', 'resume', id, '--data-dir', t.services.dataDir]);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /only an interrupted job can be resumed/);
  assert.equal((await runCliAsync(['backup', 'jobs', 'resume', '--data-dir', t.services.dataDir])).status, 2);
});

test('serve names interrupted jobs at start and leaves them; resumed from the CLI, the running server runs them', { timeout: 90_000 }, async () => {
  const id = interruptedJob();
  const dataArgs = ['--data-dir', t.services.dataDir];
  const served = await spawnServe([...dataArgs, '--listen', '127.0.0.1:0'], { CONFVAULT_LOG_LEVEL: 'info', CONFVAULT_BACKUP_SCHEDULE: '0 0 1 1 *' });
  try {
    for (const deadline = Date.now() + 10_000; !served.output().stdout.includes('are not resumed on their own') && Date.now() < deadline;) await sleep(50);
    const line = served
      .output()
      .stdout.split('\n')
      .find((l) => l.includes('are not resumed on their own'));
    assert.ok(line, `serve says which jobs it could resume:\n${served.output().stdout}`);
    assert.match(line, /confvault backup jobs resume ID/);
    assert.ok((JSON.parse(line) as { jobs: { id: string }[] }).jobs.some((j) => j.id === id));
    await sleep(2500);
    assert.equal(jobOf(id).state, 'interrupted', 'nothing resumed silently');
    // A job an earlier test of this file left queued is picked up by this serve at its start and backs up the same
    // devices: let it end, or the resumed job finds their backups "already running" and skips them (as it should).
    const others = () => listBackupJobs(t.services.db, SYSTEM_ACTOR.principal, { openOnly: true }).filter((j) => j.id !== id && j.state !== 'interrupted');
    for (const deadline = Date.now() + 30_000; others().length > 0 && Date.now() < deadline;) await sleep(100);
    assert.deepEqual(others(), [], 'the jobs serve picked up at start have ended');

    const r = await runCliAsync(['backup', 'jobs', 'resume', id, ...dataArgs]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /queued again for the running server/);
    const j = await waitFinished(id);
    assert.deepEqual(
      [j.state, j.progress.succeeded],
      ['finished', ids.length],
      `the resumed job: ${JSON.stringify(j)}\nserve:\n${served.output().stdout.slice(-4000)}`,
    );
  } finally {
    await served.stop();
  }
});

test('the Jobs page offers Resume to holders of backups.run, and it runs the job; others get no button and a 403', async () => {
  const { db } = t.services;
  createRole(db, SYSTEM_ACTOR, { name: 'resume-viewer', permissions: ['devices.view', 'backups.view'] });
  await createUser(db, SYSTEM_ACTOR, { username: 'rviewer', password: 'rviewer-password-1', role: 'resume-viewer', groups: null, timezone: null });
  await createUser(db, SYSTEM_ACTOR, { username: 'radmin', password: 'radmin-password-1', role: 'administrator', groups: null, timezone: null });
  const viewer = new WebClient(t.url);
  const admin = new WebClient(t.url);
  assert.equal((await viewer.login('rviewer', 'rviewer-password-1')).status, 303);
  assert.equal((await admin.login('radmin', 'radmin-password-1')).status, 303);
  const id = interruptedJob();

  assert.doesNotMatch((await viewer.get(`/jobs/${id}`)).html, /action="\/jobs\/[^"]+\/resume"/);
  assert.equal((await viewer.post(`/jobs/${id}/resume`, {}, { csrf: true })).res.status, 403);
  assert.equal(jobOf(id).state, 'interrupted');

  assert.match((await admin.get('/jobs')).html, new RegExp(`action="/jobs/${id}/resume"`));
  const { res } = await admin.post(`/jobs/${id}/resume`, {}, { csrf: true });
  assert.equal(res.status, 303);
  const j = await waitFinished(id);
  assert.deepEqual([j.state, j.progress.succeeded], ['finished', ids.length]);
  assert.ok(db.prepare("SELECT actor FROM audit_log WHERE action = 'backup.resume' AND target = ?").pluck().all(`job ${id}`).includes('radmin'));
});

test('a user limited to some groups resumes only the devices of those groups; the job stays resumable for the rest', async () => {
  const { db, secrets } = t.services;
  const [a, b] = [seedGroup(db, 'resume-A'), seedGroup(db, 'resume-B')];
  const refs = {
    credential_id: seedCredential(db, secrets, { name: 'c-scoped', username: 'r1', password: 'pw-resume-1' }),
    template_id: seedBuiltinTemplate(db, 'frr'),
  };
  const inA = seedDevice(db, { name: 'rs-a', port: sim.port, group_id: a, ...refs });
  const inB = seedDevice(db, { name: 'rs-b', port: sim.port, group_id: b, ...refs });
  createRole(db, SYSTEM_ACTOR, { name: 'resume-runner', permissions: ['devices.view', 'backups.view', 'backups.run'] });
  await createUser(db, SYSTEM_ACTOR, { username: 'rscoped', password: 'rscoped-password-1', role: 'resume-runner', groups: [a], timezone: null });
  const scoped = new WebClient(t.url);
  assert.equal((await scoped.login('rscoped', 'rscoped-password-1')).status, 303);
  const id = interruptedJob([inA, inB]);
  const { res } = await scoped.post(`/jobs/${id}/resume`, {}, { csrf: true });
  assert.equal(res.status, 303);
  const j = await waitFinished(id);
  const state = (device: number) => j.items.find((i) => i.device_id === device)?.state;
  assert.deepEqual([state(inA), state(inB)], ['succeeded', 'interrupted'], "the other group's device is left as it was");
  assert.equal(j.state, 'interrupted', 'a job with a backup still to resume is not finished');

  await createUser(db, SYSTEM_ACTOR, { username: 'rall', password: 'rall-password-1', role: 'administrator', groups: null, timezone: null });
  const admin = new WebClient(t.url);
  assert.equal((await admin.login('rall', 'rall-password-1')).status, 303);
  assert.equal((await admin.post(`/jobs/${id}/resume`, {}, { csrf: true })).res.status, 303);
  const k = await waitFinished(id);
  assert.deepEqual([k.state, k.items.find((i) => i.device_id === inB)?.state], ['finished', 'succeeded']);
});
