// The Jobs routes (pages and internal JSON) by permission and scope: who may list, read, start and cancel; CSRF; nothing started or changed on refusal.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { requestBackupJob } from '../../src/features/backups/jobs.service';
import { updateDevice } from '../../src/features/devices/devices.service';
import type { Permission } from '../../src/identity/permissions';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { WebClient } from './web-client';

let t: TestAppliance;
let groupA = 0;
let groupB = 0;
let deviceA = 0;
let deviceB = 0;
let tpl = 0;
let cred = 0;
/** A queued job (no server picks it up here) holding one device of each group, requested by the console. */
let mixedJob = '';
const web: Record<string, WebClient> = {};

before(async () => {
  t = await startTestAppliance();
  const { db, secrets } = t.services;
  tpl = seedBuiltinTemplate(db, 'frr');
  cred = seedCredential(db, secrets, { name: 'sec-cred', username: 'u', password: 'p-12345678' });
  groupA = seedGroup(db, 'sec-A');
  groupB = seedGroup(db, 'sec-B');
  // Port 9 on loopback: nothing listens, so a job that does start ends quickly.
  deviceA = seedDevice(db, { name: 'sec-a', port: 9, credential_id: cred, template_id: tpl, group_id: groupA });
  deviceB = seedDevice(db, { name: 'sec-b', port: 9, credential_id: cred, template_id: tpl, group_id: groupB });
  mixedJob = requestBackupJob(db, { ...SYSTEM_ACTOR, door: { kind: 'cli', osUser: 'root' } }, { all: true }, null).id;
  const user = async (name: string, permissions: Permission[], groups: number[] | null = null) => {
    createRole(db, SYSTEM_ACTOR, { name: `sec-${name}`, permissions });
    await createUser(db, SYSTEM_ACTOR, { username: name, password: `${name}-password-1`, role: `sec-${name}`, groups, timezone: null });
    web[name] = new WebClient(t.url);
    assert.equal((await web[name].login(name, `${name}-password-1`)).status, 303);
  };
  await user('nothing', ['devices.view']);
  await user('reader', ['devices.view', 'backups.view']);
  await user('runner', ['devices.view', 'backups.view', 'backups.run']);
  await user('scopedB', ['devices.view', 'backups.view', 'backups.run'], [groupB]);
  await user('manager', ['devices.view', 'backups.view', 'backups.run', 'users.update'], [groupA]);
});
after(async () => {
  await t?.close();
});

const jobCount = () => t.services.db.prepare('SELECT count(*) FROM backup_jobs').pluck().get() as number;
const itemStates = (job: string) =>
  t.services.db.prepare('SELECT device_id, state FROM backup_job_items WHERE job_id = ? ORDER BY device_id').all(job) as { device_id: number; state: string }[];

