// Bulk backups and the Jobs page over real HTTP: a group, a selection, "all"; first versions said as such; scope, permissions, cancel, audit, queue depth.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import type { JobItemView, JobView } from '../../src/features/backups/jobs.service';
import { startSimulator, loadTranscript, type RunningSimulator } from '../sim/simulator';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import type { Permission } from '../../src/identity/permissions';
import { WebClient } from './web-client';
import { postPairs } from './form-post';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));
type Job = JobView & { items: JobItemView[] };

let t: TestAppliance;
let sim: RunningSimulator;
const g: Record<string, number> = {};
const d: Record<string, number> = {};
const users: Record<string, WebClient> = {};

before(async () => {
  // One backup at a time: a stalling device holds the others in the queue.
  t = await startTestAppliance({ CONFVAULT_BACKUP_CONCURRENCY: '1' });
  sim = await startSimulator({
    devices: ['stall', 'a1', 'a2', 'b1'].map((name) => ({
      name,
      transcript: frr,
      username: name,
      password: 'pw-jobs-123',
      failure: name === 'stall' ? ('stall_mid_output' as const) : undefined,
    })),
  });
  const { db, secrets } = t.services;
  const tpl = seedBuiltinTemplate(db, 'frr');
  for (const name of ['A', 'B', 'S']) g[name] = seedGroup(db, `site-${name}`);
  const device = (name: string, group: number) =>
    (d[name] = seedDevice(db, {
      name: `web-${name}`,
      port: sim.port,
      credential_id: seedCredential(db, secrets, { name: `wc-${name}`, username: name, password: 'pw-jobs-123' }),
      template_id: tpl,
      group_id: group,
    }));
  device('stall', g.S); // lowest id: first in a job's queue
  device('a1', g.A);
  device('a2', g.A);
  device('b1', g.B);
  const user = async (name: string, permissions: Permission[] | 'administrator', groups: number[] | null = null) => {
    let role = 'administrator';
    if (permissions !== 'administrator') createRole(db, SYSTEM_ACTOR, { name: (role = `jobs-${name}`), permissions });
    await createUser(db, SYSTEM_ACTOR, { username: name, password: `${name}-password-1`, role, groups, timezone: null });
    users[name] = new WebClient(t.url);
    assert.equal((await users[name].login(name, `${name}-password-1`)).status, 303);
  };
  await user('jadmin', 'administrator');
  await user('scoped', ['devices.view', 'backups.view', 'backups.run'], [g.A]);
  await user('runner', ['devices.view', 'backups.view', 'backups.run']);
  await user('viewer', ['devices.view']);
});
after(async () => {
  await sim?.close();
  await t?.close();
});

async function getJob(w: WebClient, id: string): Promise<Job> {
  const r = await w.fetch(`/api/jobs/${id}`);
  assert.equal(r.status, 200, await r.clone().text());
  return (await r.json()) as Job;
}

async function waitJob(w: WebClient, id: string, done: (j: Job) => boolean = (j) => j.state !== 'running' && j.state !== 'queued'): Promise<Job> {
  const until = Date.now() + 30_000;
  for (;;) {
    const j = await getJob(w, id);
    if (done(j)) return j;
    assert.ok(Date.now() < until, `job ${id} did not get there: ${JSON.stringify(j)}`);
    await sleep(100);
  }
}

/** Post a bulk form as the device list does; the job id from the redirect to its page. */
async function bulk(w: WebClient, pairs: [string, string][]): Promise<{ status: number; jobId: string | null; location: string | null }> {
  const { res } = await postPairs(w, '/jobs', [['back', '/devices'], ...pairs]);
  const location = res.headers.get('location');
  return { status: res.status, location, jobId: /^\/jobs\/([0-9a-f-]{36})$/.exec(location ?? '')?.[1] ?? null };
}

const jobCount = () => t.services.db.prepare('SELECT count(*) FROM backup_jobs').pluck().get() as number;

describe('bulk backups from the device list', () => {
  test('"Back up this group": one job, its page shows progress and "first version stored"; a second run "no change"', async () => {
    const w = users.jadmin;
    const list = await w.get(`/devices?group_id=${g.A}`);
    assert.match(list.html, /<button type="submit" name="selection" value="devices">\s*Back up selected/);
    assert.match(list.html, /name="selection" value="group"/);
    assert.match(list.html, /name="selection" value="all"/);
    assert.match(list.html, new RegExp(`<input type="checkbox" name="device_id" value="${d.a1}"`));

    const r = await bulk(w, [
      ['selection', 'group'],
      ['group_id', String(g.A)],
    ]);
    assert.equal(r.status, 303);
    assert.ok(r.jobId, `redirected to the job page: ${r.location}`);
    const job = await waitJob(w, r.jobId);
    assert.equal(job.state, 'finished');
    assert.equal(job.label, 'group site-A');
    assert.equal(job.requested_by, 'jadmin');
    assert.deepEqual([job.progress.done, job.progress.total, job.progress.first], [2, 2, 2]);
    assert.deepEqual(
      job.items.map((i) => [i.device_name, i.state, i.result]),
      [
        ['web-a1', 'succeeded', 'first version stored'],
        ['web-a2', 'succeeded', 'first version stored'],
      ],
    );
    const page = await w.get(`/jobs/${r.jobId}`);
    assert.equal(page.res.status, 200);
    assert.match(page.html, /2\/2/);
    assert.match(page.html, /first version stored/);
    assert.doesNotMatch(page.html, /data-refresh=/, 'a finished job does not refresh itself');
    const jobs = await w.get('/jobs');
    assert.match(jobs.html, new RegExp(`<a href="/jobs/${r.jobId}">group site-A</a>`));

    const audit = t.services.db.prepare("SELECT actor, door, details FROM audit_log WHERE action = 'backup.run' AND target = ?").all(`group ${g.A}`) as {
      actor: string;
      door: string;
      details: string;
    }[];
    assert.equal(audit.length, 1);
    assert.deepEqual([audit[0].actor, audit[0].door, JSON.parse(audit[0].details).job, JSON.parse(audit[0].details).devices], ['jadmin', 'web', r.jobId, 2]);

    const sel = await bulk(w, [
      ['selection', 'devices'],
      ['device_id', String(d.a1)],
      ['device_id', String(d.a2)],
    ]);
    const again = await waitJob(w, sel.jobId!);
    assert.equal(again.label, '2 selected devices');
    assert.deepEqual(
      again.items.map((i) => i.result),
      ['no change', 'no change'],
    );
  });

  test('"Back up now" on a device never backed up says "first version stored" (page and job view)', async () => {
    const w = users.jadmin;
    const { res } = await w.post(`/devices/${d.b1}/backup`, {}, { csrf: true });
    assert.equal(res.status, 303);
    const jobId = /job=([0-9a-f-]+)/.exec(res.headers.get('location') ?? '')![1];
    let view = { state: 'running' } as { state: string; first: boolean; changed: boolean; result: string | null };
    for (let i = 0; i < 300 && view.state === 'running'; i++) {
      await sleep(100);
      view = (await (await w.fetch(`/api/backup-jobs/${jobId}`)).json()) as typeof view;
    }
    assert.deepEqual([view.state, view.first, view.changed, view.result], ['succeeded', true, false, 'first version stored']);
    const page = await w.get(`/devices/${d.b1}?job=${jobId}`);
    assert.match(page.html, /Backup succeeded: first version stored\./);
  });

  test('nothing selected is said on the list (error flash) and starts nothing', async () => {
    const before = jobCount();
    const r = await bulk(users.jadmin, [['selection', 'devices']]);
    assert.equal(r.status, 303);
    assert.equal(r.location, '/devices');
    assert.equal(jobCount(), before);
  });
});