async function code(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

describe('reading jobs', () => {
  test('without backups.view: no page, no JSON (403)', async () => {
    const w = web.nothing;
    assert.equal((await w.get('/jobs')).res.status, 403);
    assert.equal((await w.get(`/jobs/${mixedJob}`)).res.status, 403);
    const r = await w.fetch('/api/jobs');
    assert.equal(r.status, 403);
    assert.equal(await code(r), 'PERMISSION_DENIED');
  });

  test('backups.view reads every job in scope; an unknown id is 404', async () => {
    const w = web.reader;
    const list = (await (await w.fetch('/api/jobs')).json()) as { items: { id: string; progress: { total: number }; can_cancel: boolean }[] };
    const j = list.items.find((x) => x.id === mixedJob);
    assert.ok(j);
    assert.equal(j.progress.total, 2);
    assert.equal(j.can_cancel, false, 'no backups.run');
    assert.equal((await w.fetch('/api/jobs/00000000-0000-0000-0000-000000000000')).status, 404);
  });

  test('a scoped reader sees the items of their groups only', async () => {
    const job = (await (await web.scopedB.fetch(`/api/jobs/${mixedJob}`)).json()) as { items: { device_id: number }[]; progress: { total: number } };
    assert.deepEqual(
      job.items.map((i) => i.device_id),
      [deviceB],
    );
    assert.equal(job.progress.total, 1);
    const page = await web.scopedB.get(`/jobs/${mixedJob}`);
    assert.doesNotMatch(page.html, /sec-a/);
  });

  test('a job on a device moved into the scope since: listed, with only the items in scope counted', async () => {
    const { db } = t.services;
    const moved = seedDevice(db, { name: 'sec-moved', port: 9, credential_id: cred, template_id: tpl });
    const job = requestBackupJob(db, { ...SYSTEM_ACTOR, door: { kind: 'cli', osUser: 'root' } }, { deviceIds: [deviceA, moved] }, null).id;
    updateDevice(db, SYSTEM_ACTOR, moved, { group_id: groupB });
    const list = (await (await web.scopedB.fetch('/api/jobs')).json()) as { items: { id: string; progress: { total: number } }[] };
    assert.equal(list.items.find((j) => j.id === job)?.progress.total, 1, 'the job touching their device is listed, counted over it alone');
    assert.match((await web.scopedB.get('/jobs')).html, new RegExp(`href="/jobs/${job}"`));
    const seen = (await (await web.scopedB.fetch(`/api/jobs/${job}`)).json()) as { items: { device_id: number }[] };
    assert.deepEqual(
      seen.items.map((i) => i.device_id),
      [moved],
    );
  });
});

describe('starting jobs', () => {
  test('backups.view alone cannot start one; a missing CSRF token is refused; nothing is started', async () => {
    const before = jobCount();
    const form = await web.reader.post('/jobs', { selection: 'all' }, { csrf: true });
    assert.equal(form.res.status, 403);
    const api = await web.reader.fetch('/api/jobs', {
      method: 'POST',
      body: new URLSearchParams({ selection: 'all' }),
      headers: { 'X-CSRF-Token': await web.reader.csrf() },
    });
    assert.equal(api.status, 403);
    const noToken = await web.runner.fetch('/api/jobs', { method: 'POST', body: new URLSearchParams({ selection: 'all' }) });
    assert.equal(noToken.status, 403);
    assert.equal(jobCount(), before);
  });

  test('bad input is a 422 in the error shape and starts nothing', async () => {
    const before = jobCount();
    const bad: Record<string, string>[] = [{ selection: 'everything' }, { selection: 'group', group_id: 'x' }, { selection: 'devices' }];
    for (const fields of bad) {
      const r = await web.runner.fetch('/api/jobs', {
        method: 'POST',
        body: new URLSearchParams(fields),
        headers: { 'X-CSRF-Token': await web.runner.csrf() },
      });
      assert.equal(r.status, 422, JSON.stringify(fields));
      assert.equal(await code(r), 'VALIDATION_ERROR');
    }
    const missing = await web.runner.fetch('/api/jobs', {
      method: 'POST',
      body: new URLSearchParams({ selection: 'devices', device_id: '999999' }),
      headers: { 'X-CSRF-Token': await web.runner.csrf() },
    });
    assert.equal(missing.status, 404);
    assert.equal(jobCount(), before);
  });

  test('a scoped user: a device or group outside the scope is 403', async () => {
    const before = jobCount();
    const token = await web.scopedB.csrf();
    const outside: Record<string, string>[] = [
      { selection: 'devices', device_id: String(deviceA) },
      { selection: 'group', group_id: String(groupA) },
    ];
    for (const fields of outside) {
      const r = await web.scopedB.fetch('/api/jobs', { method: 'POST', body: new URLSearchParams(fields), headers: { 'X-CSRF-Token': token } });
      assert.equal(r.status, 403, JSON.stringify(fields));
    }
    assert.equal(jobCount(), before);
  });
});

describe('cancelling jobs', () => {
  test('someone else’s job: refused without users.update; users.update cancels within its scope only', async () => {
    assert.equal((await web.runner.post(`/jobs/${mixedJob}/cancel`, {}, { csrf: true })).res.status, 403);
    assert.equal((await web.reader.post(`/jobs/${mixedJob}/cancel`, {}, { csrf: true })).res.status, 403);
    assert.deepEqual(
      itemStates(mixedJob).map((i) => i.state),
      ['queued', 'queued'],
    );
    // The manager holds users.update and scope sec-A: the sec-A item is cancelled, the sec-B one stays queued.
    const r = await web.manager.fetch(`/api/jobs/${mixedJob}/cancel`, { method: 'POST', headers: { 'X-CSRF-Token': await web.manager.csrf() } });
    assert.equal(r.status, 200);
    assert.deepEqual(itemStates(mixedJob), [
      { device_id: deviceA, state: 'cancelled' },
      { device_id: deviceB, state: 'queued' },
    ]);
    const row = t.services.db.prepare("SELECT actor, details FROM audit_log WHERE action = 'backup.cancel' AND target = ?").get(`job ${mixedJob}`) as {
      actor: string;
      details: string;
    };
    assert.equal(row.actor, 'manager');
    assert.equal(JSON.parse(row.details).cancelled, 1);
  });

  test('a job with nothing of the reader’s scope is 403, an unknown one 404', async () => {
    const onlyA = requestBackupJob(t.services.db, { ...SYSTEM_ACTOR }, { deviceIds: [deviceA] }, null).id;
    assert.equal((await web.scopedB.fetch(`/api/jobs/${onlyA}`)).status, 403);
    const r = await web.scopedB.fetch(`/api/jobs/${onlyA}/cancel`, { method: 'POST', headers: { 'X-CSRF-Token': await web.scopedB.csrf() } });
    assert.equal(r.status, 403);
    assert.equal(itemStates(onlyA)[0].state, 'queued');
    const missing = await web.runner.fetch('/api/jobs/nope/cancel', { method: 'POST', headers: { 'X-CSRF-Token': await web.runner.csrf() } });
    assert.equal(missing.status, 404);
  });
});