describe('permissions and scope', () => {
  test('the Jobs page needs backups.view; the bulk controls need backups.run', async () => {
    const v = users.viewer;
    assert.equal((await v.get('/jobs')).res.status, 403);
    const list = await v.get('/devices');
    assert.doesNotMatch(list.html, /name="device_id"|Back up all|href="\/jobs"/);
    assert.equal((await bulk(v, [['selection', 'all']])).status, 403);
    assert.match((await users.scoped.get('/devices')).html, /href="\/jobs">Jobs<\/a>/);
  });

  test('a scoped user backs up only devices of their groups and sees only those', async () => {
    const s = users.scoped;
    const before = jobCount();
    assert.equal(
      (
        await bulk(s, [
          ['selection', 'group'],
          ['group_id', String(g.B)],
        ])
      ).status,
      403,
    );
    const mixed = await bulk(s, [
      ['selection', 'devices'],
      ['device_id', String(d.a1)],
      ['device_id', String(d.b1)],
    ]);
    assert.equal(mixed.status, 403);
    assert.equal(jobCount(), before, 'refused requests start nothing');

    const all = await bulk(s, [['selection', 'all']]);
    const job = await waitJob(s, all.jobId!);
    assert.deepEqual(
      job.items.map((i) => i.device_id),
      [d.a1, d.a2],
      '"all" is every device in scope',
    );

    // The administrator's "all" job holds devices of every group: the scoped user sees its site-A part only.
    const adminAll = await bulk(users.jadmin, [['selection', 'all']]);
    await waitJob(users.jadmin, adminAll.jobId!, (j) => j.items.some((i) => i.device_name === 'web-stall' && i.state === 'running'));
    const seen = await getJob(s, adminAll.jobId!);
    assert.deepEqual(
      seen.items.map((i) => i.device_name),
      ['web-a1', 'web-a2'],
    );
    assert.equal(seen.progress.total, 2);
    assert.equal(seen.can_cancel, false, 'not their job, and no users.update');
    const cancel = await s.post(`/jobs/${adminAll.jobId}/cancel`, {}, { csrf: true });
    assert.equal(cancel.res.status, 403);
    // The device page's job on site-B is out of scope: 403, and missing from the list.
    const bOnly = (t.services.db.prepare("SELECT id FROM backup_jobs WHERE label = 'device web-b1'").pluck().get() as string) ?? '';
    assert.equal((await s.fetch(`/api/jobs/${bOnly}`)).status, 403);
    const listed = ((await (await s.fetch('/api/jobs')).json()) as { items: JobView[] }).items.map((j) => j.id);
    assert.ok(!listed.includes(bOnly));
    assert.ok(listed.includes(adminAll.jobId!));
    // Let the administrator's job go: cancel it (their own).
    assert.equal((await users.jadmin.post(`/jobs/${adminAll.jobId}/cancel`, {}, { csrf: true })).res.status, 303);
    await waitJob(users.jadmin, adminAll.jobId!);
  });
});

describe('cancel', () => {
  const queueDepth = async (key: string): Promise<number> => {
    const text = await (await t.api('/metrics', { key })).text();
    return Number(/^confvault_backup_queue\{state="queued"\} (\d+)$/m.exec(text)?.[1] ?? 'NaN');
  };

  test('cancelling a running job stops the running backup, drops the queued ones, keeps the failed record; queue depth stays true', async () => {
    const key = await t.keyFor({ permissions: ['dashboard.view'] });
    const r = users.runner;
    const job = await bulk(r, [
      ['selection', 'devices'],
      ['device_id', String(d.stall)],
      ['device_id', String(d.a1)],
      ['device_id', String(d.a2)],
    ]);
    await waitJob(r, job.jobId!, (j) => j.progress.running === 1);
    assert.equal(await queueDepth(key), 2, 'two devices wait for the one worker');
    const page = await r.get(`/jobs/${job.jobId}`);
    assert.match(page.html, /data-refresh="2"/, 'an open job refreshes itself');
    assert.match(page.html, /Cancel/);

    // Someone else's job: not without users.update.
    assert.equal((await users.scoped.post(`/jobs/${job.jobId}/cancel`, {}, { csrf: true })).res.status, 403);

    const began = Date.now();
    const { res } = await r.post(`/jobs/${job.jobId}/cancel`, {}, { csrf: true });
    assert.equal(res.status, 303);
    const done = await waitJob(r, job.jobId!);
    assert.ok(Date.now() - began < 10_000);
    assert.equal(done.state, 'cancelled');
    assert.equal(done.cancelled_by, 'runner');
    assert.deepEqual(
      done.items.map((i) => [i.device_name, i.state]),
      [
        ['web-a1', 'cancelled'],
        ['web-a2', 'cancelled'],
        ['web-stall', 'cancelled'],
      ],
    );
    const stall = done.items.find((i) => i.device_name === 'web-stall')!;
    assert.ok(stall.backup_id, 'the stopped backup keeps its record');
    assert.match((await r.get(`/jobs/${job.jobId}`)).html, new RegExp(`href="/devices/${d.stall}/backups/${stall.backup_id}">Failed backup`));
    assert.equal(await queueDepth(key), 0);
    const audit = t.services.db.prepare("SELECT actor FROM audit_log WHERE action = 'backup.cancel' AND target = ?").pluck().all(`job ${job.jobId}`);
    assert.deepEqual(audit, ['runner']);
    assert.equal((await r.post(`/jobs/${job.jobId}/cancel`, {}, { csrf: true })).res.status, 303, 'a second cancel is said, not an error page');
  });
});
